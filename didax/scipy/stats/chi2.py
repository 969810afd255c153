"""Mirrors `jax.scipy.stats.chi2`."""
from didax._src.scipy.stats.chi2 import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)
