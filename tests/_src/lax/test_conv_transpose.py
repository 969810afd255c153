"""lax.conv_transpose and the convolution shape helpers against JAX 0.10.2 (values kept as
literals); conv_transpose with a flipped kernel is the gradient of conv."""
import numpy as np
import pytest

import didax
from didax import lax
from didax._src.config import enable_x64


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


X1 = np.arange(12.0, dtype=np.float32).reshape(1, 4, 3) / 4   # NHC
W1 = (np.arange(12.0, dtype=np.float32).reshape(2, 3, 2) - 5) / 3  # HIO
JAX_SAME = [[1.0833333730697632, 1.3333333730697632], [-0.4166666865348816, -0.1666666716337204],
            [3.3333334922790527, 4.333333492279053], [-2.6666667461395264, -1.6666667461395264],
            [5.583333492279053, 7.333333492279053], [-4.916666507720947, -3.1666667461395264],
            [7.833333492279053, 10.333333969116211], [-7.166666507720947, -4.6666669845581055]]


JAX_DILATED_FLIPPED = [[-0.8333333730697632, -0.0833333358168602], [0, 0],
                       [-3.1666669845581055, 0.5833333134651184], [0, 0],
                       [-4.6666669845581055, 3.5833334922790527], [0, 0],
                       [-6.1666669845581055, 6.5833330154418945], [0, 0]]


def test_conv_transpose_matches_jax():
    np.testing.assert_allclose(lax.conv_transpose(X1, W1, (2,), "SAME")[0], JAX_SAME,
                               rtol=1e-6)
    np.testing.assert_allclose(lax.conv_transpose(X1, W1, (2,), "VALID")[0], JAX_SAME,
                               rtol=1e-6)
    np.testing.assert_allclose(lax.conv_transpose(X1, W1, (2,), ((1, 0),))[0], JAX_SAME[:7],
                               rtol=1e-6)
    w = (np.arange(12.0, dtype=np.float32).reshape(2, 2, 3) - 5) / 3
    np.testing.assert_allclose(lax.conv_transpose(X1, w, (2,), "SAME", rhs_dilation=(2,),
                                                  transpose_kernel=True)[0],
                               JAX_DILATED_FLIPPED, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_transpose_with_flipped_kernel_is_the_gradient_of_conv(padding):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4, 5))  # NHWC, the cotangent of the forward convolution
    w = rng.normal(size=(3, 2, 6, 5))  # HWIO of the forward convolution: 6 in, 5 out
    specs = ("NHWC", "HWIO", "NHWC")
    out = lax.conv_transpose(x, w, (2, 3), padding, transpose_kernel=True)
    forward_shape = out.shape

    def conv(y):
        return lax.conv_general_dilated(y, w, (2, 3), padding, dimension_numbers=specs)

    assert conv(np.zeros(forward_shape)).shape == x.shape
    (want,) = didax.vjp(conv, np.zeros(forward_shape))[1](x)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    assert lax.conv_transpose_shape_tuple(x.shape, np.swapaxes(w, 2, 3).shape, (2, 3), padding,
                                          specs) == forward_shape


def test_conv_shape_helpers_match_jax():
    specs = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_transpose_shape_tuple((2, 5, 6, 3), (3, 2, 3, 4), (2, 1), "SAME",
                                          specs) == (2, 10, 6, 4)
    assert lax.conv_transpose_shape_tuple((2, 5, 6, 3), (3, 2, 3, 4), (2, 1), ((1, 2), (0, 1)),
                                          specs) == (2, 10, 6, 4)
    assert lax.conv_general_shape_tuple((2, 5, 6, 3), (3, 2, 3, 4), (2, 1), "SAME",
                                        specs) == (2, 3, 6, 4)
    assert lax.conv_shape_tuple((2, 3, 5, 6), (4, 3, 3, 2), (2, 1), "VALID") == (2, 4, 2, 5)
    assert lax.conv_shape_tuple((4, 3, 5, 6), (4, 3, 3, 2), (1, 1), ((1, 1), (0, 0)),
                                2) == (2, 4, 5, 5)
    assert lax.conv_general_permutations(specs) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_general_permutations(("NCHW", "OIWH", "CWNH")) == (
        (0, 1, 3, 2), (0, 1, 2, 3), (2, 0, 1, 3))
    with pytest.raises(TypeError, match="Wrong number of explicit pads"):
        lax.conv_shape_tuple((2, 3, 5, 6), (4, 3, 3, 2), (1, 1), ((0, 0),))
    assert lax.ConvDimensionNumbers in lax.ConvGeneralDilatedDimensionNumbers.__args__
    assert lax.DotDimensionNumbers.__origin__ is tuple
