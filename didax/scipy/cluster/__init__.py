"""Mirrors `jax.scipy.cluster` (the `vq` module)."""
from didax.scipy.cluster import vq  # noqa: F401
