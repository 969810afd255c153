"""Mirrors `jax.scipy.optimize`."""
from didax._src.scipy.optimize.minimize import OptimizeResults, minimize  # noqa: F401
