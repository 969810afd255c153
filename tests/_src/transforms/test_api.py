"""Reverse mode through the public API: grad, value_and_grad, vjp, jacrev, hessian,
linearize and linear_transpose; higher order; errors; transformations against each other."""
import math

import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads


@pytest.fixture
def x64():
    with enable_x64(True):
        yield


def test_grad_sin_cos_jaxpr_matches_jax():
    text = str(jax.make_jaxpr(jax.grad(lambda x: jnp.sin(jnp.cos(x))))(1.0))
    # JAX 0.10.2 prints the same equations (its unused primal output shows as `_`).
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = cos a\n"
        "    c:f32[] = sin a\n"
        "    d:f32[] = sin b\n"
        "    e:f32[] = cos b\n"
        "    f:f32[] = mul 1.0:f32[] e\n"
        "    g:f32[] = neg f\n"
        "    h:f32[] = mul g c\n"
        "  in (h,) }")


def test_fourth_derivative_closed_form(x64):
    def f(x):
        return jnp.tanh(x) * jnp.sin(x)

    d = f
    for _ in range(4):
        d = jax.grad(d)
    x = 0.7
    t, s, c = math.tanh(x), math.sin(x), math.cos(x)
    sech2 = 1 - t * t
    # derivatives of tanh: t' = sech2, t'' = -2 t sech2, t''' = sech2 (6 t^2 - 2),
    # t'''' = sech2 (-24 t^3 + 16 t); Leibniz: sum_k C(4,k) t^(k) sin^(4-k)
    tanh_d = [t, sech2, -2 * t * sech2, sech2 * (6 * t * t - 2), sech2 * (16 * t - 24 * t ** 3)]
    sin_d = [s, c, -s, -c, s]
    expected = sum(math.comb(4, k) * tanh_d[k] * sin_d[4 - k] for k in range(5))
    assert math.isclose(float(d(x)), expected, rel_tol=1e-12)


def test_grad_of_grad_closing_over_outer_tracers(x64):
    def outer(x):
        inner = jax.grad(lambda y: jnp.sin(x * y) * x)
        return inner(2.0)  # d/dy = x^2 cos(xy)

    x = 0.3
    expected = 2 * x * math.cos(2 * x) - x * x * 2 * math.sin(2 * x)
    assert math.isclose(float(jax.grad(outer)(x)), expected, rel_tol=1e-12)


def test_reverse_perturbation_confusion():
    def f(x):
        should_be_zero = jax.grad(lambda y: x)(0.0)
        return x * should_be_zero

    assert float(jax.grad(f)(1.0)) == 0.0

    def g(x):
        return x * jax.grad(lambda y: x * y)(1.0)  # x * x

    assert float(jax.grad(g)(3.0)) == 6.0


def test_python_control_flow_on_concrete_values_inside_grad():
    def f(x, n):
        total = 0.0
        for i in range(n):  # a Python loop over a concrete count
            total = total + x ** (i + 1)
        if x > 0:  # a branch on the (concrete) primal value
            total = total * 2.0
        while n > 1:
            n -= 1
            total = total + x
        return total

    # x = 2, n = 3: 2 (x + x^2 + x^3) + 2x; derivative 2 (1 + 2x + 3x^2) + 2
    assert float(jax.grad(f)(2.0, 3)) == 2 * (1 + 4 + 12) + 2


def test_value_and_grad_argnums_has_aux():
    def f(a, b, c):
        return a * b + c, {"aux": a}

    (v, aux), g = jax.value_and_grad(f, argnums=(0, 2), has_aux=True)(2.0, 3.0, 4.0)
    assert float(v) == 10.0 and float(aux["aux"]) == 2.0
    assert (float(g[0]), float(g[1])) == (3.0, 1.0)
    g_b, aux = jax.grad(f, argnums=1, has_aux=True)(2.0, 3.0, 4.0)
    assert float(g_b) == 2.0


def test_grad_pytrees():
    params = {"w": jnp.ones((2, 3)), "b": (jnp.zeros(3), jnp.asarray(1.0))}

    def loss(p, x):
        return jnp.sum(jnp.tanh(x @ p["w"] + p["b"][0]) * p["b"][1])

    g = jax.grad(loss)(params, jnp.ones((4, 2)))
    assert g["w"].shape == (2, 3) and g["b"][0].shape == (3,) and g["b"][1].shape == ()


def test_grad_errors():
    with pytest.raises(TypeError, match="scalar-output"):
        jax.grad(lambda x: x * jnp.ones(3))(1.0)
    with pytest.raises(TypeError, match="real-valued outputs"):
        jax.grad(lambda x: (x > 0).astype(jnp.int32))(1.0)
    with pytest.raises(TypeError, match="allow_int"):
        jax.grad(lambda n: n * 2.0)(3)
    g = jax.grad(lambda n, x: n * x, allow_int=True)(3, 2.0)
    assert g.dtype == jax.dtypes.float0
    with pytest.raises(TypeError, match="argnums"):
        jax.grad(lambda x: x, argnums=3)(1.0)


def test_vjp_pytrees_and_cotangent_checks():
    out, pullback = jax.vjp(lambda a, b: {"s": a * b, "d": a - b}, 2.0, 5.0)
    ga, gb = pullback({"s": 1.0, "d": 1.0})
    assert (float(ga), float(gb)) == (6.0, 1.0)
    with pytest.raises(ValueError, match="shape"):
        jax.vjp(lambda a: a * 2, jnp.ones(3))[1](jnp.ones(2))
    with pytest.raises(TypeError, match="structure"):
        pullback((1.0, 1.0))


