"""Mirrors `jax.scipy.stats.binom`."""
from didax._src.scipy.stats.binom import (  # noqa: F401
    logpmf,
    pmf,
)
