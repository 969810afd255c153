"""Mirrors `jax.numpy.linalg`."""
from didax._src.numpy.linalg import (  # noqa: F401
    EighResult, QRResult, SlogdetResult, SVDResult, cholesky, cross, det, diagonal, eig, eigh,
    eigvals,
    eigvalsh, inv, lstsq, matrix_power, pinv, cond, tensorinv, tensorsolve, matmul, matrix_norm,
    matrix_rank, matrix_transpose, multi_dot, norm, outer,
    qr, slogdet, solve, svd, svdvals, tensordot, trace, vecdot, vector_norm,
)
