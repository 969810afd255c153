"""Matrix decompositions and triangular solves: the primitives behind `lax.linalg`,
`numpy.linalg` and `scipy.linalg`.

Every primitive works on the last two dimensions and is batched over the leading ones, as
in JAX: the NumPy impls are natively batched (NumPy's LAPACK wrappers loop over leading
dimensions), so a batching rule only has to move the vmapped dimension to the front.
Failed factorizations give NaNs, not exceptions, because JAX's do. The JVP rules are
JAX's, written with the primitives of this module; `triangular_solve` is linear in its
right-hand side and has a transpose rule for it. The primitives of QR in LAPACK's packed
form (geqrf, geqp3, householder_product, ormqr) have no derivatives, as in JAX.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ShapedArray, Zero, get_aval, is_zero
from didax._src.interpreters.batching import bdim_at_front, moveaxis
from didax._src.interpreters.jvp import defjvp2, defjvp_zero
from didax._src.interpreters.transpose import is_undefined
from didax._src.lax import elementwise as ew
from didax._src.lax import linalg_kernels
from didax._src.lax import shape as lax_shape
from didax._src.lax.dot import Precision, dot_general
from didax._src.lax.indexing import GatherDimensionNumbers, gather
from didax._src.lax.reduction import sort_key_val
from didax._src.typecheck import check_dtype, check_same_dtypes, inexact, sint

# --------------------------------------------------------------------------------------
# Matrix helpers (lax only), on the last two dimensions


def _is_complex(x) -> bool:
    return dtypes.issubdtype(get_aval(x).dtype, np.complexfloating)


def _T(x):
    nd = get_aval(x).ndim
    return lax_shape.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _H(x):
    return ew.conj(_T(x)) if _is_complex(x) else _T(x)


def _const(x, value):
    return np.asarray(value, get_aval(x).dtype)


def symmetrize(x):
    """(x + x^H) / 2: what JAX's decompositions factor when asked to symmetrize."""
    return ew.div(ew.add(x, _H(x)), _const(x, 2))


def _tri_mask(shape, k):
    """True where column <= row + k, broadcast over the leading dimensions of `shape`."""
    n, m = shape[-2:]
    rows = ew.add(lax_shape.broadcasted_iota(np.int32, (n, m), 0), np.int32(k))
    cols = lax_shape.broadcasted_iota(np.int32, (n, m), 1)
    mask = ew.ge(rows, cols)
    return lax_shape.broadcast(mask, tuple(shape[:-2]))


def _tril(x, k=0):
    aval = get_aval(x)
    return ew.select_n(_tri_mask(aval.shape, k), lax_shape.full(aval.shape, 0, aval.dtype), x)


def _triu(x, k=0):
    aval = get_aval(x)
    return ew.select_n(_tri_mask(aval.shape, k - 1), x,
                       lax_shape.full(aval.shape, 0, aval.dtype))


def _eye(dtype, n, batch=()):
    rows = lax_shape.broadcasted_iota(np.int32, (n, n), 0)
    cols = lax_shape.broadcasted_iota(np.int32, (n, n), 1)
    eye = ew.convert_element_type(ew.eq(rows, cols), dtype)
    return lax_shape.broadcast(eye, tuple(batch))


def _matmul(x, y):
    """Matrix products batched over equal leading dimensions."""
    nd = get_aval(x).ndim
    batch = tuple(range(nd - 2))
    return dot_general(x, y, (((nd - 1,), (nd - 2,)), (batch, batch)),
                       precision=Precision.HIGHEST)


def _diagonal(x):
    """The main diagonals: in a flattened matrix they are one strided slice."""
    *batch, n, m = get_aval(x).shape
    k = min(n, m)
    flat = lax_shape.reshape(x, (*batch, n * m))
    nb = len(batch)
    return lax_shape.slice(flat, (0,) * (nb + 1), (*batch, (k - 1) * (m + 1) + 1 if k else 0),
                           (1,) * nb + (m + 1,))


def _real(x):
    return ew.real(x) if _is_complex(x) else x


def _permute_rows(x, perm):
    """x[..., perm[..., i], :] for every i: a gather batched over the leading dimensions."""
    shape = get_aval(x).shape
    nb = len(shape) - 2
    idx = lax_shape.reshape(perm, (*get_aval(perm).shape, 1))
    dnums = GatherDimensionNumbers(
        offset_dims=(nb + 1,), collapsed_slice_dims=(nb,), start_index_map=(nb,),
        operand_batching_dims=tuple(range(nb)), start_indices_batching_dims=tuple(range(nb)))
    return gather(x, idx, dnums, (1,) * (nb + 1) + (shape[-1],), mode="clip")


# --------------------------------------------------------------------------------------
# Shared pieces of the primitives

# Matrices up to this size are factored and solved by linalg_kernels' loops over the batch;
# larger ones by LAPACK's blocked routines (Cholesky) and blocked substitution with matrix
# products.
_SMALL = 32


def _check_operand(name, aval, i=0):
    if aval.ndim < 2:
        raise TypeError(f"Input {i} to {name} must have rank at least 2, but got "
                        f"shape={aval.shape}")
    check_dtype(name, aval, inexact)


def _check_lapack_dtype(name, dtype):
    """LAPACK has no float16 routines; JAX on CPU refuses such inputs, and so does didax."""
    if dtype == np.float16:
        raise NotImplementedError(f"{name}: Unsupported dtype float16. The decompositions run "
                                  "LAPACK (through NumPy), which has no float16 routines; "
                                  "convert the input to float32")


def _per_matrix_or_nan(fn, x, n_out):
    """`fn` on each matrix of `x` separately; where LAPACK fails, the outputs of that
    matrix are NaN (JAX's convention) instead of an exception for the whole batch."""
    batch = x.shape[:-2]
    flat = x.reshape((math.prod(batch),) + x.shape[-2:])

    def as_tuple(result):
        return tuple(result) if n_out > 1 else (result,)

    # A well-posed problem of the same shape gives the outputs' shapes and dtypes.
    outs = [np.full((len(flat),) + np.shape(t), np.nan, np.asarray(t).dtype)
            for t in as_tuple(fn(np.eye(*x.shape[-2:], dtype=x.dtype)))]
    for i, matrix in enumerate(flat):
        try:
            result = as_tuple(fn(matrix))
        except np.linalg.LinAlgError:
            continue
        for out, r in zip(outs, result):
            out[i] = r
    outs = [o.reshape(batch + o.shape[1:]) for o in outs]
    return outs if n_out > 1 else outs[0]


