"""Mirrors `jax.flatten_util`: `ravel_pytree`."""
from didax._src.numpy.flatten_util import ravel_pytree  # noqa: F401
