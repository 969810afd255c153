"""Hessenberg reduction and the Schur decomposition: `lax.linalg.hessenberg` and `schur`.

hessenberg returns LAPACK's packed form (gehrd): the Hessenberg matrix in the upper triangle
and first subdiagonal, below it the Householder reflectors (LAPACK's larfg convention, as in
geqrf), with their scalars taus; Q = H_0 ... H_{n-2} and a = Q h Q^H. schur runs the QR
algorithm on the Hessenberg form: Francis' implicit double shift on real matrices, which
gives the real Schur form (2x2 blocks for complex conjugate eigenvalue pairs, standardised as
LAPACK's lanv2 does: equal diagonal entries, off-diagonal entries of opposite signs), and
the single shift with Wilkinson's shift on complex ones. Eigenvalues come out on the diagonal
in the order the iteration deflates them, which need not be LAPACK's (neither orders them).

The work is done in double precision whatever the input (the results are rounded to its
dtype), as NumPy's own LAPACK calls do for 32-bit types. A matrix with non-finite entries, or
whose iteration does not converge, gives NaNs, as JAX's does. Neither primitive has
derivatives, as in JAX.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core
from didax._src.lax.linalg import (
    _batch_at_front,
    _check_lapack_dtype,
    _check_operand,
    _larfg,
    _reflect_columns,
    _reflect_rows,
)

__all__ = ["hessenberg", "hessenberg_p", "schur", "schur_p"]


def mark_not_differentiable(prim, instead: str):
    """JAX defines no derivative for `prim`: its jvp (and so its transpose) raises."""
    reason = f"JAX defines no derivative for {prim.name}{instead}"
    prim.mark_absent("jvp", reason)
    prim.mark_absent("transpose", reason)


def _work_dtype(dtype):
    return np.dtype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)


def _check_square(name, aval, message):
    _check_operand(name, aval)
    if aval.shape[-1] != aval.shape[-2]:
        raise ValueError(message.format(shape=aval.shape))


# --------------------------------------------------------------------------------------
# hessenberg


def _subdiagonal_reflector(packed, i):
    """The reflector packed in column i below the subdiagonal, with its implied leading 1:
    it acts on rows (and columns) i + 1 onwards."""
    w = packed[..., i + 1:, i].copy()
    w[..., 0] = 1
    return w


def _gehrd(h):
    """h (..., n, n) reduced in place to LAPACK's packed Hessenberg form; returns taus."""
    n = h.shape[-1]
    taus = np.zeros((*h.shape[:-2], max(n - 1, 0)), h.dtype)
    for i in range(n - 1):
        beta, tau, v = _larfg(h[..., i + 1, i], h[..., i + 2:, i])
        h[..., i + 1, i], h[..., i + 2:, i], taus[..., i] = beta, v, tau
        w = _subdiagonal_reflector(h, i)
        _reflect_columns(h[..., :, i + 1:], w, tau)  # h <- h H_i
        _reflect_rows(h[..., i + 1:, i + 1:], w, np.conj(tau))  # h <- H_i^H h
    return taus


def _hessenberg_q(packed, taus):
    """Q = H_0 ... H_{n-2} from the packed form, as a dense matrix."""
    n = packed.shape[-1]
    q = np.zeros(packed.shape, packed.dtype)
    q[..., range(n), range(n)] = 1
    for i in range(n - 1):
        w = _subdiagonal_reflector(packed, i)
        _reflect_columns(q[..., :, i + 1:], w, taus[..., i])
    return q


hessenberg_p = core.primitive("hessenberg", multiple_results=True)


def _hessenberg_impl(a):
    _check_lapack_dtype("hessenberg", a.dtype)
    h = a.astype(_work_dtype(a.dtype))
    taus = _gehrd(h)
    return [h.astype(a.dtype), taus.astype(a.dtype)]


def _hessenberg_aval(a):
    _check_square("hessenberg", a, "Argument to Hessenberg reduction must have shape [..., n, "
                  "n], got shape {shape}")
    *batch, n, _ = a.shape
    a = a.strip_weak_type()
    return [a, a.update(shape=(*batch, max(n - 1, 0)))]


hessenberg_p.def_impl(_hessenberg_impl)
hessenberg_p.def_abstract_eval(_hessenberg_aval)
mark_not_differentiable(hessenberg_p, "")
_batch_at_front(hessenberg_p)