def _lapack_call(name, fn, x, n_out=1):
    """`fn` on the whole batch (one LAPACK loop), falling back to one matrix at a time
    when some matrix fails."""
    _check_lapack_dtype(name, x.dtype)
    try:
        out = fn(x)
    except np.linalg.LinAlgError:
        out = _per_matrix_or_nan(fn, x, n_out)
    if n_out == 1:
        return np.asarray(out)
    return [np.asarray(o) for o in out]


def _batch_at_front(prim):
    """The impl is batched over leading dimensions: put the vmapped one first."""

    def rule(size, vals, dims, **params):
        args = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        out = prim.bind(*args, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)

    prim.def_batch(rule)


# --------------------------------------------------------------------------------------
# cholesky: the lower factor L of A = L L^H, from A's lower triangle

cholesky_p = core.primitive("cholesky")


def _cholesky_aval(x):
    _check_operand("cholesky", x)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape "
                         f"{x.shape[-2:]}.")
    return x


def _cholesky_impl(x):
    """Small real matrices: one C loop over the batch (`linalg_kernels`); larger or complex
    ones: LAPACK's blocked potrf through NumPy. (The choice depends on the shape and dtype
    only, so every call, on either tier, gives the same bits.)"""
    *batch, n, _ = x.shape
    if x.dtype in (np.float32, np.float64) and n <= _SMALL:
        return linalg_kernels.potrf(x.reshape(math.prod(batch), n, n)).reshape(x.shape)
    return _lapack_call("cholesky", np.linalg.cholesky, x)


def _cholesky_jvp(primals, tangents):
    """L̇ = L Φ(L⁻¹ Ȧ L⁻ᴴ), Φ taking the lower triangle with its diagonal halved
    (Murray, arXiv:1602.07527)."""
    (x,), (sigma_dot,) = primals, tangents
    L = _tril(cholesky_p.bind(x))
    tmp = triangular_solve(L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True,
                           lower=True)
    inner = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
    aval = get_aval(inner)
    halving = ew.add(_const(inner, 1), _eye(aval.dtype, aval.shape[-1], aval.shape[:-2]))
    return L, _matmul(L, ew.div(_tril(inner), halving))


