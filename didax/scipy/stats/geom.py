"""Mirrors `jax.scipy.stats.geom`."""
from didax._src.scipy.stats.geom import (  # noqa: F401
    logpmf,
    pmf,
)
