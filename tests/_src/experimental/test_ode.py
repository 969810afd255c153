"""didax.experimental.ode.odeint against jax 0.10.2 (values, dtypes, and the adjoint
gradients with respect to y0, t and args), against closed forms, on pytree states, with
closures over differentiated values, under jit, order-2 reverse derivatives, and errors."""
import jax
import jax.experimental.ode as jode
import numpy as np
import pytest

import didax
import didax.experimental.ode as dode
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads


@pytest.fixture
def x64():
    with enable_x64(True), jax.enable_x64(True):
        yield


def decay(y, t, a, np_=jnp):
    return -a * y + np_.sin(t)


def _jdecay(y, t, a):
    return decay(y, t, a, jax.numpy)


T = np.linspace(0., 2., 5)
Y0 = np.array([1., 2.])


def test_values_and_gradients_match_jax(x64):
    ys = dode.odeint(decay, Y0, T, 0.7)
    yj = jode.odeint(_jdecay, Y0, T, 0.7)
    assert ys.shape == yj.shape and ys.dtype == yj.dtype
    np.testing.assert_allclose(ys, yj, rtol=1e-12, atol=1e-12)
    g = didax.grad(lambda y0, t, a: (dode.odeint(decay, y0, t, a) ** 2).sum(),
                   (0, 1, 2))(Y0, T, 0.7)
    gj = jax.grad(lambda y0, t, a: (jode.odeint(_jdecay, y0, t, a) ** 2).sum(),
                  (0, 1, 2))(Y0, T, 0.7)
    for u, v in zip(g, gj):
        np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)


def test_options_match_jax(x64):
    for kw in ({"rtol": 1e-4, "atol": 1e-5}, {"hmax": 0.05}, {"mxstep": 3}):
        np.testing.assert_allclose(dode.odeint(decay, Y0, T, 0.7, **kw),
                                   jode.odeint(_jdecay, Y0, T, 0.7, **kw), rtol=1e-12,
                                   atol=1e-12)


def test_float32_and_jit():
    t = T.astype(np.float32)
    y0 = Y0.astype(np.float32)
    ys = dode.odeint(decay, y0, t, np.float32(0.7))
    yj = jode.odeint(_jdecay, y0, t, np.float32(0.7))
    assert ys.dtype == yj.dtype == np.float32
    np.testing.assert_allclose(ys, yj, rtol=1e-5, atol=1e-6)
    jitted = didax.jit(lambda y0, a: dode.odeint(decay, y0, t, a))(y0, np.float32(0.7))
    np.testing.assert_allclose(jitted, ys, rtol=1e-5, atol=1e-6)


def test_pytree_state_and_closed_form(x64):
    def oscillator(s, t):
        return {"x": s["v"], "v": -s["x"]}
    out = dode.odeint(oscillator, {"x": 1., "v": 0.}, T)
    np.testing.assert_allclose(out["x"], np.cos(T), atol=1e-7)
    np.testing.assert_allclose(out["v"], -np.sin(T), atol=1e-7)


def test_closure_and_second_order(x64):
    def f(k):  # the dynamics close over a differentiated value
        return dode.odeint(lambda y, t: -k * y, 1.0, np.array([0., 1.]))[-1]
    np.testing.assert_allclose(f(0.5), np.exp(-0.5), rtol=1e-7)
    np.testing.assert_allclose(didax.grad(f)(0.5), -np.exp(-0.5), rtol=1e-6)
    check_grads(lambda y0, a: dode.odeint(decay, y0, np.array([0., 0.5, 1.]), a), (Y0, 0.7),
                order=2, modes=("rev",), atol=1e-5, rtol=1e-5)


def test_errors():
    with pytest.raises(TypeError, match="floats"):
        dode.odeint(decay, Y0, np.arange(3), 0.7)
    with pytest.raises(TypeError, match="arrays or scalars"):
        dode.odeint(decay, Y0, T, "a")
