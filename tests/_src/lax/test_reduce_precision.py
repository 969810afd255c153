"""lax.reduce_precision against JAX 0.10.2, bit for bit: random bit patterns of every float
dtype and the corners (signed zeros, infinities, NaNs, ties, subnormals, the edges of the
narrow format's range) for formats narrower and wider than the dtype; jit, vmap, its linear
derivative, staging and errors."""
import jax
import ml_dtypes
import numpy as np
import pytest
from jax_testing import both_x64

import didax
from didax import lax
from didax.test_util import check_grads

FORMATS = [(5, 10), (8, 7), (4, 3), (5, 2), (2, 0), (1, 1), (8, 0), (3, 30), (11, 52), (8, 23)]


def _values(dtype):
    bits = np.dtype(dtype).itemsize * 8
    uint = np.dtype(f"uint{bits}")
    rng = np.random.default_rng(bits)
    random = rng.integers(0, 2 ** min(bits, 63), 1000, dtype=np.uint64).astype(uint).view(dtype)
    corners = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, 2.5, 1.25, 1.75,
                        -1.125, 65504, 65520, 6.1e-5, 6e-8, 3e-8, 1e-40, 3.4e38, 1e-310],
                       np.float64)
    with np.errstate(over="ignore"):
        corners = corners.astype(dtype)
        above = np.nextafter(corners.astype(np.float32), np.inf).astype(dtype)
    quiet_nan = np.array([(1 << (bits - 1)) | (ml_dtypes.finfo(dtype).max.view(uint) + 3)],
                         uint).view(dtype)  # a NaN with a payload
    return np.concatenate([random, corners, above, quiet_nan])


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_reduce_precision_bits_match_jax(dtype):
    x = _values(dtype)
    uint = np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")
    with both_x64(dtype == np.float64):
        for e, m in FORMATS:
            want = np.asarray(jax.lax.reduce_precision(x, e, m))
            got = np.asarray(lax.reduce_precision(x, e, m))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.view(uint), want.view(uint), err_msg=f"{e}, {m}")
        jitted = didax.jit(lambda v: lax.reduce_precision(v, 5, 2))(x)
        np.testing.assert_array_equal(np.asarray(jitted).view(uint),
                                      np.asarray(jax.lax.reduce_precision(x, 5, 2)).view(uint))


def test_reduce_precision_types_vmap_derivatives_and_errors():
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    for ours, theirs in ((lax.reduce_precision(2.1, 5, 2), jax.lax.reduce_precision(2.1, 5, 2)),
                         (didax.vmap(lambda v: lax.reduce_precision(v, 4, 1), 1)(x),
                          jax.vmap(lambda v: jax.lax.reduce_precision(v, 4, 1), 1)(x))):
        assert (ours.dtype, ours.weak_type, ours.shape) == (theirs.dtype, theirs.weak_type,
                                                           theirs.shape)
        np.testing.assert_array_equal(ours, theirs)
    staged = didax.make_jaxpr(lambda v: lax.reduce_precision(v, 5, 10))(x)
    assert str(staged) == str(jax.make_jaxpr(lambda v: jax.lax.reduce_precision(v, 5, 10))(x))
    _, t = didax.jvp(lambda v: lax.reduce_precision(v, 5, 2), (x,), (x / 3,))
    _, jt = jax.jvp(lambda v: jax.lax.reduce_precision(v, 5, 2), (x,), (x / 3,))
    np.testing.assert_array_equal(t, jt)
    g = didax.grad(lambda v: (lax.reduce_precision(v, 5, 2) * x).sum())(x)
    np.testing.assert_array_equal(g, jax.grad(lambda v: (jax.lax.reduce_precision(v, 5, 2)
                                                         * x).sum())(x))
    check_grads(lambda v: lax.reduce_precision(v * 3, 8, 23), (x,), order=2,
                modes=("fwd", "rev"))
    with pytest.raises(TypeError, match="floating"):
        lax.reduce_precision(np.int32(3), 5, 2)
    with pytest.raises(ValueError, match="exponent_bits must be positive; got 0"):
        lax.reduce_precision(x, 0, 2)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative; got -1"):
        lax.reduce_precision(x, 5, -1)
    with pytest.raises(TypeError):
        lax.reduce_precision(x, 5.0, 2)
