"""Schedules at chosen steps against their formulas, for Python-int and int32-array counts."""
import math

import numpy as np
import pytest

import didax
import didax.numpy as jnp
import didax.optim as optim

STEPS = [0, 1, 2, 3, 4, 5, 7, 9, 10, 12, 25]


def cosine(init, steps, alpha=0.0, exponent=1.0):
    return lambda t: init * ((1 - alpha) * (0.5 * (1 + math.cos(math.pi * min(t, steps) / steps)))
                             ** exponent + alpha)


def linear(init, end, steps, begin=0):
    return lambda t: init + (end - init) * min(max(t - begin, 0), steps) / steps


CASES = {
    "constant": (optim.constant_schedule(0.3), lambda t: 0.3),
    "linear": (optim.linear_schedule(1.0, 0.1, 10), linear(1.0, 0.1, 10)),
    "linear_begin": (optim.linear_schedule(1.0, 0.1, 5, transition_begin=3),
                     linear(1.0, 0.1, 5, 3)),
    "polynomial": (optim.polynomial_schedule(1.0, 0.1, 2.0, 10, 3),
                   lambda t: 0.9 * (1 - min(max(t - 3, 0), 10) / 10) ** 2 + 0.1),
    "piecewise_constant": (optim.piecewise_constant_schedule(1.0, {3: 0.5, 7: 0.1}),
                           lambda t: 1.0 if t < 3 else (0.5 if t < 7 else 0.05)),
    "exponential": (optim.exponential_decay(1.0, 3, 0.5),
                    lambda t: 0.5 ** (t / 3)),
    "exponential_begin": (optim.exponential_decay(2.0, 3, 0.5, transition_begin=2),
                          lambda t: 2.0 if t <= 2 else 2.0 * 0.5 ** ((t - 2) / 3)),
    "exponential_staircase_end": (
        optim.exponential_decay(1.0, 3, 0.5, staircase=True, end_value=0.2),
        lambda t: max(0.5 ** (t // 3), 0.2)),
    "exponential_growth_end": (optim.exponential_decay(1.0, 3, 2.0, end_value=3.0),
                               lambda t: min(2.0 ** (t / 3), 3.0)),
    "cosine": (optim.cosine_decay_schedule(1.0, 10), cosine(1.0, 10)),
    "cosine_alpha_exponent": (optim.cosine_decay_schedule(2.0, 10, alpha=0.1, exponent=2.0),
                              cosine(2.0, 10, 0.1, 2.0)),
    "warmup_cosine": (optim.warmup_cosine_decay_schedule(0.0, 1.0, 3, 10, end_value=0.05),
                      lambda t: linear(0.0, 1.0, 3)(t) if t < 3
                      else cosine(1.0, 7, alpha=0.05)(t - 3)),
    "warmup_constant": (optim.warmup_constant_schedule(0.1, 1.0, 4), linear(0.1, 1.0, 4)),
    "join": (optim.join_schedules([optim.constant_schedule(1.0),
                                   optim.linear_schedule(1.0, 0.0, 4)], [3]),
             lambda t: 1.0 if t < 3 else linear(1.0, 0.0, 4)(t - 3)),
    "piecewise_linear": (optim.piecewise_interpolate_schedule("linear", 1.0, {4: 0.5, 8: 0.1}),
                         lambda t: float(np.interp(t, [0, 4, 8], [1.0, 0.5, 0.05]))),
}


@pytest.mark.parametrize("name", CASES)
def test_schedule_values(name):
    schedule, formula = CASES[name]
    for t in STEPS:
        np.testing.assert_allclose(np.asarray(schedule(t)), formula(t), rtol=1e-6, atol=1e-7,
                                   err_msg=f"{name} at step {t}")
        traced = schedule(jnp.asarray(t, jnp.int32))
        np.testing.assert_allclose(np.asarray(traced), formula(t), rtol=1e-6, atol=1e-7,
                                   err_msg=f"{name} at int32 step {t}")
        if name != "constant":
            assert jnp.asarray(traced).dtype == np.float32, name


def test_schedules_follow_a_count_under_vmap_and_grad():
    schedule = optim.warmup_cosine_decay_schedule(0.0, 1.0, 3, 10)
    counts = jnp.arange(12, dtype=jnp.int32)
    np.testing.assert_allclose(didax.vmap(schedule)(counts),
                               [float(schedule(int(c))) for c in counts], rtol=1e-6)
    peak = didax.grad(lambda p: optim.cosine_decay_schedule(p, 10)(4))(2.0)
    np.testing.assert_allclose(peak, 0.5 * (1 + math.cos(math.pi * 0.4)), rtol=1e-6)


def test_learning_rate_schedule_is_read_at_the_count_before_the_step():
    opt = optim.sgd(optim.piecewise_constant_schedule(1.0, {2: 0.1}))
    params = {"x": jnp.zeros(())}
    state = opt.init(params)
    seen = []
    for _ in range(4):
        updates, state = opt.update({"x": jnp.ones(())}, state)
        seen.append(float(updates["x"]))
    np.testing.assert_allclose(seen, [-1.0, -1.0, -0.1, -0.1], rtol=1e-6)


def test_invalid_schedule_arguments_are_errors():
    with pytest.raises(ValueError, match="decay_steps"):
        optim.cosine_decay_schedule(1.0, 0)
    with pytest.raises(ValueError, match="non-negative"):
        optim.piecewise_constant_schedule(1.0, {3: -1.0})
    with pytest.raises(ValueError, match="interpolate_type"):
        optim.piecewise_interpolate_schedule("cubic", 1.0)
