"""lax.bitcast_convert_type, lax.map(batch_size=), checkpoint_name, typed keys, and grad
through fori_loop with float, integer and mixed carries, against JAX."""
import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest
from jax.ad_checkpoint import checkpoint_name as jax_checkpoint_name
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax import lax
from didax.ad_checkpoint import checkpoint_name
from didax.test_util import check_grads


def _fori_programs(j, m, lx):
    def float_carry(x):
        return lx.fori_loop(0, 3, lambda i, c: c * m.sin(c) + i, x)

    def mixed_pytree(x):
        def body(i, c):
            n, y, (z, w) = c
            return n + 1, y * x + n, (z + y * i, w * 2)
        n, y, (z, w) = lx.fori_loop(0, 4, body, (0, x, (x * 2, m.int32(1))))
        return y + z + w + n

    def array_bounds(x):
        return lx.fori_loop(m.int32(1), m.int32(4),
                            lambda i, c: c * c * 0.5 + i.astype(c.dtype), x)

    def int_carry_only_counts(x):
        return lx.fori_loop(0, 3, lambda i, c: (c[0] * x, c[1] + i), (x, 1))[0]

    return [float_carry, mixed_pytree, array_bounds, int_carry_only_counts]


@pytest.mark.parametrize("k", range(4))
def test_grad_through_fori_loop_matches_jax(k):
    ours = _fori_programs(didax, jnp, lax)[k]
    theirs = _fori_programs(jax, jnp_jax, jax.lax)[k]
    for x in (0.7,):
        np.testing.assert_allclose(didax.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-5)
        np.testing.assert_allclose(didax.jit(didax.grad(ours))(x), jax.grad(theirs)(x),
                                   rtol=1e-5)
        np.testing.assert_allclose(didax.grad(didax.grad(ours))(x),
                                   jax.grad(jax.grad(theirs))(x), rtol=1e-4)
    with both_x64():
        check_grads(ours, (np.float64(0.6),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("batch_size", [3, 10])
def test_map_with_batch_size_matches_jax(batch_size):
    def f(m):
        return lambda x: {"a": x[0] * m.sin(x[1]), "b": m.cumsum(x)}
    xs = np.arange(14.0, dtype=np.float32).reshape(7, 2) / 7
    ours = lax.map(f(jnp), jnp.asarray(xs), batch_size=batch_size)
    theirs = jax.lax.map(f(jnp_jax), xs, batch_size=batch_size)
    for key in ("a", "b"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6)
    g = didax.grad(lambda xs: jnp.sum(lax.map(f(jnp), xs, batch_size=batch_size)["a"]))(xs)
    jg = jax.grad(lambda xs: jnp_jax.sum(jax.lax.map(f(jnp_jax), xs,
                                                     batch_size=batch_size)["a"]))(xs)
    np.testing.assert_allclose(g, jg, rtol=1e-6)
    with both_x64():
        check_grads(lambda xs: lax.map(f(jnp), xs, batch_size=batch_size)["a"],
                    (xs.astype(np.float64),), order=2, modes=("fwd", "rev"))


def test_map_batch_size_errors():
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        lax.map(jnp.sin, jnp.ones(3), batch_size=0)
    with pytest.raises(ValueError, match="same leading axis"):
        lax.map(lambda t: t[0], (jnp.ones(3), jnp.ones(4)), batch_size=2)


@pytest.mark.parametrize("src,dst,shape", [
    ("float32", "int32", (3,)), ("float32", "uint8", (2, 3)), ("uint8", "float32", (2, 4)),
    ("int16", "float16", (5,)), ("float32", "bfloat16", (3,)), ("bfloat16", "uint16", (4,)),
    ("float64", "uint32", (2,)), ("int8", "uint8", ()), ("complex64", "complex64", (2,)),
])
def test_bitcast_convert_type_matches_jax(src, dst, shape):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 100).astype(src)
    with both_x64("64" in src):
        ours = lax.bitcast_convert_type(x, dst)
        theirs = jax.lax.bitcast_convert_type(x, dst)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_array_equal(np.asarray(ours).view(np.uint8),
                                      np.asarray(theirs).view(np.uint8))
        jitted = didax.jit(lambda v: lax.bitcast_convert_type(v, dst))(x)
        np.testing.assert_array_equal(np.asarray(jitted).view(np.uint8),
                                      np.asarray(theirs).view(np.uint8))
        if shape:
            batched = didax.vmap(lambda v: lax.bitcast_convert_type(v, dst))(np.stack([x, x]))
            np.testing.assert_array_equal(np.asarray(batched[1]).view(np.uint8),
                                          np.asarray(theirs).view(np.uint8))


def test_bitcast_convert_type_derivative_is_zero_and_errors():
    x = np.array([1.5, -2.0], np.float32)
    _, t = didax.jvp(lambda v: lax.bitcast_convert_type(v, np.float16), (x,), (x,))
    _, jt = jax.jvp(lambda v: jax.lax.bitcast_convert_type(v, np.float16), (x,), (x,))
    np.testing.assert_array_equal(t, jt)
    _, t = didax.jvp(lambda v: lax.bitcast_convert_type(v, np.int32), (x,), (x,))
    assert t.dtype == didax.dtypes.float0
    assert str(didax.make_jaxpr(lambda v: lax.bitcast_convert_type(v, np.int32))(x)) == \
        str(jax.make_jaxpr(lambda v: jax.lax.bitcast_convert_type(v, np.int32))(x))
    with pytest.raises(ValueError, match=r"last axis of 4 elements, got 3"):
        lax.bitcast_convert_type(np.ones((2, 3), np.uint8), np.float32)
    for src, dst in (("complex64", "float32"), ("bool", "uint8")):
        with pytest.raises(TypeError):
            jax.lax.bitcast_convert_type(np.ones(2, src), dst)
        with pytest.raises(TypeError, match="bitcast only to their own dtype"):
            lax.bitcast_convert_type(np.ones(2, src), dst)


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
