"""Matrix functions and decompositions of didax.scipy.linalg beyond the LAPACK wrappers:
the exponential and its Frechet derivative, the square root, the polar decomposition,
Hessenberg reduction, Q products of QR, Sylvester equations and tridiagonal eigenproblems.

expm is Higham's scaling and squaring with the degree-13 Pade approximant; its Frechet
derivative L(A, E) runs the same steps differentiated in the direction E (Al-Mohy and
Higham), so it is linear in E and serves as expm's JVP. The number of squarings depends on
A's norm; to stay a fixed computation (jit, transposition) all `max_squarings` steps run and
the unneeded ones select their input.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src.lax import linalg as lax_linalg
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from didax._src.primitives.custom_derivatives import custom_jvp

__all__ = ["expm", "expm_frechet", "sqrtm", "polar", "hessenberg", "qr_multiply",
           "solve_sylvester", "eigh_tridiagonal"]

# Pade coefficients b_0..b_13 of degree 13 and its 1-norm bound theta_13 (Higham 2005)
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _square_matrix(name, a):
    check_arraylike(name, a)
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected a square matrix (or a stack of them), got shape "
                         f"{a.shape}")
    return a


def _mm(x, y):
    return jnp.matmul(x, y, precision="highest")


def _solve(a, b):
    """a^-1 b for matrices b, by LU and two triangular solves: primitives with transpose
    rules, so that the result can sit in a linear (tangent) computation and be
    transposed."""
    lu, _, perm = lax_linalg.lu(a)
    return lax_linalg.lu_solve(lu, perm, b)


def _squarings(a, max_squarings):
    """s with ||a / 2^s||_1 <= theta_13, and whether s exceeds the limit."""
    norm = jnp.max(jnp.sum(jnp.abs(a), axis=-2), axis=-1)
    s = jnp.ceil(jnp.log2(jnp.maximum(norm, 1e-300 if norm.dtype == np.float64 else 1e-30)
                          / _THETA13))
    s = jnp.maximum(s, 0)
    return s, s > max_squarings


def _pade13(a, e=None):
    """(U, V) of the degree-13 Pade approximant, and their derivatives in direction e."""
    b = _PADE13
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = _mm(a, a)
    a4 = _mm(a2, a2)
    a6 = _mm(a4, a2)
    w1 = b[13] * a6 + b[11] * a4 + b[9] * a2
    w2 = b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
    z1 = b[12] * a6 + b[10] * a4 + b[8] * a2
    z2 = b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    w = _mm(a6, w1) + w2
    u = _mm(a, w)
    v = _mm(a6, z1) + z2
    if e is None:
        return u, v, None, None
    m2 = _mm(a, e) + _mm(e, a)
    m4 = _mm(a2, m2) + _mm(m2, a2)
    m6 = _mm(a4, m2) + _mm(m4, a2)
    lw1 = b[13] * m6 + b[11] * m4 + b[9] * m2
    lw2 = b[7] * m6 + b[5] * m4 + b[3] * m2
    lz1 = b[12] * m6 + b[10] * m4 + b[8] * m2
    lz2 = b[6] * m6 + b[4] * m4 + b[2] * m2
    lw = _mm(a6, lw1) + _mm(m6, w1) + lw2
    lu = _mm(a, lw) + _mm(e, w)
    lv = _mm(a6, lz1) + _mm(m6, z1) + lz2
    return u, v, lu, lv


def _expm_and_frechet(a, e, max_squarings):
    s, too_many = _squarings(a, max_squarings)
    scale = jnp.exp2(-s).astype(a.dtype)[..., None, None]
    a_s = a * scale
    e_s = None if e is None else e * scale
    u, v, lu, lv = _pade13(a_s, e_s)
    r = _solve(v - u, v + u)
    frechet = None
    if e is not None:
        frechet = _solve(v - u, lu + lv + _mm(lu - lv, r))
    for i in range(max_squarings):
        more = (i < s)[..., None, None]
        if frechet is not None:
            frechet = jnp.where(more, _mm(r, frechet) + _mm(frechet, r), frechet)
        r = jnp.where(more, _mm(r, r), r)
    r = jnp.where(too_many[..., None, None], jnp.nan, r)
    if frechet is not None:
        frechet = jnp.where(too_many[..., None, None], jnp.nan, frechet)
    return r, frechet


def _expm(a, max_squarings):
    @custom_jvp
    def run(a):
        return _expm_and_frechet(a, None, max_squarings)[0]

    def run_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        return _expm_and_frechet(x, dx, max_squarings)

    run.defjvp(run_jvp)
    return run(a)


def expm(A, *, upper_triangular=False, max_squarings=16):  # noqa: N803
    """The matrix exponential (of each matrix of a stack); NaN where the norm would need
    more than `max_squarings` squarings."""
    del upper_triangular  # a hint only: the general algorithm is exact for it too
    a = _square_matrix("expm", A)
    return _expm(a, operator.index(max_squarings))


def expm_frechet(A, E, *, method=None, compute_expm=True):  # noqa: N803
    """The Frechet derivative of expm at A in the direction E (with expm(A) first when
    `compute_expm`)."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: method must be None, 'SPS' or 'blockEnlarge', got "
                         f"{method!r}")
    a = _square_matrix("expm_frechet", A)
    e = _square_matrix("expm_frechet", E)
    a, e = promote_dtypes_inexact(a, e)
    if a.shape != e.shape:
        raise ValueError(f"expm_frechet: A and E must have the same shape, got {a.shape} and "
                         f"{e.shape}")
    value, frechet = _expm_and_frechet(a, e, 16)
    return (value, frechet) if compute_expm else frechet


