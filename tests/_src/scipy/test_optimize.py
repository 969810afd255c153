"""didax.scipy.optimize.minimize against jax.scipy.optimize 0.10.2 (results, fields, dtypes,
options, errors) and scipy.optimize (minima where JAX's line search gives up), under jit and
vmap."""
import jax
import jax.numpy as jjnp
import jax.scipy.optimize as jso
import numpy as np
import pytest
import scipy.optimize as so

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax.scipy.optimize import OptimizeResults, minimize

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def _smooth(np_):
    return lambda x, a: np_.sum((x - a) ** 2) + np_.sum(x ** 4)


def _rosen(x):
    return jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("options", [None, {"gtol": 1e-8}, {"norm": 2}])
def test_bfgs_matches_jax(options):
    a = np.arange(3.0)
    with enable_x64(True), jax.enable_x64(True):
        got = minimize(_smooth(jnp), np.zeros(3), args=(a,), method="BFGS", options=options)
        want = jso.minimize(_smooth(jjnp), jjnp.zeros(3), args=(jjnp.asarray(a),),
                            method="BFGS", options=options)
        assert isinstance(got, OptimizeResults) and got._fields == want._fields
        gtol = (options or {}).get("gtol", 1e-5)
        np.testing.assert_allclose(np.asarray(got.x), np.asarray(want.x), atol=10 * gtol)
        np.testing.assert_allclose(float(got.fun), float(want.fun), rtol=1e-6)
        assert bool(got.success) and int(got.status) == 0 == int(want.status)
        assert np.max(np.abs(np.asarray(got.jac))) < gtol * (1 if options != {"norm": 2}
                                                              else 10)
        for name in ("nfev", "njev", "nit"):
            assert 0 < int(getattr(got, name)) <= 40
        # the inverse Hessian estimate approaches the true one where x moved (x[0] stays 0,
        # its gradient being 0 throughout, so the estimate keeps its start there)
        h = np.diag(2 + 12 * np.asarray(got.x) ** 2)
        np.testing.assert_allclose((np.asarray(got.hess_inv) @ h)[1:, 1:], np.eye(2),
                                   atol=0.2)


def test_dtypes_match_jax():
    f = lambda np_: lambda x: np_.sum((x - 1) ** 2)  # noqa: E731
    got = minimize(f(jnp), np.ones(3, np.float32) * 3, method="BFGS")
    want = jso.minimize(f(jjnp), jjnp.ones(3, np.float32) * 3, method="BFGS")
    for name in ("x", "fun", "jac", "hess_inv", "status", "nit", "success"):
        assert np.asarray(getattr(got, name)).dtype == np.asarray(getattr(want, name)).dtype
    np.testing.assert_allclose(np.asarray(got.x), np.asarray(want.x), atol=1e-6)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
@pytest.mark.parametrize("x0", [[-1.2, 1.0], [0.5, 0.5, 0.5, 0.5], [0.0, 0.0, 0.0]])
def test_rosenbrock_reaches_scipys_minimum(method, x0):
    with enable_x64(True):
        got = minimize(_rosen, np.array(x0), method=method)
    want = so.minimize(so.rosen, np.array(x0), method="BFGS")
    assert bool(got.success) and want.success
    np.testing.assert_allclose(np.asarray(got.x), want.x, atol=1e-4)
    assert (got.hess_inv is None) == (method == LBFGS)


def test_iteration_limit_and_start_at_minimum():
    with enable_x64(True):
        r = minimize(_rosen, np.zeros(3), method="BFGS", options={"maxiter": 3})
        assert int(r.status) == 1 and not bool(r.success) and int(r.nit) == 3
        r = minimize(_rosen, np.ones(3), method="BFGS")
        assert int(r.status) == 0 and int(r.nit) == 0 and int(r.nfev) == 1


def test_jit_and_vmap():
    with enable_x64(True):
        solve = didax.jit(lambda x0: minimize(_rosen, x0, method="BFGS").x)
        np.testing.assert_allclose(np.asarray(solve(np.array([-1.2, 1.0]))), [1, 1], atol=1e-4)
        starts = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 2.0]])
        a = np.arange(3.0)
        batched = didax.vmap(lambda x0: minimize(_smooth(jnp), x0, args=(a,),
                                                 method="BFGS").x)(starts)
        for row, x0 in zip(np.asarray(batched), starts):
            np.testing.assert_allclose(
                row, np.asarray(minimize(_smooth(jnp), x0, args=(a,), method="BFGS").x),
                atol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="1-D"):
        minimize(_rosen, np.zeros((2, 2)), method="BFGS")
    with pytest.raises(ValueError, match="not supported"):
        minimize(_rosen, np.zeros(2), method="CG")
    with pytest.raises(TypeError, match="unknown options"):
        minimize(_rosen, np.zeros(2), method="BFGS", options={"foo": 1})
    with pytest.raises(ValueError, match="scalar"):
        minimize(lambda x: x, np.zeros(2), method="BFGS")
