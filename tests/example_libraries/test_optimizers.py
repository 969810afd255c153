"""optimizers against jax.example_libraries.optimizers: 20-step trajectories of every
optimizer and schedule on a small problem, the state as a pytree, packing and clipping."""
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import optimizers as jopt

import didax
import didax.numpy as dnp
from didax.example_libraries import optimizers as opt

X = np.array([[1., 2.], [3., -1.], [0.5, 0.5]], np.float32)


def _loss(np_):
    def loss(p):
        return np_.sum(np_.tanh(X @ p["w"] + p["b"]) ** 2) + 0.1 * np_.sum(p["w"] ** 2)
    return loss


def _trajectory(lib, np_, optimizer, steps=20):
    init, update, get_params = optimizer
    params = {"w": np_.array([[0.5, -1.0], [2.0, 0.25]]), "b": np_.array(0.3)}
    state = init(params)
    grad = lib.grad(_loss(np_))
    out = []
    for i in range(steps):
        state = update(i, grad(get_params(state)), state)
        p = get_params(state)
        out.append(np.concatenate([np.ravel(p["w"]), np.ravel(p["b"])]))
    return np.array(out)


CASES = [("sgd", (0.05,)), ("momentum", (0.05, 0.9)), ("nesterov", (0.05, 0.9)),
         ("adagrad", (0.1,)), ("adagrad", (0.1, 0.5)), ("rmsprop", (0.01,)),
         ("rmsprop_momentum", (0.01,)), ("adam", (0.05,)), ("adam", (0.05, 0.8, 0.99, 1e-6)),
         ("adamax", (0.05,)), ("sm3", (0.1,))]


@pytest.mark.parametrize("name,args", CASES)
def test_trajectory_matches_jax(name, args):
    ours = _trajectory(didax, dnp, getattr(opt, name)(*args))
    ref = _trajectory(jax, jnp, getattr(jopt, name)(*args))
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
    assert np.all(np.abs(ours[-1] - ours[0]) > 0)  # it moved


SCHEDULES = ["constant(0.1)", "exponential_decay(0.1, 5, 0.5)",
             "inverse_time_decay(0.1, 5, 0.5)", "inverse_time_decay(0.1, 5, 0.5, True)",
             "polynomial_decay(0.1, 10, 0.01)", "polynomial_decay(0.1, 10, 0.01, 2.0)",
             "piecewise_constant([3, 8], [0.1, 0.05, 0.01])"]


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_schedules_match_jax(schedule):
    ours, ref = eval("opt." + schedule), eval("jopt." + schedule)
    steps = np.arange(15)
    np.testing.assert_allclose([float(ours(i)) for i in steps], [float(ref(i)) for i in steps],
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["momentum", "adam"])
def test_trajectory_with_a_schedule_matches_jax(name):
    schedule = "exponential_decay(0.1, 5, 0.5)" if name == "adam" else \
        "piecewise_constant([3, 8], [0.1, 0.05, 0.01])"
    ours = _trajectory(didax, dnp, getattr(opt, name)(eval("opt." + schedule), 0.9))
    ref = _trajectory(jax, jnp, getattr(jopt, name)(eval("jopt." + schedule), 0.9))
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)


def test_schedule_errors():
    assert opt.make_schedule(0.3)(7) == 0.3
    f = opt.constant(0.2)
    assert opt.make_schedule(f) is f
    with pytest.raises(TypeError):
        opt.make_schedule(np.ones(2))
    with pytest.raises(ValueError, match="one shorter"):
        opt.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="sequences"):
        opt.piecewise_constant(1, [0.1, 0.2])


def test_state_is_a_pytree_through_jit_and_scan():
    init, update, get_params = opt.adam(0.05)
    loss = _loss(dnp)
    params = {"w": dnp.ones((2, 2)), "b": dnp.array(0.1)}
    state = init(params)
    assert isinstance(state, opt.OptimizerState)
    leaves = didax.tree_util.tree_leaves(state)
    assert len(leaves) == 6  # (x, m, v) for each of the two parameters

    @didax.jit
    def step(i, state):
        return update(i, didax.grad(loss)(get_params(state)), state)
    eager = state
    for i in range(5):
        state = step(i, state)
        eager = update(i, didax.grad(loss)(get_params(eager)), eager)

    def body(s, i):
        return update(i, didax.grad(loss)(get_params(s)), s), None
    scanned, _ = didax.lax.scan(body, init(params), dnp.arange(5))
    for a, b, c in zip(didax.tree_util.tree_leaves(state), didax.tree_util.tree_leaves(eager),
                       didax.tree_util.tree_leaves(scanned)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(c, b, rtol=1e-5, atol=1e-6)


def test_mismatched_gradient_tree_is_refused():
    init, update, _ = opt.sgd(0.1)
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(0, {"b": dnp.ones(2)}, init({"a": dnp.ones(2)}))


def test_pack_and_unpack_round_trip_through_pickle():
    init, update, get_params = opt.sm3(0.1)
    params = {"w": dnp.ones((2, 3)), "s": dnp.array(2.0)}
    state = update(0, {"w": dnp.full((2, 3), 0.5), "s": dnp.array(1.0)}, init(params))
    marked = opt.unpack_optimizer_state(state)
    assert isinstance(marked["w"], opt.JoinPoint)
    restored = opt.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert restored.tree_def == state.tree_def
    assert restored.subtree_defs == state.subtree_defs
    for a, b in zip(didax.tree_util.tree_leaves(restored), didax.tree_util.tree_leaves(state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert get_params(restored)["s"].shape == ()  # sm3 keeps scalars' shape
    with pytest.raises(TypeError, match="JoinPoint"):
        opt.pack_optimizer_state({"w": 1.0})


def test_clip_grads_and_l2_norm_match_jax():
    tree = {"a": np.array([3.0, 4.0], np.float32), "b": np.array([[12.0]], np.float32)}
    assert float(opt.l2_norm(tree)) == pytest.approx(float(jopt.l2_norm(tree)))
    for max_norm in (1.0, 100.0):
        ours, ref = opt.clip_grads(tree, max_norm), jopt.clip_grads(tree, max_norm)
        for k in tree:
            np.testing.assert_allclose(ours[k], ref[k], rtol=1e-6)


def test_custom_optimizer_through_decorator():
    @opt.optimizer
    def halving():
        return (lambda x0: (x0, 0), lambda i, g, s: (s[0] - g / 2 ** (s[1] + 1), s[1] + 1),
                lambda s: s[0])
    init, update, get_params = halving()
    state = init([dnp.ones(2), dnp.zeros(())])
    for i in range(3):
        state = update(i, [dnp.ones(2), dnp.ones(())], state)
    np.testing.assert_allclose(get_params(state)[0], 1 - (0.5 + 0.25 + 0.125))
    assert isinstance(halving(), opt.Optimizer)
