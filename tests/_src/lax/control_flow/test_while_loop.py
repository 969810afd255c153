"""lax.while_loop: values and forward derivatives against the Python loop, reverse mode
(beyond JAX: by recording the iterates of the forward loop), vmap with per-lane trip counts,
printing, and errors."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def cond(s):
    return s[0] < 10.0


def body(s):
    return s[0] * 1.5 + 0.1, s[1] + jnp.sin(s[0]) * s[0]


def f(x):
    return lax.while_loop(cond, body, (x, 0.0))


def f_py(x):
    s = (x, 0.0)
    while s[0] < 10.0:  # (bool of a comparison: float() would drop the tangent)
        s = body(s)
    return s


@pytest.mark.parametrize("x", [0.7, 3.0, 12.0])
def test_values_and_derivatives_match_the_python_loop(x):
    for a, b in zip(f(x), f_py(x)):
        assert np.isclose(float(a), float(b), rtol=1e-13)
    jvp = jax.jvp(lambda v: f(v)[1], (x,), (1.0,))[1]
    assert np.isclose(float(jvp), float(jax.jvp(lambda v: f_py(v)[1], (x,), (1.0,))[1]))
    grad = jax.grad(lambda v: f(v)[1])(x)  # JAX refuses reverse mode here
    assert np.isclose(float(grad), float(jax.grad(lambda v: f_py(v)[1])(x)), rtol=1e-12)


def test_check_grads_to_second_order():
    check_grads(lambda v: f(v)[1], (np.float64(0.7),), order=2)


def test_vmap_with_per_lane_trip_counts():
    xs = np.array([0.7, 3.0, 20.0, 9.5])
    out = jax.vmap(lambda v: f(v)[1])(xs)
    np.testing.assert_allclose(np.asarray(out), [float(f_py(v)[1]) for v in xs], rtol=1e-13)
    expected = [float(jax.grad(lambda v: f_py(v)[1])(v)) for v in xs]
    t = jax.vmap(lambda v: jax.jvp(lambda u: f(u)[1], (v,), (1.0,))[1])(xs)
    np.testing.assert_allclose(np.asarray(t), expected, rtol=1e-12)
    g = jax.grad(lambda v: jnp.sum(jax.vmap(lambda u: f(u)[1])(v)))(xs)  # lanes stop apart
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-12)


def test_printing():
    text = str(jax.make_jaxpr(f)(0.7))
    assert "while[" in text and "body_nconsts=0" in text and "cond_nconsts=0" in text
    assert text.index("body_jaxpr=") < text.index("cond_jaxpr=")


def test_errors():
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(lambda s: s, lambda s: s, 1.0)
    with pytest.raises(TypeError, match=r"carry 0 goes in as f64\[\] and comes out as "
                                        r"f64\[2\]"):
        lax.while_loop(lambda s: False, lambda s: s * np.ones(2), np.float64(1.0))
    with pytest.raises(ValueError, match="snapshots must be an int >= 2"):
        lax.while_loop(cond, body, (0.7, 0.0), snapshots=1)
