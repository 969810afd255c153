"""didax.scipy.sparse.linalg: the Krylov solvers cg, bicgstab and gmres, as JAX has them.

The iterations are JAX's (the same updates, stopping tests, Arnoldi process with iterated
classical Gram-Schmidt and the 'batched' and 'incremental' GMRES restarts), on pytrees of
arrays, with `A` and the preconditioner `M` given as a matrix, a function or an object with
`__matmul__`. Like JAX, `info` is None for
cg and bicgstab, and -1 (a NaN solution) or 0 for gmres.

Derivatives are implicit, as JAX's `lax.custom_linear_solve` gives them, not through the
iterations: for x = A^-1 b the cotangent g gives b-bar = A^-T g (another solve, with the
transposed operator unless A is known symmetric) and, for the traced values A closes over,
the VJP of (params -> A(x)) at -b-bar. This is a `custom_vjp` (the operator's traced
values hoisted by `closure_convert`), so reverse mode works to any order; forward mode
(jvp, jacfwd) is not supported, where JAX's primitive supports both. As in JAX, x0, the
tolerances and the preconditioner M are not differentiated (M must not close over values
being differentiated when A is not symmetric).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

import didax.numpy as jnp
from didax._src import api
from didax._src.core import Array
from didax._src.custom_derivatives import custom_vjp
from didax._src.custom_extras import closure_convert
from didax._src.lax import elementwise as lax
from didax._src.lax.control_flow.loops import fori_loop
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.scipy import linalg as jsp_linalg
from didax._src.tree_util import (Partial, tree_leaves, tree_map, tree_reduce,
                                  tree_structure)

__all__ = ["bicgstab", "cg", "gmres"]

_dot = jnp.dot
_vdot = jnp.vdot


def _vdot_real_part(x, y):
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x, y):
    return sum(tree_leaves(tree_map(jnp.vdot, x, y)))


def _norm(x):
    xs = tree_leaves(x)
    return jnp.sqrt(sum(map(_vdot_real_part, xs, xs)))


def _mul(scalar, tree):
    return tree_map(functools.partial(operator.mul, scalar), tree)


_add = functools.partial(tree_map, operator.add)
_sub = functools.partial(tree_map, operator.sub)


@Partial
def _identity(x):
    return x


def _normalize_matvec(f):
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Array)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return functools.partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _result_dtype(tree):
    return jnp.result_type(*tree_leaves(tree))


# -- implicit differentiation -----------------------------------------------------------------

def _linear_solve(matvec, b, solve, symmetric):
    """solve(matvec, b), differentiated implicitly (see the module docstring)."""
    mv, mv_consts = closure_convert(matvec, b)
    sv, sv_consts = closure_convert(lambda rhs: solve(matvec, rhs), b)
    n_mv = len(mv_consts)

    def transpose_solve(consts, g):
        if symmetric:
            return _solve(g, *consts)
        op = functools.partial(_call, mv, consts[:n_mv])
        op_t = api.linear_transpose(op, b)
        return _linear_solve(lambda v: op_t(v)[0], g, solve, False)  # itself implicit

    @custom_vjp
    def _solve(rhs, *consts):
        return sv(rhs, *consts[n_mv:])

    def fwd(rhs, *consts):
        x = _solve(rhs, *consts)
        return x, (x, consts)

    def bwd(res, g):
        x, consts = res
        b_bar = transpose_solve(consts, g)
        _, pullback = api.vjp(lambda *c: mv(x, *c), *consts[:n_mv])
        c_bar = pullback(tree_map(jnp.negative, b_bar)) if n_mv else ()
        s_bar = tuple(jnp.zeros_like(c) for c in consts[n_mv:])
        return (b_bar, *c_bar, *s_bar)

    _solve.defvjp(fwd, bwd)
    return _solve(b, *mv_consts, *sv_consts)


def _call(mv, consts, x):
    return mv(x, *consts)


# -- conjugate gradients and BiCGSTAB ---------------------------------------------------------

def _cg_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value):
        _, r, gamma, _, k = value
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value):
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        beta_ = gamma_ / gamma
        p_ = _add(z_, _mul(beta_, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = _result_dtype(p0)
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)
    x_final, *_ = while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, 0))
    return x_final


def _bicgstab_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value):
        x, r, *_, k = value
        rs = _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value):
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(functools.partial(jnp.where, exit_early),
                      _add(x, _mul(alpha_, phat)),
                      _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(functools.partial(jnp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        k_ = jnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = jnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    one = jnp.asarray(1, _result_dtype(b))
    x_final, *_ = while_loop(cond_fun, body_fun, (x0, r0, r0, one, one, one, r0, r0, 0))
    return x_final


def _shapes(pytree):
    return [np.shape(x) for x in tree_leaves(pytree)]


def _check_x0(x0, b):
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
                         f"{_shapes(b)}")


def _isolve(isolve_solve, A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None,
            check_symmetric=False):
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    if maxiter is None:
        maxiter = 10 * sum(bi.size for bi in tree_leaves(b))
    A = _normalize_matvec(A)
    M = _identity if M is None else _normalize_matvec(M)
    _check_x0(x0, b)
    x0 = tree_map(lax.stop_gradient, x0)  # the solve's own values are not differentiated
    solve = functools.partial(isolve_solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    symmetric = (all(not jnp.iscomplexobj(x) for x in tree_leaves(b))
                 if check_symmetric else False)
    return _linear_solve(A, b, solve, symmetric), None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves A x = b for Hermitian positive-definite A by conjugate gradients; (x, None)."""
    return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves A x = b by the biconjugate gradient stabilized method; (x, None)."""
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


# -- GMRES ------------------------------------------------------------------------------------

def _safe_normalize(x, thresh=None):
    norm = _norm(x)
    dtype = _result_dtype(x)
    if thresh is None:
        thresh = jnp.finfo(norm.dtype).eps
    thresh = jnp.asarray(thresh).astype(dtype).real
    use_norm = norm > thresh
    norm_cast = norm.astype(dtype)
    normalized_x = tree_map(lambda y: jnp.where(use_norm, y / norm_cast, 0.0), x)
    return normalized_x, jnp.where(use_norm, norm, 0.0)


def _project_on_columns(A, v):
    v_proj = tree_map(lambda X, y: jnp.einsum("...n,...->n", X.conj(), y), A, v)
    return tree_reduce(operator.add, v_proj)


def _iterative_classical_gram_schmidt(Q, x, xnorm, max_iterations=2):
    Q0 = tree_leaves(Q)[0]
    r = jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)
    q = x
    xnorm_scaled = xnorm / jnp.sqrt(2.0)

    def body_function(carry):
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        Qh = tree_map(lambda X: _dot(X, h), Q)
        q = _sub(q, Qh)
        r = _add(r, h)

        def qnorm_cond(carry):
            k, not_done, _, _ = carry
            return jnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(carry):
            k, _, q, qnorm_scaled = carry
            _, qnorm = _safe_normalize(q)
            return (k, False, q, qnorm / jnp.sqrt(2.0))

        _, _, q, qnorm_scaled = while_loop(qnorm_cond, qnorm, (k, True, q, qnorm_scaled))
        return (k + 1, q, r, qnorm_scaled)

    def cond_function(carry):
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    k, q, r, qnorm_scaled = body_function((0, q, r, xnorm_scaled))
    k, q, r, _ = while_loop(cond_function, body_function, (k, q, r, qnorm_scaled))
    return q, r


def _kth_arnoldi_iteration(k, A, M, V, H):
    dtype = _result_dtype(V)
    eps = jnp.finfo(dtype).eps
    v = tree_map(lambda x: x[..., k], V)
    v = M(A(v))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    tol = eps * v_norm_0
    unit_v, v_norm_1 = _safe_normalize(v, thresh=tol)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    H = H.at[k, :].set(h)
    return V, H, v_norm_1 == 0.


def _rotate_vectors(H, i, cs, sn):
    x1 = H[i]
    y1 = H[i + 1]
    x2 = cs.conj() * x1 - sn.conj() * y1
    y2 = sn * x1 + cs * y1
    return H.at[i].set(x2).at[i + 1].set(y2)


def _givens_rotation(a, b):
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row, givens, k):
    R_row = fori_loop(0, k, lambda i, H_row: _rotate_vectors(H_row, i, *givens[i, :]), H_row)
    givens_factors = _givens_rotation(R_row[k], R_row[k + 1])
    givens = givens.at[k, :].set(jnp.stack(givens_factors).astype(givens.dtype))
    R_row = _rotate_vectors(R_row, k, *givens_factors)
    return R_row, givens


def _pad_krylov(unit_residual, restart):
    return tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                    unit_residual)


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    V = _pad_krylov(unit_residual, restart)
    dtype = _result_dtype(b)
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta_vec = jnp.zeros((restart + 1), dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry):
        k, err, _, _, _, _ = carry
        return jnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry):
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = R.at[k, :].set(R_row)
        beta_vec = _rotate_vectors(beta_vec, k, *givens[k, :])
        err = abs(beta_vec[k + 1]).astype(residual_norm.dtype)
        return k + 1, err, V, R, beta_vec, givens

    carry = (0, residual_norm, V, R, beta_vec, givens)
    _, residual_norm, V, R, beta_vec, _ = while_loop(loop_cond, arnoldi_qr_step, carry)
    y = jsp_linalg.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    dx = tree_map(lambda X: _dot(X[..., :-1], y), V)
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _lstsq(a, b):
    a2 = _dot(a.T.conj(), a)
    b2 = _dot(a.T.conj(), b)
    return jsp_linalg.solve(a2, b2, assume_a="pos")


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    del ptol
    V = _pad_krylov(unit_residual, restart)
    dtype = _result_dtype(b)
    H = jnp.eye(restart, restart + 1, dtype=dtype)

    def loop_cond(carry):
        _, _, breakdown, k = carry
        return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

    def arnoldi_process(carry):
        V, H, _, k = carry
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = while_loop(loop_cond, arnoldi_process, (V, H, jnp.asarray(False), 0))
    beta_vec = jnp.zeros((restart + 1,), dtype).at[0].set(residual_norm.astype(dtype))
    y = _lstsq(H.T, beta_vec)
    dx = tree_map(lambda X: _dot(X[..., :-1], y), V)
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func):
    residual = M(_sub(b, A(x0)))
    unit_residual, residual_norm = _safe_normalize(residual)

    def cond_fun(value):
        _, k, _, residual_norm = value
        return jnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value):
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(A, b, x, unit_residual, residual_norm,
                                                     ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    x_final, *_ = while_loop(cond_fun, body_fun, (x0, 0, unit_residual, residual_norm))
    return x_final


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solves A x = b by restarted GMRES ('batched' or 'incremental'); (x, None)."""
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    M = _identity if M is None else _normalize_matvec(M)
    A = _normalize_matvec(A)
    size = sum(bi.size for bi in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if solve_method == "incremental":
        gmres_func = _gmres_incremental
    elif solve_method == "batched":
        gmres_func = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' "
                         "or 'batched'")

    # the tolerances come from b, for the transposed solve too (as JAX); neither they nor x0
    # are differentiated (a solve's own values are constants to custom_linear_solve)
    x0 = tree_map(lax.stop_gradient, x0)
    b_norm = _norm(tree_map(lax.stop_gradient, b))
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(tree_map(lax.stop_gradient, b))) * jnp.minimum(1.0, atol / b_norm)

    def _solve(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func)

    x = _linear_solve(A, b, _solve, False)
    return x, jnp.where(jnp.isnan(_norm(x)), -1, 0)
