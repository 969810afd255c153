"""didax.image against jax.image 0.10.2: resize with every method (antialiased or not,
up and down, int inputs), scale_and_translate, ResizeMethod's names; derivatives of order 2
in both modes (image, scale, translation), vmap and jit, and errors."""
import jax.image as jim
import numpy as np
import pytest

import didax
import didax.image as dim
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

_RNG = np.random.default_rng(0)
IMG = _RNG.standard_normal((5, 7, 2)).astype(np.float32)
METHODS = ["nearest", "linear", "cubic", "cubic-pytorch", "lanczos3", "lanczos5", "area"]


def _same(got, want, atol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, atol=atol)


@pytest.mark.parametrize("method", METHODS)
def test_resize_matches_jax(method):
    for shape, antialias in [((10, 3, 2), True), ((3, 14, 2), False)]:
        _same(dim.resize(IMG, shape, method, antialias=antialias),
              jim.resize(IMG, shape, method, antialias=antialias))


def test_scale_and_translate_matches_jax():
    cases = [("cubic", (0.4, 2.0), (1.0, 0.5), True), ("area", (1.5, 0.7), (0.3, -1.0), True),
             ("cubic-pytorch", (0.5, 1.0), (2.5, -3.2), False)]
    for method, scale, shift, antialias in cases:
        args = ((6, 9, 2), (0, 1), np.array(scale, np.float32), np.array(shift, np.float32),
                method)
        _same(dim.scale_and_translate(IMG, *args, antialias=antialias),
              jim.scale_and_translate(IMG, *args, antialias=antialias))


def test_integer_images_and_method_names():
    ints = np.arange(20).reshape(4, 5)
    for method in ("nearest", "bilinear"):
        _same(dim.resize(ints, (7, 3), method), jim.resize(ints, (7, 3), method))
    assert [m.name for m in dim.ResizeMethod] == [m.name for m in jim.ResizeMethod]
    for name in ("trilinear", "triangle", "bicubic", "tricubic", "bicubic-pytorch"):
        assert dim.ResizeMethod.from_string(name).name == jim.ResizeMethod.from_string(name).name
    _same(dim.resize(IMG, (3, 3, 2), dim.ResizeMethod.LANCZOS3),
          jim.resize(IMG, (3, 3, 2), jim.ResizeMethod.LANCZOS3))


def test_derivatives():
    with enable_x64(True):
        img = IMG[..., 0].astype(np.float64)
        check_grads(lambda x: dim.resize(x, (3, 9), "linear"), (img,), 2)
        check_grads(lambda x: dim.resize(x, (8, 4), "lanczos3", antialias=False), (img,), 2)

        def warp(scale, shift):
            return dim.scale_and_translate(img, (6, 6), (0, 1), scale, shift, "cubic")

        check_grads(warp, (np.array([1.3, 0.7]), np.array([0.37, -0.41])), 2, atol=1e-4,
                    rtol=1e-4)


def test_vmap_and_jit():
    batch = np.stack([IMG, 2 * IMG])
    got = didax.vmap(lambda x: dim.resize(x, (3, 4, 2), "cubic"))(batch)
    _same(got, jnp.stack([dim.resize(x, (3, 4, 2), "cubic") for x in batch]))
    jitted = didax.jit(lambda x, s: dim.scale_and_translate(x, (6, 9, 2), (0, 1), s,
                                                            jnp.zeros(2), "linear"))
    s = np.array([1.2, 1.3], np.float32)
    _same(jitted(IMG, s), dim.scale_and_translate(IMG, (6, 9, 2), (0, 1), s, np.zeros(2),
                                                  "linear"))


def test_errors():
    with pytest.raises(ValueError, match="Unknown resize method"):
        dim.resize(IMG, (2, 2, 2), "bogus")
    with pytest.raises(ValueError, match="one entry per image dimension"):
        dim.resize(IMG, (2, 2), "linear")
    with pytest.raises(ValueError, match="nearest"):
        dim.scale_and_translate(IMG, (5, 7, 2), (0,), np.ones(1), np.zeros(1), "nearest")
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        dim.scale_and_translate(IMG, (5, 7, 2), (0, 1), np.ones(1), np.zeros(2), "linear")
    with pytest.raises(ValueError, match="not spatial"):
        dim.scale_and_translate(IMG, (5, 7, 3), (0, 1), np.ones(2), np.zeros(2), "linear")
