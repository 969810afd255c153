"""Tridiagonal matrices: the reduction of a Hermitian matrix to tridiagonal form
(`lax.linalg.tridiagonal`, LAPACK's sytrd/hetrd packed form) and the solution of tridiagonal
systems (`lax.linalg.tridiagonal_solve`, Gaussian elimination with partial pivoting as
LAPACK's gtsv does it).

The reduction reads one triangle of each matrix. With `lower`, Q = H_0 ... H_{n-2}, reflector
i acting on rows i + 1 onwards and packed below the subdiagonal of column i; otherwise
Q = H_{n-2} ... H_0, reflector i acting on rows 0..i and packed above the superdiagonal of
column i + 1; in both cases Q^H a Q is the tridiagonal matrix with diagonal d and off-diagonal
e (both real). The other triangle of the output is the input's. The work is done in double
precision and rounded to the input's dtype. No derivatives, as in JAX.

tridiagonal_solve is linear in its right-hand side (a transpose rule solves with the
transposed matrix), and its JVP in the diagonals is -A^{-1} (dA X), so it differentiates in
both modes in every operand, as in JAX.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ShapedArray, Zero, get_aval, is_zero
from didax._src.interpreters.batching import bdim_at_front
from didax._src.interpreters.transpose import is_undefined
from didax._src.lax import elementwise as ew
from didax._src.lax import shape as lax_shape
from didax._src.lax.linalg import (
    _batch_at_front,
    _check_lapack_dtype,
    _check_operand,
    _larfg,
    _reflect_columns,
    _reflect_rows,
)
from didax._src.lax.linalg_schur import _work_dtype, mark_not_differentiable
from didax._src.typecheck import check_dtype, inexact

__all__ = ["tridiagonal", "tridiagonal_p", "tridiagonal_solve", "tridiagonal_solve_p"]

# --------------------------------------------------------------------------------------
# tridiagonal

tridiagonal_p = core.primitive("tridiagonal", multiple_results=True)


def _hermitian_from(a, lower):
    """The Hermitian matrix that the `lower` (or upper) triangle of `a` stands for; LAPACK
    reads only the real part of the diagonal."""
    tri = np.tril(a) if lower else np.triu(a)
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    full = tri + np.conj(np.swapaxes(strict, -1, -2))
    n = a.shape[-1]
    full[..., range(n), range(n)] = full[..., range(n), range(n)].real
    return full


def _with_reflector(full, rows, tau, v, lower):
    """full <- H^H full H for the reflector w = [1; v] (lower) or [v; 1] acting on `rows`."""
    one = np.ones(v.shape[:-1] + (1,), v.dtype)
    w = np.concatenate([one, v] if lower else [v, one], axis=-1)
    _reflect_rows(full[..., rows, :], w, np.conj(tau))
    _reflect_columns(full[..., :, rows], w, tau)


def _sytrd(a, lower):
    """(packed, d, e, taus) of LAPACK's sytrd/hetrd, batched."""
    n = a.shape[-1]
    full = _hermitian_from(a, lower)
    packed = a.copy()
    k = max(n - 1, 0)
    real = np.finfo(a.dtype).dtype
    e = np.zeros((*a.shape[:-2], k), real)
    taus = np.zeros((*a.shape[:-2], k), a.dtype)
    steps = range(k) if lower else reversed(range(k))
    for i in steps:
        if lower:  # annihilate full[i + 2:, i] with a reflector on rows i + 1 onwards
            beta, tau, v = _larfg(full[..., i + 1, i], full[..., i + 2:, i])
            rows = slice(i + 1, n)
            packed[..., i + 2:, i] = v
        else:  # annihilate full[:i, i + 1] with a reflector on rows 0..i
            beta, tau, v = _larfg(full[..., i, i + 1], full[..., :i, i + 1])
            rows = slice(0, i + 1)
            packed[..., :i, i + 1] = v
        _with_reflector(full, rows, tau, v, lower)
        e[..., i], taus[..., i] = beta.real, tau
    d = np.diagonal(full, axis1=-2, axis2=-1).real
    packed[..., range(n), range(n)] = d
    if k:
        off = (slice(1, n), slice(0, n - 1)) if lower else (slice(0, n - 1), slice(1, n))
        rows_idx, cols_idx = np.arange(n)[off[0]], np.arange(n)[off[1]]
        packed[..., rows_idx, cols_idx] = e
    return packed, d, e, taus


def _tridiagonal_impl(a, *, lower):
    _check_lapack_dtype("tridiagonal", a.dtype)
    packed, d, e, taus = _sytrd(a.astype(_work_dtype(a.dtype)), lower)
    real = np.finfo(a.dtype).dtype
    return [packed.astype(a.dtype), d.astype(real), e.astype(real), taus.astype(a.dtype)]