cholesky_p.def_impl(_cholesky_impl)
cholesky_p.def_abstract_eval(_cholesky_aval)
cholesky_p.def_jvp(_cholesky_jvp)
_batch_at_front(cholesky_p)


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor of each matrix (NaNs where it is not positive definite).

    With `symmetrize_input` the factored matrix is (x + x^H) / 2, so that derivatives
    treat the input as symmetric; otherwise only the lower triangle is read.
    """
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(cholesky_p.bind(x))


# --------------------------------------------------------------------------------------
# triangular_solve: op(A) X = B (left_side) or X op(A) = B, A triangular

triangular_solve_p = core.primitive("triangular_solve")


def _forward_substitution(t, b, unit_diagonal):
    """X with T X = B, reading only the lower triangle of T: blocks of rows are updated by
    one matrix product with the rows already solved, then solved row by row."""
    m = t.shape[-1]
    x = np.empty(b.shape, b.dtype)
    for s in range(0, m, _SUBSTITUTION_BLOCK):
        e = min(s + _SUBSTITUTION_BLOCK, m)
        rhs = b[..., s:e, :]
        if s:
            rhs = rhs - t[..., s:e, :s] @ x[..., :s, :]
        for i in range(s, e):
            r = rhs[..., i - s, :]
            if i > s:
                r = r - (t[..., i:i + 1, s:i] @ x[..., s:i, :])[..., 0, :]
            x[..., i, :] = r if unit_diagonal else r / t[..., i, i, None]
    return x


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    """Every case is reduced to a lower-triangular solve from the left, on views."""
    if conjugate_a:
        a = np.conj(a)
    if transpose_a:
        a, lower = np.swapaxes(a, -1, -2), not lower
    if not left_side:  # X A = B  <=>  A^T X^T = B^T
        a, b, lower = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not lower
    if not lower:  # reversing rows and columns makes an upper-triangular matrix lower
        a, b = a[..., ::-1, ::-1], b[..., ::-1, :]
    *batch, m, k = b.shape
    if m <= _SMALL:  # (a C loop over the batch, or its NumPy twin: the same bits)
        count = math.prod(batch)
        x = linalg_kernels.lower_solve(a.reshape(count, m, m), b.reshape(count, m, k),
                                       unit_diagonal).reshape(b.shape)
    else:
        x = _forward_substitution(a, b, unit_diagonal)
    if not lower:
        x = x[..., ::-1, :]
    if not left_side:
        x = np.swapaxes(x, -1, -2)
    return np.ascontiguousarray(x)


def _triangular_solve_aval(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    _check_operand("triangular_solve", a, 0)
    _check_operand("triangular_solve", b, 1)
    check_same_dtypes("triangular_solve", (a, b))
    if a.ndim != b.ndim:
        raise TypeError(f"All inputs to triangular_solve must have the same number of batch "
                        f"dimensions, but got {[a.ndim - 2, b.ndim - 2]} batch dimensions "
                        "for the inputs.")
    if a.shape[:-2] != b.shape[:-2]:
        raise TypeError(f"triangular_solve requires equal batch dimensions, got "
                        f"{a.shape[:-2]} and {b.shape[:-2]}.")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The first input to triangular_solve must be a square matrix. Got "
                         f"shape {a.shape[-2:]}.")
    common = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != common:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: "
                         f"{a.shape[-2:]} and {b.shape[-2:]}.")
    return ShapedArray(b.shape, b.dtype, a.weak_type and b.weak_type)


def _triangular_solve_jvp_a(g_a, ans, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    """d X = -op(A)⁻¹ op(dA) X (or -X op(dA) op(A)⁻¹), in the cheaper order."""
    m, n = get_aval(b).shape[-2:]
    k = 1 if unit_diagonal else 0
    g_a = _tril(g_a, -k) if lower else _triu(g_a, k)
    g_a = ew.neg(g_a)
    g_a = _T(g_a) if transpose_a else g_a
    g_a = ew.conj(g_a) if conjugate_a else g_a

    def a_inverse(rhs):
        return triangular_solve_p.bind(a, rhs, left_side=left_side, lower=lower,
                                       transpose_a=transpose_a, conjugate_a=conjugate_a,
                                       unit_diagonal=unit_diagonal)

    if left_side:
        return a_inverse(_matmul(g_a, ans)) if m > n else _matmul(a_inverse(g_a), ans)
    return a_inverse(_matmul(ans, g_a)) if m < n else _matmul(ans, a_inverse(g_a))


def _triangular_solve_jvp_b(g_b, ans, a, b, **params):
    return triangular_solve_p.bind(a, g_b, **params)


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
    """Linear in b (like `div` in its numerator): the transpose solves with op(A)^T."""
    if is_undefined(a):
        raise NotImplementedError("transpose of 'triangular_solve': it is not linear in the "
                                  "triangular matrix a")
    if is_zero(ct):
        return [None, Zero(b.aval)]
    ct_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)
    return [None, ct_b]


def _triangular_solve_batch(size, vals, dims, **params):
    """An unbatched A solves the vmapped right-hand sides as extra columns (or rows) of
    one B; otherwise both go to the front."""
    (a, b), (da, db) = vals, dims
    if da is None:
        if params["left_side"]:
            b = moveaxis(b, db, -1)
            shape = get_aval(b).shape
            flat = lax_shape.reshape(b, shape[:-2] + (shape[-2] * shape[-1],))
            out_dim = len(shape) - 1
        else:
            b = moveaxis(b, db, -2)
            shape = get_aval(b).shape
            flat = lax_shape.reshape(b, shape[:-3] + (shape[-3] * shape[-2], shape[-1]))
            out_dim = len(shape) - 2
        out = triangular_solve_p.bind(a, flat, **params)
        return lax_shape.reshape(out, shape), out_dim
    a, b = bdim_at_front(a, da, size), bdim_at_front(b, db, size)
    return triangular_solve_p.bind(a, b, **params), 0


triangular_solve_p.def_impl(_triangular_solve_impl)
triangular_solve_p.def_abstract_eval(_triangular_solve_aval)
defjvp2(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)
triangular_solve_p.def_transpose(_triangular_solve_transpose)
triangular_solve_p.def_batch(_triangular_solve_batch)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solves op(a) x = b (`left_side`) or x op(a) = b for x, reading one triangle of a.

    op transposes a with `transpose_a` and conjugates it with `conjugate_a`; a `b` with one
    dimension fewer than `a` is a (batch of) vector(s).
    """
    conjugate_a = bool(conjugate_a) and _is_complex(a)
    singleton = np.ndim(b) == np.ndim(a) - 1
    if singleton:
        b = lax_shape.expand_dims(b, (np.ndim(b) if left_side else np.ndim(b) - 1,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
                                  unit_diagonal=bool(unit_diagonal))
    if singleton:
        nd = get_aval(out).ndim
        out = lax_shape.squeeze(out, (nd - 1 if left_side else nd - 2,))
    return out


_SUBSTITUTION_BLOCK = 32  # rows solved one by one between matrix-product updates

lu_p = core.primitive("lu", multiple_results=True)


def _lu_impl(x):
    """Right-looking elimination, one column at a time (`linalg_kernels.getrf`: a C loop
    over the batch, or its NumPy twin batched over it, with the same bits).

    The pivot is the first entry of largest magnitude (|re| + |im| for complex), as LAPACK
    chooses it; a zero pivot column is left unscaled, as in getrf.
    """
    *batch, m, n = x.shape
    _check_lapack_dtype("lu", x.dtype)
    lu, pivots, perm = linalg_kernels.getrf(x.reshape(math.prod(batch), m, n))
    return [lu.reshape(x.shape), pivots.reshape(*batch, min(m, n)), perm.reshape(*batch, m)]


def _lu_aval(x):
    _check_operand("lu", x)
    *batch, m, n = x.shape
    int32 = np.dtype(np.int32)
    return [x, ShapedArray((*batch, min(m, n)), int32), ShapedArray((*batch, m), int32)]


def _lu_jvp(primals, tangents):
    """From LU = P A: L⁻¹ P Ȧ U⁻¹ = L⁻¹L̇ + U̇U⁻¹, strictly lower plus upper
    (de Hoog, Anderssen and Lukas)."""
    (a,), (a_dot,) = primals, tangents
    lu, pivots, permutation = lu_p.bind(a)
    *batch, m, n = get_aval(a).shape
    dtype = get_aval(a).dtype
    k = min(m, n)
    nb = len(batch)
    zero = _const(lu, 0)
    no_pad = [(0, 0, 0)] * nb
    l_part = lax_shape.slice(lu, (0,) * (nb + 2), (*batch, m, k))
    l_factor = lax_shape.pad(_tril(l_part, -1), zero, no_pad + [(0, 0, 0), (0, m - k, 0)])
    l_factor = ew.add(l_factor, _eye(dtype, m, batch))
    u_part = lax_shape.slice(lu, (0,) * (nb + 2), (*batch, k, n))
    u = lax_shape.pad(_triu(u_part), zero, no_pad + [(0, n - k, 0), (0, 0, 0)])
    u_eye = lax_shape.pad(_eye(dtype, n - k, batch), zero,
                          no_pad + [(k, 0, 0), (k, 0, 0)])
    u = ew.add(u, u_eye)
    la = triangular_solve(l_factor, _permute_rows(a_dot, permutation), left_side=True, lower=True,
                          unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, lower=False)
    lu_dot = ew.add(_matmul(l_factor, _tril(lau, -1)), _matmul(_triu(lau), u))
    int_tangent = [Zero(get_aval(pivots).to_tangent_aval()),
                   Zero(get_aval(permutation).to_tangent_aval())]
    return [lu, pivots, permutation], [lu_dot, *int_tangent]


lu_p.def_impl(_lu_impl)
lu_p.def_abstract_eval(_lu_aval)
lu_p.def_jvp(_lu_jvp)
_batch_at_front(lu_p)


def lu(x):
    """LU decomposition with partial pivoting: (lu, pivots, permutation) with
    x[..., permutation, :] = L U, L unit lower triangular and U upper triangular, both
    packed in `lu`; `pivots` are the row swaps in LAPACK's form (0-based)."""
    return tuple(lu_p.bind(x))


def lu_solve(lu, permutation, b, trans: int = 0):
    """Solves A x = b (trans 0), A^T x = b (1) or A^H x = b (2) from `lu(A)`, for
    b of shape (..., m, k) with the same leading dimensions as `lu`."""
    if trans == 0:
        x = _permute_rows(b, permutation)
        x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return triangular_solve(lu, x, left_side=True, lower=False)
    if trans not in (1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    conj = trans == 2
    x = triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                         conjugate_a=conj)
    x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True,
                         transpose_a=True, conjugate_a=conj)
    return _permute_rows(x, _inverse_permutation(permutation))


def _inverse_permutation(perm):
    aval = get_aval(perm)
    iota = lax_shape.broadcasted_iota(aval.dtype, aval.shape, aval.ndim - 1)
    return sort_key_val(perm, iota, dimension=aval.ndim - 1)[1]


