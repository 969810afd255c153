"""Updates of symmetric matrices and their factors: `lax.linalg.cholesky_update` (the factor
of R^T R + w w^T from R, in O(n^2)) and `lax.linalg.symmetric_product` (alpha A A^T + beta C).

Neither has derivatives, as in JAX; both take real floating-point operands only, as JAX's.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.lax import elementwise as ew
from didax._src.lax.linalg import _T, _batch_at_front, _check_operand, _tril
from didax._src.lax.linalg_schur import _work_dtype, mark_not_differentiable
from didax._src.typecheck import check_dtype, float_

__all__ = ["cholesky_update", "cholesky_update_p", "symmetric_product",
           "symmetric_product_p"]


def _check_same_dtypes(name, avals):
    if any(a.dtype != avals[0].dtype for a in avals[1:]):
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(a.dtype.name for a in avals)}.")


# --------------------------------------------------------------------------------------
# cholesky_update

cholesky_update_p = core.primitive("cholesky_update")


def _cholesky_update_impl(r, w):
    """Row k of [R; w^T] is rotated with w so that w_k vanishes: the rotations are
    orthogonal, so R'^T R' = R^T R + w w^T, and each new diagonal entry is positive."""
    out = np.triu(r.astype(_work_dtype(r.dtype)))
    w = w.astype(out.dtype)
    for k in range(out.shape[-1]):
        radius = np.hypot(out[k, k], w[k])
        c, s = (out[k, k] / radius, w[k] / radius) if radius else (1.0, 0.0)
        out[k, k] = radius
        row, rest = out[k, k + 1:].copy(), w[k + 1:]
        out[k, k + 1:] = c * row + s * rest
        w[k + 1:] = c * rest - s * row
    return out.astype(r.dtype)


def _cholesky_update_aval(r, w):
    for i, (aval, rank) in enumerate(((r, 2), (w, 1))):
        if aval.ndim != rank:
            raise TypeError(f"Input {i} to cholesky_update must have a rank of exactly "
                            f"{rank}, but got shape={aval.shape}")
        check_dtype("cholesky_update", aval, float_, f" at position {i}")
    _check_same_dtypes("cholesky_update", (r, w))
    n = r.shape[0]
    if r.shape != (n, n) or w.shape != (n,):
        raise ValueError(f"Rank-1 update to Cholesky decomposition takes a square matrix and a "
                         f"vector of the same size as input. Got shapes {r.shape} and "
                         f"{w.shape} instead")
    return r.strip_weak_type()


cholesky_update_p.def_impl(_cholesky_update_impl)
cholesky_update_p.def_abstract_eval(_cholesky_update_aval)
mark_not_differentiable(cholesky_update_p, "")
cholesky_update_p.mark_absent("batch", "JAX defines no batching rule for cholesky_update: "
                                       "loop over the matrices, or use lax.map")


def cholesky_update(r_matrix, w_vector):
    """The upper-triangular R' (positive diagonal) with R'^T R' = R^T R + w w^T, from the
    upper triangle of `r_matrix` (n, n) and `w_vector` (n,). The strictly lower triangle of
    the result is zero, where JAX's holds what its computation leaves there when the input's
    lower triangle is not zero."""
    return cholesky_update_p.bind(r_matrix, w_vector)


# --------------------------------------------------------------------------------------
# symmetric_product

symmetric_product_p = core.primitive("symmetric_product")


def _symmetric_product_impl(a, c, *, alpha, beta):
    out = alpha * np.matmul(a, np.swapaxes(a, -1, -2)) + beta * c
    return out.astype(c.dtype)


def _symmetric_product_aval(a, c, *, alpha, beta):
    for i, aval in enumerate((a, c)):
        _check_operand("symmetric_product", aval, i)
        check_dtype("symmetric_product", aval, float_, f" at position {i}")
    _check_same_dtypes("symmetric_product", (a, c))
    m = a.shape[-2]
    if a.ndim != c.ndim or a.shape[:-2] != c.shape[:-2] or c.shape[-2:] != (m, m):
        raise ValueError(f"symmetric_update expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (m, m), with equal batch dimensions. Got "
                         f"shapes {a.shape} and {c.shape}.")
    return c.strip_weak_type()


symmetric_product_p.def_impl(_symmetric_product_impl)
symmetric_product_p.def_abstract_eval(_symmetric_product_aval)
mark_not_differentiable(symmetric_product_p, "")
_batch_at_front(symmetric_product_p)


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False):
    """alpha A A^T + beta C for A (..., m, n) and symmetric C (..., m, m). Both triangles of
    the result are computed (JAX guarantees only the lower one on every platform); with
    `symmetrize_output` the upper triangle is the transpose of the lower."""
    out = symmetric_product_p.bind(a_matrix, c_matrix, alpha=float(alpha), beta=float(beta))
    if symmetrize_output:
        out = ew.add(_tril(out), _T(_tril(out, -1)))
    return out
