"""The window kernels' C loops against their NumPy twins (bit for bit): the max-pool
gradient, the window reductions, the im2col copy; the max-pool gradient against JAX; the
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


def _tier(numpy_only):
    """The NumPy path alone ("off": no C module), or both compared ("check": raises if the
    C loop and its twin differ)."""
    return flag_context("didax_native_tier", "off" if numpy_only else "check")


def _scatter(source, operand, numpy_only, **params):
    with _tier(numpy_only):
        return windowed._select_and_scatter_add_impl(source, operand, **params)


# (operand shape, window, strides, padding, window dilation): pooling, apart with gaps,
# overlapping, padded (and cropped), dilated.
_CASES = [((2, 6, 6, 3), (1, 2, 2, 1), (1, 2, 2, 1), None, None),
          ((3, 7, 9), (1, 2, 3), (1, 3, 4), None, None),
          ((5, 6), (2, 3), (1, 1), ((1, 0), (2, 1)), None),
          ((6, 7), (3, 2), (2, 1), ((-1, 2), (0, -1)), (1, 2)),
          # rows longer than the C loop's block of windows; windows along the last dimension
          ((2, 5, 5, 150), (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (1, 1), (0, 0)), None),
          ((3, 140), (1, 3), (1, 1), ((0, 0), (1, 1)), None)]


def _case(case, seed, dtype):
    """A case's operand (small integers: ties; NaNs and signed zeros) and its geometry,
    padding filled in."""
    shape, window, strides, padding, dilation = case
    rng = np.random.default_rng(seed)
    operand = rng.integers(-3, 3, shape).astype(dtype)
    operand[operand == 2] = np.nan
    operand[operand == 1] = -0.0
    return rng, operand, window, strides, padding or ((0, 0),) * len(shape), dilation


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", _CASES)
def test_c_loop_and_numpy_twin_agree_bitwise(native, dtype, case):
    rng, operand, window, strides, padding, dilation = _case(case, 0, dtype)
    shape = operand.shape
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


def _reduce(name, operand, numpy_only, **params):
    with _tier(numpy_only):
        return getattr(windowed, f"reduce_window_{name}_p").impl(operand, **params)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", _CASES)
def test_window_reductions_c_loop_and_numpy_twin_agree_bitwise(native, dtype, case):
    rng, operand, window, strides, padding, dilation = _case(case, 3, dtype)
    shape = operand.shape
    operand[operand == -1] = rng.standard_normal(np.count_nonzero(operand == -1))
    base_dilation = (1,) * (len(shape) - 1) + (2,)
    for name in ("sum", "max", "min"):
        for base in ((1,) * len(shape), base_dilation):
            params = dict(window_dimensions=window, window_strides=strides, padding=padding,
                          base_dilation=base, window_dilation=dilation or (1,) * len(shape))
            got = _reduce(name, operand, False, **params)
            want = _reduce(name, operand, True, **params)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (name, base)


# Large enough that the C loops share their rows among threads: pooling (disjoint windows)
# and overlapping windows (whose max-pool gradient keeps to one thread).
_LARGE = [((4, 64, 64, 16), (1, 2, 2, 1), (1, 2, 2, 1), None, None),
          ((4, 33, 33, 16), (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 0), (0, 1), (0, 0)),
           None)]


@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("case", _LARGE)
def test_rows_on_several_threads_give_one_thread_s_bits(native, case, count, monkeypatch):
    from didax._src.compiler.native import threads

    rng, operand, window, strides, padding, dilation = _case(case, 5, np.float32)
    operand[operand == -1] = rng.standard_normal(np.count_nonzero(operand == -1))
    out_shape = windowed.reduce_window_shape_tuple(operand.shape, window, strides, padding,
                                                   None, dilation)
    source = rng.standard_normal(out_shape).astype(np.float32)
    params = dict(window_dimensions=window, window_strides=strides, padding=padding,
                  base_dilation=(1,) * operand.ndim, window_dilation=(1,) * operand.ndim)
    monkeypatch.setattr(threads, "_fixed", True)  # (the count stays as set, not the load's)
    results = []
    for n in (1, count):
        previous = threads.set_count(n)
        try:
            results.append([_scatter(source, operand, False, select_prim=ge_p,
                                     window_dimensions=window, window_strides=strides,
                                     padding=padding)]
                           + [_reduce(name, operand, False, **params)
                              for name in ("sum", "max", "min")])
        finally:
            threads.set_count(previous)
    want = _scatter(source, operand, True, select_prim=ge_p, window_dimensions=window,
                    window_strides=strides, padding=padding)
    assert results[0][0].tobytes() == want.tobytes()
    for one, many in zip(*results):
        assert one.tobytes() == many.tobytes()


def test_window_maximum_keeps_numpy_s_order_of_equal_zeros_and_nans():
    """The fold takes the later element where two are equal (so -0 then +0 gives +0) and
    passes NaN on: NumPy's maximum on x86, whatever the CPU."""
    x = np.array([0.0, -0.0, -0.0, 0.0, np.nan, 1.0, 1.0, np.nan], np.float32)
    params = dict(window_dimensions=(2,), window_strides=(2,), padding=((0, 0),),
                  base_dilation=(1,), window_dilation=(1,))
    for numpy_only in (True, False):
        got = _reduce("max", x, numpy_only, **params)
        assert np.signbit(got[:2]).tolist() == [True, False]
        assert np.isnan(got[2:]).all()


@pytest.mark.parametrize("view", [
    lambda a: a[:, ::2, 1:, :1],                       # a one-element run
    lambda a: a.transpose(2, 0, 3, 1),                 # nothing contiguous
    lambda a: a[1:, :, :, :],                          # one contiguous run
    lambda a: np.lib.stride_tricks.sliding_window_view(a, (2, 3), axis=(1, 2)),
    lambda a: a[:, :0]])
def test_contiguous_copy_in_c_equals_numpy_s(native, view):
    base = np.arange(3 * 5 * 6 * 4, dtype=np.float32).reshape(3, 5, 6, 4)
    v = view(base)
    got = kernels.contiguous_copy(v, base)
    assert got.flags.c_contiguous and got.shape == v.shape
    assert got.tobytes() == np.ascontiguousarray(v).tobytes()



@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("channels", [1, 2, 3, 5, 16])
def test_contiguous_copy_of_im2col_runs_of_every_length(native, dtype, channels):
    """Runs of 3 x channels elements: the lengths copied by constant-size copies and
    others."""
    base = np.arange(2 * 9 * 9 * channels, dtype=dtype).reshape(2, 9, 9, channels)
    v = np.lib.stride_tricks.sliding_window_view(base, (3, 3), axis=(1, 2))
    v = v.transpose(0, 1, 2, 4, 5, 3)  # (im2col: each window's rows of channels)
    got = kernels.contiguous_copy(v, base)
    assert got.tobytes() == np.ascontiguousarray(v).tobytes()
