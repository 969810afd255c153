"""lax.cond and lax.switch: values, derivatives in both modes (also with a predicate that is
staged), vmap with batched and unbatched predicates, printing, and type errors."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import ir
from didax._src.config import enable_x64
from didax.test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def f(p, x):
    return lax.cond(p, lambda v: jnp.sin(v) * v, jnp.cos, x)


def test_values_and_both_branches_differentiate():
    x = 0.5
    assert np.isclose(float(f(True, x)), np.sin(x) * x)
    assert np.isclose(float(f(False, x)), np.cos(x))
    assert np.isclose(float(jax.grad(f, argnums=1)(True, x)), np.cos(x) * x + np.sin(x))
    assert np.isclose(float(jax.grad(f, argnums=1)(False, x)), -np.sin(x))
    for p in (True, False):
        check_grads(lambda v, p=p: f(p, v), (np.array([0.3, 0.7]),), order=2)


def test_grad_with_a_staged_predicate_keeps_cond():
    g = lambda x: f(x > 0.3, x) * x  # noqa: E731
    closed = jax.make_jaxpr(jax.grad(g))(0.5)
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert names.count("cond") == 2  # the forward choice and the transposed one
    ir.check_jaxpr(closed.jaxpr)
    for x in (0.5, 0.1):
        staged = ir.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]
        assert np.isclose(float(staged), float(jax.grad(g)(x)))


def test_switch_clamps_and_differentiates():
    branches = [lambda v: v * 2.0, lambda v: jnp.sin(v) * v, lambda v: -v]
    h = lambda x, i: lax.switch(i, branches, x)  # noqa: E731
    got = [float(jax.grad(h)(0.5, i)) for i in (-3, 0, 1, 2, 7)]
    np.testing.assert_allclose(got, [2.0, 2.0, np.cos(0.5) * 0.5 + np.sin(0.5), -1.0, -1.0])


def test_vmap_with_batched_and_unbatched_predicates():
    ps, xs = np.array([True, False, True]), np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(ps, xs)),
                               [float(f(p, x)) for p, x in zip(ps, xs)])
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda x: f(True, x))(xs)), np.sin(xs) * xs)
    g = jax.vmap(jax.grad(lambda x: f(x > 0.15, x)))(xs)
    np.testing.assert_allclose(np.asarray(g), [float(jax.grad(lambda v: f(v > 0.15, v))(x))
                                               for x in xs])


def test_pytree_operands_and_printing():
    out = lax.cond(True, lambda d: {"a": d["a"] + 1.0}, lambda d: {"a": d["a"] * 2.0},
                   {"a": np.float64(3.0)})
    assert float(out["a"]) == 4.0
    with enable_x64(False):
        text = str(jax.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, 1.0))
    assert text == (  # verbatim from JAX 0.10.2
        "{ lambda ; a:bool[] b:f32[]. let\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    d:f32[] = cond[\n"
        "      branches=(\n"
        "        { lambda ; e:f32[]. let f:f32[] = cos e in (f,) }\n"
        "        { lambda ; g:f32[]. let h:f32[] = sin g in (h,) }\n"
        "      )\n"
        "    ] c b\n"
        "  in (d,) }")


def test_errors():
    with pytest.raises(TypeError, match=r"the output of true_fun = <lambda> .* is f64\[2\] and "
                                        r"of false_fun = <lambda> .* is f64\[\]: the shapes"):
        lax.cond(True, lambda x: x * np.ones(2), lambda x: x, np.float64(1.0))
    with pytest.raises(TypeError, match="scalar"):
        lax.cond(np.array([True, False]), jnp.sin, jnp.cos, 1.0)
    with pytest.raises(TypeError, match="boolean or integer"):
        lax.cond(1.5, jnp.sin, jnp.cos, 1.0)
