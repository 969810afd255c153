"""didax.scipy.ndimage.map_coordinates against jax.scipy.ndimage 0.10.2 and scipy.ndimage
(its 'grid-' modes): orders 0 and 1, every mode, dtypes, derivatives of order 2 in both
modes, vmap, and errors."""
import jax.numpy as jjnp
import jax.scipy.ndimage as jnd
import numpy as np
import pytest
import scipy.ndimage as snd

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads
from didax.scipy.ndimage import map_coordinates

X = np.arange(12.0, dtype=np.float32).reshape(3, 4)
COORDS = [np.array([-1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.7, 0.3], np.float32),
          np.array([-2.2, -0.5, 0.5, 1.5, 2.5, 3.5, 5.1, 2.9], np.float32)]
SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "mirror": "mirror",
              "wrap": "grid-wrap", "reflect": "reflect"}


@pytest.mark.parametrize("order", [0, 1])
def test_matches_jax_and_scipy(order):
    # SciPy rounds halves its own way at order 0: no halves in what is compared with it
    x64 = X.astype(np.float64)
    c64 = [c.astype(np.float64) + (0.1 if order == 0 else 0.0) for c in COORDS]
    for mode in SCIPY_MODE:
        got = map_coordinates(X, COORDS, order, mode=mode, cval=-7.0)
        want = jnd.map_coordinates(jjnp.asarray(X), [jjnp.asarray(c) for c in COORDS], order,
                                   mode=mode, cval=-7.0)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=2e-6)
        with enable_x64(True):
            got = map_coordinates(x64, c64, order, mode=mode, cval=-7.0)
        np.testing.assert_allclose(
            np.asarray(got), snd.map_coordinates(x64, np.array(c64), order=order,
                                                 mode=SCIPY_MODE[mode], cval=-7.0),
            atol=1e-12)


def test_dtypes_shapes_and_rounding():
    ints = np.array([0, 1, 3])
    for order in (0, 1):
        got = map_coordinates(ints, [np.array([0.5, 0.25, 1.5, -0.6])], order)
        want = jnd.map_coordinates(jjnp.asarray(ints), [jjnp.array([0.5, 0.25, 1.5, -0.6])],
                                   order)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    c = [np.array([[0.5, 1.0]]), np.array([[0.25, 2.0]])]
    got = map_coordinates(X.astype(np.float16), c, 1)
    assert got.shape == (1, 2) and got.dtype == np.float16
    z = X + 1j * X[::-1]
    np.testing.assert_allclose(
        np.asarray(map_coordinates(z, COORDS, 1, mode="wrap")),
        np.asarray(jnd.map_coordinates(jjnp.asarray(z), [jjnp.asarray(c) for c in COORDS], 1,
                                       mode="wrap")), atol=1e-5)
    assert float(map_coordinates(np.array([0.0, 1.0]), [1.3], 1)) == pytest.approx(0.7, 1e-6)


def test_derivatives_and_vmap():
    with enable_x64(True):
        x = X.astype(np.float64)
        c = [np.array([0.3, 1.7, 2.2]), np.array([0.6, 2.4, -0.3])]
        for mode in SCIPY_MODE:
            check_grads(lambda v, a, b, mode=mode: map_coordinates(v, [a, b], 1, mode=mode),
                        (x, *c), 2)
        many = np.stack([x, 2 * x + 1])
        got = didax.vmap(lambda v: map_coordinates(v, c, 1, mode="reflect"))(many)
        want = jnp.stack([map_coordinates(v, c, 1, mode="reflect") for v in many])
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))
        rows = didax.vmap(lambda a: map_coordinates(x, [a, c[1]], 0))(np.stack(c[:1] * 2))
        np.testing.assert_allclose(np.asarray(rows[1]), np.asarray(map_coordinates(x, c, 0)))


def test_errors():
    with pytest.raises(NotImplementedError, match="order=2"):
        map_coordinates(X, COORDS, 2)
    with pytest.raises(NotImplementedError, match="mode"):
        map_coordinates(X, COORDS, 1, mode="grid-wrap")
    with pytest.raises(ValueError, match="length input.ndim"):
        map_coordinates(X, COORDS[:1], 1)