def _tridiagonal_aval(a, *, lower):
    _check_operand("tridiagonal", a)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                         f"{a.shape[-2:]}.")
    *batch, n, _ = a.shape
    k = max(n - 1, 0)
    real = np.dtype(dtypes.finfo(a.dtype).dtype)
    a = a.strip_weak_type()
    return [a, ShapedArray((*batch, n), real), ShapedArray((*batch, k), real),
            a.update(shape=(*batch, k))]


tridiagonal_p.def_impl(_tridiagonal_impl)
tridiagonal_p.def_abstract_eval(_tridiagonal_aval)
mark_not_differentiable(tridiagonal_p, "")
_batch_at_front(tridiagonal_p)


def tridiagonal(a, *, lower: bool = True):
    """[a_out, d, e, taus]: the tridiagonal form of each Hermitian matrix given by its `lower`
    (or upper) triangle, in LAPACK's packed form (see the module's docstring): d its
    diagonal, e its off-diagonal (both real) and taus the reflectors' scalars."""
    return tridiagonal_p.bind(a, lower=bool(lower))


# --------------------------------------------------------------------------------------
# tridiagonal_solve

tridiagonal_solve_p = core.primitive("tridiagonal_solve")


def _gtsv(dl, d, du, b, perturb_singular, finfo):
    """X with A X = B for the tridiagonal A (dl[i] = A[i, i - 1], du[i] = A[i, i + 1]),
    batched over leading dimensions, by LAPACK's gtsv: elimination with partial pivoting
    (a row interchange where the subdiagonal entry is larger), U having a second
    superdiagonal `fill`. A zero pivot gives NaNs for that system, or with
    `perturb_singular` becomes eps * max|U| (the smallest normal number if U is zero), of
    the input's precision `finfo`."""
    m = d.shape[-1]
    sub = dl[..., 1:].copy()  # A[i + 1, i]
    d, sup, b = d.copy(), du.copy(), b.copy()
    fill = np.zeros_like(d)
    for i in range(m - 1):
        swap = np.abs(d[..., i]) < np.abs(sub[..., i])
        pivot = np.where(swap, sub[..., i], d[..., i])
        other = np.where(swap, d[..., i], sub[..., i])
        fact = np.where(pivot == 0, 0, other / np.where(pivot == 0, 1, pivot))
        # rows i and i + 1 after the (possible) interchange: row i's entries at i, i+1, i+2
        row_i = (pivot, np.where(swap, d[..., i + 1], sup[..., i]),
                 np.where(swap, sup[..., i + 1], 0) if i + 1 < m - 1 else None)
        row_n = (np.where(swap, sup[..., i], d[..., i + 1]),
                 np.where(swap, 0, sup[..., i + 1]) if i + 1 < m - 1 else None)
        b_i = np.where(swap[..., None], b[..., i + 1, :], b[..., i, :])
        b_n = np.where(swap[..., None], b[..., i, :], b[..., i + 1, :])
        d[..., i], sup[..., i] = row_i[0], row_i[1]
        d[..., i + 1] = row_n[0] - fact * row_i[1]
        if row_i[2] is not None:
            fill[..., i] = row_i[2]
            sup[..., i + 1] = row_n[1] - fact * row_i[2]
        b[..., i, :] = b_i
        b[..., i + 1, :] = b_n - fact[..., None] * b_i
    singular = (d == 0).any(axis=-1)
    if perturb_singular:
        big = np.max(np.abs(np.concatenate([d, sup[..., :-1], fill], axis=-1)), axis=-1,
                     keepdims=True, initial=0)
        d = np.where(d == 0, np.maximum(float(finfo.eps) * big, float(finfo.tiny)), d)
        singular = np.zeros_like(singular)
    x = b
    for i in reversed(range(m)):
        r = x[..., i, :]
        if i + 1 < m:
            r = r - sup[..., i, None] * x[..., i + 1, :]
        if i + 2 < m:
            r = r - fill[..., i, None] * x[..., i + 2, :]
        x[..., i, :] = r / np.where(d[..., i] == 0, 1, d[..., i])[..., None]
    return np.where(singular[..., None, None], np.nan, x)


def _tridiagonal_solve_impl(dl, d, du, b, *, perturb_singular):
    _check_lapack_dtype("tridiagonal_solve", b.dtype)
    work = _work_dtype(b.dtype)
    x = _gtsv(*(v.astype(work) for v in (dl, d, du, b)), perturb_singular,
              np.finfo(b.dtype))
    return x.astype(b.dtype)


