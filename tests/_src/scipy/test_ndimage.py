"""didax.scipy.ndimage.map_coordinates against jax 0.10.2 and scipy.ndimage: orders 0 and 1,
every mode, integer and float inputs, gradients of order 2 (float64), jit, and errors."""
import jax
import jax.scipy.ndimage
import numpy as np
import pytest
import scipy.ndimage

import didax
import didax.scipy.ndimage as dnd
from didax._src.config import enable_x64
from didax._src.public_test_util import check_grads

MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]


def _coords(shape, seed=0, n=7):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2.5, s + 1.5, n).astype(np.float32) for s in shape]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("shape", [(6,), (4, 5), (3, 4, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_matches_jax(shape, order, mode, dtype):
    x = (np.random.default_rng(1).standard_normal(shape) * 10).astype(dtype)
    c = _coords(shape)
    got = dnd.map_coordinates(x, c, order, mode=mode, cval=1.5)
    want = jax.scipy.ndimage.map_coordinates(x, c, order, mode=mode, cval=1.5)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["constant", "nearest", "mirror", "reflect"])
@pytest.mark.parametrize("order", [0, 1])
def test_matches_scipy(order, mode):
    x = np.random.default_rng(2).standard_normal((5, 6))
    # away from half-integers (where rounding conventions differ) and the 'constant' edge
    c = [np.array([0.3, 1.7, 3.2, 3.9, -0.7, 5.6]), np.array([0.2, 4.6, 2.2, -1.3, 5.4, 2.9])]
    if mode == "constant":
        c = [np.clip(ci, 0, 3.9) for ci in c]
    want = scipy.ndimage.map_coordinates(x, np.array(c), order=order, mode=mode,
                                         cval=0.5)
    np.testing.assert_allclose(dnd.map_coordinates(x, c, order, mode=mode, cval=0.5), want,
                               rtol=1e-6, atol=1e-6)


def test_grads_and_jit():
    with enable_x64(True):
        x = np.random.default_rng(3).standard_normal((4, 5))
        c = [np.array([0.3, 1.7, 2.2]), np.array([0.4, 3.1, 1.6])]
        for mode in MODES:
            check_grads(lambda x, c0, c1: dnd.map_coordinates(x, [c0, c1], 1, mode=mode),
                        (x, *c), order=2)
            f = didax.jit(lambda x, c: dnd.map_coordinates(x, c, 1, mode=mode, cval=2.0))
            np.testing.assert_allclose(f(x, c), dnd.map_coordinates(x, c, 1, mode=mode,
                                                                    cval=2.0), rtol=1e-12)


def test_errors():
    x = np.ones((3, 3))
    with pytest.raises(ValueError, match="length input.ndim"):
        dnd.map_coordinates(x, [np.zeros(2)], 1)
    with pytest.raises(NotImplementedError, match="order"):
        dnd.map_coordinates(x, [np.zeros(2)] * 2, 3)
    with pytest.raises(NotImplementedError, match="mode"):
        dnd.map_coordinates(x, [np.zeros(2)] * 2, 1, mode="grid-wrap")
