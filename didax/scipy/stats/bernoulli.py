"""Mirrors `jax.scipy.stats.bernoulli`."""
from didax._src.scipy.stats.bernoulli import (  # noqa: F401
    cdf,
    logpmf,
    pmf,
    ppf,
)