def hessenberg(a):
    """[a_out, taus] (a list, as JAX's): the upper Hessenberg form of each square matrix in
    the upper triangle and first subdiagonal of a_out, the Householder reflectors below it
    and their scalars in taus (..., n - 1), as LAPACK's gehrd packs them:
    `householder_product(a_out[..., 1:, :-1], taus)` gives the trailing block of Q, with
    a = Q h Q^H."""
    return hessenberg_p.bind(a)


# --------------------------------------------------------------------------------------
# The QR algorithm on one Hessenberg matrix (float64 or complex128), updating h and z in place

_MAX_SWEEPS_PER_EIGENVALUE = 30  # LAPACK's lahqr gives up after as many


def _householder3(x):
    """(v, scale) with (I - scale v v^T) x = -sign(x_0) |x| e_0: a real reflector of 2 or 3
    entries; scale 0 when x is zero."""
    norm = math.sqrt(float(x @ x))
    if norm == 0:
        return x, 0.0
    v = x.copy()
    v[0] += math.copysign(norm, x[0])
    return v, 2.0 / float(v @ v)


def _deflation_point(h, lo_limit, hi, norm):
    """The first row of the unreduced block ending at `hi`: negligible subdiagonal entries
    (relative to their diagonal neighbours) become exact zeros."""
    eps = np.finfo(np.float64).eps
    k = hi
    while k > lo_limit:
        scale = abs(h[k - 1, k - 1]) + abs(h[k, k])
        if scale == 0:
            scale = norm
        if abs(h[k, k - 1]) <= eps * scale:
            h[k, k - 1] = 0
            return k
        k -= 1
    return lo_limit


def _lanv2(a, b, c, d):
    """LAPACK's lanv2: the rotation (cs, sn) and standard form (a, b, c, d) of a real 2x2
    block: upper triangular when its eigenvalues are real, else equal diagonal entries and
    b c < 0. The block is [[cs, -sn], [sn, cs]] @ standard @ [[cs, sn], [-sn, cs]]."""
    eps = np.finfo(np.float64).eps
    if c == 0:
        return 1.0, 0.0, a, b, c, d
    if b == 0:  # swap rows and columns
        return 0.0, 1.0, d, -c, 0.0, a
    if a == d and math.copysign(1, b) != math.copysign(1, c):
        return 1.0, 0.0, a, b, c, d
    temp = a - d
    p = 0.5 * temp
    bcmax = max(abs(b), abs(c))
    bcmis = min(abs(b), abs(c)) * math.copysign(1, b) * math.copysign(1, c)
    scale = max(abs(p), bcmax)
    z = p / scale * p + bcmax / scale * bcmis
    if z >= 4 * eps:  # real eigenvalues: make the block upper triangular
        z = p + math.copysign(math.sqrt(scale) * math.sqrt(z), p)
        a = d + z
        d = d - bcmax / z * bcmis
        tau = math.hypot(c, z)
        return z / tau, c / tau, a, b - c, 0.0, d
    # complex or nearly equal real eigenvalues: make the diagonal entries equal
    sigma = b + c
    tau = math.hypot(sigma, temp)
    cs = math.sqrt(0.5 * (1 + abs(sigma) / tau))
    sn = -(p / (tau * cs)) * math.copysign(1, sigma)
    aa, bb = a * cs + b * sn, -a * sn + b * cs
    cc, dd = c * cs + d * sn, -c * sn + d * cs
    a, b = aa * cs + cc * sn, bb * cs + dd * sn
    c, d = -aa * sn + cc * cs, -bb * sn + dd * cs
    temp = 0.5 * (a + d)
    a = d = temp
    if c != 0:
        if b != 0:
            if math.copysign(1, b) == math.copysign(1, c):  # real after all: triangularise
                sab, sac = math.sqrt(abs(b)), math.sqrt(abs(c))
                p = math.copysign(sab * sac, c)
                tau = 1 / math.sqrt(abs(b + c))
                a, d = temp + p, temp - p
                b, c = b - c, 0.0
                cs1, sn1 = sab * tau, sac * tau
                cs, sn = cs * cs1 - sn * sn1, cs * sn1 + sn * cs1
        else:
            b, c = -c, 0.0
            cs, sn = -sn, cs
    return cs, sn, a, b, c, d


