"""didax.experimental.ode.odeint: adaptive Dormand-Prince integration with adjoint gradients,
as `jax.experimental.ode.odeint`.

JAX's algorithm, ported: the state pytree is raveled to one vector; each output time is
reached by a `while_loop` of Dormand-Prince 5(4) steps (Hairer's initial step size, the RMS
error ratio against rtol/atol, the step-size controller with safety 0.9 and factors 0.2/10,
capped by `hmax` and `mxstep`), and the output is read off the 4th-order polynomial fitted
to the last accepted step; a `scan` runs over the output times. Derivatives come from the
adjoint method in a `custom_vjp`: the augmented system (y, y-bar, t-bar, args-bar) is
integrated backwards in time between consecutive outputs by `odeint` itself, so reverse mode
works to any order; forward mode (jvp) is not supported, as in JAX. Unlike JAX, the
integration is not wrapped in `jit` (it runs as called: eagerly, or staged under `jit`).
"""
from __future__ import annotations

import operator as op
from functools import partial

from didax._src.lax.control_flow.loops import fori_loop
from didax._src.lax.control_flow.scan import scan
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy import namespace as jnp
from didax._src.numpy.flatten_util import ravel_pytree
from didax._src.numpy.util import is_arraylike, promote_dtypes_inexact
from didax._src.primitives.custom_derivatives import custom_vjp
from didax._src.primitives.custom_extras import closure_convert
from didax._src.transforms import api
from didax._src.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]


def _ravel_first_arg(f, unravel):
    def g(y_flat, *args):
        return ravel_pytree(f(unravel(y_flat), *args))[0]
    return g


def interp_fit_dopri(y0, y1, k, dt):
    """The 4th-order polynomial through a Runge-Kutta step (coefficients highest first)."""
    dps_c_mid = jnp.array([
        6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
        -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
        -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2], dtype=y0.dtype)
    y_mid = y0 + dt.astype(y0.dtype) * jnp.dot(dps_c_mid, k)
    return jnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    dt = dt.astype(y0.dtype)
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    d = dt * dy0
    e = y0
    return a, b, c, d, e


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.4."""
    y0, f0 = promote_dtypes_inexact(y0, f0)
    dtype = y0.dtype
    scale = atol + jnp.abs(y0) * rtol
    d0 = jnp.linalg.norm(y0 / scale.astype(dtype))
    d1 = jnp.linalg.norm(f0 / scale.astype(dtype))
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale.astype(dtype)) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15),
                   jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1. / (order + 1.)))
    return jnp.minimum(100. * h0, h1)


def runge_kutta_step(func, y0, f0, t0, dt):
    """One Dormand-Prince 5(4) step: (y1, f1, error estimate, stages)."""
    alpha = jnp.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1., 0], dtype=dt.dtype)
    beta = jnp.array(
        [[1 / 5, 0, 0, 0, 0, 0, 0], [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
         [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
         [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
         [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
         [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]],
        dtype=f0.dtype)
    c_sol = jnp.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
                      dtype=f0.dtype)
    c_error = jnp.array([
        35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
        -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1. / 60.], dtype=f0.dtype)

    def body_fun(i, k):
        ti = t0 + dt * alpha[i - 1]
        yi = y0 + dt.astype(f0.dtype) * jnp.dot(beta[i - 1, :], k)
        return k.at[i, :].set(func(yi, ti))

    k = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = fori_loop(1, 7, body_fun, k)
    y1 = dt.astype(f0.dtype) * jnp.dot(c_sol, k) + y0
    y1_error = dt.astype(f0.dtype) * jnp.dot(c_error, k)
    return y1, k[-1], y1_error, k


def abs2(x):
    if jnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    err_tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    err_ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(abs2(err_ratio)))


def optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2,
                      order=5.0):
    dfactor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor,
                         jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=jnp.inf, hmax=jnp.inf):
    """Integrates dy/dt = func(y, t, *args) from y(t[0]) = y0 (a pytree), returning y at
    each time in `t` (increasing floats), stacked on a leading axis of each leaf."""
    for arg in tree_leaves(args):
        if not is_arraylike(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
    t = jnp.asarray(t) if isinstance(t, (list, tuple)) else t
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _odeint_wrapper(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    y0, unravel = ravel_pytree(y0)
    func = _ravel_first_arg(func, unravel)
    out = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return api.vmap(unravel)(out)


@partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    def func_(y, t):
        return func(y, t, *args)

    def scan_fun(carry, target_t):
        def cond_fun(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body_fun(state):
            i, y, f, t, dt, last_t, interp_coeff = state
            next_y, next_f, next_y_error, k = runge_kutta_step(func_, y, f, t, dt)
            next_t = t + dt
            error_ratio = mean_error_ratio(next_y_error, rtol, atol, y, next_y)
            new_interp_coeff = interp_fit_dopri(y, next_y, k, dt)
            dt = jnp.clip(optimal_step_size(dt, error_ratio), min=0., max=hmax)
            new = [i + 1, next_y, next_f, next_t, dt, t, new_interp_coeff]
            old = [i + 1, y, f, t, dt, last_t, interp_coeff]
            return [jnp.where(error_ratio <= 1., n, o) for n, o in zip(new, old)]

        _, *carry = while_loop(cond_fun, body_fun, [0, *carry])
        _, _, t, _, last_t, interp_coeff = carry
        relative_output_time = (target_t - last_t) / (t - last_t)
        y_target = jnp.polyval(interp_coeff, relative_output_time.astype(interp_coeff.dtype))
        return carry, y_target

    f0 = func_(y0, ts[0])
    dt = jnp.clip(initial_step_size(func_, ts[0], y0, 4, rtol, atol, f0), min=0., max=hmax)
    interp_coeff = jnp.array([y0] * 5)
    init_carry = [y0, f0, ts[0], dt, ts[0], interp_coeff]
    _, ys = scan(scan_fun, init_carry, ts[1:])
    return jnp.concatenate((y0[None], ys))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_rev(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res

    def aug_dynamics(augmented_state, t, *args):
        """The system augmented with vjp_y, vjp_t and vjp_args, in negated time."""
        y, y_bar, *_ = augmented_state
        y_dot, vjpfun = api.vjp(func, y, -t, *args)
        return (-y_dot, *vjpfun(y_bar))

    def scan_fun(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real  # moving the output time
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics, (ys[i], y_bar, t0_bar, args_bar), jnp.array([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(op.itemgetter(1), (y_bar, t0_bar, args_bar))
        y_bar = y_bar + g[i - 1]
        return (y_bar, t0_bar, args_bar), t_bar

    init_carry = (g[-1], jnp.zeros((), ts.dtype), tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = scan(
        scan_fun, init_carry, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)
