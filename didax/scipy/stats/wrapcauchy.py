"""Mirrors `jax.scipy.stats.wrapcauchy`."""
from didax._src.scipy.stats.wrapcauchy import (  # noqa: F401
    logpdf,
    pdf,
)
