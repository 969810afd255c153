"""didax.scipy.optimize.minimize: BFGS (and a limited-memory variant) over a 1-D x, each a
`while_loop` so that `minimize` jits; gradients come from `value_and_grad`.

BFGS keeps an estimate H of the inverse Hessian, steps along -H g with a strong-Wolfe line
search, and updates H with the step s and the change of gradient y:
  H <- (I - s y^T / y^T s) H (I - y s^T / y^T s) + s s^T / y^T s,
skipped when y^T s is not positive (the estimate would stop being positive definite).
L-BFGS keeps the last `maxcor` pairs (s, y) instead and applies H by the two-loop recursion.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy import namespace as jnp
from didax._src.scipy.optimize.line_search import line_search
from didax._src.transforms.api import value_and_grad

__all__ = ["OptimizeResults", "minimize"]

# status codes, as JAX reports them
CONVERGED, MAX_ITERATIONS, LINE_SEARCH_FAILED, MAX_LINE_SEARCH = 0, 1, 3, 5


class OptimizeResults(NamedTuple):
    """What `minimize` found: x, success, status (0 converged, 1 iteration limit, 3 line
    search failed inside its interval, 5 line search ran out of trials), the objective and
    its gradient at x, the inverse Hessian estimate (None for L-BFGS), and the numbers of
    objective evaluations, gradient evaluations and iterations."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def _norm(g, order):
    if order == np.inf:
        return jnp.max(jnp.abs(g))
    if order == -np.inf:
        return jnp.min(jnp.abs(g))
    return jnp.sum(jnp.abs(g) ** order) ** (1.0 / order)


def _failure_status(ls):
    return jnp.where(ls.bracketed, LINE_SEARCH_FAILED, MAX_LINE_SEARCH)


def _bfgs(vg, x0, maxiter, gtol, norm, ls_maxiter):
    f0, g0 = vg(x0)
    n = x0.shape[0]
    eye = jnp.eye(n, dtype=x0.dtype)

    def cond(s):
        return (s["status"] < 0) & (s["k"] < maxiter)

    def body(s):
        x, f, g, h = s["x"], s["f"], s["g"], s["h"]
        p = -(h @ g)
        ls = line_search(vg, x, p, f, g, ls_maxiter)
        step = ls.step * p
        y = ls.g - g
        ys = jnp.vdot(y, step)
        rho = jnp.where(ys > 0, 1 / jnp.where(ys > 0, ys, 1), 0)
        left = eye - rho * jnp.outer(step, y)
        h_new = left @ h @ left.T + rho * jnp.outer(step, step)
        h_new = jnp.where(ys > 0, h_new, h)
        ok = ~ls.failed
        status = jnp.where(ls.failed, _failure_status(ls),
                           jnp.where(_norm(ls.g, norm) < gtol, CONVERGED, -1))
        return dict(k=s["k"] + 1, status=status,
                    x=jnp.where(ok, x + step, x), f=jnp.where(ok, ls.f, f),
                    g=jnp.where(ok, ls.g, g), h=jnp.where(ok, h_new, h),
                    nfev=s["nfev"] + ls.nfev)

    start = dict(k=0, status=jnp.where(_norm(g0, norm) < gtol, CONVERGED, -1), x=x0, f=f0,
                 g=g0, h=eye, nfev=1)
    s = while_loop(cond, body, start)
    status = jnp.where(s["status"] < 0, MAX_ITERATIONS, s["status"])
    return OptimizeResults(x=s["x"], success=status == CONVERGED, status=status, fun=s["f"],
                           jac=s["g"], hess_inv=s["h"], nfev=s["nfev"], njev=s["nfev"],
                           nit=s["k"])


