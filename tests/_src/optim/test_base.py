"""chain, the trivial transformations, and applying updates."""
import collections

import numpy as np
import pytest

import didax
import didax.numpy as jnp
import didax.optim as optim


def test_chain_applies_transformations_in_order():
    g = {"a": jnp.asarray([0.5, 2.0])}
    clip_then_scale = optim.chain(optim.clip(1.0), optim.scale(3.0))
    scale_then_clip = optim.chain(optim.scale(3.0), optim.clip(1.0))
    u1, _ = clip_then_scale.update(g, clip_then_scale.init(g))
    u2, _ = scale_then_clip.update(g, scale_then_clip.init(g))
    np.testing.assert_allclose(u1["a"], [1.5, 3.0])
    np.testing.assert_allclose(u2["a"], [1.0, 1.0])


def test_chain_state_is_the_tuple_of_states_and_must_match():
    opt = optim.chain(optim.scale_by_adam(), optim.identity(), optim.scale(-0.1))
    state = opt.init({"a": jnp.zeros(2)})
    assert isinstance(state, tuple) and len(state) == 3
    assert isinstance(state[0], optim.ScaleByAdamState)
    with pytest.raises(ValueError, match="chain of 3 transformations .* state of 2"):
        opt.update({"a": jnp.ones(2)}, state[:2])


def test_chain_passes_extra_arguments_to_members_that_take_them():
    seen = {}

    def update_fn(updates, state, params=None, *, loss=None):
        seen["loss"] = loss
        return updates, state
    with_loss = optim.GradientTransformationExtraArgs(optim.init_empty_state, update_fn)
    opt = optim.chain(optim.scale(2.0), with_loss)
    updates, _ = opt.update({"a": jnp.ones(1)}, opt.init({"a": jnp.ones(1)}), loss=3.0)
    assert seen["loss"] == 3.0 and float(updates["a"][0]) == 2.0


def test_named_chain_keeps_names_and_order():
    opt = optim.named_chain(("moments", optim.scale_by_adam()), ("lr", optim.scale(-0.1)))
    state = opt.init({"a": jnp.zeros(2)})
    assert isinstance(state, collections.OrderedDict) and list(state) == ["moments", "lr"]
    u, _ = opt.update({"a": jnp.ones(2)}, state)
    ref, _ = optim.adam(0.1).update({"a": jnp.ones(2)}, optim.adam(0.1).init({"a": jnp.zeros(2)}))
    np.testing.assert_allclose(u["a"], ref["a"], rtol=1e-6)
    with pytest.raises(ValueError, match="unique"):
        optim.named_chain(("a", optim.identity()), ("a", optim.identity()))


def test_identity_and_set_to_zero():
    g = {"a": jnp.asarray([1.0, -2.0]), "b": jnp.asarray(3.0)}
    u, s = optim.identity().update(g, optim.identity().init(g))
    assert u is g and s == optim.EmptyState()
    z, _ = optim.set_to_zero().update(g, optim.EmptyState())
    np.testing.assert_array_equal(z["a"], [0.0, 0.0])
    assert z["b"].dtype == np.float32


def test_stateless_transformations_see_updates_and_params():
    opt = optim.stateless(lambda u, p: didax.tree.map(lambda a, b: a * b, u, p))
    u, _ = opt.update({"a": jnp.asarray(2.0)}, opt.init(None), {"a": jnp.asarray(3.0)})
    assert float(u["a"]) == 6.0
    opt = optim.stateless_with_tree_map(lambda u, p: u + (0.0 if p is None else p))
    assert float(opt.update({"a": jnp.asarray(2.0)}, None)[0]["a"]) == 2.0
    assert float(opt.update({"a": jnp.asarray(2.0)}, None, {"a": jnp.asarray(1.0)})[0]["a"]) == 3


def test_apply_updates_keeps_each_params_dtype():
    params = {"f": jnp.asarray([1.0, 2.0]), "i": jnp.asarray([1, 2], dtype=jnp.int32),
              "none": None}
    updates = {"f": np.asarray([0.5, 0.25], np.float64), "i": jnp.asarray([1.0, 1.0]),
               "none": None}
    new = optim.apply_updates(params, updates)
    assert new["f"].dtype == np.float32 and new["i"].dtype == np.int32 and new["none"] is None
    np.testing.assert_array_equal(new["f"], [1.5, 2.25])
    np.testing.assert_array_equal(new["i"], [2, 3])


def test_incremental_update_is_a_polyak_average():
    new = optim.incremental_update({"a": jnp.asarray(10.0)}, {"a": jnp.asarray(0.0)}, 0.1)
    np.testing.assert_allclose(new["a"], 1.0, rtol=1e-6)


def test_safe_increment_saturates():
    top = jnp.asarray(np.iinfo(np.int32).max, jnp.int32)
    assert int(optim.safe_increment(top)) == np.iinfo(np.int32).max
    assert int(optim.safe_increment(jnp.asarray(4, jnp.int32))) == 5
    assert optim.safe_increment(jnp.asarray(4, jnp.int32)).dtype == np.int32
