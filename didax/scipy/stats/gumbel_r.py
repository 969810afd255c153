"""Mirrors `jax.scipy.stats.gumbel_r`."""
from didax._src.scipy.stats.gumbel_r import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
