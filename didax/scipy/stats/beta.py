"""Mirrors `jax.scipy.stats.beta`."""
from didax._src.scipy.stats.beta import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)
