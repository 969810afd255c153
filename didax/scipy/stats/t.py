"""Mirrors `jax.scipy.stats.t`."""
from didax._src.scipy.stats.t import (  # noqa: F401
    logpdf,
    pdf,
)
