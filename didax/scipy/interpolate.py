"""Mirrors `jax.scipy.interpolate`."""
from didax._src.scipy.interpolate import RegularGridInterpolator  # noqa: F401
