"""Eager reverse mode's compiled steps (interpreters/eager_vjp.py) on the native tier: a step of
several equations swaps its native code in; gradients are then bit for bit those of the NumPy
tier."""
from __future__ import annotations

import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax._src.config import flag_context
from didax._src.eager import vjp as eager_vjp

from .conftest import have_compiler


@pytest.fixture(autouse=True)
def _first_sighting():
    with flag_context("didax_eager_vjp_steps", "first"):
        eager_vjp._steps.clear()
        eager_vjp._sightings.clear()
        yield


def _loss(params, x):
    h = x
    for w, b in params:
        h = jnp.maximum(h @ w + b, 0.0)  # a max: its tie-splitting coefficient, fused
    return jnp.sum(jnp.tanh(h) * jnp.minimum(h, 1.0)) + jnp.mean(jnp.abs(h - 0.5))


def _data():
    rng = np.random.default_rng(0)
    params = [(jnp.asarray(rng.standard_normal((m, n)).astype(np.float32)),
               jnp.asarray(rng.standard_normal(n).astype(np.float32)))
              for m, n in ((16, 64), (64, 64))]
    x = rng.standard_normal((128, 16)).astype(np.float32)
    x[:4, :] = 0.0  # ties at the kinks
    return params, jnp.asarray(x)


def _step_of(name):
    """The step built for a library function or a primitive of this name."""
    return next(s for k, s in eager_vjp._steps.items()
                if name in (getattr(k[0], "__name__", None), getattr(k[0], "name", None))
                and s is not eager_vjp._UNCACHEABLE)


def test_native_steps_give_the_numpy_tiers_bits():
    params, x = _data()
    with flag_context("didax_native_tier", "off"):
        want = jax.grad(_loss)(params, x)
    eager_vjp._steps.clear()
    got = [jax.grad(_loss)(params, x) for _ in range(3)][-1]
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(g).view(np.uint32),
                                      np.asarray(w).view(np.uint32))
    forward = _step_of("max").forward  # (jnp.maximum(h, 0.0) binds `max` at once)
    assert forward.__name__ == ("run" if have_compiler() else "f")  # native, or NumPy tier


def test_steps_calling_numpys_loops_are_native_with_the_numpy_tiers_bits():
    def loss(x, w):  # gelu: tanh and products in one library step; a product's backward
        return jnp.sum(jax.nn.gelu(x @ w) * jnp.exp(-x[:, :1]))

    params, x = _data()
    w = params[0][0]
    with flag_context("didax_native_tier", "off"):
        want = jax.grad(loss, (0, 1))(x, w)
    eager_vjp._steps.clear()
    got = jax.grad(loss, (0, 1))(x, w)
    for g, v in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g).view(np.uint32),
                                      np.asarray(v).view(np.uint32))
    assert _step_of("gelu").forward.__name__ == ("run" if have_compiler() else "f")
    assert _step_of("matmul").forward.__name__ == "f"  # (one equation)


def test_no_native_steps_while_debug_nans_checks_every_result():
    params, x = _data()
    with flag_context("jax_debug_nans", True):
        jax.grad(_loss)(params, x)
    assert not eager_vjp._steps  # (eager vjp takes the general path: eval checks each result)