lu_pivots_to_permutation_p = core.primitive("lu_pivots_to_permutation")


def _lu_pivots_to_permutation_impl(pivots, *, permutation_size):
    *batch, k = pivots.shape
    count = math.prod(batch)
    flat = pivots.reshape(count, k)
    rows = np.arange(count)
    perm = np.broadcast_to(np.arange(permutation_size, dtype=pivots.dtype),
                           (count, permutation_size)).copy()
    for i in range(k):
        j = flat[:, i]
        perm[rows, i], perm[rows, j] = perm[rows, j], perm[rows, i].copy()
    return perm.reshape(*batch, permutation_size)


def _lu_pivots_to_permutation_aval(pivots, *, permutation_size):
    if pivots.ndim < 1:
        raise TypeError(f"Input 0 to lu_pivots_to_permutation must have rank at least 1, "
                        f"but got shape={pivots.shape}")
    check_dtype("lu_pivots_to_permutation", pivots, sint)
    if permutation_size < pivots.shape[-1]:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the "
                         f"trailing dimension of the pivots. Got pivots size "
                         f"{pivots.shape[-1]}")
    return ShapedArray((*pivots.shape[:-1], permutation_size), pivots.dtype)


lu_pivots_to_permutation_p.def_impl(_lu_pivots_to_permutation_impl)
lu_pivots_to_permutation_p.def_abstract_eval(_lu_pivots_to_permutation_aval)
defjvp_zero(lu_pivots_to_permutation_p)
_batch_at_front(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation that LAPACK-style row swaps `pivots` apply to range(size)."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


# --------------------------------------------------------------------------------------
# qr: A = Q R, Q with orthonormal columns, R upper triangular (Householder, as LAPACK)

qr_p = core.primitive("qr", multiple_results=True)


def _qr_impl(x, *, pivoting, full_matrices, use_magma):
    mode = "complete" if full_matrices else "reduced"
    return _lapack_call("qr", lambda a: np.linalg.qr(a, mode=mode), x, n_out=2)


def _qr_aval(x, *, pivoting, full_matrices, use_magma):
    _check_operand("qr", x)
    if pivoting:
        raise NotImplementedError("qr(pivoting=True): column-pivoted QR is not implemented "
                                  "in didax")
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    return [x.update(shape=(*batch, m, k)), x.update(shape=(*batch, k, n))]


def _thin_qr_jvp(q, r, dx):
    """JVP of the QR decomposition of (..., m, n) matrices with m >= n (J. Townsend)."""
    dx_rinv = triangular_solve(r, dx)  # dx r^{-1}
    qt_dx_rinv = _matmul(_H(q), dx_rinv)
    qt_dx_rinv_lower = _tril(qt_dx_rinv, -1)
    do = ew.sub(qt_dx_rinv_lower, _H(qt_dx_rinv_lower))  # skew-symmetric
    if _is_complex(q):
        aval = get_aval(qt_dx_rinv)
        imag = ew.sub(qt_dx_rinv, ew.convert_element_type(ew.real(qt_dx_rinv), aval.dtype))
        do = ew.add(do, ew.mul(_eye(aval.dtype, aval.shape[-1], aval.shape[:-2]), imag))
    dq = ew.add(_matmul(q, ew.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _matmul(ew.sub(qt_dx_rinv, do), r)
    return dq, dr


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    *batch, m, n = get_aval(x).shape
    nb = len(batch)

    def block(v, rows, cols):
        (r0, r1), (c0, c1) = rows, cols
        return lax_shape.slice(v, (0,) * nb + (r0, c0), (*batch, r1, c1))

    if m < n:  # wide: X = [X1 X2], Q and R1 from the square X1, R2 = Q^H X2
        dq, dr1 = _thin_qr_jvp(q, block(r, (0, m), (0, m)), block(dx, (0, m), (0, m)))
        dr2 = ew.add(_matmul(_H(dq), block(x, (0, m), (m, n))),
                     _matmul(_H(q), block(dx, (0, m), (m, n))))
        return [q, r], [dq, lax_shape.concatenate([dr1, dr2], nb + 1)]
    q_mn = block(q, (0, m), (0, n)) if full_matrices else q
    r_nn = block(r, (0, n), (0, n)) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return [q, r], [dq_mn, dr_nn]
    # The completion of Q (arXiv:2409.13374, eqs. 32-33).
    q_nn, q_pn = block(q_mn, (0, n), (0, n)), block(q_mn, (n, m), (0, n))
    q_mp = block(q, (0, m), (n, m))
    dq_nn, dq_pn = block(dq_mn, (0, n), (0, n)), block(dq_mn, (n, m), (0, n))
    dtype = get_aval(q).dtype
    lu_factor, _, perm = lu(ew.sub(q_nn, _eye(dtype, n, batch)))
    z_pn_h = lu_solve(lu_factor, perm, _H(q_pn), trans=2)
    z_pn = _H(z_pn_h)
    dq_mp = ew.sub(_matmul(dq_mn, z_pn_h),
                   _matmul(ew.add(q_mn, _matmul(q_mp, z_pn)),
                           _H(ew.sub(dq_pn, _matmul(z_pn, dq_nn)))))
    dq = lax_shape.concatenate([dq_mn, dq_mp], nb + 1)
    dr = lax_shape.concatenate([dr_nn, lax_shape.full((*batch, m - n, n), 0, dtype)], nb)
    return [q, r], [dq, dr]


qr_p.def_impl(_qr_impl)
qr_p.def_abstract_eval(_qr_aval)
qr_p.def_jvp(_qr_jvp)
_batch_at_front(qr_p)


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """(q, r) with x = q r: q is (..., m, m) and r (..., m, n) with `full_matrices`,
    else (..., m, k) and (..., k, n) for k = min(m, n)."""
    if pivoting:
        raise NotImplementedError("qr(pivoting=True): column-pivoted QR is not implemented "
                                  "in didax")
    return tuple(qr_p.bind(x, pivoting=False, full_matrices=bool(full_matrices),
                           use_magma=use_magma))


# --------------------------------------------------------------------------------------
# geqrf, geqp3, householder_product, ormqr: QR in LAPACK's packed form. R is the upper
# triangle of the factored matrix; below the diagonal, column i holds the reflector v_i
# (its entry i is an implied 1, the entries above it zeros), and with the scalars tau,
# Q = H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^H. JAX defines no derivatives for
# these primitives, not even ormqr's in c, in which it is linear; neither does didax.


def _no_derivatives(prim):
    reason = (f"JAX defines no derivative for {prim.name} (its jvp raises 'Differentiation "
              f"rule for {prim.name!r} not implemented'); differentiate lax.linalg.qr (or "
              f"jnp.linalg.qr in mode 'reduced' or 'complete') instead")
    prim.mark_absent("jvp", reason)
    prim.mark_absent("transpose", reason)


def _check_packed_operands(name, avals, ranks, float_operands):
    """JAX's checks of the operands of the packed-QR primitives: ranks, dtypes (the float
    operands sharing one) and equal batch dimensions."""
    for i, (aval, rank) in enumerate(zip(avals, ranks)):
        if aval.ndim < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                            f"shape={aval.shape}")
        check_dtype(name, aval, inexact if i in float_operands else sint,
                    f" at position {i}")
    floats = [avals[i] for i in float_operands]
    if any(a.dtype != floats[0].dtype for a in floats[1:]):
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(a.dtype.name for a in floats)}.")
    batch_ranks = [a.ndim - r for a, r in zip(avals, ranks)]
    if len(set(batch_ranks)) > 1:
        raise TypeError(f"All inputs to {name} must have the same number of batch "
                        f"dimensions, but got {batch_ranks} batch dimensions for the inputs.")
    batches = [a.shape[:b] for a, b in zip(avals, batch_ranks)]
    if any(b != batches[0] for b in batches[1:]):
        raise ValueError(f"All inputs to {name} must have the same batch dimensions, but "
                         f"got shapes {', '.join(str(a.shape) for a in avals)}.")


def _reflector(a, i):
    """v_i from packed reflectors `a` (..., m, n): a[..., i:, i] with its first entry 1."""
    v = a[..., i:, i].copy()
    v[..., 0] = 1
    return v


def _reflect_rows(c, v, tau):
    """c <- (I - tau v v^H) c in place, batched: c (..., r, p), v (..., r), tau (...)."""
    w = np.matmul(v.conj()[..., None, :], c)
    c -= v[..., :, None] * (tau[..., None, None] * w)  # (LAPACK's order: v_i (tau w_j))


def _reflect_columns(c, v, tau):
    """c <- c (I - tau v v^H) in place, batched: c (..., p, r), v (..., r), tau (...)."""
    w = np.matmul(c, v[..., :, None])
    c -= (tau[..., None, None] * w) * v.conj()[..., None, :]


geqrf_p = core.primitive("geqrf", multiple_results=True)


def _geqrf_impl(a):
    """LAPACK's geqrf through NumPy, which returns its result column-major: transposed.
    (NumPy runs the 32-bit types' in double precision and rounds the result, where JAX runs
    sgeqrf/cgeqrf: the two agree to float32 rounding, not to the bit.)"""
    _check_lapack_dtype("geqrf", a.dtype)
    h, taus = np.linalg.qr(a, mode="raw")
    return [np.ascontiguousarray(np.swapaxes(h, -1, -2)), np.asarray(taus, a.dtype)]


def _geqrf_aval(a):
    _check_operand("geqrf", a)
    *batch, m, n = a.shape
    return [a, a.update(shape=(*batch, min(m, n)))]


geqrf_p.def_impl(_geqrf_impl)
geqrf_p.def_abstract_eval(_geqrf_aval)
_no_derivatives(geqrf_p)
_batch_at_front(geqrf_p)


def geqrf(a):
    """Householder QR in LAPACK's packed form: (a_out, taus), R in the upper triangle of
    a_out and Q as the reflectors below its diagonal with the scalars taus (..., min(m, n)).
    JAX keeps it in jax._src.lax.linalg; `jnp.linalg.qr(a, mode="raw")` is its public form
    (with a_out transposed)."""
    a_out, taus = geqrf_p.bind(a)
    return a_out, taus


geqp3_p = core.primitive("geqp3", multiple_results=True)


def _lapy(*xs):
    """sqrt(sum of squares) as LAPACK's lapy2/lapy3 compute it (scaled by the largest)."""
    xs = [np.abs(x) for x in xs]
    w = xs[0]
    for x in xs[1:]:
        w = np.maximum(w, x)
    safe = np.where(w == 0, 1, w)
    return np.where(w == 0, 0, w * np.sqrt(sum((x / safe) ** 2 for x in xs)))


def _larfg(alpha, x):
    """LAPACK's larfg, batched: (beta, tau, v) with (I - tau w w^H)^H [alpha; x] = [beta; 0]
    for w = [1; v], beta real; tau = 0 (H = I) where x is zero and alpha real."""
    xnorm = np.linalg.norm(x, axis=-1)
    if np.iscomplexobj(alpha):
        re, im = alpha.real, alpha.imag
        trivial = (xnorm == 0) & (im == 0)
        beta = -np.copysign(_lapy(re, im, xnorm), re)
        safe = np.where(trivial, 1, beta)
        tau = np.where(trivial, 0, (beta - re) / safe - 1j * (im / safe))
    else:
        trivial = xnorm == 0
        beta = -np.copysign(_lapy(alpha, xnorm), alpha)
        tau = np.where(trivial, 0, (beta - alpha) / np.where(trivial, 1, beta))
    scale = 1 / np.where(trivial, 1, alpha - beta)
    v = x * scale[..., None]
    return np.where(trivial, alpha, beta).astype(alpha.dtype), tau.astype(alpha.dtype), v


def _geqp3_impl(a, jpvt, *, use_magma):
    """Householder QR with column pivoting, as LAPACK's geqp3: the columns with a nonzero
    `jpvt` entry are swapped to the front in turn and factored first, unpivoted; then each
    step takes the remaining column of largest norm (the first such), the norms being
    downdated after each step and recomputed when cancellation makes that inaccurate.
    `jpvt` comes out 1-based: column j of the factored matrix is column jpvt[j] - 1 of `a`."""
    _check_lapack_dtype("geqp3", a.dtype)
    *batch, m, n = a.shape
    k = min(m, n)
    count = math.prod(batch)
    rows = np.arange(count)
    fixed = jpvt.reshape(count, n) != 0
    perm = np.broadcast_to(np.arange(n), (count, n)).copy()
    n_fixed = np.zeros(count, np.intp)
    for j in range(n):  # LAPACK's order: each fixed column swapped with the first free one
        r, f = rows[fixed[:, j]], n_fixed[fixed[:, j]]
        perm[r, j], perm[r, f] = perm[r, f], perm[r, j]
        n_fixed += fixed[:, j]
    x = np.take_along_axis(a.reshape(count, m, n), perm[:, None, :], axis=2)
    taus = np.zeros((count, k), a.dtype)
    real = np.finfo(a.dtype).dtype
    norms = np.zeros((count, n), real)  # LAPACK's vn1: the free columns' norms below row i
    exact = np.zeros((count, n), real)  # vn2: each norm when last computed exactly
    tol = np.sqrt(np.finfo(real).eps / 2)  # LAPACK's sqrt(dlamch('Epsilon'))
    for i in range(k):
        starting = n_fixed == i  # the free columns' norms, once the fixed ones are done
        if starting.any():
            norms[starting, i:] = exact[starting, i:] = np.linalg.norm(x[starting, i:, i:],
                                                                       axis=1)
        p = np.where(i >= n_fixed, i + np.argmax(norms[:, i:], axis=1), i)
        x[rows, :, i], x[rows, :, p] = x[rows, :, p], x[rows, :, i]
        perm[rows, i], perm[rows, p] = perm[rows, p], perm[rows, i]
        norms[rows, p], exact[rows, p] = norms[rows, i], exact[rows, i]
        beta, tau, v = _larfg(x[:, i, i], x[:, i + 1:, i])
        x[:, i, i], x[:, i + 1:, i], taus[:, i] = beta, v, tau
        if i + 1 == n:
            continue
        _reflect_rows(x[:, i:, i + 1:], _reflector(x, i), np.conj(tau))
        # Downdate the norms: |column j below row i|^2 = |below row i - 1|^2 - |x[i, j]|^2.
        vn1, vn2 = norms[:, i + 1:], exact[:, i + 1:]
        live = vn1 != 0
        safe1, safe2 = np.where(live, vn1, 1), np.where(live, vn2, 1)
        left = np.maximum(1 - (np.abs(x[:, i, i + 1:]) / safe1) ** 2, 0)
        again = live & (left * (safe1 / safe2) ** 2 <= tol)
        below = np.linalg.norm(x[:, i + 1:, i + 1:], axis=1)
        vn1[...] = np.where(again, below, np.where(live, vn1 * np.sqrt(left), vn1))
        vn2[...] = np.where(again, below, vn2)
    return [x.reshape(a.shape), (perm + 1).astype(jpvt.dtype).reshape(jpvt.shape),
            taus.reshape(*batch, k)]


def _geqp3_aval(a, jpvt, *, use_magma):
    _check_packed_operands("geqp3", (a, jpvt), (2, 1), (0,))
    *batch, m, n = a.shape
    if jpvt.shape[-1] != n:
        raise ValueError(f"geqp3 expects jpvt to have one entry per column of a: got a "
                         f"shape {a.shape} and jpvt shape {jpvt.shape}.")
    return [a, jpvt, a.update(shape=(*batch, min(m, n)))]


geqp3_p.def_impl(_geqp3_impl)
geqp3_p.def_abstract_eval(_geqp3_aval)
_no_derivatives(geqp3_p)
_batch_at_front(geqp3_p)


def geqp3(a, jpvt, *, use_magma=None):
    """Householder QR with column pivoting in LAPACK's packed form: (a_out, jpvt_out, taus)
    with a[..., jpvt_out - 1] = Q R, R in the upper triangle of a_out, Q as the reflectors
    below it with the scalars taus. `jpvt` is LAPACK's: its nonzero entries mark columns
    moved to the front and factored first, and jpvt_out is 1-based, as in JAX (which keeps
    geqp3 in jax._src.lax.linalg)."""
    a_out, jpvt_out, taus = geqp3_p.bind(a, jpvt, use_magma=use_magma)
    return a_out, jpvt_out, taus


householder_product_p = core.primitive("householder_product")


def _householder_product_impl(a, taus):
    """The first n columns of H_0 ... H_{k-1}, applied to those of the identity from the
    last reflector: before H_i is applied, the columns up to i are still the identity's,
    which H_i leaves alone."""
    n = a.shape[-1]
    q = np.zeros(a.shape, a.dtype)
    q[..., range(n), range(n)] = 1
    for i in reversed(range(taus.shape[-1])):
        _reflect_rows(q[..., i:, i:], _reflector(a, i), taus[..., i])
    return q


def _householder_product_aval(a, taus):
    _check_packed_operands("householder_product", (a, taus), (2, 1), (0, 1))
    m, n = a.shape[-2:]
    if m < n:
        raise ValueError(f"The first argument to householder_product must have at least as "
                         f"many rows as columns, got shape {a.shape}")
    if taus.shape[-1] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more "
                         "rows than the minimum of the first argument's rows and columns.")
    return a


