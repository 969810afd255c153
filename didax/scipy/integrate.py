"""Mirrors `jax.scipy.integrate`."""
from didax._src.scipy.integrate import trapezoid  # noqa: F401