def test_jacobians_agree(x64):
    def f(x):
        return jnp.stack([jnp.sin(x[0]) * x[1], x[0] ** 2, jnp.tanh(x[1] - x[0])])

    x = np.array([0.3, 0.8])
    jf, jr = np.asarray(jax.jacfwd(f)(x)), np.asarray(jax.jacrev(f)(x))
    np.testing.assert_allclose(jf, jr, rtol=1e-13)
    assert jf.shape == (3, 2)
    h = np.asarray(jax.hessian(lambda v: jnp.sum(f(v) ** 2))(x))
    np.testing.assert_allclose(h, h.T, rtol=1e-12)
    h_rev = np.asarray(jax.jacrev(jax.jacrev(lambda v: jnp.sum(f(v) ** 2)))(x))
    np.testing.assert_allclose(h, h_rev, rtol=1e-12)


def test_jvp_against_vjp_on_random_programs(x64):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 3))

    def f(x):
        return jnp.tanh(a @ x) * jnp.exp(-x.sum()) + jnp.cumsum(x)[0]

    x, u, v = rng.normal(size=3), rng.normal(size=3), rng.normal(size=4)
    _, ju = jax.jvp(f, (x,), (u,))
    _, pullback = jax.vjp(f, x)
    (jtv,) = pullback(v)
    assert math.isclose(float(np.dot(v, np.asarray(ju))), float(np.dot(np.asarray(jtv), u)),
                        rel_tol=1e-12)


def test_linear_maps_are_adjoint(x64):
    """<v, J u> == <J^T v, u> for random linear maps built from linear primitives."""
    rng = np.random.default_rng(1)
    m = rng.normal(size=(3, 4))
    maps = [
        lambda x: m @ x.reshape(4, 3).sum(axis=1),
        lambda x: jnp.concatenate([x[::2], -x, jnp.cumsum(x)]),
        lambda x: jnp.pad(x.reshape(3, 4), ((1, 0), (0, 2))).T,
        lambda x: lax.reduce_sum(jnp.broadcast_to(x, (2, 12)), (0,)) * 3.0,
        lambda x: jnp.where(np.arange(12) % 2 == 0, x, 2 * x).reshape(2, 6)[:, 1:4],
    ]
    for f in maps:
        u = rng.normal(size=12)
        out = f(u)
        v = rng.normal(size=np.shape(out))
        (fv,) = jax.linear_transpose(f, u)(v)
        lhs = float(np.vdot(v, np.asarray(out)))
        rhs = float(np.vdot(np.asarray(fv), u))
        assert math.isclose(lhs, rhs, rel_tol=1e-12), f


def test_linearize_replays_the_jvp(x64):
    f = lambda x: jnp.sin(x) * x  # noqa: E731
    out, f_jvp = jax.linearize(f, np.array([0.5, 1.5]))
    t = np.array([1.0, -2.0])
    np.testing.assert_allclose(np.asarray(f_jvp(t)), np.asarray(jax.jvp(f, (np.array([0.5, 1.5]),),
                                                                         (t,))[1]))
    np.testing.assert_allclose(np.asarray(out), np.sin([0.5, 1.5]) * [0.5, 1.5])


def test_grad_of_stop_gradient():
    assert float(jax.grad(lambda x: x * lax.stop_gradient(x))(3.0)) == 3.0


@pytest.mark.parametrize("name", ["sin", "tanh", "exp", "log1p", "sqrt", "arctan"])
def test_check_grads_both_modes(name, x64):
    x = np.random.default_rng(2).uniform(0.2, 0.9, (2, 3))
    check_grads(getattr(jnp, name), (x,), order=2, modes=("fwd", "rev"))


class _Checked:
    """A pytree whose unflatten accepts only arrays as its child (as some libraries' do)."""

    def __init__(self, a):
        if not isinstance(a, (jax.Array, _Checked)):  # (a Jacobian nests one in another)
            raise ValueError(f"_Checked holds an array, got {a!r}")
        self.a = a


jax.tree_util.register_pytree_node(_Checked, lambda p: ((p.a,), None),
                                   lambda _, children: _Checked(*children))


def test_outputs_of_pytrees_that_validate_their_children():
    """vmap, jacobian and pmap never rebuild an output pytree from placeholder leaves."""
    x = jnp.arange(3.0)
    out = jax.vmap(lambda v: _Checked(v * 2.0))(jnp.ones((2, 3)))
    assert isinstance(out, _Checked) and out.a.shape == (2, 3)
    jac = jax.jacobian(lambda p: _Checked(p.a * 2.0))(_Checked(x))
    np.testing.assert_array_equal(jac.a.a, 2.0 * np.eye(3))
    jac = jax.jacrev(lambda v: _Checked(jnp.sin(v)))(x)
    np.testing.assert_allclose(jac.a, np.diag(np.cos(np.arange(3.0))), rtol=1e-6)
    out = jax.pmap(lambda v: _Checked(v + 1.0))(jnp.ones((1, 3)))
    assert isinstance(out, _Checked) and out.a.shape == (1, 3)
