"""Mirrors `jax.image`."""
from didax._src.image.resize import ResizeMethod, resize, scale_and_translate  # noqa: F401
