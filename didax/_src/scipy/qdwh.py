"""`lax.linalg.qdwh`: the polar decomposition x = u h by the QR-based dynamically weighted
Halley iteration (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31(5), 2010;
Nakatsukasa and Higham, SIAM J. Sci. Comput. 35(3), 2013).

x is scaled by alpha = sqrt(|x|_1 |x|_inf) >= |x|_2, so that its singular values lie in
(l, 1] with l a lower bound on the smallest (eps here: no condition estimate is made). Each
step maps the singular values through the rational function of best approximation to the
sign function on [l, 1], with weights a, b, c from l:

    u <- (b / c) u + (a - b / c) u (I + c u^H u)^{-1},

computed from the QR decomposition of [sqrt(c) u; I] while c is large (> 100) and from the
Cholesky factor of I + c u^H u afterwards (then well conditioned), and l moves towards 1.
The iteration stops when l is within 10 eps of 1 and a step changes u by less than
(4 eps)^(1/3) relative to its norm (the paper's test), or after `max_iterations` steps. It
is traced code (a while loop), so it runs under jit and vmap, and differentiates in forward
mode, as JAX's; in reverse mode too where didax's while_loop does (eagerly), which JAX's
does not.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src.lax import linalg as lax_linalg
from didax._src.lax.control_flow.cond import cond
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy import namespace as jnp

__all__ = ["qdwh"]

_QR_WEIGHT_LIMIT = 100.0  # above this c, the Cholesky factor of I + c u^H u is not trusted


def _weights(low):
    """(a, b, c) of the dynamically weighted Halley step for the lower bound `low`."""
    l2 = low * low
    d = (4 * (1 - l2) / (l2 * l2)) ** (1 / 3)
    root = jnp.sqrt(1 + d)
    a = root + jnp.sqrt(8 - 4 * d + 8 * (2 - l2) / (l2 * root)) / 2
    b = (a - 1) ** 2 / 4
    return a, b, a + b - 1


def _mm(x, y):
    return jnp.matmul(x, y, precision="highest")


def _qr_step(u, a, b, c):
    m, n = u.shape
    dtype = u.dtype
    stacked = jnp.concatenate([jnp.sqrt(c).astype(dtype) * u, jnp.eye(n, dtype=dtype)])
    q, _ = lax_linalg.qr(stacked, full_matrices=False)
    q1, q2 = q[:m], q[m:]
    return ((b / c).astype(dtype) * u
            + ((a - b / c) / jnp.sqrt(c)).astype(dtype) * _mm(q1, jnp.conj(q2.T)))


def _cholesky_step(u, a, b, c):
    n = u.shape[1]
    dtype = u.dtype
    z = jnp.eye(n, dtype=dtype) + c.astype(dtype) * _mm(jnp.conj(u.T), u)
    lower = lax_linalg.cholesky(z)  # z = L L^H
    # u z^{-1} = (u L^{-H}) L^{-1}: two triangular solves from the right
    y = lax_linalg.triangular_solve(lower, u, left_side=False, lower=True, transpose_a=True,
                                    conjugate_a=True)
    y = lax_linalg.triangular_solve(lower, y, left_side=False, lower=True)
    return (b / c).astype(dtype) * u + (a - b / c).astype(dtype) * y


def _frobenius(x):
    return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x))))


def _polar(x, max_iterations, eps):
    real = jnp.finfo(x.dtype).dtype
    norm_1 = jnp.max(jnp.sum(jnp.abs(x), axis=0))
    norm_inf = jnp.max(jnp.sum(jnp.abs(x), axis=1))
    alpha = jnp.sqrt(norm_1 * norm_inf)
    alpha = jnp.where(alpha == 0, 1, alpha).astype(real)
    u0 = x / alpha.astype(x.dtype)
    tol = np.asarray((4 * eps) ** (1 / 3), real)

    def keep_going(state):
        k, _, _, converged = state
        return jnp.logical_and(k < max_iterations, jnp.logical_not(converged))

    def step(state):
        k, u, low, _ = state
        a, b, c = _weights(low)
        new = cond(c > _QR_WEIGHT_LIMIT, _qr_step, _cholesky_step, u, a, b, c)
        low = jnp.minimum(low * (a + b * low * low) / (1 + c * low * low), 1).astype(real)
        converged = jnp.logical_and(_frobenius(new - u) <= tol * _frobenius(new),
                                    1 - low <= 10 * eps)
        return k + 1, new, low, converged

    start = (0, u0, jnp.asarray(eps, real), jnp.asarray(False))
    k, u, _, converged = while_loop(keep_going, step, start)
    h = _mm(jnp.conj(u.T), x)
    h = (h + jnp.conj(h.T)) / 2
    return u, h, k, converged


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
    """(u, h, num_iters, is_converged): the polar decomposition x = u h of a full-rank
    (m, n) matrix with m >= n, u with orthonormal columns and h Hermitian positive
    definite, by at most `max_iterations` (10) steps. `eps` (the dtype's by default) sets
    the stopping tolerance, (4 eps)^(1/3). With `dynamic_shape` (m', n'), only x[:m', :n']
    is decomposed, and u and h are padded with zeros to (m, n) and (n, n). `is_hermitian`
    is unused, as in JAX."""
    del is_hermitian
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        raise ValueError(f"qdwh: data type {x.dtype} not inexact; the polar decomposition "
                         "needs a floating-point or complex matrix")
    if x.ndim != 2:
        raise ValueError(f"qdwh: expected a 2-d matrix, got shape {x.shape}; use vmap for a "
                         "stack of matrices")
    m, n = x.shape
    if m < n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    max_iterations = 10 if max_iterations is None else operator.index(max_iterations)
    eps = float(jnp.finfo(x.dtype).eps) if eps is None else float(eps)
    if dynamic_shape is None:
        return _polar(x, max_iterations, eps)
    rows, cols = (operator.index(s) for s in dynamic_shape)
    if not (cols <= rows <= m and cols <= n):
        raise ValueError(f"qdwh: dynamic_shape {dynamic_shape} must fit in the shape {x.shape} "
                         "of x and have at least as many rows as columns")
    u, h, k, converged = _polar(x[:rows, :cols], max_iterations, eps)
    u = jnp.pad(u, ((0, m - rows), (0, n - cols)))
    h = jnp.pad(h, ((0, n - cols), (0, n - cols)))
    return u, h, k, converged
