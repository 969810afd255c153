"""didax.flatten_util.ravel_pytree against jax.flatten_util 0.10.2: flat values, dtypes and
weak types, the unravelled trees, the unravel function's dtype checks and equality; and both
directions under grad, vmap and jit."""
import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree as ref_ravel

import didax
import didax.numpy as jnp
from didax.flatten_util import ravel_pytree

TREES = {
    "scalar": lambda m: 1.0,
    "dict_promoted": lambda m: {"a": 1.0, "b": 2},
    "mixed_numpy": lambda m: [m.ones((2, 2)), np.arange(3)],
    "ints_and_bool": lambda m: (m.ones(2, m.int32), True),
    "empty": lambda m: [],
    "empty_dict_leafless": lambda m: {"a": (), "b": None},
    "complex_and_real": lambda m: [m.ones(2, m.complex64), m.ones(1)],
    "float64_numpy": lambda m: [np.float64(2.0)],
    "weak_ints": lambda m: [1, 2],
    "nested": lambda m: {"w": m.arange(6.).reshape(2, 3), "b": [m.zeros(3), (m.ones(()),)]},
    "uint_and_int": lambda m: [m.ones(2, m.uint8), m.ones(2, m.int16)],
}


def _same(ours, theirs):
    lo, to = didax.tree_util.tree_flatten(ours)
    lt, tt = jax.tree.flatten(theirs)
    assert str(to) == str(tt)
    for a, b in zip(lo, lt):
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b)
        assert getattr(a, "weak_type", False) == getattr(b, "weak_type", False), (a, b)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("name", list(TREES))
def test_ravel_and_unravel_match_jax(name):
    flat, unravel = ravel_pytree(TREES[name](jnp))
    ref_flat, ref_unravel = ref_ravel(TREES[name](jnp_ref))
    _same(flat, ref_flat)
    _same(unravel(flat), ref_unravel(ref_flat))
    v = np.linspace(-1, 1, flat.shape[0]).astype(flat.dtype)
    _same(unravel(jnp.asarray(v)), ref_unravel(jnp_ref.asarray(v)))


def test_unravel_dtype_rules():
    # one dtype: unravel keeps the dtype it is given (JAX issue 7809)
    _, unravel = ravel_pytree([jnp.ones(2), jnp.ones(1)])
    out = unravel(jnp.arange(3))
    assert [x.dtype for x in out] == [np.int32, np.int32]
    # several dtypes: the promoted one is required, and leaves get theirs back
    _, unravel = ravel_pytree([jnp.ones(2), 1, jnp.ones(1, jnp.int32)])
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(jnp.arange(4))
    out = unravel(jnp.array([0.5, 1.5, 2.5, 3.5]))
    assert out[1].dtype == np.int32 and int(out[1]) == 2 and int(out[2][0]) == 3
    # complex to real keeps the real part, silently
    flat, unravel = ravel_pytree([jnp.ones(2, jnp.complex64), jnp.ones(1)])
    np.testing.assert_array_equal(unravel(flat * (2 + 1j))[1], [2.])


def test_unravel_is_equal_for_equal_structures():
    _, u1 = ravel_pytree({"a": jnp.ones(2), "b": jnp.ones(3)})
    _, u2 = ravel_pytree({"a": jnp.zeros(2), "b": jnp.zeros(3)})
    _, u3 = ravel_pytree({"a": jnp.zeros(3), "b": jnp.zeros(2)})
    assert u1 == u2 and hash(u1) == hash(u2) and u1 != u3
    f = didax.jit(lambda v, unravel: unravel(v)["a"].sum(), static_argnums=1)
    assert float(f(jnp.arange(5.), u1)) == 1.0
    f(jnp.arange(5.), u2)  # an equal static argument: a cache hit
    assert f.cache_info().misses == 1 and f.cache_info().hits == 1


def test_differentiable_and_transformable():
    params = {"w": jnp.arange(6.).reshape(2, 3), "b": jnp.ones(3)}
    flat, unravel = ravel_pytree(params)

    def loss(p):
        return jnp.sum(p["w"] ** 2) + jnp.sum(jnp.sin(p["b"]))

    g = didax.grad(lambda v: loss(unravel(v)))(flat)
    expected, _ = ravel_pytree(didax.grad(loss)(params))
    np.testing.assert_allclose(g, expected, rtol=1e-6)
    # the ravel direction too: d/dp of a function of the flat vector
    g2 = didax.grad(lambda p: jnp.sum(ravel_pytree(p)[0] ** 3))(params)
    np.testing.assert_allclose(g2["w"], 3 * params["w"] ** 2, rtol=1e-6)
    # Hessian of the whole model as a matrix
    h = didax.hessian(lambda v: loss(unravel(v)))(flat)
    assert h.shape == (9, 9)
    np.testing.assert_allclose(np.diag(h)[3:], 2.0)  # (leaves in key order: b, w)
    # vmap and jit
    batch = jnp.stack([flat, 2 * flat])
    out = didax.vmap(lambda v: unravel(v)["w"])(batch)
    assert out.shape == (2, 2, 3)
    np.testing.assert_allclose(didax.jit(lambda p: ravel_pytree(p)[0])(params), flat)
