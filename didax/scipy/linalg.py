"""Mirrors `jax.scipy.linalg` (decompositions and solves)."""
from didax._src.scipy.linalg import (  # noqa: F401
    cho_factor, cho_solve, cholesky, det, eigh, inv, lu, lu_factor, lu_solve, qr, solve,
    solve_triangular, svd,
)
