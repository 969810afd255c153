"""didax.scipy.optimize: `minimize` with method "BFGS", and `OptimizeResults`, as JAX has them.

JAX's algorithm, ported: BFGS (Nocedal and Wright, Algorithm 6.1) with the inverse-Hessian
update, and the strong-Wolfe line search with cubic/quadratic/bisection zoom (Algorithms 3.5
and 3.6), all inside `while_loop`s so `minimize` can be jitted. Results (iterates, counts,
status codes) match JAX's. As in JAX, `minimize` is not differentiable (the loops' trip
counts depend on the values) and x0 must be one-dimensional. JAX's undocumented
"l-bfgs-experimental-do-not-rely-on-this" method is not provided.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

import didax.numpy as jnp
from didax._src import api
from didax._src.core import Array
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy.util import promote_dtypes_inexact

__all__ = ["OptimizeResults", "minimize"]

_dot = jnp.dot
_einsum = jnp.einsum
ArrayLike = Any


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    dtype = jnp.result_type(a, fa, fpa, b, fb, c, fc)
    C = fpa
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = jnp.array([[dc**2, -(db**2)], [-(dc**3), db**3]], dtype=dtype)
    d2 = jnp.array([fb - fa - C * db, fc - fa - C * dc], dtype=dtype)
    A, B = _dot(d1, d2) / denom

    radical = B * B - 3.0 * A * C
    xmin = a + (-B + jnp.sqrt(radical)) / (3.0 * A)

    return xmin


def _quadmin(a, fa, fpa, b, fb):
    D = fa
    C = fpa
    db = b - a
    B = (fb - D - C * db) / (db**2)
    xmin = a - C / (2.0 * B)
    return xmin


def _binary_replace(replace_bit, original_dict, new_dict, keys=None):
    if keys is None:
        keys = new_dict.keys()
    return {key: jnp.where(replace_bit, new_dict[key], original_dict[key]) for key in keys}


class _ZoomState(NamedTuple):
    done: bool | Array
    failed: bool | Array
    j: int | Array
    a_lo: float | Array
    phi_lo: float | Array
    dphi_lo: float | Array
    a_hi: float | Array
    phi_hi: float | Array
    dphi_hi: float | Array
    a_rec: float | Array
    phi_rec: float | Array
    a_star: float | Array
    phi_star: float | Array
    dphi_star: float | Array
    g_star: float | Array
    nfev: int | Array
    ngev: int | Array


ConditionFn = Callable[..., Array]


def _zoom(
    restricted_func_and_grad,
    wolfe_one: ConditionFn,
    wolfe_two: ConditionFn,
    a_lo,
    phi_lo,
    dphi_lo,
    a_hi,
    phi_hi,
    dphi_hi,
    g_0,
    pass_through,
):
    """
    Implementation of zoom. Algorithm 3.6 from Wright and Nocedal, 'Numerical
    Optimization', 1999, pg. 59-61. Tries cubic, quadratic, and bisection methods
    of zooming.
    """
    state = _ZoomState(
        done=False,
        failed=False,
        j=0,
        a_lo=a_lo,
        phi_lo=phi_lo,
        dphi_lo=dphi_lo,
        a_hi=a_hi,
        phi_hi=phi_hi,
        dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=1.0,
        phi_star=phi_lo,
        dphi_star=dphi_lo,
        g_star=g_0,
        nfev=0,
        ngev=0,
    )
    delta1 = 0.2
    delta2 = 0.1

    def body(state):
        # Body of zoom algorithm. We use boolean arithmetic to avoid using jax.cond
        # so that it works on GPU/TPU.
        dalpha = state.a_hi - state.a_lo
        a = jnp.minimum(state.a_hi, state.a_lo)
        b = jnp.maximum(state.a_hi, state.a_lo)
        cchk = delta1 * dalpha
        qchk = delta2 * dalpha

        # This will cause the line search to stop, and since the Wolfe conditions
        # are not satisfied the minimization should stop too.
        threshold = jnp.where((jnp.finfo(dalpha.dtype).bits < 64), 1e-5, 1e-10)
        state = state._replace(failed=state.failed | (dalpha <= threshold))

        # Cubmin is sometimes nan, though in this case the bounds check will fail.
        a_j_cubic = _cubicmin(
            state.a_lo,
            state.phi_lo,
            state.dphi_lo,
            state.a_hi,
            state.phi_hi,
            state.a_rec,
            state.phi_rec,
        )
        use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
        a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
        use_quad = (~use_cubic) & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
        a_j_bisection = (state.a_lo + state.a_hi) / 2.0
        use_bisection = (~use_cubic) & (~use_quad)

        a_j = jnp.where(use_cubic, a_j_cubic, state.a_rec)
        a_j = jnp.where(use_quad, a_j_quad, a_j)
        a_j = jnp.where(use_bisection, a_j_bisection, a_j)

        # TODO(jakevdp): should we use some sort of fixed-point approach here instead?
        phi_j, dphi_j, g_j = restricted_func_and_grad(a_j)
        phi_j = phi_j.astype(state.phi_lo.dtype)
        dphi_j = dphi_j.astype(state.dphi_lo.dtype)
        g_j = g_j.astype(state.g_star.dtype)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)

        state = state._replace(
            **_binary_replace(
                hi_to_j,
                state._asdict(),
                {
                    "a_hi": a_j,
                    "phi_hi": phi_j,
                    "dphi_hi": dphi_j,
                    "a_rec": state.a_hi,
                    "phi_rec": state.phi_hi,
                },
            ),
        )

        # for termination
        state = state._replace(
            done=star_to_j | state.done,
            **_binary_replace(
                star_to_j,
                state._asdict(),
                {
                    "a_star": a_j,
                    "phi_star": phi_j,
                    "dphi_star": dphi_j,
                    "g_star": g_j,
                },
            ),
        )
        state = state._replace(
            **_binary_replace(
                hi_to_lo,
                state._asdict(),
                {
                    "a_hi": state.a_lo,
                    "phi_hi": state.phi_lo,
                    "dphi_hi": state.dphi_lo,
                    "a_rec": state.a_hi,
                    "phi_rec": state.phi_hi,
                },
            ),
        )
        state = state._replace(
            **_binary_replace(
                lo_to_j & ~hi_to_lo,
                state._asdict(),
                {
                    "a_rec": state.a_lo,
                    "phi_rec": state.phi_lo,
                },
            ),
        )
        state = state._replace(
            **_binary_replace(
                lo_to_j,
                state._asdict(),
                {
                    "a_lo": a_j,
                    "phi_lo": phi_j,
                    "dphi_lo": dphi_j,
                },
            ),
        )
        state = state._replace(j=state.j + 1)
        # Choose higher cutoff for maxiter than Scipy as Jax takes longer to find
        # the same value - possibly floating point issues?
        state = state._replace(failed=state.failed | (state.j >= 30))
        return state

    state = while_loop(lambda state: (~state.done) & (~pass_through) & (~state.failed), body, state)

    return state


class _LineSearchState(NamedTuple):
    done: Array
    failed: Array
    i: int | Array
    a_i1: float | Array
    phi_i1: float | Array
    dphi_i1: float | Array
    nfev: int | Array
    ngev: int | Array
    a_star: float | Array
    phi_star: Array
    dphi_star: Array
    g_star: Array


class _LineSearchResults(NamedTuple):
    """Results of line search.

    Parameters:
        failed: True if the strong Wolfe criteria were satisfied
        nit: integer number of iterations
        nfev: integer number of functions evaluations
        ngev: integer number of gradients evaluations
        k: integer number of iterations
        a_k: integer step size
        f_k: final function value
        g_k: final gradient value
        status: integer end status
    """

    failed: bool | Array
    nit: int | Array
    nfev: int | Array
    ngev: int | Array
    k: int | Array
    a_k: int | Array
    f_k: Array
    g_k: Array
    status: bool | Array


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """Inexact line search that satisfies strong Wolfe conditions.

    Algorithm 3.5 from Wright and Nocedal, 'Numerical Optimization', 1999, pg. 59-61

    Args:
        fun: function of the form f(x) where x is a flat ndarray and returns a real
            scalar. The function should be composed of operations with vjp defined.
        x0: initial guess.
        pk: direction to search in. Assumes the direction is a descent direction.
        old_fval, gfk: initial value of value_and_gradient as position.
        old_old_fval: unused argument, only for scipy API compliance.
        maxiter: maximum number of iterations to search
        c1, c2: Wolfe criteria constant, see ref.

    Returns: LineSearchResults
    """
    xk, pk = promote_dtypes_inexact(xk, pk)

    def restricted_func_and_grad(t):
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = api.value_and_grad(f)(xk + t * pk)
        dphi = jnp.real(_dot(g, pk))
        return phi, dphi, g

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = restricted_func_and_grad(0)
    else:
        phi_0 = old_fval
        dphi_0 = jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate_start_value = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value = jnp.where(candidate_start_value > 1, 1.0, candidate_start_value)
    else:
        start_value = 1

    def wolfe_one(a_i, phi_i) -> Array:
        # actually negation of W1
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i) -> Array:
        return jnp.abs(dphi_i) <= -c2 * dphi_0

    state = _LineSearchState(
        done=jnp.array(False, dtype=bool),
        failed=jnp.array(False, dtype=bool),
        # algorithm begins at 1 as per Wright and Nocedal, however Scipy has a
        # bug and starts at 0. See https://github.com/scipy/scipy/issues/12157
        i=1,
        a_i1=0.0,
        phi_i1=phi_0,
        dphi_i1=dphi_0,
        nfev=1 if (old_fval is None or gfk is None) else 0,
        ngev=1 if (old_fval is None or gfk is None) else 0,
        a_star=0.0,
        phi_star=phi_0,
        dphi_star=dphi_0,
        g_star=gfk,
    )

    def body(state) -> _LineSearchState:
        # no amax in this version, we just double as in scipy.
        # unlike original algorithm we do our next choice at the start of this loop
        a_i = jnp.where(state.i == 1, start_value, state.a_i1 * 2.0)

        phi_i, dphi_i, g_i = restricted_func_and_grad(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.0) & (~star_to_zoom1) & (~star_to_i)

        zoom1 = _zoom(
            restricted_func_and_grad,
            wolfe_one,
            wolfe_two,
            state.a_i1,
            state.phi_i1,
            state.dphi_i1,
            a_i,
            phi_i,
            dphi_i,
            gfk,
            ~star_to_zoom1,
        )

        state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)

        zoom2 = _zoom(
            restricted_func_and_grad,
            wolfe_one,
            wolfe_two,
            a_i,
            phi_i,
            dphi_i,
            state.a_i1,
            state.phi_i1,
            state.dphi_i1,
            gfk,
            ~star_to_zoom2,
        )

        state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)

        state = state._replace(
            done=star_to_zoom1 | state.done,
            failed=(star_to_zoom1 & zoom1.failed) | state.failed,
            **_binary_replace(
                star_to_zoom1,
                state._asdict(),
                zoom1._asdict(),
                keys=["a_star", "phi_star", "dphi_star", "g_star"],
            ),
        )
        state = state._replace(
            done=star_to_i | state.done,
            **_binary_replace(
                star_to_i,
                state._asdict(),
                {
                    "a_star": a_i,
                    "phi_star": phi_i,
                    "dphi_star": dphi_i,
                    "g_star": g_i,
                },
            ),
        )
        state = state._replace(
            done=star_to_zoom2 | state.done,
            failed=(star_to_zoom2 & zoom2.failed) | state.failed,
            **_binary_replace(
                star_to_zoom2,
                state._asdict(),
                zoom2._asdict(),
                keys=["a_star", "phi_star", "dphi_star", "g_star"],
            ),
        )
        state = state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)
        return state

    state: _LineSearchState = while_loop(
        lambda state: (~state.done) & (state.i <= maxiter) & (~state.failed), body, state
    )

    status = jnp.where(
        state.failed,
        jnp.array(1),  # zoom failed
        jnp.where(
            state.i > maxiter,
            jnp.array(3),  # maxiter reached
            jnp.array(0),  # passed (should be)
        ),
    )
    # Step sizes which are too small causes the optimizer to get stuck with a
    # direction of zero in <64 bit mode - avoid with a floor on minimum step size.
    alpha_k = jnp.asarray(state.a_star)
    alpha_k = jnp.where(
        (jnp.finfo(alpha_k.dtype).bits != 64) & (jnp.abs(alpha_k) < 1e-8),
        jnp.sign(alpha_k) * 1e-8,
        alpha_k,
    )
    results = _LineSearchResults(
        failed=state.failed | (~state.done),
        nit=state.i - 1,  # because iterations started at 1
        nfev=state.nfev,
        ngev=state.ngev,
        k=state.i,
        a_k=alpha_k,
        f_k=state.phi_star,
        g_k=state.g_star,
        status=status,
    )
    return results


class _BFGSResults(NamedTuple):
    """Results from BFGS optimization.

    Parameters:
        converged: True if minimization converged.
        failed: True if line search failed.
        k: integer the number of iterations of the BFGS update.
        nfev: integer total number of objective evaluations performed.
        ngev: integer total number of jacobian evaluations
        nhev: integer total number of hessian evaluations
        x_k: array containing the last argument value found during the search. If
            the search converged, then this value is the argmin of the objective
            function.
        f_k: array containing the value of the objective function at `x_k`. If the
            search converged, then this is the (local) minimum of the objective
            function.
        g_k: array containing the gradient of the objective function at `x_k`. If
            the search converged the l2-norm of this tensor should be below the
            tolerance.
        H_k: array containing the inverse of the estimated Hessian.
        status: int describing end state.
        line_search_status: int describing line search end state (only means
            something if line search fails).
    """

    converged: bool | Array
    failed: bool | Array
    k: int | Array
    nfev: int | Array
    ngev: int | Array
    nhev: int | Array
    x_k: Array
    f_k: Array
    g_k: Array
    H_k: Array
    old_old_fval: Array
    status: int | Array
    line_search_status: int | Array


def minimize_bfgs(
    fun: Callable,
    x0: Array,
    maxiter: int | None = None,
    norm=np.inf,
    gtol: float = 1e-5,
    line_search_maxiter: int = 10,
) -> _BFGSResults:
    """Minimize a function using BFGS.

    Implements the BFGS algorithm from
        Algorithm 6.1 from Wright and Nocedal, 'Numerical Optimization', 1999, pg.
        136-143.

    Args:
        fun: function of the form f(x) where x is a flat ndarray and returns a real
            scalar. The function should be composed of operations with vjp defined.
        x0: initial guess.
        maxiter: maximum number of iterations.
        norm: order of norm for convergence check. Default inf.
        gtol: terminates minimization when |grad|_norm < g_tol.
        line_search_maxiter: maximum number of linesearch iterations.

    Returns:
        Optimization result.
    """

    if maxiter is None:
        maxiter = np.size(x0) * 200

    d = x0.shape[0]

    initial_H = jnp.eye(d, dtype=x0.dtype)
    f_0, g_0 = api.value_and_grad(fun)(x0)
    state = _BFGSResults(
        converged=jnp.linalg.norm(g_0, ord=norm) < gtol,
        failed=False,
        k=0,
        nfev=1,
        ngev=1,
        nhev=0,
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        H_k=initial_H,
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2,
        status=0,
        line_search_status=0,
    )

    def cond_fun(state):
        return (
            jnp.logical_not(state.converged) & jnp.logical_not(state.failed) & (state.k < maxiter)
        )

    def body_fun(state):
        p_k = -_dot(state.H_k, state.g_k)
        line_search_results = line_search(
            fun,
            state.x_k,
            p_k,
            old_fval=state.f_k,
            old_old_fval=state.old_old_fval,
            gfk=state.g_k,
            maxiter=line_search_maxiter,
        )
        state = state._replace(
            nfev=state.nfev + line_search_results.nfev,
            ngev=state.ngev + line_search_results.ngev,
            failed=line_search_results.failed,
            line_search_status=line_search_results.status,
        )
        s_k = line_search_results.a_k * p_k
        x_kp1 = state.x_k + s_k
        f_kp1 = line_search_results.f_k
        g_kp1 = line_search_results.g_k
        y_k = g_kp1 - state.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))

        sy_k = s_k[:, np.newaxis] * y_k[np.newaxis, :]
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * sy_k
        H_kp1 = (
            _einsum("ij,jk,lk", w, state.H_k, w) + rho_k * s_k[:, np.newaxis] * s_k[np.newaxis, :]
        )
        H_kp1 = jnp.where(jnp.isfinite(rho_k), H_kp1, state.H_k)
        converged = jnp.linalg.norm(g_kp1, ord=norm) < gtol

        state = state._replace(
            converged=converged,
            k=state.k + 1,
            x_k=x_kp1,
            f_k=f_kp1,
            g_k=g_kp1,
            H_k=H_kp1,
            old_old_fval=state.f_k,
        )
        return state

    state = while_loop(cond_fun, body_fun, state)
    status = jnp.where(
        state.converged,
        0,  # converged
        jnp.where(
            state.k == maxiter,
            1,  # max iters reached
            jnp.where(
                state.failed,
                2 + state.line_search_status,  # ls failed (+ reason)
                -1,  # undefined
            ),
        ),
    )
    state = state._replace(status=status)
    return state


class OptimizeResults(NamedTuple):
    """Object holding optimization results.

    Parameters:
        x: final solution.
        success: ``True`` if optimization succeeded.
        status: integer solver specific return code. 0 means converged (nominal),
            1=max BFGS iters reached, 3=zoom failed, 4=saddle point reached,
            5=max line search iters reached, -1=undefined
        fun: final function value.
        jac: final jacobian array.
        hess_inv: final inverse Hessian estimate.
        nfev: integer number of function calls used.
        njev: integer number of gradient evaluations.
        nit: integer number of iterations of the optimization algorithm.
    """

    x: Array
    success: bool | Array
    status: int | Array
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: int | Array
    njev: int | Array
    nit: int | Array


def minimize(
    fun: Callable,
    x0: Array,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimization of scalar function of one or more variables.

    This API for this function matches SciPy with some minor deviations:

    - Gradients of ``fun`` are calculated automatically using JAX's autodiff
        support when required.
    - The ``method`` argument is required. You must specify a solver.
    - Various optional arguments in the SciPy interface have not yet been
        implemented.
    - Optimization results may differ from SciPy due to differences in the line
        search implementation.

    ``minimize`` supports :func:`~jax.jit` compilation. It does not yet support
    differentiation or arguments in the form of multi-dimensional arrays, but
    support for both is planned.

    Args:
        fun: the objective function to be minimized, ``fun(x, *args) -> float``,
            where ``x`` is a 1-D array with shape ``(n,)`` and ``args`` is a tuple
            of the fixed parameters needed to completely specify the function.
            ``fun`` must support differentiation.
        x0: initial guess. Array of real elements of size ``(n,)``, where ``n`` is
            the number of independent variables.
        args: extra arguments passed to the objective function.
        method: solver type. Currently only ``"BFGS"`` is supported.
        tol: tolerance for termination. For detailed control, use solver-specific
            options.
        options: a dictionary of solver options. All methods accept the following
            generic options:

            - maxiter (int): Maximum number of iterations to perform. Depending on the
                method each iteration may use several function evaluations.

    Returns:
        An :class:`OptimizeResults` object.
    """
    if options is None:
        options = {}

    if not isinstance(args, tuple):
        msg = "args argument to jax.scipy.optimize.minimize must be a tuple, got {}"
        raise TypeError(msg.format(args))

    fun_with_args = lambda x: fun(x, *args)

    if method.lower() == "bfgs":
        results = minimize_bfgs(fun_with_args, x0, **options)
        success = results.converged & jnp.logical_not(results.failed)
        return OptimizeResults(
            x=results.x_k,
            success=success,
            status=results.status,
            fun=results.f_k,
            jac=results.g_k,
            hess_inv=results.H_k,
            nfev=results.nfev,
            njev=results.ngev,
            nit=results.k,
        )

    raise ValueError(f"Method {method} not recognized")