# -- square root ------------------------------------------------------------------------------

def _sqrtm_iterate(a):
    """The principal square root by the product form of the Denman-Beavers iteration with
    determinant scaling mu = |det M|^(-1/2n):
      Y <- mu Y (I + mu^-2 M^-1) / 2,   M <- (I + (mu^2 M + mu^-2 M^-1) / 2) / 2,
    from Y = M = a, with M -> I and Y -> sqrt(a). Needs a nonsingular a without eigenvalues
    on the negative real axis."""
    n = a.shape[-1]
    eye = jnp.eye(n, dtype=a.dtype)
    tol = jnp.finfo(a.dtype).eps * n

    def cond(s):
        k, _, m, delta = s
        return (k < 50) & (delta > tol)

    def body(s):
        k, y, m, _ = s
        mu = jnp.abs(jnp.linalg.det(m)) ** (-1.0 / (2 * n))
        mu = jnp.where(k < 10, mu, 1).astype(a.dtype)  # scale early, converge plainly later
        m_inv = jnp.linalg.inv(m) / (mu * mu)
        y = mu * _mm(y, eye + m_inv) / 2
        m = (eye + (mu * mu * m + m_inv) / 2) / 2
        return k + 1, y, m, jnp.max(jnp.abs(m - eye))

    start = (0, a, a, jnp.asarray(jnp.inf, jnp.finfo(a.dtype).dtype))
    return while_loop(cond, body, start)[1]


def _sylvester_kron(a, b, c):
    """X with a X + X b = c by one solve of the Kronecker-form system
    (a (x) I + I (x) b^T) vec(X) = vec(C) (vec row by row)."""
    n, m = c.shape
    system = jnp.kron(a, jnp.eye(m, dtype=a.dtype)) + jnp.kron(jnp.eye(n, dtype=a.dtype), b.T)
    return _solve(system, c.reshape(n * m, 1)).reshape(n, m)


@custom_jvp
def _sqrtm(a):
    return _sqrtm_iterate(a)


def _sqrtm_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    x = _sqrtm(a)
    return x, _sylvester_kron(x, x, da)  # x dx + dx x = da


_sqrtm.defjvp(_sqrtm_jvp)


def sqrtm(A, blocksize=1):  # noqa: N803
    """The principal square root (complex, as in JAX) of a nonsingular matrix with no
    eigenvalues on the negative real axis; derivatives solve X dX + dX X = dA."""
    if operator.index(blocksize) < 1:
        raise ValueError(f"sqrtm: blocksize must be at least 1, got {blocksize}")
    a = _square_matrix("sqrtm", A)
    if a.ndim != 2:
        raise ValueError(f"sqrtm: expected a 2-d matrix, got shape {a.shape}")
    complex_dtype = jnp.result_type(a.dtype, jnp.complex64)
    return _sqrtm(a.astype(complex_dtype))


# -- decompositions -----------------------------------------------------------------------------

def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """(u, p): a = u p (side 'right') or p u ('left') with u unitary and p Hermitian
    positive semidefinite, from the SVD a = w s v^H: u = w v^H."""
    del eps, max_iterations
    check_arraylike("polar", a)
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    if a.ndim != 2:
        raise ValueError(f"polar: expected a 2-d matrix, got shape {a.shape}")
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    w, s, vh = lax_linalg.svd(a, full_matrices=False)
    u = _mm(w, vh)
    if side == "right":
        v = jnp.conj(vh.T)
        p = _mm(v * s.astype(a.dtype)[None, :], vh)
    else:
        p = _mm(w * s.astype(a.dtype)[None, :], jnp.conj(w.T))
    return u, p


