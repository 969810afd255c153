"""Sharpness-aware minimisation: the perturbed gradient, optax's two-call transformation, the
opaque mode, and training on a toy problem."""
import numpy as np
import pytest

import didax
import didax.numpy as jnp
import didax.optim as optim

CURVATURE = {"u": np.array([1.0, 4.0], np.float32), "v": np.array(2.0, np.float32)}
PARAMS = {"u": jnp.asarray([1.0, -0.5]), "v": jnp.asarray(0.25)}
RHO, LR = 0.1, 0.05


def quadratic(params):
    return sum(0.5 * jnp.sum(CURVATURE[k] * params[k] ** 2) for k in params)


def test_sam_gradient_is_the_gradient_at_the_ascent_point():
    g = {k: CURVATURE[k] * np.asarray(PARAMS[k]) for k in PARAMS}
    norm = np.sqrt(sum(np.sum(v ** 2) for v in g.values()))
    want = {k: CURVATURE[k] * (np.asarray(PARAMS[k]) + RHO * g[k] / norm) for k in PARAMS}
    got = optim.sam_gradient(quadratic, PARAMS, RHO)
    for k in PARAMS:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)
        assert got[k].dtype == np.float32


def test_sam_gradient_passes_extra_arguments_and_survives_a_zero_gradient():
    def loss(params, scale):
        return scale * quadratic(params)
    zero = {k: jnp.zeros_like(v) for k, v in PARAMS.items()}
    got = optim.sam_gradient(loss, zero, RHO, 3.0)
    for k in PARAMS:
        np.testing.assert_array_equal(got[k], np.zeros_like(got[k]))
    np.testing.assert_allclose(optim.sam_gradient(loss, PARAMS, RHO, 3.0)["v"],
                               3.0 * optim.sam_gradient(quadratic, PARAMS, RHO)["v"], rtol=1e-6)


def _sam_optimizer(**kwargs):
    adversary = optim.chain(optim.normalize(), optim.sgd(RHO))
    return optim.sam(optim.sgd(LR, momentum=0.9), adversary, **kwargs)


def test_two_transparent_calls_make_one_outer_step_on_the_sam_gradient():
    opt = _sam_optimizer()
    state = opt.init(PARAMS)
    params = PARAMS
    reference = optim.sgd(LR, momentum=0.9)
    ref_params, ref_state = PARAMS, reference.init(PARAMS)
    for _ in range(3):
        # First call: the update moves the params to the ascent point.
        updates, state = opt.update(didax.grad(quadratic)(params), state, params)
        assert int(state.steps_since_sync) == 1
        params = optim.apply_updates(params, updates)
        # Second call, with the gradient there: back to the cache, plus the outer step.
        updates, state = opt.update(didax.grad(quadratic)(params), state, params)
        assert int(state.steps_since_sync) == 0
        params = optim.apply_updates(params, updates)

        ref_updates, ref_state = reference.update(
            optim.sam_gradient(quadratic, ref_params, RHO), ref_state, ref_params)
        ref_params = optim.apply_updates(ref_params, ref_updates)
        for k in PARAMS:
            np.testing.assert_allclose(params[k], ref_params[k], rtol=1e-5, atol=1e-7)


def test_longer_sync_periods_ascend_repeatedly_from_the_cached_params():
    opt = optim.sam(optim.sgd(LR), optim.chain(optim.normalize(), optim.sgd(RHO)),
                    sync_period=3)
    state = opt.init(PARAMS)
    params = PARAMS
    for _ in range(3):
        updates, state = opt.update(didax.grad(quadratic)(params), state, params)
        params = optim.apply_updates(params, updates)

    def ascend(p):
        g = {k: CURVATURE[k] * p[k] for k in p}
        norm = np.sqrt(sum(np.sum(v ** 2) for v in g.values()))
        return {k: p[k] + RHO * g[k] / norm for k in p}
    start = {k: np.asarray(v, np.float64) for k, v in PARAMS.items()}
    second_ascent = ascend(ascend(start))
    for k in PARAMS:
        want = start[k] - LR * CURVATURE[k] * second_ascent[k]
        np.testing.assert_allclose(params[k], want, rtol=1e-5, atol=1e-7)


def test_opaque_mode_does_the_whole_round_in_one_call():
    opt = _sam_optimizer(opaque_mode=True)
    state = opt.init(PARAMS)
    assert state.cache is None
    updates, state = opt.update(didax.grad(quadratic)(PARAMS), state, PARAMS,
                                grad_fn=lambda p, i: didax.grad(quadratic)(p))
    reference = optim.sgd(LR, momentum=0.9)
    want, _ = reference.update(optim.sam_gradient(quadratic, PARAMS, RHO),
                               reference.init(PARAMS))
    for k in PARAMS:
        np.testing.assert_allclose(updates[k], want[k], rtol=1e-5)
    with pytest.raises(ValueError, match="grad_fn"):
        opt.update(didax.grad(quadratic)(PARAMS), state, PARAMS)


def test_sam_trains_a_small_regression():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    y = np.tanh(x @ np.array([1.0, -2.0, 0.5], np.float32))

    def loss(params):
        return jnp.mean((jnp.tanh(x @ params["w"] + params["b"]) - y) ** 2)

    opt = optim.adam(0.05)
    params = {"w": jnp.zeros(3), "b": jnp.zeros(())}
    state = opt.init(params)
    initial = float(loss(params))
    for _ in range(60):
        updates, state = opt.update(optim.sam_gradient(loss, params, 0.05), state, params)
        params = optim.apply_updates(params, updates)
    assert float(loss(params)) < 0.05 * initial


def test_sam_state_passes_through_jit():
    opt = _sam_optimizer()

    def step(params, state):
        updates, state = opt.update(didax.grad(quadratic)(params), state, params)
        return optim.apply_updates(params, updates), state

    eager = jitted = (PARAMS, opt.init(PARAMS))
    compiled = didax.jit(step)
    for _ in range(4):
        eager = step(*eager)
        jitted = compiled(*jitted)
    for e, j in zip(didax.tree.leaves(eager), didax.tree.leaves(jitted)):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-6, atol=1e-7)


def test_sync_period_must_be_positive():
    with pytest.raises(ValueError, match="sync_period"):
        optim.sam(optim.sgd(0.1), optim.sgd(0.1), sync_period=0)
