"""Mirrors `jax.scipy.spatial.transform`."""
from didax._src.scipy.spatial_transform import Rotation, Slerp  # noqa: F401
