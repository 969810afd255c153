"""didax.scipy.sparse.linalg (cg, bicgstab, gmres) against jax.scipy.sparse.linalg 0.10.2
and exact solves: matrices and functions, pytrees, preconditioners, x0, tolerances and
maxiter; implicit derivatives of order 2 in both modes, under jit, and vmap against a loop."""
import jax
import jax.numpy as jjnp
import jax.scipy.sparse.linalg as jsl
import numpy as np
import pytest

import didax
import didax.numpy as jnp
import didax.scipy.sparse.linalg as dsl
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((5, 5))
SPD = _A @ _A.T + 5 * np.eye(5)
GEN = _A + 5 * np.eye(5)
B = _RNG.standard_normal(5)
SOLVERS = {"cg": SPD, "bicgstab": GEN, "gmres": GEN}


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


@pytest.mark.parametrize("name", list(SOLVERS))
def test_solves_match_exact_and_jax(name):
    a = SOLVERS[name]
    want = np.linalg.solve(a, B)
    ours, theirs = getattr(dsl, name), getattr(jsl, name)
    x, info = ours(a, B, tol=1e-10)
    assert info is None
    np.testing.assert_allclose(np.asarray(x), want, atol=1e-9)
    x = ours(lambda v: jnp.asarray(a) @ v, B, tol=1e-10, M=np.diag(1 / np.diag(a)))[0]
    np.testing.assert_allclose(np.asarray(x), want, atol=1e-9)
    x = ours(a, B, x0=want + 0.1, tol=1e-10)[0]
    np.testing.assert_allclose(np.asarray(x), want, atol=1e-9)
    with jax.enable_x64(True):
        ref = theirs(a, B, tol=1e-10)[0]
        np.testing.assert_allclose(np.asarray(x), np.asarray(ref), atol=1e-9)
        # a float32 system keeps its dtype, as in JAX
        assert ours(a.astype(np.float32), B.astype(np.float32))[0].dtype == theirs(
            jjnp.asarray(a, np.float32), jjnp.asarray(B, np.float32))[0].dtype


@pytest.mark.parametrize("name", list(SOLVERS))
def test_maxiter_and_tolerances(name):
    a = SOLVERS[name]
    ours, theirs = getattr(dsl, name), getattr(jsl, name)
    kw = dict(maxiter=1, restart=2) if name == "gmres" else dict(maxiter=2)
    with jax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(ours(a, B, **kw)[0]),
                                   np.asarray(theirs(a, B, **kw)[0]), rtol=1e-8, atol=1e-10)
    loose = ours(a, B, tol=0.0, atol=10.0)[0]  # met at once by x0 = 0
    np.testing.assert_array_equal(np.asarray(loose), np.zeros(5))


@pytest.mark.parametrize("name", list(SOLVERS))
def test_pytrees_and_complex(name):
    a = SOLVERS[name]
    b = {"u": B[:2], "v": B[2:]}

    def matvec(t):
        y = jnp.asarray(a) @ jnp.concatenate([t["u"], t["v"]])
        return {"u": y[:2], "v": y[2:]}

    x = getattr(dsl, name)(matvec, b, tol=1e-10)[0]
    want = np.linalg.solve(a, B)
    np.testing.assert_allclose(np.asarray(x["u"]), want[:2], atol=1e-9)
    np.testing.assert_allclose(np.asarray(x["v"]), want[2:], atol=1e-9)
    c = a + 1j * (_A - _A.T)  # Hermitian (as cg needs) when a is symmetric
    bc = B + 1j * B[::-1]
    x = getattr(dsl, name)(c, bc, tol=1e-12)[0]
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(c, bc), atol=1e-9)


@pytest.mark.parametrize("name", list(SOLVERS))
def test_implicit_derivatives(name):
    a = SOLVERS[name]

    def f(a, b):
        return getattr(dsl, name)(lambda v: a @ v, b, tol=1e-12)[0]

    check_grads(f, (a, B), 2)
    grad = didax.jit(didax.grad(lambda a, b: jnp.sum(f(a, b) ** 2), argnums=(0, 1)))
    ga, gb = grad(a, B)
    x = np.linalg.solve(a, B)
    lam = np.linalg.solve(a.T, 2 * x)
    np.testing.assert_allclose(np.asarray(gb), lam, rtol=1e-8)
    np.testing.assert_allclose(np.asarray(ga), -np.outer(lam, x), rtol=1e-8)


def test_vmap_matches_a_loop():
    bs = np.stack([B, 2 * B, B[::-1]])
    for name, a in SOLVERS.items():
        solve = getattr(dsl, name)
        got = didax.vmap(lambda b, solve=solve, a=a: solve(a, b, tol=1e-10)[0])(bs)
        want = jnp.stack([solve(a, b, tol=1e-10)[0] for b in bs])
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-9)


def test_errors():
    with pytest.raises(ValueError, match="square"):
        dsl.cg(np.ones((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="structure"):
        dsl.cg(lambda v: (v, v), np.ones(3))
    with pytest.raises(ValueError, match="shapes"):
        dsl.bicgstab(SPD, B, x0=np.ones(3))
    with pytest.raises(TypeError, match="matrix or a function"):
        dsl.gmres("A", B)
    with pytest.raises(ValueError, match="solve_method"):
        dsl.gmres(GEN, B, solve_method="qr")
