"""Mirrors `jax.scipy.sparse.linalg`."""
from didax._src.scipy.sparse.linalg import bicgstab, cg, gmres  # noqa: F401
