"""Mirrors `jax.scipy.sparse` (its `linalg` module)."""
from didax.scipy.sparse import linalg  # noqa: F401
