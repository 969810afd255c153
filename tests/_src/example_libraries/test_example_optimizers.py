"""didax.example_libraries.optimizers against jax.example_libraries.optimizers 0.10.2: every
optimizer's trajectory on a pytree of parameters, the schedules, clipping, the state pytree
and its (un)packing."""
import pickle

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest
from jax.example_libraries import optimizers as ref

import didax
import didax.numpy as jnp
from didax.example_libraries import optimizers as opt

_RNG = np.random.default_rng(0)
PARAMS = {"w": _RNG.standard_normal((3, 2)).astype(np.float32),
          "b": [_RNG.standard_normal(2).astype(np.float32), np.float32(0.5)]}


def _close(a, b, tol=1e-6):
    la, lb = didax.tree_util.tree_leaves(a), jax.tree.leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, x.dtype, y.shape, y.dtype)
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def _loss(lib):
    def loss(p):
        n = lib.numpy
        return n.sum(n.sin(p["w"]) ** 2) + n.sum((p["b"][0] - 1.) ** 2) + p["b"][1] ** 4
    return loss


def _run(mod, lib, make, steps=5, jit=False):
    init, update, get_params = make(mod)
    params = jax.tree.map(lib.numpy.asarray, PARAMS)
    state = init(params)
    grad = lib.grad(_loss(lib))
    step = (lambda i, s: update(i, grad(get_params(s)), s))
    step = lib.jit(step) if jit else step
    for i in range(steps):
        state = step(i, state)
    return get_params(state), state


OPTIMIZERS = {
    "sgd": lambda m: m.sgd(0.1),
    "sgd_schedule": lambda m: m.sgd(m.exponential_decay(0.1, 2, 0.5)),
    "momentum": lambda m: m.momentum(0.1, 0.9),
    "nesterov": lambda m: m.nesterov(0.1, mass=0.8),
    "adagrad": lambda m: m.adagrad(0.1),
    "rmsprop": lambda m: m.rmsprop(0.05, gamma=0.8),
    "rmsprop_momentum": lambda m: m.rmsprop_momentum(0.05),
    "adam": lambda m: m.adam(0.05),
    "adam_schedule": lambda m: m.adam(m.inverse_time_decay(0.1, 2, 0.5, staircase=True)),
    "adamax": lambda m: m.adamax(0.05),
    "sm3": lambda m: m.sm3(0.1),
}


# sm3 keeps the shape in its state, so its get_params cannot run under jit, in JAX either
# (test_sm3_scalar_and_matrix_params checks that): it is compared eagerly only.
@pytest.mark.parametrize("name, jit", [(n, j) for n in OPTIMIZERS for j in (False, True)
                                       if not (n == "sm3" and j)],
                         ids=lambda v: v if isinstance(v, str) else ("jit" if v else "eager"))
def test_optimizer_matches_jax(name, jit):
    params, state = _run(opt, didax, OPTIMIZERS[name], jit=jit)
    ref_params, ref_state = _run(ref, jax, OPTIMIZERS[name], jit=jit)
    _close(params, ref_params)
    _close(state, ref_state)
    assert isinstance(state, opt.OptimizerState)
    assert _loss(didax)(params) < _loss(didax)(jax.tree.map(jnp.asarray, PARAMS))


