"""Mirrors `jax.scipy.stats.dirichlet`."""
from didax._src.scipy.stats.dirichlet import (  # noqa: F401
    logpdf,
    pdf,
)
