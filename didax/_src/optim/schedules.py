"""Schedules: functions from the step count to a value, usually the learning rate.

A schedule is pure and written with didax.numpy, so the count may be a Python int or a traced
array, and the value follows it through `jit`, `vmap` and `grad`. Pass one wherever a
learning rate is accepted; the optimizer counts its own steps from 0.
"""
from didax._src.numpy import namespace as jnp


def constant_schedule(value):
    return lambda count: value


def polynomial_schedule(init_value, end_value, power, transition_steps, transition_begin=0):
    """Goes from init_value to end_value as (1 - t / transition_steps) ** power, over
    `transition_steps` steps starting at `transition_begin`, then stays at end_value."""
    if transition_steps <= 0:
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)

    def schedule(count):
        count = jnp.clip(count - transition_begin, 0, transition_steps)
        frac = 1 - count / transition_steps
        return (init_value - end_value) * (frac ** power) + end_value
    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0):
    """Linear interpolation from init_value to end_value over `transition_steps` steps."""
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def piecewise_constant_schedule(init_value, boundaries_and_scales=None):
    """init_value, multiplied by `scale` once the count reaches each boundary in
    `boundaries_and_scales` ({step: scale}); the scales accumulate."""
    if boundaries_and_scales is not None and any(
            scale < 0.0 for scale in boundaries_and_scales.values()):
        raise ValueError("piecewise_constant_schedule expects non-negative scale factors, got "
                         f"{boundaries_and_scales}")

    def schedule(count):
        v = init_value
        if boundaries_and_scales is not None:
            for threshold, scale in sorted(boundaries_and_scales.items()):
                indicator = jnp.maximum(0.0, jnp.sign(threshold - count))
                v = v * indicator + (1 - indicator) * scale * v
        return v
    return schedule


def exponential_decay(init_value, transition_steps, decay_rate, transition_begin=0,
                      staircase=False, end_value=None):
    """init_value * decay_rate ** ((count - transition_begin) / transition_steps), constant
    before `transition_begin`; `staircase` floors the exponent, and `end_value` bounds the
    value (from below when decaying, from above when growing)."""
    if transition_steps <= 0 or decay_rate == 0:
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)
    bound = None
    if end_value is not None:
        bound = jnp.maximum if decay_rate < 1.0 else jnp.minimum

    def schedule(count):
        decreased_count = count - transition_begin
        p = decreased_count / transition_steps
        if staircase:
            p = jnp.floor(p)
        decayed = jnp.where(decreased_count <= 0, init_value,
                            init_value * jnp.power(decay_rate, p))
        return decayed if bound is None else bound(decayed, end_value)
    return schedule


def cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0):
    """Half a cosine from init_value down to alpha * init_value over `decay_steps` steps:
    init_value * ((1 - alpha) * (0.5 * (1 + cos(pi * t / decay_steps))) ** exponent + alpha)."""
    if not decay_steps > 0:
        raise ValueError(f"cosine_decay_schedule needs positive decay_steps, got {decay_steps}")

    def schedule(count):
        # Python ints become floats, so that a large step does not overflow int32.
        steps = float(decay_steps) if isinstance(decay_steps, int) else decay_steps
        count = float(count) if isinstance(count, int) else count
        count = jnp.minimum(count, steps)
        cosine_decay = 0.5 * (1 + jnp.cos(jnp.pi * count / steps))
        return init_value * ((1 - alpha) * cosine_decay ** exponent + alpha)
    return schedule


def join_schedules(schedules, boundaries):
    """Runs schedules[i + 1] from boundaries[i] on, with its count restarted at 0 there."""
    def schedule(step):
        output = schedules[0](step)
        for boundary, next_schedule in zip(boundaries, schedules[1:]):
            output = jnp.where(step < boundary, output, next_schedule(step - boundary))
        return output
    return schedule