householder_product_p.def_impl(_householder_product_impl)
householder_product_p.def_abstract_eval(_householder_product_aval)
_no_derivatives(householder_product_p)
_batch_at_front(householder_product_p)


def householder_product(a, taus):
    """The (..., m, n) matrices of orthonormal columns that the Householder reflectors
    packed below the diagonal of `a` (m >= n) and their scalars `taus` (..., k), k <= n,
    make: the first n columns of H_0 ... H_{k-1} (LAPACK's orgqr/ungqr)."""
    return householder_product_p.bind(a, taus)


ormqr_p = core.primitive("ormqr")


def _ormqr_impl(a, taus, c, *, left, transpose):
    """Q c, Q^H c, c Q or c Q^H, one reflector at a time: Q^H c and c Q take H_0 first."""
    # (C order whatever c's layout, a tier's view or the other's copy: NumPy's products
    # take other paths, of other bits, for other strides)
    out = np.array(c, copy=True, order="C")
    tau = np.conj(taus) if transpose else taus  # H_i^H = I - conj(tau_i) v_i v_i^H
    k = taus.shape[-1]
    for i in (range(k) if left == transpose else reversed(range(k))):
        if left:
            _reflect_rows(out[..., i:, :], _reflector(a, i), tau[..., i])
        else:
            _reflect_columns(out[..., :, i:], _reflector(a, i), tau[..., i])
    return out


