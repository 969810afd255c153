"""The stateful building blocks of optimizers: momentum and the adaptive rescalings.

Each `scale_by_*` turns raw gradients into a direction; an alias such as `adam` chains one of
them with `scale_by_learning_rate`. The formulas (bias corrections, where eps goes) are
optax's, so results agree with optax to rounding.
"""
from typing import Any, NamedTuple

from didax._src import dtypes, tree_util
from didax._src.lax import lax
from didax._src.numpy import namespace as jnp
from didax._src.optim import base, numerics


def _is_none(x):
    return x is None


def _canonical_dtype(dtype):
    return None if dtype is None else dtypes.canonicalize_dtype(dtype)


def _adam_direction(mu_hat, nu_hat, eps, eps_root):
    return tree_util.tree_map(
        lambda m, v: None if m is None else m / (jnp.sqrt(v + eps_root) + eps),
        mu_hat, nu_hat, is_leaf=_is_none)


def _nesterov_mu_hat(mu, updates, b1, count_inc):
    """Dozat's Nesterov first moment: the next step's bias-corrected moment, looked ahead."""
    return tree_util.tree_map(
        lambda m, g: b1 * m + (1 - b1) * g,
        numerics.bias_correction(mu, b1, numerics.safe_increment(count_inc)),
        numerics.bias_correction(updates, b1, count_inc))


class TraceState(NamedTuple):
    trace: Any


