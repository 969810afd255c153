"""Mirrors `jax.scipy.ndimage` (`map_coordinates`)."""
from didax._src.scipy.ndimage import map_coordinates  # noqa: F401
