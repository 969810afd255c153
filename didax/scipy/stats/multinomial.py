"""Mirrors `jax.scipy.stats.multinomial`."""
from didax._src.scipy.stats.multinomial import (  # noqa: F401
    logpmf,
    pmf,
)
