"""The Schur decomposition in SciPy's names: `schur`, `rsf2csf` (real Schur form to complex)
and `funm` (a matrix function from the Schur form by Parlett's recurrence).

rsf2csf and funm are traced array code (no loop depends on values), so they run under jit
and vmap; rsf2csf takes stacks of matrices, funm one matrix, as in JAX.
"""
from __future__ import annotations

import numpy as np

from didax._src.lax import linalg_schur
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike, promote_dtypes_inexact

__all__ = ["schur", "rsf2csf", "funm"]


def schur(a, output: str = "real"):
    """[t, z] with a = z t z^H, z unitary; t quasi-upper triangular (2x2 blocks for complex
    eigenvalue pairs) for output "real" on real input, upper triangular for "complex" (the
    input then converted to complex). Stacks of matrices are decomposed one by one."""
    check_arraylike("schur", a)
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    a = jnp.asarray(a)
    if output == "complex" and jnp.issubdtype(a.dtype, jnp.floating):
        a = a.astype(jnp.result_type(a.dtype, jnp.complex64))
    return linalg_schur.schur(a)


def _mm(x, y):
    return jnp.matmul(x, y, precision="highest")


def _rotate(t, z, m, eps):
    """Zeroes t[..., m, m - 1] by a complex Givens rotation of rows and columns m - 1 and m
    built from the eigenvalue of the 2x2 block there with the positive imaginary part (when
    that entry is not negligible already)."""
    a, b = t[..., m - 1, m - 1], t[..., m - 1, m]
    c, d = t[..., m, m - 1], t[..., m, m]
    mu = (a - d) / 2 + jnp.sqrt(((a - d) / 2) ** 2 + b * c)  # the eigenvalue minus d
    radius = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(c) ** 2)
    live = jnp.abs(c) > eps * (jnp.abs(a) + jnp.abs(d))
    safe = jnp.where(live, radius, 1)
    cs = jnp.where(live, mu / safe, 1)
    sn = jnp.where(live, c / safe, 0)
    g = jnp.stack([jnp.stack([jnp.conj(cs), sn], -1), jnp.stack([-sn, cs], -1)], -2)
    g_h = jnp.conj(jnp.swapaxes(g, -1, -2))
    t = t.at[..., m - 1:m + 1, m - 1:].set(_mm(g, t[..., m - 1:m + 1, m - 1:]))
    t = t.at[..., :m + 1, m - 1:m + 1].set(_mm(t[..., :m + 1, m - 1:m + 1], g_h))
    z = z.at[..., :, m - 1:m + 1].set(_mm(z[..., :, m - 1:m + 1], g_h))
    return t.at[..., m, m - 1].set(0), z


def rsf2csf(T, Z, check_finite: bool = True):  # noqa: N803 - SciPy's names
    """(t, z): the complex Schur form and vectors from a real Schur form T and its Schur
    vectors Z (leading dimensions broadcast): each 2x2 block is triangularised by a complex
    rotation, taking the eigenvalue with positive imaginary part first, as SciPy does."""
    del check_finite
    check_arraylike("rsf2csf", T, Z)
    t, z = promote_dtypes_inexact(jnp.asarray(T), jnp.asarray(Z))
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-2:] != z.shape[-2:]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    batch = np.broadcast_shapes(t.shape[:-2], z.shape[:-2])
    dtype = jnp.result_type(t.dtype, jnp.complex64)
    t = jnp.broadcast_to(t, batch + t.shape[-2:]).astype(dtype)
    z = jnp.broadcast_to(z, batch + z.shape[-2:]).astype(dtype)
    eps = float(jnp.finfo(dtype).eps)
    for m in reversed(range(1, t.shape[-1])):
        t, z = _rotate(t, z, m, eps)
    return t, z


def _parlett(t, f_diag):
    """F = f(T) for upper-triangular T from f on its diagonal: superdiagonal p of F is
    (T F - F T)_ij / (t_jj - t_ii) with F known below it (Parlett's recurrence, one whole
    superdiagonal at a time; where t_jj = t_ii the numerator stays undivided, as in SciPy)."""
    n = t.shape[-1]
    f = jnp.diag(f_diag)
    diag = jnp.diagonal(t)
    den = diag[None, :] - diag[:, None]
    safe = jnp.where(den == 0, 1, den)
    rows, cols = np.indices((n, n))
    for p in range(1, n):
        s = _mm(t, f) - _mm(f, t)
        f = jnp.where(cols - rows == p, s / safe, f)
    return f, den


def funm(A, func, disp: bool = True):  # noqa: N803 - SciPy's names
    """func(A) for a square matrix A, with `func` applied elementwise to its eigenvalues:
    from the complex Schur form A = Z T Z^H, f(A) = Z f(T) Z^H with f(T) by Parlett's
    recurrence. Complex, as in JAX. With `disp` False, also SciPy's error estimate
    min(1, max(eps, eps / minden * |triu(T, 1)|_1)), minden the smallest gap |t_ii - t_jj|
    (and |t_00|), infinite if the result is not finite (JAX's differs in some cases)."""
    check_arraylike("funm", A)
    (a,) = promote_dtypes_inexact(jnp.asarray(A))
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = linalg_schur.schur(a)
    if not jnp.iscomplexobj(a):
        t, z = rsf2csf(t, z)
    f, den = _parlett(t, jnp.asarray(func(jnp.diagonal(t))).astype(t.dtype))
    result = _mm(_mm(z, f), jnp.conj(z.T))
    if disp:
        return result
    n = t.shape[0]
    real = jnp.finfo(t.dtype).dtype
    tol = np.asarray(jnp.finfo(t.dtype).eps, real)
    gaps = jnp.where(np.triu(np.ones((n, n), bool), 1), jnp.abs(den), jnp.inf)
    minden = jnp.minimum(jnp.abs(t[0, 0]), jnp.min(gaps))
    minden = jnp.where(minden == 0, tol, minden)
    strict = jnp.max(jnp.sum(jnp.abs(jnp.triu(t, 1)), axis=0))
    err = jnp.minimum(1, jnp.maximum(tol, tol / minden * strict)).astype(real)
    err = jnp.where(jnp.all(jnp.isfinite(result)), err, jnp.inf).astype(real)
    return result, err