def _standardize_block(h, z, i):
    """The 2x2 block at rows and columns i, i + 1 in lanv2's standard form, the rotation
    applied to the rest of h and to z."""
    cs, sn, a, b, c, d = _lanv2(h[i, i], h[i, i + 1], h[i + 1, i], h[i + 1, i + 1])
    rot = np.array([[cs, -sn], [sn, cs]])
    h[i:i + 2, i + 2:] = rot.T @ h[i:i + 2, i + 2:]
    h[:i, i:i + 2] = h[:i, i:i + 2] @ rot
    z[:, i:i + 2] = z[:, i:i + 2] @ rot
    h[i, i], h[i, i + 1], h[i + 1, i], h[i + 1, i + 1] = a, b, c, d


def _francis_sweep(h, z, lo, hi, exceptional):
    """One implicit double-shift QR step on the unreduced block lo..hi (hi - lo >= 2), with
    the shifts the eigenvalues of its trailing 2x2 block (ad hoc ones when `exceptional`)."""
    if exceptional:  # LAPACK's: the trailing block as if it were [[w, -7s/16], [s, w]]
        s = abs(h[hi, hi - 1]) + abs(h[hi - 1, hi - 2])
        w = 0.75 * s + h[hi, hi]
        trace, det = 2 * w, w * w + 0.4375 * s * s
    else:
        trace = h[hi - 1, hi - 1] + h[hi, hi]
        det = h[hi - 1, hi - 1] * h[hi, hi] - h[hi - 1, hi] * h[hi, hi - 1]
    # first column of (H - s1)(H - s2)
    x = np.array([h[lo, lo] * h[lo, lo] + h[lo, lo + 1] * h[lo + 1, lo] - trace * h[lo, lo] + det,
                  h[lo + 1, lo] * (h[lo, lo] + h[lo + 1, lo + 1] - trace),
                  h[lo + 1, lo] * h[lo + 2, lo + 1]])
    for k in range(lo, hi - 1):
        v, scale = _householder3(x)
        if scale:
            rows = h[k:k + 3, max(lo, k - 1):]
            rows -= np.outer(scale * v, v @ rows)
            cols = h[:min(k + 3, hi) + 1, k:k + 3]
            cols -= np.outer(cols @ v, scale * v)
            zc = z[:, k:k + 3]
            zc -= np.outer(zc @ v, scale * v)
            if k > lo:
                h[k + 1:k + 3, k - 1] = 0
        # the bulge: column k below the subdiagonal (two entries at the last step)
        x = np.zeros(3)
        size = min(3, hi - k)
        x[:size] = h[k + 1:k + 1 + size, k]
    v, scale = _householder3(x[:2])
    if scale:
        rows = h[hi - 1:hi + 1, hi - 2:]
        rows -= np.outer(scale * v, v @ rows)
        cols = h[:hi + 1, hi - 1:hi + 1]
        cols -= np.outer(cols @ v, scale * v)
        zc = z[:, hi - 1:hi + 1]
        zc -= np.outer(zc @ v, scale * v)
        h[hi, hi - 2] = 0


def _real_schur(h, z):
    """Real Schur form of the real Hessenberg h, z accumulating the transformations; False
    when the iteration does not converge."""
    n = h.shape[0]
    norm = float(np.abs(h).max()) if n else 0.0
    hi, sweeps = n - 1, 0
    budget = _MAX_SWEEPS_PER_EIGENVALUE * max(n, 10)
    while hi >= 1:
        lo = _deflation_point(h, 0, hi, norm)
        if lo == hi:  # a 1x1 block converged
            hi, sweeps = hi - 1, 0
            continue
        if lo == hi - 1:  # a 2x2 block converged
            _standardize_block(h, z, hi - 1)
            hi, sweeps = hi - 2, 0
            continue
        sweeps += 1
        budget -= 1
        if budget < 0:
            return False
        _francis_sweep(h, z, lo, hi, exceptional=sweeps % 10 == 0)
    return True


def _givens(x, y):
    """(c, s), c real, with [[c, s], [-conj(s), c]] @ [x, y] = [r, 0]."""
    ax, ay = abs(x), abs(y)
    if ay == 0:
        return 1.0, 0j
    if ax == 0:
        return 0.0, complex(np.conj(y) / ay)
    norm = math.hypot(ax, ay)
    return ax / norm, complex((x / ax) * np.conj(y) / norm)