def warmup_constant_schedule(init_value, peak_value, warmup_steps):
    """Linear warm-up from init_value to peak_value, then constant."""
    return linear_schedule(init_value, peak_value, warmup_steps)


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, decay_steps,
                                 end_value=0.0, exponent=1.0):
    """Linear warm-up to peak_value over `warmup_steps`, then cosine decay to end_value at
    step `decay_steps` (which counts the warm-up)."""
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)],
        [warmup_steps])


def warmup_exponential_decay_schedule(init_value, peak_value, warmup_steps, transition_steps,
                                      decay_rate, transition_begin=0, staircase=False,
                                      end_value=None):
    """Linear warm-up to peak_value, then `exponential_decay` counted from the warm-up's end."""
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         exponential_decay(peak_value, transition_steps, decay_rate, transition_begin,
                           staircase, end_value)],
        [warmup_steps])


def sgdr_schedule(cosine_kwargs):
    """Warm restarts: `warmup_cosine_decay_schedule`s, one per dict of arguments, in turn."""
    boundaries, schedules, step = [], [], 0
    for kwargs in cosine_kwargs:
        schedules.append(warmup_cosine_decay_schedule(**kwargs))
        step += kwargs["decay_steps"]
        boundaries.append(step)
    return join_schedules(schedules, boundaries[:-1])


def _linear_interpolate(start, end, pct):
    return (end - start) * pct + start


def _cosine_interpolate(start, end, pct):
    return end + (start - end) / 2.0 * (jnp.cos(jnp.pi * pct) + 1)


def piecewise_interpolate_schedule(interpolate_type, init_value, boundaries_and_scales=None):
    """Like `piecewise_constant_schedule`, moving between the values linearly or along a
    cosine over each interval instead of jumping."""
    interpolate = {"linear": _linear_interpolate, "cosine": _cosine_interpolate}.get(
        interpolate_type)
    if interpolate is None:
        raise ValueError(f"interpolate_type must be 'linear' or 'cosine', got "
                         f"{interpolate_type!r}")
    if boundaries_and_scales:
        boundaries, scales = zip(*sorted(boundaries_and_scales.items()))
        if not all(scale >= 0.0 for scale in scales):
            raise ValueError("piecewise_interpolate_schedule expects non-negative scale "
                             f"factors, got {boundaries_and_scales}")
    else:
        boundaries, scales = (), ()

    def schedule(count):
        bounds = jnp.stack((0,) + boundaries)
        values = jnp.cumprod(jnp.stack((init_value,) + scales))
        interval_sizes = jnp.maximum(bounds[1:] - bounds[:-1], 1)
        indicator = jnp.logical_and(bounds[:-1] <= count, count < bounds[1:])
        pct = (count - bounds[:-1]) / interval_sizes
        interp_vals = interpolate(values[:-1], values[1:], pct)
        return indicator.dot(interp_vals) + (bounds[-1] <= count) * values[-1]
    return schedule


def linear_onecycle_schedule(transition_steps, peak_value, pct_start=0.3, pct_final=0.85,
                             div_factor=25.0, final_div_factor=1e4):
    """One cycle (Smith and Topin, 2017) with linear pieces: up to peak_value, back down, then
    to peak_value / (div_factor * final_div_factor)."""
    if transition_steps <= 0:
        raise ValueError(f"linear_onecycle_schedule needs positive transition_steps, got "
                         f"{transition_steps}")
    return piecewise_interpolate_schedule(
        "linear", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(pct_final * transition_steps): 1.0 / div_factor,
         transition_steps: 1.0 / final_div_factor})


def cosine_onecycle_schedule(transition_steps, peak_value, pct_start=0.3, div_factor=25.0,
                             final_div_factor=1e4):
    """One cycle with cosine pieces: up to peak_value, then down to
    peak_value / (div_factor * final_div_factor)."""
    if transition_steps <= 0:
        raise ValueError(f"cosine_onecycle_schedule needs positive transition_steps, got "
                         f"{transition_steps}")
    return piecewise_interpolate_schedule(
        "cosine", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(transition_steps): 1.0 / (div_factor * final_div_factor)})

