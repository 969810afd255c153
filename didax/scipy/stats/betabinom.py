"""Mirrors `jax.scipy.stats.betabinom`."""
from didax._src.scipy.stats.betabinom import (  # noqa: F401
    logpmf,
    pmf,
)
