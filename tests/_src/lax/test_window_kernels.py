"""The max-pool gradient's C loop against its NumPy twin (bit for bit) and against JAX; the
pooling convnet's gradients against JAX, and jitted against eager."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.compiler.native import toolchain
from didax._src.config import flag_context
from didax._src.lax import window_kernels as kernels
from didax._src.lax import windowed
from didax._src.lax.elementwise import ge_p, le_p


@pytest.fixture
def native():
    if toolchain.toolchain() is None:
        pytest.skip("no C compiler: the NumPy twin serves every call")
    assert kernels.native_module(wait=True) is not None


def _scatter(source, operand, numpy_only, **params):
    if not numpy_only:
        with flag_context("didax_native_tier", "check"):  # (raises if C and twin differ)
            return windowed._select_and_scatter_add_impl(source, operand, **params)
    with flag_context("didax_native_tier", "off"):  # (no C module: the NumPy path)
        return windowed._select_and_scatter_add_impl(source, operand, **params)


# (operand shape, window, strides, padding, window dilation): pooling, apart with gaps,
# overlapping, padded (and cropped), dilated.
_CASES = [((2, 6, 6, 3), (1, 2, 2, 1), (1, 2, 2, 1), None, None),
          ((3, 7, 9), (1, 2, 3), (1, 3, 4), None, None),
          ((5, 6), (2, 3), (1, 1), ((1, 0), (2, 1)), None),
          ((6, 7), (3, 2), (2, 1), ((-1, 2), (0, -1)), (1, 2))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", _CASES)
def test_c_loop_and_numpy_twin_agree_bitwise(native, dtype, case):
    shape, window, strides, padding, dilation = case
    padding = padding or ((0, 0),) * len(shape)
    rng = np.random.default_rng(0)
    operand = rng.integers(-3, 3, shape).astype(dtype)  # ties, NaNs and signed zeros
    operand[operand == 2] = np.nan
    operand[operand == 1] = -0.0
    out_shape = windowed.reduce_window_shape_tuple(shape, window, strides, padding, None,
                                                   dilation)
    source = rng.standard_normal(out_shape).astype(dtype)
    source.flat[::5] = -0.0
    for select_prim in (ge_p, le_p):
        params = dict(select_prim=select_prim, window_dimensions=window,
                      window_strides=strides, padding=padding, window_dilation=dilation)
        got = _scatter(source, operand, False, **params)
        want = _scatter(source, operand, True, **params)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def _max_pool(lax_module, x, window, strides, padding):
    return lax_module.reduce_window(x, -np.inf, lax_module.max, window, strides, padding)


@pytest.mark.parametrize("window, strides, padding", [
    ((1, 2, 2, 1), (1, 2, 2, 1), "VALID"), ((1, 3, 3, 1), (1, 2, 2, 1), "SAME")])
def test_max_pool_gradient_matches_jax_with_ties(window, strides, padding):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 3, (2, 7, 8, 3)).astype(np.float32)  # many ties: the first maximum
    ct = rng.standard_normal(np.shape(_max_pool(jax.lax, x, window, strides, padding)))
    ct = ct.astype(np.float32)

    def grad(api, lax_module):
        return api.vjp(lambda v: _max_pool(lax_module, v, window, strides, padding), x)[1](ct)[0]

    with flag_context("didax_native_tier", "check"):
        got = grad(didax, lax)
    np.testing.assert_allclose(np.asarray(got), np.asarray(grad(jax, jax.lax)), rtol=1e-6,
                               atol=1e-6)


def _cnn_loss(api, np_like):
    lax_module = api.lax
    dims = ("NHWC", "HWIO", "NHWC")

    def loss(w1, w2, x):
        h = lax_module.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dims)
        h = _max_pool(lax_module, np_like.maximum(h, 0.0), (1, 2, 2, 1), (1, 2, 2, 1),
                      "VALID")
        h = lax_module.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=dims)
        h = lax_module.reduce_window(h, 0.0, lax_module.add, (1, 2, 2, 1), (1, 2, 2, 1),
                                     "VALID")
        return np_like.sum(np_like.tanh(h))

    return loss


def test_convnet_gradients_match_jax_and_jit_gives_eager_bits():
    rng = np.random.default_rng(2)
    w1 = (rng.standard_normal((3, 3, 1, 4)) / 3).astype(np.float32)
    w2 = (rng.standard_normal((3, 3, 4, 6)) / 6).astype(np.float32)
    x = rng.standard_normal((3, 10, 10, 1)).astype(np.float32)
    grad = didax.grad(_cnn_loss(didax, jnp), argnums=(0, 1, 2))
    with flag_context("didax_native_tier", "check"):  # (both tiers, compared bit for bit)
        jitted = didax.jit(grad)(w1, w2, x)
    eager = grad(w1, w2, x)
    want = jax.grad(_cnn_loss(jax, jax.numpy), argnums=(0, 1, 2))(w1, w2, x)
    for got_jit, got, expected in zip(jitted, eager, want):
        assert np.asarray(got_jit).tobytes() == np.asarray(got).tobytes()
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=2e-4,
                                   atol=2e-5)