def _lbfgs(vg, x0, maxiter, gtol, norm, ls_maxiter, maxcor):
    f0, g0 = vg(x0)
    n = x0.shape[0]
    m = maxcor

    def apply_inverse_hessian(g, ss, ys, rhos, count):
        """H g by the two-loop recursion over the stored pairs (newest at count - 1)."""
        q = g
        alphas = jnp.zeros((m,), g.dtype)
        for j in range(m - 1, -1, -1):  # newest to oldest; empty slots have rho = 0
            slot = (count - m + j) % m
            a = rhos[slot] * jnp.vdot(ss[slot], q)
            alphas = alphas.at[j].set(a)
            q = q - a * ys[slot]
        newest = (count - 1) % m
        yy = jnp.vdot(ys[newest], ys[newest])
        gamma = jnp.where((count > 0) & (yy > 0),
                          jnp.vdot(ss[newest], ys[newest]) / jnp.where(yy > 0, yy, 1), 1)
        r = gamma * q
        for j in range(m):  # oldest to newest
            slot = (count - m + j) % m
            b = rhos[slot] * jnp.vdot(ys[slot], r)
            r = r + ss[slot] * (alphas[j] - b)
        return r

    def cond(s):
        return (s["status"] < 0) & (s["k"] < maxiter)

    def body(s):
        x, f, g = s["x"], s["f"], s["g"]
        p = -apply_inverse_hessian(g, s["ss"], s["ys"], s["rhos"], s["count"])
        ls = line_search(vg, x, p, f, g, ls_maxiter)
        step = ls.step * p
        y = ls.g - g
        ys = jnp.vdot(y, step)
        keep = (ys > 0) & ~ls.failed
        slot = s["count"] % m
        ss_new = jnp.where(keep, s["ss"].at[slot].set(step), s["ss"])
        ys_new = jnp.where(keep, s["ys"].at[slot].set(y), s["ys"])
        rhos = jnp.where(keep, s["rhos"].at[slot].set(1 / jnp.where(keep, ys, 1)), s["rhos"])
        ok = ~ls.failed
        status = jnp.where(ls.failed, _failure_status(ls),
                           jnp.where(_norm(ls.g, norm) < gtol, CONVERGED, -1))
        return dict(k=s["k"] + 1, status=status, x=jnp.where(ok, x + step, x),
                    f=jnp.where(ok, ls.f, f), g=jnp.where(ok, ls.g, g), ss=ss_new,
                    ys=ys_new, rhos=rhos, count=s["count"] + keep.astype(s["count"].dtype),
                    nfev=s["nfev"] + ls.nfev)

    start = dict(k=0, status=jnp.where(_norm(g0, norm) < gtol, CONVERGED, -1), x=x0, f=f0,
                 g=g0, ss=jnp.zeros((m, n), x0.dtype), ys=jnp.zeros((m, n), x0.dtype),
                 rhos=jnp.zeros((m,), x0.dtype), count=jnp.asarray(0), nfev=1)
    s = while_loop(cond, body, start)
    status = jnp.where(s["status"] < 0, MAX_ITERATIONS, s["status"])
    return OptimizeResults(x=s["x"], success=status == CONVERGED, status=status, fun=s["f"],
                           jac=s["g"], hess_inv=None, nfev=s["nfev"], njev=s["nfev"],
                           nit=s["k"])


_LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize fun(x, *args) over a 1-D x from x0; method "BFGS" (options: maxiter,
    norm, gtol, line_search_maxiter) or "l-bfgs-experimental-do-not-rely-on-this" (also
    maxcor). As in JAX, `tol` is accepted and has no effect: the gradient tolerance is the
    `gtol` option."""
    options = dict(options or {})
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: args must be a tuple, got {type(args).__name__}")
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be a 1-D array, got shape {x0.shape}; ravel it "
                         f"(didax.flatten_util.ravel_pytree) and unravel inside fun")
    if not jnp.issubdtype(x0.dtype, jnp.floating):
        x0 = x0.astype(jnp.result_type(float))

    def objective(x):
        out = jnp.asarray(fun(x, *args))
        if out.shape != ():
            raise ValueError(f"minimize: fun must return a scalar, got shape {out.shape}")
        return out

    vg = value_and_grad(objective)
    maxiter = options.pop("maxiter", None)
    maxiter = 200 * x0.shape[0] if maxiter is None else int(maxiter)
    norm = options.pop("norm", np.inf)
    del tol
    gtol = options.pop("gtol", 1e-5)
    ls_maxiter = int(options.pop("line_search_maxiter", 10))
    if method.lower() == "bfgs":
        unknown = set(options)
        result = None if unknown else _bfgs(vg, x0, maxiter, gtol, norm, ls_maxiter)
    elif method.lower() == _LBFGS:
        maxcor = int(options.pop("maxcor", 10))
        unknown = set(options)
        result = None if unknown else _lbfgs(vg, x0, maxiter, gtol, norm, ls_maxiter, maxcor)
    else:
        raise ValueError(f"minimize: method {method!r} is not supported; use 'BFGS' or "
                         f"{_LBFGS!r}")
    if unknown:
        raise TypeError(f"minimize: unknown options {sorted(unknown)} for method {method!r}")
    return result
