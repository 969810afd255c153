"""Mirrors `jax.scipy.optimize` (`minimize` with BFGS)."""
from didax._src.scipy.optimize import OptimizeResults, minimize  # noqa: F401
