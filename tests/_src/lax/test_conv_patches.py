"""conv_general_dilated_patches and conv_general_dilated_local: values, shapes and dtypes
against JAX over layouts, strides, paddings and dilations; errors; jit against eager; vmap
against a loop; derivatives against finite differences."""
import numpy as np
import pytest
from jax import lax as jlax

import didax
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads

RNG = np.random.default_rng(0)


def normal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def assert_matches(got, want, tol=2e-6):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                  got.dtype, want.dtype)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=tol, atol=tol)


PATCH_CASES = [
    ((2, 3, 6, 5), (2, 3), (1, 1), "VALID", {}),
    ((2, 3, 6, 5), (2, 3), (2, 1), "SAME", dict(rhs_dilation=(1, 2))),
    ((2, 3, 6, 5), (2, 3), (1, 1), [(1, 0), (0, 2)], dict(lhs_dilation=(2, 1))),
    ((2, 6, 5, 3), (2, 3), (1, 1), "VALID", dict(dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((2, 6, 5, 3), (2, 3), (1, 2), "SAME", dict(dimension_numbers=("NHWC", "WHIO", "CNHW"))),
    ((2, 3, 7), (3,), (2,), "SAME", {}),
]


@pytest.mark.parametrize("shape, filter_shape, strides, padding, kwargs", PATCH_CASES)
def test_patches_against_jax(shape, filter_shape, strides, padding, kwargs):
    x = normal(*shape)
    want = jlax.conv_general_dilated_patches(x, filter_shape, strides, padding, **kwargs)
    got = lax.conv_general_dilated_patches(x, filter_shape, strides, padding, **kwargs)
    assert_matches(got, want, tol=0)


@pytest.mark.parametrize("dtype, preferred", [("int32", None), ("float16", "float32"),
                                              ("bfloat16", None)])
def test_patches_dtypes_against_jax(dtype, preferred):
    x = (np.arange(2 * 3 * 4 * 4).reshape(2, 3, 4, 4) % 7).astype(dtype)
    want = jlax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID",
                                             preferred_element_type=preferred)
    got = lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID",
                                           preferred_element_type=preferred)
    assert_matches(got, want, tol=0)


def test_patches_filter_shape_must_match_the_spatial_rank():
    with pytest.raises(TypeError):
        jlax.conv_general_dilated_patches(normal(2, 3, 6, 5), (2,), (1, 1), "VALID")
    with pytest.raises(TypeError, match="filter_shape"):
        lax.conv_general_dilated_patches(normal(2, 3, 6, 5), (2,), (1, 1), "VALID")


LOCAL_CASES = [
    ((2, 3, 6, 5), (4, 18, 5, 3), (1, 1), "VALID", (2, 3), {}),
    ((2, 6, 5, 3), (5, 3, 18, 4), (1, 1), "VALID", (2, 3),
     dict(dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((2, 6, 5, 3), (3, 5, 18, 4), (1, 1), "VALID", (3, 2),
     dict(dimension_numbers=("NHWC", "WHIO", "CNHW"))),
    ((2, 3, 6, 5), (4, 18, 3, 5), (2, 1), "SAME", (2, 3), dict(rhs_dilation=(1, 2))),
]


@pytest.mark.parametrize("lhs_shape, rhs_shape, strides, padding, filter_shape, kwargs",
                         LOCAL_CASES)
def test_local_against_jax(lhs_shape, rhs_shape, strides, padding, filter_shape, kwargs):
    x, w = normal(*lhs_shape), normal(*rhs_shape)
    want = jlax.conv_general_dilated_local(x, w, strides, padding, filter_shape, **kwargs)
    got = lax.conv_general_dilated_local(x, w, strides, padding, filter_shape, **kwargs)
    assert_matches(got, want, tol=1e-5)


def test_local_rhs_shape_errors():
    x, w = normal(2, 3, 6, 5), normal(4, 18, 5, 4)
    with pytest.raises(TypeError):
        jlax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 3))
    with pytest.raises(TypeError, match="output locations"):
        lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 3))


def test_jit_matches_eager():
    x, w = normal(2, 3, 6, 5), normal(4, 18, 5, 3)

    def f(x, w):
        return (lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 3)),
                lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "SAME"))

    for got, want in zip(didax.jit(f)(x, w), f(x, w)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


def test_vmap_matches_a_loop():
    xs, ws = normal(3, 2, 3, 6, 5), normal(3, 4, 18, 5, 3)

    def f(x, w):
        return lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 3))

    got = didax.vmap(f)(xs, ws)
    want = np.stack([np.asarray(f(x, w)) for x, w in zip(xs, ws)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_derivatives_by_finite_differences():
    with enable_x64(True):
        x, w = normal(1, 2, 4, 3, dtype=np.float64), normal(2, 8, 3, 2, dtype=np.float64)
        check_grads(lambda x: lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID"),
                    (x,), order=2, modes=("fwd", "rev"))
        check_grads(lambda x, w: lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2)),
                    (x, w), order=2, modes=("fwd", "rev"))