def _ormqr_aval(a, taus, c, *, left, transpose):
    _check_packed_operands("ormqr", (a, taus, c), (2, 1, 2), (0, 1, 2))
    m, n = a.shape[-2:]
    if left and c.shape[-2] != m:
        raise ValueError(f"ormqr with left=True expects c to have the same number of rows as "
                         f"the Householder matrix a. Got a shape {a.shape} and c shape "
                         f"{c.shape}.")
    if not left and c.shape[-1] != m:
        raise ValueError(f"ormqr with left=False expects c to have the same number of "
                         f"columns as the Householder matrix a has rows. Got a shape "
                         f"{a.shape} and c shape {c.shape}.")
    if taus.shape[-1] > min(m, n):
        raise ValueError(f"ormqr: taus has {taus.shape[-1]} scalar factors, but a of shape "
                         f"{a.shape} holds at most {min(m, n)} Householder reflectors.")
    return c


def _ormqr_batch(size, vals, dims, *, left, transpose):
    """With only c batched, its examples are more columns (left) or rows (right) of one c."""
    a, taus, c = vals
    a_dim, taus_dim, c_dim = dims
    if a_dim is None and taus_dim is None:
        nd = get_aval(c).ndim  # (with the batch dimension)
        *batch, rows, cols = [s for i, s in enumerate(get_aval(c).shape) if i != c_dim]
        if left:  # (..., m, cols, B) -> (..., m, cols * B)
            folded = lax_shape.reshape(moveaxis(c, c_dim, nd - 1), (*batch, rows, cols * size))
            out = ormqr_p.bind(a, taus, folded, left=left, transpose=transpose)
            return lax_shape.reshape(out, (*batch, rows, cols, size)), nd - 1
        folded = lax_shape.reshape(moveaxis(c, c_dim, nd - 3), (*batch, size * rows, cols))
        out = ormqr_p.bind(a, taus, folded, left=left, transpose=transpose)
        return lax_shape.reshape(out, (*batch, size, rows, cols)), nd - 3
    args = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    return ormqr_p.bind(*args, left=left, transpose=transpose), 0


