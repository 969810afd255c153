"""lax.bitcast_convert_type against JAX 0.10.2: bits, dtypes and shapes (widening and
narrowing, 16-bit floats), under jit and vmap; its zero derivative, staging and errors."""
import jax
import numpy as np
import pytest
from jax_testing import both_x64

import didax
from didax import lax


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
