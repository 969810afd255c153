"""Mirrors `jax.scipy.spatial`."""
from didax.scipy.spatial import transform  # noqa: F401
