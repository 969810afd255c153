"""Mirrors `jax.scipy.stats.multivariate_normal`."""
from didax._src.scipy.stats.multivariate_normal import (  # noqa: F401
    logpdf,
    pdf,
)
