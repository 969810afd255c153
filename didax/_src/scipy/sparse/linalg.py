"""didax.scipy.sparse.linalg: iterative solvers for A x = b with A given as a matrix or a
linear function (its vectors may be pytrees), as JAX has them: conjugate gradients,
BiCGSTAB and restarted GMRES, each a `while_loop` (so they jit), stopping once
||b - A x|| <= max(tol ||b||, atol) or after maxiter steps, returning (x, None). Their
derivatives come from implicit differentiation (`implicit.py`), not from the loops.
"""
from __future__ import annotations

import numpy as np

from didax._src import tree_util
from didax._src.lax.control_flow.loops import fori_loop
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy import namespace as jnp
from didax._src.numpy.flatten_util import ravel_pytree
from didax._src.scipy.sparse.implicit import solve_implicitly

__all__ = ["cg", "bicgstab", "gmres"]


# -- vectors as pytrees ---------------------------------------------------------------------

def _add(x, y, scale=1):
    return tree_util.tree_map(lambda a, b: a + scale * b, x, y)


def _sub(x, y):
    return tree_util.tree_map(lambda a, b: a - b, x, y)


def _scale(c, x):
    return tree_util.tree_map(lambda a: c * a, x)


def _dot(x, y):
    """<x, y> = sum conj(x) y over every leaf."""
    return sum(jnp.vdot(a, b) for a, b in zip(tree_util.tree_leaves(x),
                                              tree_util.tree_leaves(y)))


def _norm2(x):
    return sum(jnp.sum(jnp.real(a * jnp.conj(a))) for a in tree_util.tree_leaves(x))


def _select(pred, x, y):
    return tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), x, y)


# -- arguments ------------------------------------------------------------------------------

def _as_function(name, A, what):  # noqa: N803 - SciPy's name
    if callable(A):
        return A
    if hasattr(A, "shape") or isinstance(A, (list, tuple)):
        matrix = jnp.asarray(A)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"{name}: {what} must be a square matrix or a linear function, "
                             f"got shape {matrix.shape}")
        return lambda v: jnp.matmul(matrix, v, precision="highest")
    raise TypeError(f"{name}: {what} must be a matrix or a function, got "
                    f"{type(A).__name__}")


def _prepare(name, A, b, x0, M, maxiter):  # noqa: N803
    matvec = _as_function(name, A, "A")
    precond = (lambda v: v) if M is None else _as_function(name, M, "M")
    b = tree_util.tree_map(jnp.asarray, b)
    x0 = tree_util.tree_map(jnp.zeros_like, b) if x0 is None else tree_util.tree_map(
        jnp.asarray, x0)
    b_tree, x_tree = tree_util.tree_structure(b), tree_util.tree_structure(x0)
    if b_tree != x_tree:
        raise ValueError(f"{name}: x0 and b must have the same structure, got {x_tree} and "
                         f"{b_tree}")
    for xl, bl in zip(tree_util.tree_leaves(x0), tree_util.tree_leaves(b)):
        if xl.shape != bl.shape:
            raise ValueError(f"{name}: x0 and b must have the same shapes, got {xl.shape} "
                             f"and {bl.shape}")
    out_tree = tree_util.tree_structure(matvec(b))  # traced once, checked before solving
    if out_tree != b_tree:
        raise ValueError(f"{name}: A must map b's structure to itself, got {out_tree} for "
                         f"{b_tree}")
    size = sum(int(np.prod(leaf.shape)) for leaf in tree_util.tree_leaves(b))
    maxiter = 10 * size if maxiter is None else int(maxiter)
    return matvec, precond, b, x0, size, maxiter


def _tolerance2(b, tol, atol, dtype):
    return jnp.maximum(jnp.square(tol) * _norm2(b), jnp.square(jnp.asarray(atol, dtype)))


def _real_dtype(b):
    leaves = tree_util.tree_leaves(b)
    return jnp.finfo(jnp.result_type(*leaves) if leaves else jnp.float32).dtype


# -- conjugate gradients --------------------------------------------------------------------

def _cg_loop(matvec, b, x0, precond, tol, atol, maxiter):
    limit = _tolerance2(b, tol, atol, _real_dtype(b))
    r0 = _sub(b, matvec(x0))
    z0 = precond(r0)
    gamma0 = _dot(r0, z0)

    def cond(state):
        _, r, _, _, k = state
        return (_norm2(r) > limit) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        ap = matvec(p)
        alpha = gamma / _dot(p, ap)
        x = _add(x, p, alpha)
        r = _add(r, ap, -alpha)
        z = precond(r)
        gamma_next = _dot(r, z)
        p = _add(z, p, gamma_next / gamma)
        return x, r, gamma_next, p, k + 1

    return while_loop(cond, body, (x0, r0, gamma0, z0, 0))[0]


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):  # noqa: N803
    """Conjugate gradients for Hermitian positive-definite A; (x, None)."""
    matvec, precond, b, x0, _, maxiter = _prepare("cg", A, b, x0, M, maxiter)

    def solve(op, rhs):
        return _cg_loop(op, rhs, x0, precond, tol, atol, maxiter)

    return solve_implicitly(matvec, b, solve, solve), None


# -- BiCGSTAB -------------------------------------------------------------------------------

