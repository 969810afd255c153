"""Mirrors `jax.scipy.stats.truncnorm`."""
from didax._src.scipy.stats.truncnorm import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)
