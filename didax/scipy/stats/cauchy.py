"""Mirrors `jax.scipy.stats.cauchy`."""
from didax._src.scipy.stats.cauchy import (  # noqa: F401
    cdf,
    isf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
