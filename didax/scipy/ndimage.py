"""Mirrors `jax.scipy.ndimage`."""
from didax._src.scipy.ndimage import map_coordinates  # noqa: F401
