"""Mirrors `jax.scipy.stats.laplace`."""
from didax._src.scipy.stats.laplace import (  # noqa: F401
    cdf,
    logpdf,
    pdf,
)
