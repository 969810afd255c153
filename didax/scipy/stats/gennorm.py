"""Mirrors `jax.scipy.stats.gennorm`."""
from didax._src.scipy.stats.gennorm import (  # noqa: F401
    cdf,
    logpdf,
    pdf,
)
