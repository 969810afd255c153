"""nn.scaled_matmul (by its definition: JAX on CPU has no kernel for it), the scaled
dot_general configurations, and scaled_dot_general without quantization (= dot_general)."""
import jax
import ml_dtypes
import numpy as np
import pytest

import didax
import didax.numpy as jnp

RNG = np.random.default_rng(0)


def _reference(a, b, sa, sb):
    a = a.astype(np.float32) * np.repeat(sa.astype(np.float32), a.shape[-1] // sa.shape[-1], -1)
    b = b.astype(np.float32) * np.repeat(sb.astype(np.float32), b.shape[-1] // sb.shape[-1], -1)
    return np.einsum("bmk,bnk->bmn", a, b)


def test_scaled_matmul_by_its_definition():
    a = np.array([1.0, 2, 3]).reshape(1, 1, 3)
    b = np.array([4.0, 5, 6]).reshape(1, 1, 3)
    s = np.array([0.5]).reshape(1, 1, 1)
    np.testing.assert_array_equal(didax.nn.scaled_matmul(a, b, s, s), [[[8.0]]])
    a = RNG.standard_normal((2, 3, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = RNG.standard_normal((2, 5, 64)).astype(ml_dtypes.float8_e4m3fn)
    sa = np.exp2(RNG.integers(-2, 3, (2, 3, 2))).astype(ml_dtypes.float8_e8m0fnu)
    sb = np.exp2(RNG.integers(-2, 3, (2, 5, 2))).astype(ml_dtypes.float8_e8m0fnu)
    out = didax.nn.scaled_matmul(a, b, sa, sb)
    assert out.dtype == np.float32 and out.shape == (2, 3, 5)
    np.testing.assert_allclose(out, _reference(a, b, sa, sb), rtol=1e-5, atol=1e-5)
    out16 = didax.nn.scaled_matmul(a, b, sa, sb, preferred_element_type=jnp.bfloat16)
    assert out16.dtype == jnp.bfloat16
    with pytest.raises(ValueError, match="K_s dividing 64"):
        didax.nn.scaled_matmul(a, b, sa[..., :1].repeat(3, -1), sb)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    g = didax.grad(lambda x: jnp.sum(didax.nn.scaled_matmul(x, b32, sa, sb)))(a32)
    np.testing.assert_allclose(g, np.einsum("bnk->bk", b32 * np.repeat(
        sb.astype(np.float32), 32, -1))[:, None, :] * np.repeat(sa.astype(np.float32), 32, -1),
        rtol=1e-5)


def test_scaled_dot_general_configs_match_jax():
    for mode, args in (("mxfp8", ()), ("nvfp4", (np.array([0.5], np.float32),))):
        ours = didax.nn.get_scaled_dot_general_config(mode, *args)
        theirs = jax.nn.get_scaled_dot_general_config(mode, *args)
        for field in ("mode", "block_size", "data_type", "scale_type", "infer_only"):
            assert getattr(ours, field) == getattr(theirs, field), field
    with pytest.raises(ValueError, match="Unsupported mode"):
        didax.nn.get_scaled_dot_general_config("fp3")
    lhs = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    rhs = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    dims = (((2,), (2,)), ((0,), (0,)))
    np.testing.assert_allclose(didax.nn.scaled_dot_general(lhs, rhs, dims),
                               jax.nn.scaled_dot_general(lhs, rhs, dims), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="quantization configs"):
        didax.nn.scaled_dot_general(lhs, rhs, dims,
                                    configs=[didax.nn.get_scaled_dot_general_config("mxfp8")] * 3)
