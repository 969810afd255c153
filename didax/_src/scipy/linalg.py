"""didax.scipy.linalg: SciPy's names and conventions over the `lax.linalg` primitives.

SciPy factors upper-triangular by default, solves with a matrix (or one vector) on the
right, and returns LU factors with LAPACK's pivots; the rest is `numpy.linalg`'s. Leading
dimensions are batch dimensions and broadcast, as in JAX.
"""
from __future__ import annotations

import functools

import numpy as np

from didax._src.lax import linalg as lax_linalg
from didax._src.lax import shape as lax_shape
from didax._src.numpy import linalg as jnp_linalg
from didax._src.numpy import products, shape_ops, ufuncs
from didax._src.numpy.diagonals import tril, triu
from didax._src.numpy.util import asarray, broadcast_to, promote_dtypes_inexact
from didax._src.primitives.custom_derivatives import custom_jvp

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "inv", "det",
           "lu", "lu_factor", "lu_solve", "eigh", "svd", "qr"]


def _inexact(*args):
    return promote_dtypes_inexact(*(asarray(a) for a in args))


def _mT(x):  # noqa: N802 - the matrix transpose, as `x.mT`
    return shape_ops.swapaxes(x, -1, -2)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a Hermitian positive-definite matrix, from the triangle
    `lower` names: upper (a = U^H U) by default, as in SciPy."""
    del overwrite_a, check_finite  # NumPy buffers are never overwritten; no checks
    (a,) = _inexact(a)
    factor = lax_linalg.cholesky(a if lower else ufuncs.conjugate(_mT(a)),
                                 symmetrize_input=False)
    return factor if lower else ufuncs.conjugate(_mT(factor))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower) for `cho_solve`."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _broadcast_solve(fn, a, b):
    """`fn(a, b)` for square a (..., n, n) and b (n,) or (..., n, k): leading dimensions
    broadcast, and a vector b is a one-column matrix."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expected a square matrix (or a batch of them) as a, got shape "
                         f"{a.shape}")
    vector = b.ndim == 1
    if vector:
        b = shape_ops.expand_dims(b, -1)
    elif b.ndim < 2:
        raise ValueError(f"expected b of rank 1 or more, got shape {b.shape}")
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"incompatible shapes: a {a.shape} and b "
                         f"{b.shape[:-1] if vector else b.shape}")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = fn(broadcast_to(a, batch + a.shape[-2:]), broadcast_to(b, batch + b.shape[-2:]))
    return x[..., 0] if vector else x


def _cho_solve_factored(c, b, lower):
    """Two triangular solves with the factor c of a = c c^H (lower) or c^H c (upper)."""
    b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower,
                                       conjugate_a=lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a x = b, from `cho_factor(a)`."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = _inexact(c, b)
    return _broadcast_solve(functools.partial(_cho_solve_factored, lower=lower), c, b)


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """x with op(a) x = b, reading one triangle of a; trans 0/'N', 1/'T' or 2/'C' makes op
    the identity, the transpose or the conjugate transpose."""
    del overwrite_b, debug, check_finite
    if isinstance(trans, (str, int)) and trans in _TRANS:
        transpose_a, conjugate_a = _TRANS[trans]
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = _inexact(a, b)
    return _broadcast_solve(functools.partial(
        lax_linalg.triangular_solve, left_side=True, lower=lower, transpose_a=transpose_a,
        conjugate_a=conjugate_a, unit_diagonal=unit_diagonal), a, b)


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _positive_definite_solve(lower, a, b):
    """a⁻¹ b by Cholesky (reading the triangle `lower` names). Its derivative treats a as
    the full matrix it stands for, as JAX's does: d(a⁻¹ b) = a⁻¹ (ḃ - ȧ x)."""
    return _cho_solve_factored(cholesky(a, lower=lower), b, lower)


@_positive_definite_solve.defjvp
def _positive_definite_solve_jvp(lower, primals, tangents):
    (a, b), (a_dot, b_dot) = primals, tangents
    x = _positive_definite_solve(lower, a, b)
    rhs = ufuncs.subtract(b_dot, products.matmul(a_dot, x))
    return x, jnp_linalg._lu_solve_differentiably(a, rhs)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """x with a x = b: by LU for general ('gen'), symmetric ('sym') and Hermitian ('her')
    a, by Cholesky for positive-definite a ('pos', reading the triangle `lower` names)."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of ['gen', 'sym', 'her', 'pos']; got "
                         f"{assume_a!r}")
    if assume_a != "pos":
        return jnp_linalg.solve(a, b)
    a, b = _inexact(a, b)
    return _broadcast_solve(functools.partial(_positive_definite_solve, lower), a, b)


def inv(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return jnp_linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return jnp_linalg.det(a)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, pivots) for `lu_solve`: L and U packed, LAPACK's row swaps (0-based)."""
    del overwrite_a, check_finite
    (a,) = _inexact(a)
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a x = b (trans 0), a^T x = b (1) or a^H x = b (2), from `lu_factor(a)`."""
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    lu_, b = _inexact(lu_, b)
    perm = lax_linalg.lu_pivots_to_permutation(pivots, lu_.shape[-2])
    batch = np.broadcast_shapes(lu_.shape[:-2], perm.shape[:-1])

    def solve_factored(lu_, b):
        p = broadcast_to(perm, b.shape[:-2] + perm.shape[-1:])
        return lax_linalg.lu_solve(lu_, p, b, trans=trans)

    if batch != lu_.shape[:-2]:
        lu_ = broadcast_to(lu_, batch + lu_.shape[-2:])
    return _broadcast_solve(solve_factored, lu_, b)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p l u, or (p l, u) with `permute_l`, for one matrix."""
    del overwrite_a, check_finite
    (a,) = _inexact(a)
    if a.ndim != 2:
        raise ValueError(f"lu expects a matrix, got shape {a.shape}")
    lu_, _, permutation = lax_linalg.lu(a)
    m, n = a.shape
    k = min(m, n)
    rows = shape_ops.expand_dims(lax_shape.iota(np.int32, m), 1)
    p = ufuncs.equal(shape_ops.expand_dims(permutation, 0), rows).astype(a.dtype)
    eye = ufuncs.equal(rows, shape_ops.expand_dims(lax_shape.iota(np.int32, k), 0))
    eye = eye.astype(a.dtype)
    low = ufuncs.add(tril(lu_, -1)[:, :k], eye)
    up = triu(lu_)[:k, :]
    if permute_l:
        return products.matmul(p, low), up
    return p, low, up


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):  # noqa: A002 - SciPy's name
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, from its triangle
    `lower` names. Generalized problems (b) are not implemented."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """a = u diag(s) vh, s descending (s alone without `compute_uv`)."""
    del overwrite_a, check_finite, lapack_driver
    (a,) = _inexact(a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """(q, r) with a = q r: square q ('full'), k = min(m, n) columns ('economic'), or
    (r,) alone ('r')."""
    del overwrite_a, lwork, check_finite
    if pivoting:
        raise NotImplementedError("qr(pivoting=True): column-pivoted QR is not implemented "
                                  "in didax")
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _inexact(a)
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    return (r,) if mode == "r" else (q, r)
