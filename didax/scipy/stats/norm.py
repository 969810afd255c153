"""Mirrors `jax.scipy.stats.norm`."""
from didax._src.scipy.stats.norm import (  # noqa: F401
    cdf,
    isf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
