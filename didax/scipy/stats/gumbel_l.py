"""Mirrors `jax.scipy.stats.gumbel_l`."""
from didax._src.scipy.stats.gumbel_l import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
