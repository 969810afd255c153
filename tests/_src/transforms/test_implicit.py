"""lax.custom_linear_solve and lax.custom_root against JAX: values, forward and reverse
derivatives to second order (implicit: the solvers are never differentiated), pytrees."""
import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax.test_util import check_grads

A = np.array([[3.0, 1.0, 0.0], [0.5, 2.0, 0.3], [0.0, -0.4, 1.5]], np.float32)
B = np.array([1.0, -1.0, 0.5], np.float32)


def _lin(j, m, lx):
    def lin(a, b):
        return lx.custom_linear_solve(lambda x: a @ x, b,
                                      lambda mv, r: m.linalg.solve(a, r),
                                      lambda vm, r: m.linalg.solve(a.T, r))
    return lin


def _cg_lin(j, m, lx):
    """A symmetric system solved by a fixed number of conjugate-gradient steps (a loop the
    derivative rules never look into)."""
    def lin(a, b):
        s = a @ a.T + 3 * m.eye(3)

        def cg(mv, r):
            def step(_, st):
                x, res, p = st
                ap = mv(p)
                alpha = m.vdot(res, res) / m.vdot(p, ap)
                x, new = x + alpha * p, res - alpha * ap
                return x, new, new + m.vdot(new, new) / m.vdot(res, res) * p
            return lx.fori_loop(0, 3, step, (m.zeros_like(r), r, r))[0]
        return lx.custom_linear_solve(lambda x: s @ x, b, cg, symmetric=True)
    return lin


def _programs(j, m, lx):
    lin, cg = _lin(j, m, lx), _cg_lin(j, m, lx)

    def sqrt_root(a):
        def newton(f, x0):
            return lx.fori_loop(0, 25, lambda i, x: x - f(x) / (2 * x), x0)
        return lx.custom_root(lambda x: x ** 2 - a, 1.0, newton, lambda g, y: y / g(1.0))

    return {
        "solve": lambda: lin(A, B),
        "grad": lambda: j.grad(lambda a, b: m.sum(lin(a, b) ** 2), (0, 1))(A, B),
        "jvp": lambda: j.jvp(lin, (A, B), (m.ones_like(A), m.ones_like(B)))[1],
        "hessian_b": lambda: j.hessian(lambda b: m.sum(m.sin(lin(A, b))))(B),
        "grad_of_grad": lambda: j.grad(
            lambda a: m.sum(j.grad(lambda b: m.sum(m.sin(lin(a, b))))(B)))(A),
        "cg": lambda: cg(A, B),
        "cg_grad": lambda: j.grad(lambda a: m.sum(cg(a, B) ** 2))(A),
        "pytree": lambda: lx.custom_linear_solve(
            lambda t: {"u": 2.0 * t["u"], "v": t["v"] + t["u"]}, {"u": B, "v": B},
            lambda mv, r: {"u": r["u"] / 2, "v": r["v"] - r["u"] / 2},
            lambda vm, r: {"u": (r["u"] - r["v"]) / 2, "v": r["v"]}),
        "root": lambda: sqrt_root(2.0),
        "root_grad": lambda: j.grad(sqrt_root)(2.0),
        "root_second": lambda: j.grad(j.grad(sqrt_root))(2.0),
        "root_vmap": lambda: j.vmap(sqrt_root)(m.array([2.0, 9.0])),
    }


@pytest.mark.parametrize("name", list(_programs(didax, jnp, didax.lax)))
def test_implicit_solvers_match_jax(name):
    ours = _programs(didax, jnp, didax.lax)[name]()
    theirs = jax.jit(_programs(jax, jnp_jax, jax.lax)[name])()
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=1e-5)


def test_implicit_derivatives_against_finite_differences():
    lin, cg = _lin(didax, jnp, didax.lax), _cg_lin(didax, jnp, didax.lax)
    with both_x64():
        a, b = A.astype(np.float64), B.astype(np.float64)
        check_grads(lambda a, b: jnp.sin(lin(a, b)), (a, b), order=2, modes=("fwd", "rev"))
        check_grads(lambda a: cg(a, b), (a,), order=1, modes=("fwd", "rev"), atol=1e-3,
                    rtol=1e-3)

        def cube_root(c):
            def newton(f, x0):
                return didax.lax.fori_loop(0, 30, lambda i, x: x - f(x) / (3 * x * x), x0)
            return didax.lax.custom_root(lambda x: x ** 3 - c, 1.0, newton,
                                         lambda g, y: y / g(1.0))
        check_grads(cube_root, (np.float64(5.0),), order=2, modes=("fwd", "rev"))
    assert "custom_linear_solve" in str(didax.make_jaxpr(lin)(A, B))


def test_missing_transpose_solve_is_a_clear_error():
    def f(a):
        return didax.lax.custom_linear_solve(lambda x: a @ x, B,
                                             lambda mv, r: jnp.linalg.solve(a, r))
    np.testing.assert_allclose(didax.jvp(f, (A,), (np.ones_like(A),))[1],
                               jax.jvp(lambda a: jax.lax.custom_linear_solve(
                                   lambda x: a @ x, B, lambda mv, r: jnp_jax.linalg.solve(a, r)),
                                   (A,), (np.ones_like(A),))[1], rtol=1e-4)
    with pytest.raises(TypeError, match="transpose_solve"):
        didax.grad(lambda a: jnp.sum(f(a)))(A)
