"""didax.scipy.optimize.minimize (BFGS) against jax 0.10.2 (every OptimizeResults field, in
float64 where the iterations agree to rounding) and SciPy (the minimizer), jit, args,
options and errors."""
import jax
import jax.scipy.optimize
import numpy as np
import pytest
import scipy.optimize

import didax
import didax.numpy as jnp
import didax.scipy.optimize as dopt
from didax._src.config import enable_x64


def rosen(x, np_=jnp):
    return np_.sum(100. * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quad(x, a, np_=jnp):
    return np_.dot(x - a, x - a) + np_.sum(np_.cos(x))


@pytest.fixture
def x64():
    with enable_x64(True), jax.enable_x64(True):
        yield


def _compare(r, rj, tol=1e-8):
    assert type(r).__name__ == "OptimizeResults" and r._fields == rj._fields
    for f in rj._fields:
        got, want = np.asarray(getattr(r, f)), np.asarray(getattr(rj, f))
        assert got.dtype == want.dtype and got.shape == want.shape, f
        np.testing.assert_allclose(got.astype(float), want.astype(float), rtol=tol, atol=tol,
                                   err_msg=f)


@pytest.mark.parametrize("x0", [[-1.2, 1.0], [-1.2, 1.0, 0.5, 0.3], [2.0, 2.0, 2.0],
                                [0.5, 0.5, 0.5]])
def test_rosenbrock_matches_jax_and_scipy(x64, x0):
    x0 = np.array(x0)
    r = dopt.minimize(rosen, x0, method="BFGS")
    rj = jax.scipy.optimize.minimize(lambda x: rosen(x, jax.numpy), x0, method="BFGS")
    _compare(r, rj, tol=1e-6)  # JAX's line search fails (status 3) on most of these: so do we
    if bool(r.success):
        np.testing.assert_allclose(r.x, scipy.optimize.minimize(
        lambda x: rosen(x, np), x0, method="BFGS").x, atol=1e-4)


def test_args_options_and_jit(x64):
    a = np.array([0.5, -1.0, 2.0])
    x0 = np.zeros(3)
    opts = {"maxiter": 3, "gtol": 1e-9, "line_search_maxiter": 5}
    r = dopt.minimize(quad, x0, (a,), method="bfgs", options=opts)
    rj = jax.scipy.optimize.minimize(lambda x, a: quad(x, a, jax.numpy), x0, (a,),
                                     method="bfgs", options=opts)
    _compare(r, rj)
    assert int(r.nit) == 3 and int(r.status) == 1 and not bool(r.success)
    jitted = didax.jit(lambda x0, a: dopt.minimize(quad, x0, (a,), method="BFGS"))(x0, a)
    _compare(jitted, dopt.minimize(quad, x0, (a,), method="BFGS"), tol=1e-12)


def test_float32():
    x0 = np.array([-1.2, 1.0], np.float32)
    r = dopt.minimize(rosen, x0, method="BFGS")
    rj = jax.scipy.optimize.minimize(lambda x: rosen(x, jax.numpy), x0, method="BFGS")
    for f in rj._fields:
        assert np.asarray(getattr(r, f)).dtype == np.asarray(getattr(rj, f)).dtype, f
    np.testing.assert_allclose(r.x, rj.x, atol=1e-3)
    assert bool(r.success) == bool(rj.success)


def test_errors():
    with pytest.raises(TypeError, match="tuple"):
        dopt.minimize(rosen, np.zeros(2), args=[1], method="BFGS")
    with pytest.raises(ValueError, match="not recognized"):
        dopt.minimize(rosen, np.zeros(2), method="Nelder-Mead")
