"""masked: transformations applied to some leaves only."""
import numpy as np

import didax.numpy as jnp
import didax.optim as optim

PARAMS = {"w": jnp.asarray([1.0, 2.0]), "b": jnp.asarray(3.0)}
GRADS = {"w": jnp.asarray([0.5, -0.5]), "b": jnp.asarray(1.0)}


def test_masked_leaves_pass_through_and_hold_no_state():
    opt = optim.masked(optim.scale_by_adam(), {"w": True, "b": False})
    state = opt.init(PARAMS)
    assert isinstance(state.inner_state.mu["b"], optim.MaskedNode)
    updates, state = opt.update(GRADS, state, PARAMS)
    np.testing.assert_allclose(updates["w"], [1.0, -1.0], rtol=1e-5)  # float32 1 - b2
    assert updates["b"] is GRADS["b"]


def test_mask_may_be_a_function_of_the_params():
    opt = optim.masked(optim.set_to_zero(),
                       lambda p: {k: jnp.ndim(v) == 0 for k, v in p.items()})
    updates, _ = opt.update(GRADS, opt.init(PARAMS), PARAMS)
    np.testing.assert_array_equal(updates["w"], GRADS["w"])
    assert float(updates["b"]) == 0.0


def test_add_decayed_weights_with_a_mask_and_a_schedule():
    opt = optim.add_decayed_weights(optim.linear_schedule(0.1, 0.0, 2), mask={"w": True,
                                                                              "b": False})
    state = opt.init(PARAMS)
    for decay in [0.1, 0.05, 0.0]:
        updates, state = opt.update(GRADS, state, PARAMS)
        np.testing.assert_allclose(updates["w"], np.array([0.5, -0.5]) + decay * np.array(
            [1.0, 2.0]), rtol=1e-6)
        assert float(updates["b"]) == 1.0