def _bicgstab_loop(matvec, b, x0, precond, tol, atol, maxiter):
    dtype = _real_dtype(b)
    limit = _tolerance2(b, tol, atol, dtype)
    r0 = _sub(b, matvec(x0))
    shadow = r0
    one = jnp.ones((), jnp.result_type(*tree_util.tree_leaves(b)))
    zeros = tree_util.tree_map(jnp.zeros_like, b)

    def cond(state):
        _, r, *_, k = state
        return (_norm2(r) > limit) & (k < maxiter)

    def body(state):
        x, r, rho, alpha, omega, p, v, k = state
        rho_next = _dot(shadow, r)
        beta = (rho_next / rho) * (alpha / omega)
        p = _add(r, _add(p, v, -omega), beta)
        p_hat = precond(p)
        v = matvec(p_hat)
        alpha = rho_next / _dot(shadow, v)
        s = _add(r, v, -alpha)
        done = _norm2(s) <= limit
        s_hat = precond(s)
        t = matvec(s_hat)
        tt = _dot(t, t)
        omega = jnp.where(done | (tt == 0), one, _dot(t, s) / jnp.where(tt == 0, one, tt))
        x_half = _add(x, p_hat, alpha)
        x = _select(done, x_half, _add(x_half, s_hat, omega))
        r = _select(done, s, _add(s, t, -omega))
        return x, r, rho_next, alpha, omega, p, v, k + 1

    state = (x0, r0, one, one, one, zeros, zeros, 0)
    return while_loop(cond, body, state)[0]


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):  # noqa: N803
    """BiCGSTAB for general square A; (x, None)."""
    matvec, precond, b, x0, _, maxiter = _prepare("bicgstab", A, b, x0, M, maxiter)

    def solve(op, rhs):
        return _bicgstab_loop(op, rhs, x0, precond, tol, atol, maxiter)

    return solve_implicitly(matvec, b, solve, solve), None


# -- GMRES ----------------------------------------------------------------------------------

def _arnoldi_cycle(op, r, restart):
    """Krylov basis V (restart + 1 columns) of op from r, with the Hessenberg matrix H of
    op V[:, :restart] = V H, by Gram-Schmidt applied twice per new column."""
    n = r.shape[0]
    beta = jnp.sqrt(jnp.sum(jnp.real(r * jnp.conj(r))))
    safe = jnp.where(beta > 0, beta, 1)
    basis = jnp.zeros((n, restart + 1), r.dtype).at[:, 0].set(r / safe.astype(r.dtype))
    hess = jnp.zeros((restart + 1, restart), r.dtype)

    def step(j, carry):
        basis, hess = carry
        w = op(basis[:, j])
        h = jnp.matmul(jnp.conj(basis.T), w, precision="highest")
        w = w - jnp.matmul(basis, h, precision="highest")
        h2 = jnp.matmul(jnp.conj(basis.T), w, precision="highest")
        w = w - jnp.matmul(basis, h2, precision="highest")
        h = h + h2
        size = jnp.sqrt(jnp.sum(jnp.real(w * jnp.conj(w))))
        h = h.at[j + 1].set(size.astype(h.dtype))
        fresh = size > 1e-30 * jnp.maximum(1, beta)  # zero after an exact (lucky) breakdown
        w = jnp.where(fresh, w / jnp.where(fresh, size, 1).astype(w.dtype), 0)
        return basis.at[:, j + 1].set(w), hess.at[:, j].set(h)

    basis, hess = fori_loop(0, restart, step, (basis, hess))
    return basis, hess, beta


def _gmres_loop(op, b, x0, precond, tol, atol, restart, maxiter):
    """Left-preconditioned restarted GMRES on flat vectors."""
    dtype = jnp.finfo(b.dtype).dtype
    limit = _tolerance2(precond(b), tol, atol, dtype)

    def residual(x):
        return precond(b - op(x))

    def cond(state):
        _, r, k = state
        return (_norm2(r) > limit) & (k < maxiter)

    def body(state):
        x, r, k = state
        basis, hess, beta = _arnoldi_cycle(lambda v: precond(op(v)), r, restart)
        target = jnp.zeros((restart + 1,), r.dtype).at[0].set(beta.astype(r.dtype))
        y = jnp.linalg.lstsq(hess, target)[0]
        x = x + jnp.matmul(basis[:, :restart], y, precision="highest")
        return x, residual(x), k + 1

    return while_loop(cond, body, (x0, residual(x0), 0))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,  # noqa: N803
          solve_method="batched"):
    """Restarted GMRES for general square A: up to `maxiter` cycles of `restart` Arnoldi
    steps; (x, None). Both solve methods ('batched', 'incremental') orthogonalize the same
    way here, by Gram-Schmidt applied twice."""
    if solve_method not in ("batched", "incremental"):
        raise ValueError(f"gmres: solve_method must be 'batched' or 'incremental', got "
                         f"{solve_method!r}")
    matvec, precond, b, x0, size, maxiter = _prepare("gmres", A, b, x0, M, maxiter)
    restart = max(1, min(int(restart), size))
    flat_b, unravel = ravel_pytree(b)
    flat_x0, _ = ravel_pytree(x0)

    def flat(fn):
        return lambda v: ravel_pytree(fn(unravel(v)))[0]

    def solve(op, rhs):
        x = _gmres_loop(flat(op), ravel_pytree(rhs)[0], flat_x0, flat(precond), tol, atol,
                        restart, maxiter)
        return unravel(x)

    return solve_implicitly(matvec, b, solve, solve), None