def _tridiagonal_solve_aval(dl, d, du, b, *, perturb_singular):
    avals = (dl, d, du, b)
    for i, (aval, rank) in enumerate(zip(avals, (1, 1, 1, 2))):
        if aval.ndim < rank:
            raise TypeError(f"Input {i} to tridiagonal_solve must have rank at least {rank}, "
                            f"but got shape={aval.shape}")
        check_dtype("tridiagonal_solve", aval, inexact, f" at position {i}")
    if any(a.dtype != b.dtype for a in avals):
        raise TypeError(f"lax.tridiagonal_solve requires arguments to have the same dtypes, "
                        f"got {', '.join(a.dtype.name for a in avals)}.")
    batch_ranks = [dl.ndim - 1, d.ndim - 1, du.ndim - 1, b.ndim - 2]
    if len(set(batch_ranks)) > 1:
        raise TypeError(f"All inputs to tridiagonal_solve must have the same number of batch "
                        f"dimensions, but got {batch_ranks} batch dimensions for the inputs.")
    if not dl.shape == d.shape == du.shape:
        raise TypeError(f"tridiagonal_solve requires that all diagonal arguments have the "
                        f"same shape; got dl {dl.shape}, d {d.shape} and du {du.shape}.")
    if b.shape[:-1] != d.shape:
        raise TypeError(f"tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                        f"equal the dimensions of the diagonal arguments; got b {b.shape} "
                        f"and diagonals {d.shape}.")
    return b.strip_weak_type()


def _shift(x, by, axis):
    """out[..., i, ...] = x[..., i - by, ...] along `axis` (by = +-1), zeros where i - by
    falls outside: a slice and a pad, which transpose."""
    aval = get_aval(x)
    axis %= aval.ndim
    m = aval.shape[axis]
    if m == 0:
        return x
    start = [0] * aval.ndim
    limit = list(aval.shape)
    if by > 0:
        limit[axis] = m - 1
    else:
        start[axis] = 1
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (1, 0, 0) if by > 0 else (0, 1, 0)
    kept = lax_shape.slice(x, tuple(start), tuple(limit))
    return lax_shape.pad(kept, np.zeros((), aval.dtype), config)


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    """dX = A^{-1} (dB - dA X), (dA X)_i = dl_i X_{i-1} + d_i X_i + du_i X_{i+1}: only the
    tangents that are not symbolic zeros contribute."""
    dl, d, du, b = primals
    dl_dot, d_dot, du_dot, b_dot = tangents
    x = tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)
    shape = get_aval(x).shape
    rhs = None if is_zero(b_dot) else b_dot
    for t, rows in ((dl_dot, _shift(x, 1, -2)), (d_dot, x), (du_dot, _shift(x, -1, -2))):
        if is_zero(t):
            continue
        term = ew.mul(lax_shape.broadcast_in_dim(t, shape, tuple(range(len(shape) - 1))), rows)
        rhs = ew.neg(term) if rhs is None else ew.sub(rhs, term)
    if rhs is None:
        return x, Zero(get_aval(x).to_tangent_aval())
    return x, tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    """Linear in b: the transpose solves with A^T, whose subdiagonal is A's superdiagonal
    shifted down one place and whose superdiagonal is A's subdiagonal shifted up."""
    if any(is_undefined(v) for v in (dl, d, du)):
        raise NotImplementedError("transpose of 'tridiagonal_solve': it is not linear in the "
                                  "diagonals of the matrix")
    if is_zero(ct):
        return [None, None, None, Zero(b.aval)]
    ct_b = tridiagonal_solve_p.bind(_shift(du, 1, -1), d, _shift(dl, -1, -1), ct,
                                    perturb_singular=perturb_singular)
    return [None, None, None, ct_b]


def _tridiagonal_solve_batch(size, vals, dims, *, perturb_singular):
    args = [bdim_at_front(v, dim, size) for v, dim in zip(vals, dims)]
    return tridiagonal_solve_p.bind(*args, perturb_singular=perturb_singular), 0


tridiagonal_solve_p.def_impl(_tridiagonal_solve_impl)
tridiagonal_solve_p.def_abstract_eval(_tridiagonal_solve_aval)
tridiagonal_solve_p.def_jvp(_tridiagonal_solve_jvp)
tridiagonal_solve_p.def_transpose(_tridiagonal_solve_transpose)
tridiagonal_solve_p.def_batch(_tridiagonal_solve_batch)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """X with A X = B for the tridiagonal A with subdiagonal dl (dl[..., i] = A[i, i - 1],
    dl[..., 0] unused), diagonal d and superdiagonal du (du[..., i] = A[i, i + 1],
    du[..., m - 1] unused), each (..., m), and B (..., m, n). NaNs for a singular A, unless
    `perturb_singular`, which replaces zero pivots by eps * max|U| (see `_gtsv`)."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))

