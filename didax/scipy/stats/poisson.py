"""Mirrors `jax.scipy.stats.poisson`."""
from didax._src.scipy.stats.poisson import (  # noqa: F401
    cdf,
    entropy,
    logpmf,
    pmf,
)
