"""didax.image (resize, scale_and_translate, ResizeMethod) against jax 0.10.2: every method
and its aliases, up- and downsampling with and without antialiasing, dtypes, gradients of
order 2 in float64, jit, and errors."""
import jax
import jax.image
import numpy as np
import pytest

import didax
import didax.image as di
from didax._src.config import enable_x64
from didax._src.public_test_util import check_grads

METHODS = ["nearest", "linear", "bilinear", "trilinear", "triangle", "cubic", "bicubic",
           "lanczos3", "lanczos5", "cubic-pytorch", "area"]
SHAPES = [(10, 14, 3), (3, 4, 3), (8, 3, 3), (5, 7, 3), (1, 9, 3)]


def _image(seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal((5, 7, 3)).astype(dtype)


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", SHAPES)
def test_resize_matches_jax(shape, method, antialias):
    x = _image()
    got = di.resize(x, shape, method, antialias=antialias)
    want = jax.image.resize(x, shape, method, antialias=antialias)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_resize_method_enum_and_dtypes():
    assert [m.name for m in di.ResizeMethod] == [m.name for m in jax.image.ResizeMethod]
    assert [m.value for m in di.ResizeMethod] == [m.value for m in jax.image.ResizeMethod]
    assert di.ResizeMethod.from_string("bicubic") is di.ResizeMethod.CUBIC
    x = _image()
    np.testing.assert_allclose(di.resize(x, (9, 4, 3), di.ResizeMethod.LANCZOS3),
                               jax.image.resize(x, (9, 4, 3), jax.image.ResizeMethod.LANCZOS3),
                               rtol=1e-5, atol=1e-5)
    ints = np.arange(12).reshape(3, 4)
    for method in ("nearest", "linear"):
        got, want = di.resize(ints, (6, 8), method), jax.image.resize(ints, (6, 8), method)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5",
                                    "cubic-pytorch", "area"])
def test_scale_and_translate_matches_jax(method, antialias):
    x = _image(1)
    for scale, translation in [([1.7, 0.6], [0.3, -1.2]), ([0.5, 2.0], [1.0, 0.0])]:
        args = (x, (9, 5, 3), (0, 1), np.array(scale, np.float32),
                np.array(translation, np.float32), method)
        got = di.scale_and_translate(*args, antialias=antialias)
        want = jax.image.scale_and_translate(*args, antialias=antialias)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_grads_and_jit():
    with enable_x64(True):
        x = _image(2, np.float64)[:, :, 0]
        for method in ("linear", "cubic", "lanczos3", "area", "nearest"):
            check_grads(lambda x: di.resize(x, (7, 4), method), (x,), order=2)
            f = didax.jit(lambda x: di.resize(x, (7, 4), method))
            np.testing.assert_allclose(f(x), di.resize(x, (7, 4), method), rtol=1e-12)
        check_grads(lambda x, s, t: di.scale_and_translate(x, (6, 9), (0, 1), s, t, "linear"),
                    (x, np.array([1.3, 1.6]), np.array([0.2, -0.4])), order=2)


def test_errors():
    x = _image()
    with pytest.raises(ValueError, match="Unknown resize method"):
        di.resize(x, (2, 2, 3), "bogus")
    with pytest.raises(ValueError, match="length equal"):
        di.resize(x, (2, 2), "linear")
    with pytest.raises(ValueError, match="Nearest"):
        di.scale_and_translate(x, (2, 2, 3), (0, 1), np.ones(2), np.zeros(2), "nearest")
