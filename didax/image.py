"""Mirrors `jax.image` (image resizing)."""
from didax._src.image import ResizeMethod, resize, scale_and_translate  # noqa: F401
