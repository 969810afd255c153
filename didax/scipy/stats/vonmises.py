"""Mirrors `jax.scipy.stats.vonmises`."""
from didax._src.scipy.stats.vonmises import (  # noqa: F401
    logpdf,
    pdf,
)
