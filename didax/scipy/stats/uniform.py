"""Mirrors `jax.scipy.stats.uniform`."""
from didax._src.scipy.stats.uniform import (  # noqa: F401
    cdf,
    logpdf,
    pdf,
    ppf,
)
