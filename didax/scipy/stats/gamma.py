"""Mirrors `jax.scipy.stats.gamma`."""
from didax._src.scipy.stats.gamma import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)