ormqr_p.def_impl(_ormqr_impl)
ormqr_p.def_abstract_eval(_ormqr_aval)
_no_derivatives(ormqr_p)
ormqr_p.def_batch(_ormqr_batch)


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """Q c (`left`) or c Q, with Q^H for Q if `transpose`, Q being the product of the
    Householder reflectors packed below the diagonal of `a` (..., m, n) with the scalars
    `taus` (..., k), as geqrf returns them (LAPACK's ormqr/unmqr): Q is never formed."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


# --------------------------------------------------------------------------------------
# eigh: eigenvectors and ascending eigenvalues of Hermitian matrices


class EighImplementation(enum.Enum):
    """Eigensolvers JAX offers; NumPy's LAPACK (syevd/heevd) is QR's counterpart."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


eigh_p = core.primitive("eigh", multiple_results=True)


def _eigh_impl(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    _check_full_subset("eigh", x.shape[-1], subset_by_index)
    uplo = "L" if lower else "U"
    w, v = _lapack_call("eigh", lambda a: np.linalg.eigh(a, UPLO=uplo), x, n_out=2)
    return [v, w]


def _eigh_aval(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    _check_operand("eigh", x)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to symmetric eigendecomposition must have shape [..., n, "
                         f"n], got shape {x.shape}")
    if algorithm not in (None, EighImplementation.QR):
        raise NotImplementedError(f"eigh: implementation {algorithm} is not available in "
                                  "didax (it runs LAPACK's QR-based solver through NumPy)")
    *batch, n, _ = x.shape
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    real = np.dtype(dtypes.finfo(x.dtype).dtype)
    return [x.update(shape=(*batch, n, d)), ShapedArray((*batch, d), real, x.weak_type)]


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    """Nondegenerate perturbation theory: dw = diag(V^H Ȧ V), dV = V (F ∘ V^H Ȧ V) with
    F_ij = 1 / (w_j - w_i) off the diagonal (repeated eigenvalues give infinities)."""
    (a,), (a_dot,) = primals, tangents
    n = get_aval(a).shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    aval = get_aval(a)
    batch = aval.shape[:-2]
    nb = len(batch)
    w = ew.convert_element_type(w_real, aval.dtype)
    eye = _eye(aval.dtype, n, batch)
    shape = (*batch, n, n)
    w_cols = lax_shape.broadcast_in_dim(w, shape, (*range(nb), nb + 1))
    w_rows = lax_shape.broadcast_in_dim(w, shape, (*range(nb), nb))
    f = ew.sub(ew.integer_pow(ew.sub(ew.add(eye, w_cols), w_rows), -1), eye)
    vdag_adot_v = _matmul(_matmul(_H(v), a_dot), v)
    dv = _matmul(v, ew.mul(f, vdag_adot_v))
    dw = _diagonal(_real(vdag_adot_v))
    return [v, w_real], [dv, dw]


eigh_p.def_impl(_eigh_impl)
eigh_p.def_abstract_eval(_eigh_aval)
eigh_p.def_jvp(_eigh_jvp)
_batch_at_front(eigh_p)


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
    """(v, w): eigenvectors v[..., :, i] and ascending eigenvalues w of Hermitian x.

    With `symmetrize_input` the matrix is (x + x^H) / 2; otherwise only the triangle
    `lower` selects is read.
    """
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
        _check_full_subset("eigh", np.shape(x)[-1], subset_by_index)
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=subset_by_index, algorithm=implementation)
    return v, w


# --------------------------------------------------------------------------------------
# eig: eigenvalues and right eigenvectors of a general square matrix (LAPACK geev through
# NumPy); complex results whatever the input, eigenvectors of unit norm

class EigImplementation(enum.Enum):
    """Eigensolvers JAX offers for general matrices; didax runs LAPACK's geev (NumPy's)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


eig_p = core.primitive("eig", multiple_results=True)


def _complex_of(dtype):
    dtype = np.dtype(dtype)
    if dtypes.kind(dtype) == "c":
        return dtype
    return np.dtype(np.complex128 if dtype.itemsize == 8 else np.complex64)


def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs, implementation):
    out = _complex_of(x.dtype)
    if not compute_right_eigenvectors:
        return [_lapack_call("eig", np.linalg.eigvals, x).astype(out)]
    w, v = _lapack_call("eig", np.linalg.eig, x, n_out=2)
    return [w.astype(out), v.astype(out)]


def _eig_aval(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs, implementation):
    _check_operand("eig", x)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to nonsymmetric eigendecomposition must have shape "
                         f"[..., n, n], got shape {x.shape}")
    if compute_left_eigenvectors:
        raise NotImplementedError("eig: left eigenvectors (compute_left_eigenvectors=True) are "
                                  "not implemented in didax; the eigenvectors of x^H are")
    if implementation not in (None, EigImplementation.LAPACK):
        raise NotImplementedError(f"eig: implementation {implementation} is not available in "
                                  "didax (it runs LAPACK's geev through NumPy)")
    *batch, n, _ = x.shape
    dtype = _complex_of(x.dtype)
    w = ShapedArray((*batch, n), dtype)
    return [w, ShapedArray((*batch, n, n), dtype)] if compute_right_eigenvectors else [w]


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
    """First-order perturbation of distinct eigenvalues: dw_i = (V^-1 Ȧ V)_ii. Eigenvector
    derivatives depend on a normalisation the input cannot pin down (JAX asks for an opt-in);
    didax does not implement them."""
    if compute_right_eigenvectors:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are not implemented in didax; "
            "jnp.linalg.eigvals (eigenvalues only) differentiates.")
    (a,), (a_dot,) = primals, tangents
    params = dict(compute_left_eigenvectors=False, enable_eigvec_derivs=enable_eigvec_derivs,
                  implementation=implementation)
    (w,) = eig_p.bind(a, compute_right_eigenvectors=False, **params)
    _, v = eig_p.bind(a, compute_right_eigenvectors=True, **params)
    cdtype = get_aval(w).dtype
    lu_v, _, perm = lu(v)
    vinv_adot_v = lu_solve(lu_v, perm, _matmul(ew.convert_element_type(a_dot, cdtype), v))
    return [w], [_diagonal(vinv_adot_v)]


eig_p.def_impl(_eig_impl)
eig_p.def_abstract_eval(_eig_aval)
eig_p.def_jvp(_eig_jvp)
_batch_at_front(eig_p)


def eig(x, *, compute_left_eigenvectors: bool = False,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        use_magma=None, implementation=None):
    """[w] or [w, vr]: the (complex) eigenvalues of a general square `x`, and its right
    eigenvectors vr[..., :, i] (unit norm) if asked."""
    return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors),
                      enable_eigvec_derivs=bool(enable_eigvec_derivs),
                      implementation=implementation)


def _check_full_subset(name, n, subset_by_index):
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError(f"{name}: subset_by_index={subset_by_index} (a partial "
                                  "decomposition) is not implemented in didax")


class SvdAlgorithm(enum.Enum):
    """SVD algorithms JAX offers; NumPy's LAPACK (gesdd) stands for DEFAULT and QR."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"


svd_p = core.primitive("svd", multiple_results=True)


def _svd_impl(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    m, n = x.shape[-2:]
    _check_full_subset("svd", min(m, n), subset_by_index)
    if not compute_uv:
        return [_lapack_call("svd", lambda a: np.linalg.svd(a, compute_uv=False), x)]
    u, s, vh = _lapack_call("svd", lambda a: np.linalg.svd(a, full_matrices=full_matrices),
                            x, n_out=3)
    return [s, u, vh]


def _svd_aval(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    _check_operand("svd", x)
    if algorithm not in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.QR):
        raise NotImplementedError(f"svd: algorithm {algorithm} is not available in didax (it "
                                  "runs LAPACK's gesdd through NumPy)")
    *batch, m, n = x.shape
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    real = np.dtype(dtypes.finfo(x.dtype).dtype)
    s = ShapedArray((*batch, rank), real, x.weak_type)
    if not compute_uv:
        return [s]
    return [s, x.update(shape=(*batch, m, m if full_matrices else rank)),
            x.update(shape=(*batch, n if full_matrices else rank, n))]


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (a,), (da,) = primals, tangents
    aval = get_aval(a)
    *batch, m, n = aval.shape
    nb = len(batch)
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices")
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True,
                          subset_by_index=subset_by_index, algorithm=algorithm)
    ut, v = _H(u), _H(vt)
    k = get_aval(s).shape[-1]
    ds_full = _matmul(_matmul(ut, da), v)
    ds = _diagonal(_real(ds_full))
    if not compute_uv:
        return [s], [ds]
    dtype, real = aval.dtype, get_aval(s).dtype
    shape = (*batch, k, k)
    s_row = lax_shape.broadcast_in_dim(s, shape, (*range(nb), nb + 1))  # s_j at (i, j)
    s_col = lax_shape.broadcast_in_dim(s, shape, (*range(nb), nb))  # s_i at (i, j)
    s_diffs = ew.mul(ew.add(s_row, s_col), ew.sub(s_row, s_col))
    eye = _eye(real, k, batch)
    f = ew.sub(ew.div(_const(s, 1), ew.add(s_diffs, eye)), eye)
    s_row_c = ew.convert_element_type(s_row, dtype)
    s_col_c = ew.convert_element_type(s_col, dtype)
    dss = ew.mul(s_row_c, ds_full)
    sds = ew.mul(s_col_c, ds_full)
    s_zeros = ew.convert_element_type(ew.eq(s, _const(s, 0)), real)
    s_inv = ew.sub(ew.div(_const(s, 1), ew.add(s, s_zeros)), s_zeros)
    s_inv_mat = ew.select_n(ew.eq(eye, _const(eye, 1)), lax_shape.full(shape, 0, real),
                            lax_shape.broadcast_in_dim(s_inv, shape, (*range(nb), nb + 1)))
    du_dv_diag = ew.mul(ew.mul(_const(ds_full, 0.5), ew.sub(ds_full, _H(ds_full))),
                        ew.convert_element_type(s_inv_mat, dtype))
    f_c = ew.convert_element_type(f, dtype)
    du = _matmul(u, ew.add(ew.mul(f_c, ew.add(dss, _H(dss))), du_dv_diag))
    dv = _matmul(v, ew.mul(f_c, ew.add(sds, _H(sds))))
    if m > n:
        dav = _matmul(da, v)
        s_div = lax_shape.broadcast_in_dim(ew.convert_element_type(s, dtype), (*batch, m, k),
                                           (*range(nb), nb + 1))
        du = ew.add(du, ew.div(ew.sub(dav, _matmul(u, _matmul(ut, dav))), s_div))
    if n > m:
        dahu = _matmul(_H(da), u)
        s_div = lax_shape.broadcast_in_dim(ew.convert_element_type(s, dtype), (*batch, n, k),
                                           (*range(nb), nb + 1))
        dv = ew.add(dv, ew.div(ew.sub(dahu, _matmul(v, _matmul(vt, dahu))), s_div))
    return [s, u, vt], [ds, du, _H(dv)]


svd_p.def_impl(_svd_impl)
svd_p.def_abstract_eval(_svd_aval)
svd_p.def_jvp(_svd_jvp)
_batch_at_front(svd_p)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """(u, s, vh) with x = u diag(s) vh and s descending; only s without `compute_uv`."""
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
        _check_full_subset("svd", min(np.shape(x)[-2:]), subset_by_index)
    out = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                     subset_by_index=subset_by_index, algorithm=algorithm)
    if compute_uv:
        s, u, vh = out
        return u, s, vh
    return out[0]


__all__ = ["cholesky", "cholesky_p", "eig", "eig_p", "EigImplementation", "eigh", "eigh_p",
           "EighImplementation",
           "geqp3", "geqp3_p", "geqrf", "geqrf_p", "householder_product",
           "householder_product_p", "lu", "lu_p",
           "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "ormqr", "ormqr_p", "qr",
           "qr_p", "svd",
           "svd_p", "SvdAlgorithm", "triangular_solve", "triangular_solve_p"]
