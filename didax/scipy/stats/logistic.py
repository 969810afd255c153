"""Mirrors `jax.scipy.stats.logistic`."""
from didax._src.scipy.stats.logistic import (  # noqa: F401
    cdf,
    isf,
    logpdf,
    pdf,
    ppf,
    sf,
)