def _wilkinson_shift(h, hi):
    """The eigenvalue of the trailing 2x2 block closer to its last diagonal entry."""
    a, b, c, d = h[hi - 1, hi - 1], h[hi - 1, hi], h[hi, hi - 1], h[hi, hi]
    half_trace = (a + d) / 2
    disc = np.sqrt(((a - d) / 2) ** 2 + b * c)
    mu1, mu2 = half_trace + disc, half_trace - disc
    return mu1 if abs(mu1 - d) <= abs(mu2 - d) else mu2


def _complex_schur(h, z):
    """Complex Schur form of the complex Hessenberg h (single shifts, Givens rotations)."""
    n = h.shape[0]
    norm = float(np.abs(h).max()) if n else 0.0
    hi, sweeps = n - 1, 0
    budget = _MAX_SWEEPS_PER_EIGENVALUE * max(n, 10)
    while hi >= 1:
        lo = _deflation_point(h, 0, hi, norm)
        if lo == hi:
            hi, sweeps = hi - 1, 0
            continue
        sweeps += 1
        budget -= 1
        if budget < 0:
            return False
        if sweeps % 10 == 0:  # exceptional shift
            mu = h[hi, hi] + 0.75 * abs(h[hi, hi - 1])
        else:
            mu = _wilkinson_shift(h, hi)
        x, y = h[lo, lo] - mu, h[lo + 1, lo]
        for k in range(lo, hi):
            c, s = _givens(x, y)
            g = np.array([[c, s], [-np.conj(s), c]])
            col = max(lo, k - 1)
            h[k:k + 2, col:] = g @ h[k:k + 2, col:]
            last = min(k + 2, hi)
            h[:last + 1, k:k + 2] = h[:last + 1, k:k + 2] @ g.conj().T
            z[:, k:k + 2] = z[:, k:k + 2] @ g.conj().T
            if k > lo:
                h[k + 1, k - 1] = 0
            if k < hi - 1:
                x, y = h[k + 1, k], h[k + 2, k]
    return True


def _schur_one(a):
    """(t, z) of one matrix (work dtype), NaNs where it is not finite or does not converge."""
    if not np.isfinite(a).all():
        return np.full_like(a, np.nan), np.full_like(a, np.nan)
    h = a.copy()
    taus = _gehrd(h)
    z = _hessenberg_q(h, taus)
    h = np.triu(h, -1)
    converged = (_complex_schur if h.dtype.kind == "c" else _real_schur)(h, z)
    if not converged:
        return np.full_like(a, np.nan), np.full_like(a, np.nan)
    # (what the iteration leaves below the (sub)diagonal is zero up to rounding)
    return np.triu(h, 0 if h.dtype.kind == "c" else -1), z


# --------------------------------------------------------------------------------------
# schur

schur_p = core.primitive("schur", multiple_results=True)


def _schur_impl(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    _check_lapack_dtype("schur", x.dtype)
    work = x.astype(_work_dtype(x.dtype))
    flat = work.reshape((math.prod(x.shape[:-2]),) + x.shape[-2:])
    t, z = np.empty_like(flat), np.empty_like(flat)
    for i, matrix in enumerate(flat):
        t[i], z[i] = _schur_one(matrix)
    t, z = t.reshape(x.shape).astype(x.dtype), z.reshape(x.shape).astype(x.dtype)
    return [t, z] if compute_schur_vectors else [t]


def _schur_aval(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    _check_square("schur", x, "The input to schur must be a square matrix. Got shape "
                  "{shape}.")
    x = x.strip_weak_type()
    return [x, x] if compute_schur_vectors else [x]


schur_p.def_impl(_schur_impl)
schur_p.def_abstract_eval(_schur_aval)
mark_not_differentiable(schur_p, " (its factors are not unique)")
_batch_at_front(schur_p)


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """[t, q] (a list, as JAX's) with x = q t q^H, q unitary and t the (quasi-)upper
    triangular Schur form: real with 2x2 blocks for complex eigenvalue pairs when x is real,
    triangular when it is complex; [t] without `compute_schur_vectors`. `sort_eig_vals` and
    `select_callable` are unused, as in JAX."""
    out = schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors),
                       sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable)
    return out