def trace(decay, nesterov=False, accumulator_dtype=None):
    """Momentum: trace = g + decay * trace (optionally Nesterov's g + decay * trace)."""
    accumulator_dtype = _canonical_dtype(accumulator_dtype)

    def init_fn(params):
        return TraceState(trace=numerics.zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params

        def f(g, t):
            return g + decay * t
        new_trace = tree_util.tree_map(lambda g, t: None if g is None else f(g, t),
                                       updates, state.trace, is_leaf=_is_none)
        updates = tree_util.tree_map(f, updates, new_trace) if nesterov else new_trace
        return updates, TraceState(trace=numerics.cast(new_trace, accumulator_dtype))

    return base.GradientTransformation(init_fn, update_fn)


class EmaState(NamedTuple):
    count: Any
    ema: Any


def ema(decay, debias=True, accumulator_dtype=None):
    """Exponential moving average: ema = (1 - decay) * g + decay * ema, optionally debiased."""
    accumulator_dtype = _canonical_dtype(accumulator_dtype)

    def init_fn(params):
        return EmaState(count=jnp.zeros([], jnp.int32),
                        ema=numerics.zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        del params
        updates = new_ema = numerics.update_moment(updates, state.ema, decay, 1)
        count_inc = numerics.safe_increment(state.count)
        if debias:
            updates = numerics.bias_correction(new_ema, decay, count_inc)
        return updates, EmaState(count=count_inc,
                                 ema=numerics.cast(new_ema, accumulator_dtype))

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByAdamState(NamedTuple):
    count: Any  # int32 scalar
    mu: Any
    nu: Any


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *, nesterov=False):
    """Adam's direction m_hat / (sqrt(v_hat + eps_root) + eps); Nadam with `nesterov=True`."""
    mu_dtype = _canonical_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByAdamState(count=jnp.zeros([], jnp.int32),
                                mu=numerics.zeros_like(params, dtype=mu_dtype),
                                nu=numerics.zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        mu = numerics.update_moment(updates, state.mu, b1, 1)
        nu = numerics.update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = numerics.safe_increment(state.count)
        if nesterov:
            mu_hat = _nesterov_mu_hat(mu, updates, b1, count_inc)
        else:
            mu_hat = numerics.bias_correction(mu, b1, count_inc)
        nu_hat = numerics.bias_correction(nu, b2, count_inc)
        updates = _adam_direction(mu_hat, nu_hat, eps, eps_root)
        mu = numerics.cast(mu, mu_dtype)
        nu = numerics.cast_like(nu, state.nu)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByAmsgradState(NamedTuple):
    count: Any
    mu: Any
    nu: Any
    nu_max: Any


def scale_by_amsgrad(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
                     bias_correction_mu=True, bias_correction_nu=True):
    """AMSGrad: Adam with the running maximum of the second moment, so steps never grow back."""
    mu_dtype = _canonical_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByAmsgradState(count=jnp.zeros([], jnp.int32),
                                   mu=numerics.zeros_like(params, dtype=mu_dtype),
                                   nu=numerics.zeros_like(params),
                                   nu_max=numerics.zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        mu = numerics.update_moment(updates, state.mu, b1, 1)
        nu = numerics.update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = numerics.safe_increment(state.count)
        mu_hat = numerics.bias_correction(mu, b1, count_inc) if bias_correction_mu else mu
        nu_eff = numerics.bias_correction(nu, b2, count_inc) if bias_correction_nu else nu
        nu_max = tree_util.tree_map(jnp.maximum, state.nu_max, nu_eff)
        updates = _adam_direction(mu_hat, nu_max, eps, eps_root)
        return updates, ScaleByAmsgradState(count=count_inc, mu=numerics.cast(mu, mu_dtype),
                                            nu=nu, nu_max=nu_max)

    return base.GradientTransformation(init_fn, update_fn)


def scale_by_adamax(b1=0.9, b2=0.999, eps=1e-8):
    """Adamax: Adam with the infinity norm, max(|g| + eps, b2 * u), as second moment."""
    def init_fn(params):
        return ScaleByAdamState(count=jnp.zeros([], jnp.int32),
                                mu=numerics.zeros_like(params), nu=numerics.zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        count_inc = numerics.safe_increment(state.count)
        mu = numerics.update_moment(updates, state.mu, b1, 1)
        nu = numerics.update_infinity_moment(updates, state.nu, b2, eps)
        mu_hat = numerics.bias_correction(mu, b1, count_inc)
        updates = tree_util.tree_map(lambda m, v: m / v, mu_hat, nu)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByRmsState(NamedTuple):
    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    count: Any
    nu: Any


def _rms_scaling(nu_hat, eps, eps_in_sqrt, mu_hat=None):
    """1 / sqrt(var + eps) or 1 / (sqrt(var) + eps), var = nu (or nu - mu^2 when centred)."""
    if mu_hat is None:
        var = nu_hat
    else:
        var = tree_util.tree_map(lambda m, n: n - numerics.abs_sq(m), mu_hat, nu_hat)
    if eps_in_sqrt:
        return tree_util.tree_map(lambda v: lax.rsqrt(v + eps), var)
    return tree_util.tree_map(lambda v: 1 / (jnp.sqrt(v) + eps), var)


def scale_by_rms(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
                 bias_correction=False):
    """RMSProp's rescaling by the root of a moving average of squared gradients."""
    def init_fn(params):
        nu = numerics.full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRmsWithCountState(count=jnp.zeros([], jnp.int32), nu=nu)
        return ScaleByRmsState(nu=nu)

    def update_fn(updates, state, params=None):
        del params
        nu = numerics.update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count_inc = numerics.safe_increment(state.count)
            nu_hat = numerics.bias_correction(nu, decay, count_inc)
        else:
            nu_hat = nu
        scaling = _rms_scaling(nu_hat, eps, eps_in_sqrt)
        updates = tree_util.tree_map(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRmsWithCountState(count=count_inc, nu=nu)
        return updates, ScaleByRmsState(nu=nu)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByRStdDevState(NamedTuple):
    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def scale_by_stddev(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
                    bias_correction=False):
    """Centred RMSProp: rescales by the root of a moving estimate of the gradient variance."""
    def init_fn(params):
        mu = numerics.zeros_like(params)
        nu = numerics.full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRStdDevWithCountState(count=jnp.zeros([], jnp.int32), mu=mu, nu=nu)
        return ScaleByRStdDevState(mu=mu, nu=nu)

    def update_fn(updates, state, params=None):
        del params
        mu = numerics.update_moment(updates, state.mu, decay, 1)
        nu = numerics.update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count_inc = numerics.safe_increment(state.count)
            mu_hat = numerics.bias_correction(mu, decay, count_inc)
            nu_hat = numerics.bias_correction(nu, decay, count_inc)
        else:
            mu_hat, nu_hat = mu, nu
        scaling = _rms_scaling(nu_hat, eps, eps_in_sqrt, mu_hat=mu_hat)
        updates = tree_util.tree_map(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRStdDevWithCountState(count=count_inc, mu=mu, nu=nu)
        return updates, ScaleByRStdDevState(mu=mu, nu=nu)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByRssState(NamedTuple):
    sum_of_squares: Any


def scale_by_rss(initial_accumulator_value=0.1, eps=1e-7):
    """Adagrad's rescaling by the root of the sum of all squared gradients so far."""
    def init_fn(params):
        return ScaleByRssState(
            sum_of_squares=numerics.full_like(params, initial_accumulator_value))

    def update_fn(updates, state, params=None):
        del params
        sum_of_squares = tree_util.tree_map(lambda g, t: numerics.abs_sq(g) + t,
                                            updates, state.sum_of_squares)
        inv_sqrt = tree_util.tree_map(lambda t: jnp.where(t > 0, lax.rsqrt(t + eps), 0.0),
                                      sum_of_squares)
        updates = tree_util.tree_map(lambda s, g: s * g, inv_sqrt, updates)
        return updates, ScaleByRssState(sum_of_squares=sum_of_squares)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByBeliefState(NamedTuple):
    count: Any
    mu: Any
    nu: Any


def scale_by_belief(b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16, *, nesterov=False):
    """AdaBelief: Adam with the variance of g around its moving average as second moment."""
    def init_fn(params):
        return ScaleByBeliefState(count=jnp.zeros([], jnp.int32),
                                  mu=numerics.zeros_like(params), nu=numerics.zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        mu = numerics.update_moment(updates, state.mu, b1, 1)
        prediction_error = tree_util.tree_map(lambda g, m: g - m, updates, mu)
        nu = numerics.update_moment_per_elem_norm(prediction_error, state.nu, b2, 2)
        nu = tree_util.tree_map(lambda v: v + eps_root, nu)
        count_inc = numerics.safe_increment(state.count)
        if nesterov:
            mu_hat = _nesterov_mu_hat(mu, updates, b1, count_inc)
        else:
            mu_hat = numerics.bias_correction(mu, b1, count_inc)
        nu_hat = numerics.bias_correction(nu, b2, count_inc)
        updates = _adam_direction(mu_hat, nu_hat, eps, 0.0)
        return updates, ScaleByBeliefState(count=count_inc, mu=mu, nu=nu)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByLionState(NamedTuple):
    count: Any
    mu: Any


def scale_by_lion(b1=0.9, b2=0.99, mu_dtype=None):
    """Lion: the sign of an interpolation between the gradient and its momentum."""
    mu_dtype = _canonical_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByLionState(count=jnp.zeros([], jnp.int32),
                                mu=numerics.zeros_like(params, dtype=mu_dtype))

    def update_fn(updates, state, params=None):
        del params
        new_updates = tree_util.tree_map(lambda g, m: jnp.sign((1.0 - b1) * g + b1 * m),
                                         updates, state.mu)
        mu = numerics.cast(numerics.update_moment(updates, state.mu, b2, 1), mu_dtype)
        return new_updates, ScaleByLionState(count=numerics.safe_increment(state.count), mu=mu)

    return base.GradientTransformation(init_fn, update_fn)


class ScaleByOptimisticGradientState(NamedTuple):
    is_initial_step: Any  # bool scalar
    previous_gradient: Any


def scale_by_optimistic_gradient(alpha=1.0, beta=1.0):
    """(alpha + beta) * g_t - beta * g_{t-1}: extrapolates the gradient one step ahead.

    On the first step there is no previous gradient, and g_t stands in for it.
    """
    def init_fn(params):
        return ScaleByOptimisticGradientState(is_initial_step=jnp.array(True),
                                              previous_gradient=numerics.zeros_like(params))

    def update_fn(updates, state, params=None):
        del params

        def f(grad, prev_grad):
            prev_grad = jnp.where(state.is_initial_step, grad, prev_grad)
            return (alpha + beta) * grad - beta * prev_grad
        new_updates = tree_util.tree_map(f, updates, state.previous_gradient)
        return new_updates, ScaleByOptimisticGradientState(is_initial_step=jnp.array(False),
                                                           previous_gradient=updates)

    return base.GradientTransformation(init_fn, update_fn)
