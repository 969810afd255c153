"""Mirrors `jax.scipy.cluster.vq`."""
from didax._src.scipy.cluster import vq  # noqa: F401
