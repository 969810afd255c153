"""lax.index_take, lax.scatter_sub and lax.scatter_apply: values as JAX 0.10.2 gives them (kept
as literals), derivatives and vmap."""
import numpy as np
import pytest
from vmap_testing import assert_same, loop

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


SCALAR_DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))


def test_index_take_wraps_indices_as_jax():
    src = np.arange(24.0).reshape(2, 3, 4)
    idxs = (np.array([0, 2, -1, 4]), np.array([1, 3, 5, -6]))
    out = lax.index_take(src, idxs, (1, 2))
    np.testing.assert_array_equal(out, [[1, 13], [11, 23], [9, 21], [6, 18]])  # JAX's
    want = np.moveaxis(src[:, idxs[0] % 3, idxs[1] % 4], 0, 1)
    assert_same(out, want)
    check_grads(lambda s: lax.index_take(s, idxs, (1, 2)), (src,), order=1)


def test_scatter_sub():
    indices = np.array([[0], [0], [3], [9]])
    x, u = np.arange(5.0), np.array([1.0, 2.0, 3.0, 4.0])
    want = x.copy()
    np.subtract.at(want, [0, 0, 3], u[:3])  # index 9 is out of bounds: dropped
    assert_same(lax.scatter_sub(x, indices, u, SCALAR_DN), want)
    np.testing.assert_array_equal(
        lax.scatter_sub(jnp.uint8([1, 2, 3]), np.array([[0], [0]]), jnp.uint8([5, 200]),
                        SCALAR_DN), [52, 2, 3])  # JAX's: unsigned arithmetic wraps
    check_grads(lambda x, u: lax.scatter_sub(x, indices, u, SCALAR_DN) ** 2, (x, u), order=2)
    text = str(didax.make_jaxpr(lambda x, u: lax.scatter_sub(x, indices, u, SCALAR_DN))(x, u))
    assert "scatter-sub[" in text and "g:f64[] = sub e f" in text

    def f(x, u):
        return lax.scatter_sub(x, indices, u, SCALAR_DN, mode="clip")

    xs, us = np.arange(15.0).reshape(3, 5), np.arange(12.0).reshape(3, 4)
    assert_same(didax.vmap(f)(xs, us), loop(f, (0, 0), 3, xs, us))
    assert_same(didax.vmap(f, in_axes=(None, 0))(x, us), loop(f, (None, 0), 3, x, us))


def test_scatter_apply_applies_once_per_update_as_jax():
    x = jnp.arange(5.0)
    indices = jnp.array([[0], [0], [2], [7]])

    def f(x, mode=None):
        return lax.scatter_apply(x, indices, lambda v: v * 2 + 1, SCALAR_DN, update_shape=(4,),
                                 mode=mode)

    np.testing.assert_array_equal(f(x), [3, 1, 5, 3, 4])  # JAX's values
    np.testing.assert_array_equal(f(x, "clip"), [3, 1, 5, 3, 9])
    np.testing.assert_array_equal(didax.jit(f)(x), [3, 1, 5, 3, 4])
    unique = lax.scatter_apply(x, jnp.array([[1], [3]]), jnp.sin, SCALAR_DN, update_shape=(2,),
                               unique_indices=True)
    np.testing.assert_allclose(unique, [0, np.sin(1), 2, np.sin(3), 4])
    # Differentiable (JAX raises): sin applied twice at 0 and once at 2.
    y = np.array([0.3, 1.0, 0.7, 2.0, 5.0])
    g = didax.grad(lambda y: jnp.sum(lax.scatter_apply(y, indices[:3], jnp.sin, SCALAR_DN,
                                                       update_shape=(3,))))(y)
    np.testing.assert_allclose(g, [np.cos(np.sin(0.3)) * np.cos(0.3), 1, np.cos(0.7), 1, 1])
    with pytest.raises(TypeError, match="func must return values of the operand's dtype"):
        lax.scatter_apply(x, indices, lambda v: v.astype(jnp.int32), SCALAR_DN,
                          update_shape=(4,))
