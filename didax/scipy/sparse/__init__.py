"""Mirrors `jax.scipy.sparse` (the `linalg` module)."""
from didax.scipy.sparse import linalg  # noqa: F401
