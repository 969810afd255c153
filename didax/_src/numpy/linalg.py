"""didax.numpy.linalg: norms, products and matrix views, and what the decompositions give.

Norms, products and views are reductions and products over the last axes. Decompositions
are the primitives of `lax.linalg`; solves, inverses and determinants are built on the LU
decomposition, with JAX's derivative rules (`custom_jvp`) where differentiating through
the factorization would be costly or undefined (at singular matrices).
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from didax._src import dtypes
from didax._src.core import get_aval
from didax._src.errors import user_error
from didax._src.lax import elementwise as lax
from didax._src.lax import linalg as lax_linalg
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import creation, joining, products, reductions, shape_ops, ufuncs
from didax._src.numpy.einsum import einsum
from didax._src.numpy.indexing import take_along_axis
from didax._src.numpy.searching import where
from didax._src.numpy.util import (
    asarray,
    broadcast_to,
    check_arraylike,
    promote_dtypes_inexact,
)
from didax._src.primitives.custom_derivatives import custom_jvp

__all__ = ["norm", "vector_norm", "matrix_norm", "vecdot", "matmul", "outer", "tensordot",
           "trace", "diagonal", "cross", "matrix_transpose", "multi_dot", "cholesky", "qr",
           "eig", "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "matrix_rank", "solve",
           "inv", "det",
           "slogdet", "pinv", "lstsq", "matrix_power", "cond", "tensorinv", "tensorsolve",
           "EighResult", "QRResult", "SVDResult", "SlogdetResult"]


def _arraylike(name, *args):
    check_arraylike(name, *args)
    return [asarray(a) for a in args]


def _canonical_axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _abs_squared_sum(x, axis, keepdims):
    return reductions.sum(ufuncs.real(ufuncs.multiply(x, ufuncs.conjugate(x))), axis=axis,
                          keepdims=keepdims)


def _singular_value_norm(x, ord, axis, keepdims):
    """Matrix norms of singular values: the largest (2), smallest (-2) or their sum."""
    s = svd(shape_ops.moveaxis(x, axis, (-2, -1)), compute_uv=False)
    if ord == 2:
        y = reductions.amax(s, axis=-1, initial=0)
    elif ord == -2:
        y = reductions.amin(s, axis=-1)
    else:
        y = reductions.sum(s, axis=-1)
    return shape_ops.expand_dims(y, axis) if keepdims else y


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms over one axis, matrix norms over two; the 2-norm of everything by
    default."""
    (x,) = _arraylike("jnp.linalg.norm", x)
    (x,) = promote_dtypes_inexact(x)
    ndim = x.ndim
    if axis is None:
        if ord is None:
            return ufuncs.sqrt(_abs_squared_sum(x, None, keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(_canonical_axis(a, ndim) for a in axis)
    else:
        axis = (_canonical_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis!r}. Pass one axis to "
                         "compute a vector-norm, or two axes to compute a matrix-norm.")
    row_axis, col_axis = axis
    if ord is None or (isinstance(ord, str) and ord in ("f", "fro")):
        return ufuncs.sqrt(_abs_squared_sum(x, axis, keepdims))
    if isinstance(ord, str):
        if ord == "nuc":
            return _singular_value_norm(x, ord, axis, keepdims)
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if ord in (1, -1):  # max/min absolute column sum
        summed, other = row_axis, col_axis
    elif ord in (np.inf, -np.inf):  # max/min absolute row sum
        summed, other = col_axis, row_axis
    elif ord in (2, -2):
        return _singular_value_norm(x, ord, axis, keepdims)
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if not keepdims and other > summed:
        other -= 1
    sums = reductions.sum(ufuncs.abs(x), axis=summed, keepdims=keepdims)
    if ord > 0:
        return reductions.amax(sums, axis=other, keepdims=keepdims, initial=0)
    return reductions.amin(sums, axis=other, keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ord-norm of vectors along `axis` (all axes, flattened, if None)."""
    (x,) = _arraylike("jnp.linalg.vector_norm", x)
    (x,) = promote_dtypes_inexact(x)
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return ufuncs.sqrt(_abs_squared_sum(x, axis, keepdims))
    if isinstance(ord, str):
        hint = {"inf": " Use 'jax.numpy.inf' instead.",
                "-inf": " Use '-jax.numpy.inf' instead."}.get(ord, "")
        raise ValueError(f"Invalid order '{ord}' for vector norm.{hint}")
    if ord == np.inf:
        return reductions.amax(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.amin(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        real_dtype = dtypes.finfo(x.dtype).dtype
        return reductions.sum(ufuncs.not_equal(x, 0), dtype=real_dtype, axis=axis,
                              keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    abs_x = ufuncs.abs(x)
    dtype = abs_x.dtype
    total = reductions.sum(lax.pow(abs_x, np.array(ord, dtype)), axis=axis, keepdims=keepdims)
    return lax.pow(total, np.array(1.0 / ord, dtype))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes."""
    (x,) = _arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    return products.vecdot(x1, x2, axis=axis, precision=precision,
                           preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return products.matmul(x1, x2, precision=precision,
                           preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    return products.tensordot(x1, x2, axes=axes, precision=precision,
                              preferred_element_type=preferred_element_type)


def outer(x1, x2, /):
    """Outer product of two vectors (unlike jnp.outer, no flattening)."""
    x1, x2 = _arraylike("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} x2.ndim={x2.ndim}")
    return products.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along `axis`."""
    x1, x2 = _arraylike("jnp.linalg.cross", x1, x2)
    s1, s2 = x1.shape, x2.shape
    n1 = s1[_canonical_axis(axis, len(s1))]
    n2 = s2[_canonical_axis(axis, len(s2))]
    if n1 != 3 or n2 != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have x1.shape[axis]={n1} and x2.shape[axis]={n2}")
    return products.cross(x1, x2, axis=axis)


def matrix_transpose(x, /):
    """Swaps the last two axes."""
    (x,) = _arraylike("jnp.linalg.matrix_transpose", x)
    ndim = x.ndim
    if ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim}")
    return lax_shape.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def _check_matrices(name, x):
    if x.ndim < 2:
        raise ValueError(f"{name} requires an array of at least two dimensions, got shape "
                         f"{x.shape}")


def diagonal(x, /, *, offset=0):
    """The `offset` diagonal of the matrices in the last two axes.

    Flattening each matrix puts the diagonal at a constant stride (one row plus one), so it is
    one strided slice.
    """
    (x,) = _arraylike("jnp.linalg.diagonal", x)
    _check_matrices("diagonal", x)
    offset = int(offset)
    *batch, n, m = x.shape
    size = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    flat = lax_shape.reshape(x, (*batch, n * m))
    start = (offset if offset >= 0 else -offset * m) if size else 0
    limit = start + (size - 1) * (m + 1) + 1 if size else 0
    return lax_shape.slice(flat, (0,) * len(batch) + (start,), (*batch, limit),
                           (1,) * len(batch) + (m + 1,))


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the `offset` diagonal of the matrices in the last two axes."""
    (x,) = _arraylike("jnp.linalg.trace", x)
    _check_matrices("trace", x)
    shape = x.shape
    ndim = len(shape)
    rows = lax_shape.broadcasted_iota(np.int32, shape[-2:], 0)
    cols = lax_shape.broadcasted_iota(np.int32, shape[-2:], 1)
    on_diagonal = lax.eq(lax.add(rows, np.int32(offset)), cols)
    on_diagonal = lax_shape.broadcast_in_dim(on_diagonal, shape, (ndim - 2, ndim - 1))
    zeros = lax_shape.full(shape, 0, x.dtype)
    return reductions.sum(lax.select_n(on_diagonal, zeros, x), axis=(-2, -1), dtype=dtype)


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (the ends may be vectors), in the cheapest order."""
    arrays = _arraylike("jnp.linalg.multi_dot", *arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrays)}")
    shapes = [a.shape for a in arrays]
    if not (len(shapes[0]) in (1, 2) and len(shapes[-1]) in (1, 2)
            and all(len(s) == 2 for s in shapes[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {shapes}")
    if any(a[-1] != b[0] for a, b in zip(shapes[:-1], shapes[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension "
                         f"of following array. Got array shapes {shapes}")
    axes = [[i, i + 1] for i in range(len(arrays))]
    if len(shapes[0]) == 1:
        axes[0] = axes[0][1:]
    if len(shapes[-1]) == 1:
        axes[-1] = axes[-1][:1]
    args = [v for pair in zip(arrays, axes) for v in pair]
    return einsum(*args, optimize="auto", precision=precision)


# --------------------------------------------------------------------------------------
# Decompositions


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def _inexact_matrices(name, a):
    (a,) = _arraylike(name, a)
    (a,) = promote_dtypes_inexact(a)
    _check_matrices(name, a)
    return a


def _check_square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise user_error(ValueError, (
            f"Argument to {name} must have shape [..., n, n], got {a.shape}."))


def _H(x):
    return ufuncs.conjugate(matrix_transpose(x))


def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor of each Hermitian positive-definite matrix: lower (L L^H = a) or
    upper (U^H U = a). Matrices that are not positive definite give NaNs."""
    a = _inexact_matrices("jnp.linalg.cholesky", a)
    _check_square("cholesky", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(factor) if upper else factor


def qr(a, mode="reduced"):
    """Q R = a with orthonormal Q: 'reduced' (k = min(m, n) columns), 'complete' (square Q)
    or 'r' (R alone); 'raw' gives LAPACK's geqrf result as NumPy does, (h, tau) with h
    (..., n, m) the transpose of `lax.linalg.geqrf`'s packed matrix (in a QRResult, as JAX
    returns it)."""
    a = _inexact_matrices("jnp.linalg.qr", a)
    if mode == "raw":
        h, tau = lax_linalg.geqrf(a)
        return QRResult(matrix_transpose(h), tau)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    return r if mode == "r" else QRResult(q, r)


def _uplo_lower(uplo):
    if uplo is None or uplo == "L":
        return True
    if uplo == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")


def eig(a):
    """(w, v): the complex eigenvalues and unit-norm right eigenvectors v[..., :, i] of a
    general square matrix (LAPACK's geev). Only the eigenvalues differentiate."""
    (a,) = _arraylike("jnp.linalg.eig", a)
    _check_square("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return w, v


def eigvals(a):
    """The complex eigenvalues of a general square matrix; forward and reverse mode
    differentiate them where they are distinct."""
    (a,) = _arraylike("jnp.linalg.eigvals", a)
    _check_square("eigvals", a)
    (w,) = lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w


def eigh(a, UPLO=None, symmetrize_input=True):  # noqa: N803 - NumPy's argument name
    """Ascending eigenvalues and orthonormal eigenvectors (columns) of Hermitian matrices."""
    (a,) = _arraylike("jnp.linalg.eigh", a)
    lower = _uplo_lower(UPLO)
    (a,) = promote_dtypes_inexact(a)
    _check_square("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803 - NumPy's argument name
    """Ascending eigenvalues of Hermitian matrices."""
    (a,) = _arraylike("jnp.linalg.eigvalsh", a)
    (a,) = promote_dtypes_inexact(a)
    w, _ = eigh(a, UPLO, symmetrize_input=symmetrize_input)
    return w


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """a = U diag(S) Vh with S descending; S alone without `compute_uv`.

    `hermitian` matrices take the eigendecomposition: singular values are the absolute
    eigenvalues, and the signs of the eigenvalues go into Vh.
    """
    a = _inexact_matrices("jnp.linalg.svd", a)
    if hermitian:
        v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
        s = ufuncs.abs(w)
        last = get_aval(s).ndim - 1
        if not compute_uv:
            return lax_shape.rev(lax_red.sort(s, dimension=last), (last,))
        sign = ufuncs.sign(w)
        idxs = lax_shape.broadcasted_iota(np.int32, get_aval(s).shape, last)
        s, idxs, sign = lax_red.sort((s, idxs, sign), dimension=last, num_keys=1)
        s, idxs, sign = (lax_shape.rev(t, (last,)) for t in (s, idxs, sign))
        u = take_along_axis(v, shape_ops.expand_dims(idxs, -2), axis=-1)
        vh = _H(ufuncs.multiply(u, shape_ops.expand_dims(sign, -2).astype(u.dtype)))
        return SVDResult(u, s, vh)
    if compute_uv:
        u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                  subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                          subset_by_index=subset_by_index)


def svdvals(x, /):
    """The singular values, descending."""
    (x,) = _arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):  # noqa: N803 - NumPy's name
    """The number of singular values above `rtol` (by default the largest singular value
    times max(m, n) times the dtype's epsilon)."""
    (M,) = _arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = promote_dtypes_inexact(M)
    if M.ndim < 2:
        return reductions.any(ufuncs.not_equal(M, 0)).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        eps = dtypes.finfo(s.dtype).eps
        rtol = reductions.amax(s, axis=-1) * np.asarray(max(M.shape[-2:]) * eps, s.dtype)
    rtol = asarray(rtol)
    rtol = shape_ops.expand_dims(rtol, rtol.ndim)
    return reductions.sum(ufuncs.greater(s, rtol), axis=-1)


# --------------------------------------------------------------------------------------
# Solves, inverses and determinants (through the LU decomposition)


def _lu_solve_differentiably(a, b):
    """a⁻¹ b for a (..., m, m) and b (..., m, k) with equal leading dimensions, through the
    LU decomposition and its derivative rule: what derivative rules apply to tangents (a
    custom rule applied to a linear value could not be transposed)."""
    lu, _, permutation = lax_linalg.lu(a)
    return lax_linalg.lu_solve(lu, permutation, b)


@custom_jvp
def _solve(a, b):
    return _lu_solve_differentiably(a, b)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    """d(a⁻¹ b) = a⁻¹ (ḃ - ȧ x), with the factors of the solve itself (the factorization is
    differentiated only at higher orders)."""
    (a, b), (a_dot, b_dot) = primals, tangents
    lu, _, permutation = lax_linalg.lu(a)
    x = lax_linalg.lu_solve(lu, permutation, b)
    rhs = ufuncs.subtract(b_dot, products.matmul(a_dot, x))
    return x, lax_linalg.lu_solve(lu, permutation, rhs)


def solve(a, b):
    """x with a x = b, for square a (..., m, m) and b (..., m, k) or (m,); leading
    dimensions broadcast."""
    a, b = _arraylike("jnp.linalg.solve", a, b)
    a, b = promote_dtypes_inexact(a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got "
                         f"a.shape={a.shape}")
    if (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]
            and a.shape[-1] != b.shape[-2]):
        raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0,"
                         " this would have been treated as a batched 1-dimensional solve. To "
                         "recover this behavior, use solve(a, b[..., None]).squeeze(-1).")
    vector = b.ndim == 1
    if vector:
        b = shape_ops.expand_dims(b, -1)
    if not (a.shape[-1] == a.shape[-2] == b.shape[-2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={a.shape} and "
                         f"b={b.shape[:-1] if vector else b.shape}")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    x = _solve(a, b)
    return x[..., 0] if vector else x


def inv(a):
    """The inverse of each square matrix (a solve against the identity)."""
    (a,) = _arraylike("jnp.linalg.inv", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise user_error(ValueError, (
            f"Argument to inv must have shape [..., n, n], got {a.shape}.\nWhat to do: only "
            "square matrices have inverses; for a non-square one use jnp.linalg.pinv, or "
            "jnp.linalg.lstsq to solve a least-squares problem."))
    eye = lax.convert_element_type(lax.eq(
        lax_shape.broadcasted_iota(np.int32, a.shape[-2:], 0),
        lax_shape.broadcasted_iota(np.int32, a.shape[-2:], 1)), a.dtype)
    return solve(a, lax_shape.broadcast(eye, a.shape[:-2]))


def _slogdet_closed_form(a):
    """det of 1x1 and 2x2 matrices by formula (no LU)."""
    if a.shape[-1] == 1:
        return a[..., 0, 0]
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _sign_and_log(det):
    return ufuncs.sign(det), ufuncs.real(ufuncs.log(ufuncs.abs(det)))


@custom_jvp
def _slogdet_small(a):
    return _sign_and_log(_slogdet_closed_form(a))


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet_small(x)
    if x.shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        x00, x01, x10, x11 = x[..., 0, 0], x[..., 0, 1], x[..., 1, 0], x[..., 1, 1]
        det = x00 * x11 - x01 * x10
        ans_dot = (g[..., 0, 0] * x11 - g[..., 0, 1] * x10 - g[..., 1, 0] * x01
                   + g[..., 1, 1] * x00) / det
    return (sign, ans), _slogdet_tangents(x, sign, ans_dot)


def _slogdet_tangents(x, sign, ans_dot):
    """The sign is constant for real matrices; for complex ones it turns with the phase."""
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        sign_dot = (ans_dot - ufuncs.real(ans_dot).astype(ans_dot.dtype)) * sign
        return sign_dot, ufuncs.real(ans_dot)
    return lax.zeros_like(sign), ans_dot


@custom_jvp
def _slogdet_lu(a):
    """From the LU diagonal and the parity of the pivots; -inf (sign 0) when singular."""
    dtype = a.dtype
    lu, pivots, _ = lax_linalg.lu(a)
    diag = diagonal(lu)
    is_zero = reductions.any(ufuncs.equal(diag, np.asarray(0, dtype)), axis=-1)
    iota = lax_shape.broadcasted_iota(pivots.dtype, pivots.shape, pivots.ndim - 1)
    parity = reductions.count_nonzero(ufuncs.not_equal(pivots, iota), axis=-1)
    if dtypes.issubdtype(dtype, np.complexfloating):
        sign = reductions.prod(diag / ufuncs.abs(diag).astype(dtype), axis=-1)
    else:
        sign = np.asarray(1, dtype)
        parity = parity + reductions.count_nonzero(ufuncs.less(diag, 0), axis=-1)
    flip = (np.asarray(-2, parity.dtype) * (parity % 2) + 1).astype(dtype)
    sign = ufuncs.where(is_zero, np.asarray(0, dtype), sign * flip)
    logdet = ufuncs.where(is_zero, np.asarray(-np.inf, dtype),
                          reductions.sum(ufuncs.log(ufuncs.abs(diag)).astype(dtype), axis=-1))
    return sign, ufuncs.real(logdet)


@_slogdet_lu.defjvp
def _slogdet_lu_jvp(primals, tangents):
    """d log|det a| = tr(a⁻¹ ȧ)."""
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet_lu(x)
    ans_dot = trace(_lu_solve_differentiably(x, g))
    return (sign, ans), _slogdet_tangents(x, sign, ans_dot)


def slogdet(a, *, method=None):
    """(sign, log|det|) of square matrices, through the LU decomposition."""
    a = _inexact_matrices("jnp.linalg.slogdet", a)
    _check_square("slogdet()", a)
    if method == "qr":
        raise NotImplementedError("slogdet(method='qr') is not implemented in didax; use the "
                                  "default method='lu'")
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         "(`None`), and 'qr'.")
    if a.shape[-1] in (1, 2):
        return SlogdetResult(*_slogdet_small(a))
    return SlogdetResult(*_slogdet_lu(a))


def _det_closed_form(a):
    """Determinants of 2x2 and 3x3 matrices by the rule of Sarrus."""
    if a.shape[-1] == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    def e(i, j):
        return a[..., i, j]

    return (e(0, 0) * e(1, 1) * e(2, 2) + e(0, 1) * e(1, 2) * e(2, 0)
            + e(0, 2) * e(1, 0) * e(2, 1) - e(0, 2) * e(1, 1) * e(2, 0)
            - e(0, 0) * e(1, 2) * e(2, 1) - e(0, 1) * e(1, 0) * e(2, 2))


def _cofactor_solve(a, b):
    """(det a, adj(a) b): det(a) a⁻¹ b, but finite for singular a.

    With P a = L U, det(a) a⁻¹ b = det(a) U⁻¹ L⁻¹ P b. Replacing U's last diagonal entry by
    the inverse of the product of the others (signed) keeps the last row of the result right
    when a has rank n - 1 (the other rows are multiplied by det(a) = 0); for lower ranks the
    adjugate is 0, which a failed (inf/nan) solve detects.
    """
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    dtype = a.dtype
    lu, pivots, permutation = lax_linalg.lu(a)
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = broadcast_to(b, batch + b.shape[-2:])
    lu = broadcast_to(lu, batch + lu.shape[-2:])
    diag = diagonal(lu)
    iota = lax_shape.broadcasted_iota(pivots.dtype, pivots.shape, pivots.ndim - 1)
    parity = reductions.count_nonzero(ufuncs.not_equal(pivots, iota), axis=-1)
    sign = (np.asarray(-2, parity.dtype) * (parity % 2) + 1).astype(dtype)
    partial_det = reductions.cumprod(diag, axis=-1) * shape_ops.expand_dims(sign, -1)
    lu = lu.at[..., -1, -1].set(1 / partial_det[..., -2])
    permutation = broadcast_to(permutation, batch + (n,))
    ones = lax_shape.full(x.shape[:-1], 1, dtype)
    d = lax_linalg.triangular_solve(lu, ones, left_side=True, lower=False)
    d = reductions.any(ufuncs.logical_or(ufuncs.isnan(d), ufuncs.isinf(d)), axis=-1)
    d = shape_ops.expand_dims(d, (-2, -1))
    zeros = lax_shape.full(x.shape, 0, dtype)
    x = ufuncs.where(d, zeros, x)
    x = take_along_axis(x, shape_ops.expand_dims(permutation, -1), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = joining.concatenate(
        (x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = ufuncs.where(d, zeros, x)
    return partial_det[..., -1], x


@custom_jvp
def _det(a):
    sign, logdet = slogdet(a)
    return sign * ufuncs.exp(logdet).astype(sign.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
    """d det a = tr(adj(a) ȧ), which stays right at singular a."""
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, trace(z)


def det(a):
    """The determinant of each square matrix: by formula up to 3x3, else from the LU
    decomposition."""
    a = _inexact_matrices("jnp.linalg.det", a)
    if a.shape[-1] != a.shape[-2]:
        raise user_error(ValueError, (
            f"Argument to _det() must have shape [..., n, n], got {a.shape}"))
    if a.shape[-1] in (2, 3):
        return _det_closed_form(a)
    return _det(a)


# --------------------------------------------------------------------------------------
# Pseudo-inverse, least squares, powers, condition numbers and tensor inverses


def _symmetrize(x):
    return ufuncs.divide(ufuncs.add(x, _H(x)), np.asarray(2, x.dtype))


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse (..., n, m) of (..., m, n) matrices, through the SVD:
    singular values at most `rtol` times the largest are dropped (by default `rtol` is
    10 max(m, n) eps, JAX's choice rather than NumPy's 1e-15)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    return _pinv(a, rtol, hermitian)


def _pinv_impl(a, rtol, hermitian):
    (a,) = _arraylike("jnp.linalg.pinv", a)
    (arr,) = promote_dtypes_inexact(a)
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        return creation.empty(arr.shape[:-2] + (n, m), arr.dtype)
    arr = ufuncs.conjugate(arr)
    if rtol is None:
        rtol = np.asarray(10. * max(m, n) * dtypes.finfo(arr.dtype).eps,
                          dtypes.finfo(arr.dtype).dtype)
    rtol = asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = shape_ops.expand_dims(rtol, rtol.ndim)
    rtol = lax_shape.expand_dims(rtol, tuple(range(s.ndim - rtol.ndim)))
    cutoff = ufuncs.multiply(rtol, s[..., 0:1])
    s = where(ufuncs.greater(s, cutoff), s, np.inf).astype(u.dtype)
    res = products.matmul(matrix_transpose(vh),
                          ufuncs.divide(matrix_transpose(u), s[..., None]))
    return lax.convert_element_type(res, arr.dtype)


_pinv = custom_jvp(_pinv_impl, nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    """Golub and Pereyra (1973): dp = -p ȧ p + p p^H ȧ^H (1 - a p) + (1 - p a) ȧ^H p^H p,
    associated as JAX does for tall and wide matrices."""
    (a,), (a_dot,) = primals, tangents
    p = pinv(a, rtol=rtol, hermitian=hermitian)
    (a,) = promote_dtypes_inexact(asarray(a))
    a_dot = asarray(a_dot).astype(a.dtype)
    if hermitian:
        a, a_dot = _symmetrize(a), _symmetrize(a_dot)
    mm = products.matmul
    m, n = a.shape[-2:]
    if m >= n:
        s = mm(mm(p, _H(p)), _H(a_dot))
        t = mm(mm(_H(a_dot), _H(p)), p)
        p_dot = (-mm(mm(p, a_dot), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t))
    else:
        s = mm(p, mm(_H(p), _H(a_dot)))
        t = mm(_H(a_dot), mm(_H(p), p))
        p_dot = (-mm(p, mm(a_dot, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t)))
    return p, p_dot


class _LstsqResult(NamedTuple):
    x: object
    resid: object
    rank: object
    s: object


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """The least-squares solution x of a x = b for a (m, n) and b (m,) or (m, k), through the
    SVD: (x, residuals, rank, singular values). Residuals are always returned (the squared
    norms of b - a x per column) unless `numpy_resid`, which follows NumPy (empty when the
    rank is below n or m <= n; this needs a concrete rank)."""
    a, b = _arraylike("jnp.linalg.lstsq", a, b)
    a, b = promote_dtypes_inexact(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = b.ndim
    if b_orig_ndim == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = a.shape
    dtype = a.dtype
    if a.size == 0:
        s = creation.empty(0, dtype=dtype)
        rank = asarray(np.array(0, dtype=dtypes.canonicalize_dtype(int)))
        x = creation.zeros((n, *b.shape[1:]), dtype=dtype)
    else:
        eps = dtypes.finfo(dtype).eps
        if rcond is None:
            rcond = float(eps) * max(n, m)
        else:
            rcond = where(ufuncs.less(rcond, 0), eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = ufuncs.logical_and(ufuncs.greater(s, 0), ufuncs.greater_equal(
            s, ufuncs.multiply(asarray(rcond).astype(s.dtype), s[0])))
        rank = reductions.sum(mask)
        safe_s = where(mask, s, 1).astype(dtype)
        s_inv = where(mask, ufuncs.divide(1, safe_s), 0)[:, None]
        u_t_b = products.matmul(_H(u), b)
        x = products.matmul(_H(vt), ufuncs.multiply(s_inv, u_t_b))
    if numpy_resid and (rank < n or m <= n):
        resid = asarray(np.array([], dtypes.canonicalize_dtype(np.float64)))
    else:
        b_estimate = products.matmul(a, x)
        resid = ufuncs.square(norm(ufuncs.subtract(b, b_estimate), axis=0))
    if b_orig_ndim == 1:
        x = shape_ops.ravel(x)
    return _LstsqResult(x, resid, rank, s)


def matrix_power(a, n):
    """a to the integer power n by repeated squaring (the inverse's power for n < 0, the
    identity for n = 0)."""
    (arr,) = _arraylike("jnp.linalg.matrix_power", a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return broadcast_to(creation.eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if n < 0:
        arr = inv(arr)
        n = -n
    mm = products.matmul
    if n == 1:
        return arr
    if n == 2:
        return mm(arr, arr)
    if n == 3:
        return mm(mm(arr, arr), arr)
    z = result = None
    while n > 0:
        z = arr if z is None else mm(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else mm(result, z)
    return result


def cond(x, p=None):
    """The condition number norm(x, p) norm(inv(x), p): for p in (None, 2, -2) the ratio of
    extreme singular values; NaNs from singular matrices become inf."""
    (arr,) = _arraylike("cond", x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got "
                         f"arr.shape={arr.shape}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got "
                         f"arr.shape={arr.shape}")
    if p is None or p == 2:
        s = svdvals(arr)
        return ufuncs.divide(s[..., 0], s[..., -1])
    if p == -2:
        s = svdvals(arr)
        r = ufuncs.divide(s[..., -1], s[..., 0])
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got "
                             f"arr.shape={arr.shape}")
        r = ufuncs.multiply(norm(arr, ord=p, axis=(-2, -1)),
                            norm(inv(arr), ord=p, axis=(-2, -1)))
    no_nans = ufuncs.logical_not(reductions.any(ufuncs.isnan(arr), axis=(-2, -1)))
    return where(ufuncs.logical_and(ufuncs.isnan(r), no_nans), np.inf, r)


def tensorinv(a, ind=2):
    """The inverse of `tensordot(·, ·, ind)`: shape a.shape[ind:] + a.shape[:ind]."""
    (arr,) = _arraylike("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting_shape, batch_shape = arr.shape[:ind], arr.shape[ind:]
    flatshape = (math.prod(contracting_shape), math.prod(batch_shape))
    if flatshape[0] != flatshape[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={arr.shape} with ind={ind}.")
    return inv(arr.reshape(flatshape)).reshape(*batch_shape, *contracting_shape)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b, after moving `axes` of a to the end."""
    a_arr, b_arr = _arraylike("tensorsolve", a, b)
    if axes is not None:
        a_arr = shape_ops.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
    out_shape = a_arr.shape[b_arr.ndim:]
    if a_arr.shape[:b_arr.ndim] != b_arr.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of b."
                         f" got a.shape={a_arr.shape}, b.shape={b_arr.shape}")
    if b_arr.size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == "
                         f"prod(a.shape[b.ndim:]); got a.shape={a_arr.shape}, "
                         f"b.ndim={b_arr.ndim}.")
    a_arr = a_arr.reshape(b_arr.size, math.prod(out_shape))
    return solve(a_arr, shape_ops.ravel(b_arr)).reshape(out_shape)
