"""didax.scipy.sparse.linalg (cg, bicgstab, gmres) against jax 0.10.2 and NumPy: values on
arrays and pytrees, preconditioners, (x, info), jit, and implicit reverse-mode derivatives
(order 2) with respect to b and the operator's parameters."""
import jax
import jax.scipy.sparse.linalg as jsl
import numpy as np
import pytest

import didax
import didax.numpy as jnp
import didax.scipy.sparse.linalg as dsl
from didax._src.config import enable_x64
from didax._src.public_test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True), jax.enable_x64(True):
        yield


def _problem(n=5, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n), a + n * np.eye(n), rng.standard_normal(n)


SOLVERS = [("cg", {}), ("bicgstab", {}), ("gmres", {}),
           ("gmres", {"solve_method": "incremental"}), ("gmres", {"restart": 2})]


def _matrix(name, spd, gen):
    return spd if name == "cg" else gen


@pytest.mark.parametrize("name,kw", SOLVERS)
def test_matches_jax(name, kw):
    spd, gen, b = _problem()
    a = _matrix(name, spd, gen)
    x, info = getattr(dsl, name)(a, b, **kw)
    xj, infoj = getattr(jsl, name)(a, b, **kw)
    np.testing.assert_allclose(x, xj, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-5, atol=1e-6)
    assert (info is None) == (infoj is None)
    if info is not None:
        assert int(info) == int(infoj) == 0
    x2, _ = getattr(dsl, name)(lambda v: jnp.dot(a, v), b, x0=np.ones(5), tol=1e-8, **kw)
    xj2, _ = getattr(jsl, name)(lambda v: jax.numpy.dot(a, v), b, x0=np.ones(5), tol=1e-8, **kw)
    np.testing.assert_allclose(x2, xj2, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,kw", SOLVERS)
def test_preconditioner_maxiter_and_jit(name, kw):
    spd, gen, b = _problem(6, 1)
    a = _matrix(name, spd, gen)
    m = np.diag(1 / np.diag(a))
    x, _ = getattr(dsl, name)(a, b, M=m, **kw)
    xj, _ = getattr(jsl, name)(a, b, M=m, **kw)
    np.testing.assert_allclose(x, xj, rtol=1e-9, atol=1e-12)
    x, _ = getattr(dsl, name)(a, b, maxiter=1, **kw)
    xj, _ = getattr(jsl, name)(a, b, maxiter=1, **kw)
    np.testing.assert_allclose(x, xj, rtol=1e-9, atol=1e-12)
    jitted = didax.jit(lambda b: getattr(dsl, name)(a, b, **kw)[0])
    np.testing.assert_allclose(jitted(b), getattr(dsl, name)(a, b, **kw)[0], rtol=1e-12)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_pytree_b(name):
    spd, gen, b = _problem()
    a = _matrix(name, spd, gen)

    def mv(t):
        v = jnp.concatenate([t["u"], t["v"].ravel()])
        w = jnp.dot(a, v)
        return {"u": w[:2], "v": w[2:].reshape(3, 1)}
    tb = {"u": b[:2], "v": b[2:].reshape(3, 1)}
    x, _ = getattr(dsl, name)(mv, tb)
    want = np.linalg.solve(a, b)
    np.testing.assert_allclose(x["u"], want[:2], rtol=1e-5)
    np.testing.assert_allclose(x["v"].ravel(), want[2:], rtol=1e-5)
    with pytest.raises(ValueError, match="tree structure"):
        getattr(dsl, name)(mv, tb, x0={"u": b[:2]})


@pytest.mark.parametrize("name,kw", SOLVERS[:4])
def test_implicit_gradients(name, kw):
    spd, gen, b = _problem(4, 2)
    a = _matrix(name, spd, gen)

    def f(a, b):
        return getattr(dsl, name)(lambda v: jnp.dot(a, v), b, tol=1e-12, **kw)[0]

    def fj(a, b):
        return getattr(jsl, name)(lambda v: jax.numpy.dot(a, v), b, tol=1e-12, **kw)[0]
    g = didax.grad(lambda a, b: f(a, b).sum() ** 2, (0, 1))(a, b)
    gj = jax.grad(lambda a, b: fj(a, b).sum() ** 2, (0, 1))(a, b)
    for u, v in zip(g, gj):
        np.testing.assert_allclose(u, v, rtol=1e-8, atol=1e-10)
    check_grads(f, (a, b), order=2, modes=("rev",), atol=1e-5, rtol=1e-5)


def test_forward_mode_is_not_supported():
    spd, _, b = _problem()
    with pytest.raises(Exception):
        didax.jvp(lambda b: dsl.cg(spd, b)[0], (b,), (b,))


def test_errors():
    _, gen, b = _problem()
    with pytest.raises(ValueError, match="square"):
        dsl.cg(np.ones((2, 3)), b)
    with pytest.raises(ValueError, match="solve_method"):
        dsl.gmres(gen, b, solve_method="nope")
    with pytest.raises(ValueError, match="shapes"):
        dsl.cg(gen, b, x0=np.ones(4))
