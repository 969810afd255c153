"""Mirrors `jax.numpy.linalg` (the functions that need no matrix decomposition)."""
from didax._src.numpy.linalg import (  # noqa: F401
    cross, diagonal, matmul, matrix_norm, matrix_transpose, multi_dot, norm, outer, tensordot,
    trace, vecdot, vector_norm,
)
