"""Mirrors `jax.scipy.stats.pareto`."""
from didax._src.scipy.stats.pareto import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
