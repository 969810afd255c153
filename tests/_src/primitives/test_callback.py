"""pure_callback, named_call and ensure_compile_time_eval."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp


def host_sort(x):
    assert isinstance(x, np.ndarray)  # the callback sees NumPy arrays
    return np.sort(x)


def call_sort(x):
    return jax.pure_callback(host_sort, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


def test_pure_callback_eager_jit_and_vmap():
    x = jnp.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(call_sort(x), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(jax.jit(call_sort)(x), [1.0, 2.0, 3.0])
    xs = jnp.array([[3.0, 1.0], [0.0, -1.0]])
    np.testing.assert_array_equal(jax.vmap(call_sort)(xs), [[1.0, 3.0], [-1.0, 0.0]])
    batched = jax.vmap(lambda v: jax.pure_callback(
        host_sort, jax.ShapeDtypeStruct(v.shape, v.dtype), v, vmap_method="expand_dims"))
    np.testing.assert_array_equal(batched(xs), [[1.0, 3.0], [-1.0, 0.0]])


def test_pure_callback_checks_declared_types_and_is_not_differentiable():
    bad = lambda x: jax.pure_callback(lambda v: v.astype(np.int32),  # noqa: E731
                                      jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    with pytest.raises(TypeError, match="result 0 of the callback has type int32"):
        bad(jnp.ones(2))
    with pytest.raises(ValueError, match="not differentiable"):
        jax.grad(lambda x: call_sort(x).sum())(jnp.ones(2))


def test_named_call_and_compile_time_eval():
    f = jax.named_call(lambda x: x * 2, name="double")
    assert float(f(2.0)) == 4.0

    @jax.jit
    def g(x):
        with jax.ensure_compile_time_eval():
            k = jnp.sin(1.0)  # concrete, though inside jit
            n = int(jnp.argmax(jnp.array([1, 5, 2])))
        return x * k + n

    np.testing.assert_allclose(g(2.0), 2 * np.sin(1.0) + 1, rtol=1e-6)
    assert "sin" not in str(jax.make_jaxpr(g.__wrapped__)(2.0))
