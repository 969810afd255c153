"""Mirrors `jax.scipy.stats.expon`."""
from didax._src.scipy.stats.expon import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