SCHEDULES = {
    "constant": lambda m: m.constant(0.3),
    "exponential_decay": lambda m: m.exponential_decay(0.3, 4, 0.7),
    "inverse_time_decay": lambda m: m.inverse_time_decay(0.3, 4, 0.5),
    "inverse_time_decay_staircase": lambda m: m.inverse_time_decay(0.3, 4, 0.5, True),
    "polynomial_decay": lambda m: m.polynomial_decay(0.3, 5, 0.01, power=2.0),
    "piecewise_constant": lambda m: m.piecewise_constant([2, 5], [1.0, 0.5, 0.1]),
    "make_schedule_scalar": lambda m: m.make_schedule(0.25),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedules_match_jax(name):
    ours, theirs = SCHEDULES[name](opt), SCHEDULES[name](ref)
    for i in range(8):
        _close([ours(i)], [theirs(i)])
        _close([didax.jit(ours)(i)], [jax.jit(theirs)(i)])


def test_schedule_errors():
    f = lambda x: x  # noqa: E731
    assert opt.make_schedule(f) is f
    with pytest.raises(TypeError):
        opt.make_schedule([0.1, 0.2])
    with pytest.raises(ValueError, match="one shorter"):
        opt.piecewise_constant([1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="sequences"):
        opt.piecewise_constant(1, [1.0, 2.0])


def test_l2_norm_and_clip_grads():
    tree = jax.tree.map(jnp.asarray, PARAMS)
    ref_tree = jax.tree.map(jnp_ref.asarray, PARAMS)
    _close([opt.l2_norm(tree)], [ref.l2_norm(ref_tree)])
    for max_norm in (0.5, 100.0):
        _close(opt.clip_grads(tree, max_norm), ref.clip_grads(ref_tree, max_norm))
    assert float(opt.l2_norm(opt.clip_grads(tree, 0.5))) == pytest.approx(0.5, rel=1e-6)


def test_state_is_a_pytree_and_packs():
    init, update, get_params = opt.momentum(0.1, 0.9)
    state = init(jax.tree.map(jnp.asarray, PARAMS))
    assert isinstance(state, tuple) and state._fields == ("packed_state", "tree_def",
                                                          "subtree_defs")
    assert len(didax.tree_util.tree_leaves(state)) == 2 * 3  # (x, velocity) per leaf
    doubled = didax.tree_util.tree_map(lambda x: 2 * x, state)
    _close(get_params(doubled), jax.tree.map(lambda x: 2 * x, PARAMS))
    marked = opt.unpack_optimizer_state(state)
    assert isinstance(marked["w"], opt.JoinPoint)
    _close(marked["w"].subtree, (PARAMS["w"], np.zeros((3, 2), np.float32)))
    repacked = opt.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert repacked.tree_def == state.tree_def and repacked.subtree_defs == state.subtree_defs
    _close(repacked, didax.tree_util.tree_leaves(state))
    # the same API shape as JAX's
    o = opt.adam(0.1)
    assert isinstance(o, opt.Optimizer) and o.init_fn is o[0] and o.params_fn is o[2]


def test_update_checks_tree_structure():
    init, update, _ = opt.sgd(0.1)
    state = init({"a": jnp.ones(2)})
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(0, {"b": jnp.ones(2)}, state)


def test_optimizer_decorator_lifts_per_array_optimizer():
    @opt.optimizer
    def halve():
        return (lambda x: (x, jnp.zeros(())), lambda i, g, s: (s[0] / 2, s[1] + 1),
                lambda s: s[0])
    init, update, get_params = halve()
    state = update(0, [1., 1.], init([jnp.ones(2), jnp.full(3, 4.)]))
    _close(get_params(state), [np.full(2, 0.5, np.float32), np.full(3, 2.0, np.float32)])

    @opt.optimizer
    def bad():
        return (lambda x: (x,), lambda i, g, s: (s[0], s[0]), lambda s: s[0])
    init, update, _ = bad()
    with pytest.raises(TypeError, match="output structure"):
        update(0, [1.], init([jnp.ones(2)]))


def test_sm3_scalar_and_matrix_params():
    p = {"s": np.float32(2.0), "m": _RNG.standard_normal((2, 3, 2)).astype(np.float32)}
    grad = {"s": np.float32(0.3), "m": _RNG.standard_normal((2, 3, 2)).astype(np.float32)}
    (i1, u1, g1), (i2, u2, g2) = opt.sm3(0.1), ref.sm3(0.1)
    s1 = u1(0, jax.tree.map(jnp.asarray, grad), i1(jax.tree.map(jnp.asarray, p)))
    s2 = u2(0, jax.tree.map(jnp_ref.asarray, grad), i2(jax.tree.map(jnp_ref.asarray, p)))
    _close(g1(s1), g2(s2))
    assert g1(s1)["s"].shape == ()
    with pytest.raises(TypeError):  # the shape in the state is traced, as in JAX
        didax.jit(g1)(s1)
