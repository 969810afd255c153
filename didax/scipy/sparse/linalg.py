"""Mirrors `jax.scipy.sparse.linalg` (the Krylov solvers)."""
from didax._src.scipy.sparse_linalg import bicgstab, cg, gmres  # noqa: F401