def _householder(x):
    """(v, beta) with (I - 2 v v^H) x = beta e_0, |v| = 1, beta = -sign(x_0) |x| (LAPACK's
    sign, so that results match its reductions); v = 0 when x is already along e_0."""
    norm = jnp.sqrt(jnp.sum(jnp.abs(x) ** 2))
    head = x[0]
    phase = jnp.where(head == 0, 1, head / jnp.where(head == 0, 1, jnp.abs(head)))
    beta = -phase * norm
    v = x.at[0].add(-beta)
    size = jnp.sqrt(jnp.sum(jnp.abs(v) ** 2))
    tail_zero = jnp.sum(jnp.abs(x[1:]) ** 2) == 0
    v = jnp.where(tail_zero, 0, v / jnp.where(size == 0, 1, size))
    return v, jnp.where(tail_zero, head, beta)


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """h (upper Hessenberg, zero below the first subdiagonal) with a = q h q^H, by
    Householder reflections (and q with `calc_q`)."""
    del overwrite_a, check_finite
    h = _square_matrix("hessenberg", a)
    if h.ndim != 2:
        raise ValueError(f"hessenberg: expected a 2-d matrix, got shape {h.shape}")
    n = h.shape[0]
    q = jnp.eye(n, dtype=h.dtype)
    for k in range(n - 2):
        v, beta = _householder(h[k + 1:, k])
        v_full = jnp.concatenate([jnp.zeros((k + 1,), h.dtype), v])
        # h <- P h P with P = I - 2 v v^H (Hermitian, unitary)
        h = h - 2 * jnp.outer(v_full, _mm(jnp.conj(v_full), h))
        h = h - 2 * jnp.outer(_mm(h, v_full), jnp.conj(v_full))
        h = h.at[k + 2:, k].set(0).at[k + 1, k].set(beta)
        q = q - 2 * jnp.outer(_mm(q, v_full), jnp.conj(v_full))
    return (h, q) if calc_q else h


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """(c q or q c, r) with q r the economic QR of a, without forming more of q than
    needed; q conjugated when `conjugate`."""
    del overwrite_a, overwrite_c
    if pivoting:
        raise NotImplementedError("qr_multiply(pivoting=True): column-pivoted QR is not "
                                  "implemented in didax")
    if mode not in ("left", "right"):
        raise ValueError(f"qr_multiply: mode must be 'left' or 'right', got {mode!r}")
    check_arraylike("qr_multiply", a, c)
    a, c = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if a.ndim != 2:
        raise ValueError(f"qr_multiply: a must be 2-d, got shape {a.shape}")
    q, r = lax_linalg.qr(a, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    vector = c.ndim == 1
    if mode == "right":
        cm = c[None, :] if vector else c
        if cm.shape[-1] != q.shape[0]:
            raise ValueError(f"qr_multiply: c @ Q needs c with {q.shape[0]} columns (a has "
                             f"shape {a.shape}), got c of shape {c.shape}")
        out = _mm(cm, q)
    else:
        cm = c[:, None] if vector else c
        if cm.shape[0] != q.shape[1]:
            raise ValueError(f"qr_multiply: Q @ c needs c with {q.shape[1]} rows (a has "
                             f"shape {a.shape}), got c of shape {c.shape}")
        out = _mm(q, cm)
    return (out.reshape(-1) if vector else out), r


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):  # noqa: N803
    """X with A X + X B = C (one per matrix of a stack), by one solve of its Kronecker form
    (cost O((n m)^3): for small systems)."""
    del tol
    if method not in ("schur", "eigen"):
        raise ValueError(f"solve_sylvester: method must be 'schur' or 'eigen', got "
                         f"{method!r}")
    check_arraylike("solve_sylvester", A, B, C)
    a, b, c = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
    if (a.ndim < 2 or b.ndim < 2 or c.ndim < 2 or a.shape[-1] != a.shape[-2]
            or b.shape[-1] != b.shape[-2] or c.shape[-2:] != (a.shape[-1], b.shape[-1])):
        raise ValueError(f"solve_sylvester: need square A (n, n), B (m, m) and C (n, m), got "
                         f"shapes {a.shape}, {b.shape} and {c.shape}")
    if a.ndim == b.ndim == c.ndim == 2:
        return _sylvester_kron(a, b, c)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    c2 = jnp.broadcast_to(c, batch + c.shape[-2:]).reshape((-1,) + c.shape[-2:])
    out = jnp.stack([_sylvester_kron(a[i], b[i], c2[i]) for i in range(a.shape[0])])
    return out.reshape(batch + c.shape[-2:])


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """Eigenvalues (ascending; with eigenvectors unless `eigvals_only`) of the real
    symmetric tridiagonal matrix with diagonal d and off-diagonal e: all (select 'a') or
    those with indices select_range = (lo, hi), inclusive ('i')."""
    del tol, key
    check_arraylike("eigh_tridiagonal", d, e)
    d, e = promote_dtypes_inexact(jnp.asarray(d), jnp.asarray(e))
    if d.ndim != 1 or e.ndim != 1 or e.shape[0] != max(d.shape[0] - 1, 0):
        raise ValueError(f"eigh_tridiagonal: need 1-d d (n,) and e (n - 1,), got shapes "
                         f"{d.shape} and {e.shape}")
    if jnp.iscomplexobj(d):
        raise ValueError("eigh_tridiagonal: the diagonal of a Hermitian matrix is real; got "
                         "a complex d")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    if select not in ("a", "i"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    n = d.shape[0]
    m = jnp.diag(d) + jnp.diag(e, 1) + jnp.diag(jnp.conj(e), -1)
    vecs, vals = lax_linalg.eigh(m, lower=True)
    if select == "i":
        lo, hi = (operator.index(i) for i in select_range)
        if not 0 <= lo <= hi < n:
            raise ValueError(f"eigh_tridiagonal: select_range {select_range} must satisfy "
                             f"0 <= lo <= hi < {n}")
        vals, vecs = vals[lo:hi + 1], vecs[:, lo:hi + 1]
    return vals if eigvals_only else (vals, vecs)
