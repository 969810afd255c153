"""Building blocks used directly: moving averages, momentum and scheduled scaling."""
import numpy as np

import didax.numpy as jnp
import didax.optim as optim

GRADS = [np.array([1.0, -2.0], np.float32), np.array([3.0, 0.5], np.float32),
         np.array([-1.0, 1.0], np.float32)]


def _run(tx):
    state = tx.init({"g": jnp.zeros(2)})
    out = []
    for g in GRADS:
        updates, state = tx.update({"g": jnp.asarray(g)}, state)
        out.append(np.asarray(updates["g"]))
    return out, state


def test_ema_with_and_without_debiasing():
    debiased, state = _run(optim.ema(0.8))
    raw, _ = _run(optim.ema(0.8, debias=False))
    ema = np.zeros(2)
    for t, g in enumerate(GRADS, start=1):
        ema = 0.8 * ema + 0.2 * g
        np.testing.assert_allclose(raw[t - 1], ema, rtol=1e-5)
        np.testing.assert_allclose(debiased[t - 1], ema / (1 - 0.8 ** t), rtol=1e-5)
    assert int(state.count) == 3 and state.count.dtype == np.int32


def test_trace_accumulates_and_can_look_ahead():
    plain, state = _run(optim.trace(0.5))
    nesterov, _ = _run(optim.trace(0.5, nesterov=True))
    tr = np.zeros(2)
    for t, g in enumerate(GRADS):
        tr = g + 0.5 * tr
        np.testing.assert_allclose(plain[t], tr, rtol=1e-6)
        np.testing.assert_allclose(nesterov[t], g + 0.5 * tr, rtol=1e-6)
    np.testing.assert_allclose(state.trace["g"], tr, rtol=1e-6)


def test_scale_by_schedule_counts_its_own_steps():
    out, state = _run(optim.scale_by_schedule(lambda count: 10.0 ** count))
    for t, g in enumerate(GRADS):
        np.testing.assert_allclose(out[t], 10.0 ** t * g, rtol=1e-6)
    assert int(state.count) == 3


def test_scale_by_learning_rate_descends_unless_told_otherwise():
    out, _ = _run(optim.scale_by_learning_rate(0.1))
    up, _ = _run(optim.scale_by_learning_rate(0.1, flip_sign=False))
    np.testing.assert_allclose(out[0], -0.1 * GRADS[0], rtol=1e-6)
    np.testing.assert_allclose(up[0], 0.1 * GRADS[0], rtol=1e-6)


def test_scale_by_rss_starts_from_the_initial_accumulator():
    out, state = _run(optim.scale_by_rss(initial_accumulator_value=0.5, eps=0.0))
    total = 0.5 + sum(g * g for g in GRADS)
    np.testing.assert_allclose(state.sum_of_squares["g"], total, rtol=1e-6)
    np.testing.assert_allclose(out[-1], GRADS[-1] / np.sqrt(total), rtol=1e-6)
