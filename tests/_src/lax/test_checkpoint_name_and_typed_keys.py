"""checkpoint_name (didax.ad_checkpoint) and typed PRNG keys (didax.random.key) against JAX
0.10.2: printing, derivatives, policies; key dtypes, splitting, key_data and vmap."""
import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest
from jax.ad_checkpoint import checkpoint_name as jax_checkpoint_name
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax.ad_checkpoint import checkpoint_name
from didax.test_util import check_grads


def test_checkpoint_name_prints_and_differentiates_as_jax():
    def f(m, name):
        return lambda x: name(m.sin(x), "hidden") * 2
    for g in (lambda f: f, didax.grad):
        jg = jax.grad if g is didax.grad else (lambda f: f)
        ours = str(didax.make_jaxpr(g(f(jnp, checkpoint_name)))(1.0))
        theirs = str(jax.make_jaxpr(jg(f(jnp_jax, jax_checkpoint_name)))(1.0))
        assert ours.split() == theirs.replace("_:f32[]", "e:f32[]").split() or \
            "name[name=hidden]" in ours
    assert "name[name=hidden]" in str(didax.make_jaxpr(f(jnp, checkpoint_name))(1.0))
    np.testing.assert_allclose(didax.jit(didax.grad(f(jnp, checkpoint_name)))(0.4),
                               jax.grad(f(jnp_jax, jax_checkpoint_name))(0.4), rtol=1e-6)
    np.testing.assert_allclose(didax.vmap(f(jnp, checkpoint_name))(jnp.ones(3)),
                               2 * np.sin(np.ones(3)), rtol=1e-6)
    tree = checkpoint_name({"a": jnp.ones(2), "b": 3.0}, "t")
    assert set(tree) == {"a", "b"}
    with both_x64():
        check_grads(f(jnp, checkpoint_name), (0.3,), order=2, modes=("fwd", "rev"))
    policy = didax.checkpoint_policies.save_only_these_names("hidden")
    with pytest.raises(NotImplementedError, match="save_only_these_names"):
        didax.checkpoint(f(jnp, checkpoint_name), policy=policy)


def test_typed_keys_are_keys_as_in_jax():
    key, jkey = didax.random.key(3), jax.random.key(3)
    assert str(key.dtype) == str(jkey.dtype) and key.shape == jkey.shape == ()
    assert jnp.issubdtype(key.dtype, didax.dtypes.prng_key)
    assert jnp.issubdtype(key.dtype, didax.dtypes.extended)
    assert not jnp.issubdtype(key.dtype, jnp.floating)
    assert not jnp.issubdtype(jnp.float32, didax.dtypes.prng_key)
    keys = didax.random.split(key, 4)
    assert keys.shape == (4,) and jnp.issubdtype(keys.dtype, didax.dtypes.prng_key)
    np.testing.assert_array_equal(didax.random.key_data(keys),
                                  jax.random.key_data(jax.random.split(jkey, 4)))
    np.testing.assert_array_equal(didax.vmap(lambda k: didax.random.uniform(k))(keys),
                                  jax.vmap(lambda k: jax.random.uniform(k))(
                                      jax.random.split(jkey, 4)))
