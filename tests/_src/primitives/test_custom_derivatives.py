"""custom_jvp and custom_vjp: rules are used by every interpreter, survive staging, and
differentiate to higher order; jvp of a custom_vjp function works (JAX raises)."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax._src import ir
from didax._src.config import enable_x64
from didax.test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


@jax.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


def test_custom_jvp_rule_is_used_in_both_modes():
    # The naive derivative of log(1 + exp(x)) overflows at x = 1000; the rule does not.
    x = np.float64(1000.0)
    assert float(jax.jvp(log1pexp, (x,), (1.0,))[1]) == 1.0
    assert float(jax.grad(log1pexp)(x)) == 1.0
    check_grads(log1pexp, (np.array([-1.0, 0.5, 2.0]),), order=2)


def test_custom_jvp_nondiff_argnums_and_kwargs():
    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    @app.defjvp
    def app_jvp(f, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(f, x), 2.0 * t  # deliberately not f's derivative: the rule must be used

    assert float(jax.grad(lambda x: app(jnp.sin, x))(0.3)) == 2.0
    assert float(jax.jvp(lambda x: app(jnp.sin, x=x), (0.3,), (1.0,))[1]) == 2.0


def test_custom_jvp_defjvps():
    @jax.custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(lambda t, ans, x, y: 3.0 * t, lambda t, ans, x, y: 5.0 * t)
    assert float(jax.grad(f, argnums=1)(2.0, 4.0)) == 5.0
    assert float(jax.jvp(f, (2.0, 4.0), (1.0, 1.0))[1]) == 8.0


def test_custom_jvp_staged_prints_like_jax_and_keeps_the_rule():
    closed = jax.make_jaxpr(log1pexp)(np.float32(1.0))
    text = str(closed)
    assert "custom_jvp_call[" in text and "jvp=log1pexp_jvp" in text
    assert "name=log1pexp" in text and "symbolic_zeros=False" in text
    ir.check_jaxpr(closed.jaxpr)

    def staged(x):
        return ir.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]

    assert float(jax.grad(staged)(np.float32(1000.0))) == 1.0


def test_custom_jvp_errors():
    @jax.custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No JVP defined"):
        f(1.0)

    @f.defjvp
    def bad(primals, tangents):
        return primals[0], (tangents[0], tangents[0])

    with pytest.raises(TypeError, match="equal structures"):
        jax.jvp(f, (1.0,), (1.0,))


# --------------------------------------------------------------------------------------
# custom_vjp


@jax.custom_vjp
def clip_gradient(x, lo, hi):
    return x


def _clip_fwd(x, lo, hi):
    return x, {"lo": lo, "hi": hi}  # residuals as a pytree


def _clip_bwd(res, g):
    return (jnp.clip(g, res["lo"], res["hi"]), None, None)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_rule_and_pytree_residuals():
    g = jax.grad(lambda x: 10.0 * clip_gradient(x, -1.0, 1.0))(3.0)
    assert float(g) == 1.0


@jax.custom_vjp
def sin_custom(x):
    return jnp.sin(x)


def _sin_fwd(x):
    return jnp.sin(x), jnp.cos(x)


def _sin_bwd(cos_x, g):
    return (cos_x * g,)


sin_custom.defvjp(_sin_fwd, _sin_bwd)


def test_custom_vjp_differentiated_twice():
    x = 0.4
    assert np.isclose(float(jax.grad(sin_custom)(x)), np.cos(x))
    assert np.isclose(float(jax.grad(jax.grad(sin_custom))(x)), -np.sin(x))
    assert np.isclose(float(jax.grad(jax.grad(jax.grad(sin_custom)))(x)), -np.cos(x))
    check_grads(sin_custom, (np.array([0.1, 0.7, 1.3]),), order=2)


def test_jvp_of_custom_vjp():
    # Beyond JAX: forward mode through a custom_vjp function, by transposing bwd.
    p, t = jax.jvp(sin_custom, (0.4,), (2.0,))
    assert np.isclose(float(p), np.sin(0.4)) and np.isclose(float(t), 2 * np.cos(0.4))
    jac = jax.jacfwd(lambda v: sin_custom(v) * v)(np.array([0.2, 0.5]))
    expected = np.diag(np.cos([0.2, 0.5]) * [0.2, 0.5] + np.sin([0.2, 0.5]))
    np.testing.assert_allclose(np.asarray(jac), expected, rtol=1e-12)
    hess = jax.hessian(lambda v: jnp.sum(sin_custom(v)))(np.array([0.2, 0.5]))
    np.testing.assert_allclose(np.asarray(hess), np.diag(-np.sin([0.2, 0.5])), rtol=1e-12)


def test_custom_vjp_with_nondiff_argnums():
    from functools import partial

    @partial(jax.custom_vjp, nondiff_argnums=(1,))
    def scale(x, k):
        return x * k

    scale.defvjp(lambda x, k: (x * k, None), lambda k, res, g: (g * k * 10,))
    assert float(jax.grad(scale)(2.0, 3.0)) == 30.0


def test_custom_vjp_staged_and_replayed():
    closed = jax.make_jaxpr(sin_custom)(np.float64(0.3))
    assert "custom_vjp_call[" in str(closed) and "bwd=_sin_bwd" in str(closed)

    def staged(x):
        return ir.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]

    assert np.isclose(float(jax.grad(staged)(0.3)), np.cos(0.3))


def test_custom_vjp_errors():
    @jax.custom_vjp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No VJP defined"):
        f(1.0)
    f.defvjp(lambda x: (x, None), lambda res, g: g)  # not a tuple
    with pytest.raises(TypeError, match="must return a tuple"):
        jax.grad(f)(1.0)


def test_custom_rules_survive_vmap_in_every_order():
    xs = np.array([1.0, 2.0, 3.0])
    grad_outside = jax.grad(lambda x: jnp.sum(jax.vmap(lambda v: clip_gradient(v, -1.0, 1.0))(x)
                                              * 10.0))(xs)
    np.testing.assert_array_equal(np.asarray(grad_outside), [1.0, 1.0, 1.0])
    grad_inside = jax.vmap(jax.grad(lambda v: clip_gradient(v, -1.0, 1.0) * 10.0))(xs)
    np.testing.assert_array_equal(np.asarray(grad_inside), [1.0, 1.0, 1.0])

    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 7.0 * t[0]))  # deliberately not cos: the rule must win
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda x: jnp.sum(jax.vmap(f)(x)))(xs)),
                                  [7.0, 7.0, 7.0])
    np.testing.assert_array_equal(np.asarray(jax.jacfwd(jax.vmap(f))(xs)), 7.0 * np.eye(3))


def test_custom_vjp_under_vmap_sums_cotangents_of_unbatched_inputs():
    @jax.custom_vjp
    def scale(x, k):
        return x * k

    scale.defvjp(lambda x, k: (x * k, (x, k)), lambda r, g: (g * r[1], g * r[0]))
    xs = np.array([1.0, 2.0, 3.0])
    g = jax.grad(lambda k: jnp.sum(jax.vmap(scale, in_axes=(0, None))(xs, k)))(2.0)
    assert float(g) == 6.0
