"""lax.clz and lax.mulhi against Python's integers (every integer dtype, with its extremes) and
values recorded from JAX 0.10.2; they reject floats and have zero derivatives."""
import numpy as np
import pytest
from vmap_testing import assert_same, loop

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def integers(seed, dtype, size=64):
    """Random integers of `dtype` and its extremes, as a NumPy array."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    x[:5] = [0, 1, info.max, info.min, info.max // 3]
    return x


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_clz_counts_leading_zero_bits(dtype):
    x = integers(0, dtype)
    bits = 8 * np.dtype(dtype).itemsize
    want = [bits - (int(v) % 2 ** bits).bit_length() for v in x]
    out = lax.clz(x)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_mulhi_is_the_high_half_of_the_product(dtype):
    x, y = integers(1, dtype), integers(2, dtype)[::-1].copy()
    bits = 8 * np.dtype(dtype).itemsize
    want = [(int(a) * int(b)) >> bits for a, b in zip(x, y)]  # Python: exact, floor shift
    out = lax.mulhi(x, y)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out).astype(object), np.array(want, object)
                                  .astype(np.dtype(dtype)).astype(object))


def test_clz_and_mulhi_literals_from_jax():
    np.testing.assert_array_equal(lax.clz(jnp.int32([0, 1, -1, 2 ** 30, 255])),
                                  [32, 31, 0, 1, 24])
    np.testing.assert_array_equal(lax.clz(jnp.uint8([0, 1, 255, 16])), [8, 7, 0, 3])
    np.testing.assert_array_equal(
        lax.mulhi(jnp.int32([-7, 2 ** 30, -2 ** 31, 123456789]),
                  jnp.int32([3, 8, -2 ** 31, 987654321])), [-1, 2, 1073741824, 28389652])
    np.testing.assert_array_equal(lax.mulhi(jnp.int8([-128, 100, -3]), jnp.int8([-128, 100, 5])),
                                  [64, 39, -1])


def test_integer_ops_reject_floats_and_have_zero_derivatives():
    with pytest.raises(TypeError, match="clz does not accept dtype float32"):
        lax.clz(jnp.float32(1))
    with pytest.raises(TypeError, match="clz does not accept dtype bool"):
        lax.clz(jnp.array([True]))
    with pytest.raises(TypeError, match="mulhi does not accept dtype float64"):
        lax.mulhi(1.0, 2.0)
    x = jnp.arange(5.0)
    assert didax.grad(lambda x: jnp.sum(x * lax.clz(x.astype(jnp.int32))))(x).tolist() == [
        32, 31, 30, 30, 29]
    xs = integers(3, "int32").reshape(4, 16)
    assert_same(didax.vmap(lax.clz, in_axes=1)(xs), loop(lax.clz, (1,), 16, xs))
    assert_same(didax.vmap(lax.mulhi, in_axes=(0, None))(xs, xs[0]),
                loop(lax.mulhi, (0, None), 4, xs, xs[0]))
    assert_same(didax.jit(lax.mulhi)(xs, xs), np.asarray(lax.mulhi(xs, xs)))
