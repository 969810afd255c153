"""Mirrors `jax.scipy.stats.nbinom`."""
from didax._src.scipy.stats.nbinom import (  # noqa: F401
    logpmf,
    pmf,
)
