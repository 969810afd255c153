"""Transformations of jitted functions and jitted transformations, against the same
transformations without jit: grad, jvp, vjp, linearize, vmap, hessian and their
compositions; jit inside scan bodies and cond branches; jitted functions closing over
tracers of enclosing transformations; pytrees in and out.

Values are compared in float64 (the derivative programs may associate sums differently
once compiled, so to a tight tolerance rather than bit for bit), and shapes, dtypes and
weak types exactly.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads

pytestmark = pytest.mark.usefixtures("jit_tier")  # both tiers (tests/conftest.py)

EXAMPLES = settings(max_examples=10, deadline=None)


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def assert_trees_close(got, want, rtol=1e-12, atol=1e-12):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree, f"{got_tree} != {want_tree}"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        g_aval, w_aval = jax.typeof(g), jax.typeof(w)
        assert (g_aval.shape, g_aval.dtype, g_aval.weak_type) == \
            (w_aval.shape, w_aval.dtype, w_aval.weak_type), f"leaf {i}: {g_aval} != {w_aval}"
        if w_aval.dtype.kind != "V":  # float0 tangents of integers have no values
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol,
                                       err_msg=f"leaf {i}")


# --------------------------------------------------------------------------------------
# Functions to transform: scalar-valued functions of one array


def smooth(x):
    return jnp.sum(jnp.sin(x) * jnp.exp(-x ** 2) + jnp.cos(x) * x)


def reuses_values(x):
    y = x * 2.0
    z = y + 1.0
    return jnp.sum(z * y * jnp.tanh(y))


def with_matmul(x):
    w = jnp.reshape(jnp.arange(x.shape[-1] * 3.0), (x.shape[-1], 3)) / 10
    return jnp.sum(jnp.tanh(x @ w) ** 2) + jnp.max(x)


def with_control_flow(x):
    def body(c, xi):
        c = jnp.sin(c) * xi + c
        return c, c * 2
    c, ys = lax.scan(body, jnp.sum(x) * 0.1, x)
    r = lax.cond(c > 0, lambda: jnp.sum(ys ** 2), lambda: jnp.sum(jnp.abs(ys)))
    return r + lax.fori_loop(0, 3, lambda i, a: a * 0.5 + c, 1.0)


@jax.custom_jvp
def soft_relu(x):
    return jnp.logaddexp(x, 0.0)


soft_relu.defjvp(lambda p, t: (soft_relu(p[0]), t[0] * lax.logistic(p[0])))


@jax.custom_vjp
def scaled_sin(x):
    return jnp.sin(x) * 2.0


scaled_sin.defvjp(lambda x: (scaled_sin(x), jnp.cos(x)), lambda c, g: (2.0 * c * g,))


def with_custom_rules(x):
    return jnp.sum(soft_relu(x) * scaled_sin(x))


def with_checkpoint(x):
    return jnp.sum(jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)) * y)(x))


def with_nested_jit(x):
    inner = jax.jit(lambda a, b: jnp.tanh(a) * b)
    return jnp.sum(inner(inner(x, x), x + 1.0))


FUNCS = {f.__name__: f for f in (smooth, reuses_values, with_matmul, with_control_flow,
                                  with_custom_rules, with_checkpoint, with_nested_jit)}
X = np.linspace(-1.3, 1.7, 5)


def func_params():
    return pytest.mark.parametrize("name", sorted(FUNCS))


@func_params()
def test_grad_of_jit(name):
    f = FUNCS[name]
    assert_trees_close(jax.grad(jax.jit(f))(X), jax.grad(f)(X))


@func_params()
def test_jit_of_grad(name):
    f = FUNCS[name]
    assert_trees_close(jax.jit(jax.grad(f))(X), jax.grad(f)(X))


@func_params()
def test_value_and_grad_of_jit_of_jit(name):
    f = FUNCS[name]
    got = jax.jit(jax.value_and_grad(jax.jit(f)))(X)
    assert_trees_close(got, jax.value_and_grad(f)(X))


@func_params()
def test_jvp_of_jit_and_jit_of_jvp(name):
    f = FUNCS[name]
    t = np.cos(np.arange(5.0))
    want = jax.jvp(f, (X,), (t,))
    assert_trees_close(jax.jvp(jax.jit(f), (X,), (t,)), want)
    assert_trees_close(jax.jit(lambda x, t: jax.jvp(f, (x,), (t,)))(X, t), want)


@func_params()
def test_vjp_of_jit(name):
    f = FUNCS[name]
    y, pullback = jax.vjp(jax.jit(f), X)
    y0, pullback0 = jax.vjp(f, X)
    assert_trees_close(y, y0)
    assert_trees_close(pullback(2.5), pullback0(2.5))
    assert_trees_close(jax.jit(pullback)(2.5), pullback0(2.5))


@func_params()
def test_linearize_of_jit(name):
    f = FUNCS[name]
    t = np.sin(np.arange(5.0) + 1)
    y, f_jvp = jax.linearize(jax.jit(f), X)
    y0, f_jvp0 = jax.linearize(f, X)
    assert_trees_close(y, y0)
    assert_trees_close(f_jvp(t), f_jvp0(t))
    assert_trees_close(jax.jit(f_jvp)(t), f_jvp0(t))


@func_params()
def test_vmap_of_jit(name):
    f = FUNCS[name]
    xs = np.stack([X, X * 0.5, -X])
    assert_trees_close(jax.vmap(jax.jit(f))(xs), jax.vmap(f)(xs))
    assert_trees_close(jax.vmap(jax.jit(f), in_axes=1)(xs.T), jax.vmap(f, in_axes=1)(xs.T))


@func_params()
def test_jit_of_vmap_of_grad_of_jit(name):
    f = FUNCS[name]
    xs = np.stack([X, X * 0.5, -X])
    got = jax.jit(jax.vmap(jax.grad(jax.jit(f))))(xs)
    assert_trees_close(got, jax.vmap(jax.grad(f))(xs))


@func_params()
def test_hessian_of_jit(name):
    f = FUNCS[name]
    want = jax.hessian(f)(X)
    assert_trees_close(jax.hessian(jax.jit(f))(X), want)
    assert_trees_close(jax.jit(jax.hessian(jax.jit(f)))(X), want)


def test_jacobians_of_jit():
    def f(x):
        return jnp.stack([jnp.sin(x) * x[0], jnp.cumsum(x) ** 2])

    assert_trees_close(jax.jacfwd(jax.jit(f))(X), jax.jacfwd(f)(X))
    assert_trees_close(jax.jacrev(jax.jit(f))(X), jax.jacrev(f)(X))
    assert_trees_close(jax.jit(jax.jacrev(jax.jit(f)))(X), jax.jacfwd(f)(X))


@pytest.mark.parametrize("name", ["smooth", "with_matmul", "with_control_flow",
                                  "with_custom_rules", "with_nested_jit"])
def test_check_grads_of_jitted_functions(name):
    check_grads(jax.jit(FUNCS[name]), (X,), order=2, modes=("fwd", "rev"))


@EXAMPLES
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=4),
                    elements=st.floats(-2, 2)))
def test_transformations_of_jit_on_drawn_inputs(x):
    f = reuses_values
    assert_trees_close(jax.grad(jax.jit(f))(x), jax.grad(f)(x))
    assert_trees_close(jax.jit(jax.grad(f))(x), jax.grad(f)(x))
    assert_trees_close(jax.vmap(jax.jit(smooth))(x), jax.vmap(smooth)(x))
    t = np.ones_like(x)
    assert_trees_close(jax.jvp(jax.jit(smooth), (x,), (t,)), jax.jvp(smooth, (x,), (t,)))


def test_integer_arguments_and_outputs_under_transformations():
    def f(x, i):
        return x * x[i], jnp.argmax(x) + i

    def loss(x, i):
        return jnp.sum(f(x, i)[0])

    i = np.int32(2)
    assert_trees_close(jax.jvp(jax.jit(f), (X, i), (X, np.zeros((), jax.dtypes.float0))),
                       jax.jvp(f, (X, i), (X, np.zeros((), jax.dtypes.float0))))
    assert_trees_close(jax.grad(jax.jit(loss))(X, i), jax.grad(loss)(X, i))
    idx = np.array([0, 3, 4], np.int32)
    x = jnp.asarray(X)  # (a NumPy array indexed by a traced index fails in JAX too)
    assert_trees_close(jax.vmap(jax.jit(f), in_axes=(None, 0))(x, idx),
                       jax.vmap(f, in_axes=(None, 0))(x, idx))
    assert_trees_close(jax.vmap(jax.grad(jax.jit(loss)), in_axes=(None, 0))(x, idx),
                       jax.vmap(jax.grad(loss), in_axes=(None, 0))(x, idx))


# --------------------------------------------------------------------------------------
# jit inside control flow


def test_jit_inside_a_scan_body():
    step = jax.jit(lambda c, x: (jnp.tanh(c * x + 1.0), c * x))

    def run(step):
        def loss(c0, xs):
            c, ys = lax.scan(step, c0, xs)
            return jnp.sum(ys) + c
        return loss

    c0, xs = 0.3, np.linspace(-1, 1, 6)
    plain = run(step.__wrapped__)
    assert_trees_close(run(step)(c0, xs), plain(c0, xs))
    assert_trees_close(jax.grad(run(step), argnums=(0, 1))(c0, xs),
                       jax.grad(plain, argnums=(0, 1))(c0, xs))
    assert_trees_close(jax.jit(jax.grad(run(step)))(c0, xs), jax.grad(plain)(c0, xs))
    assert_trees_close(jax.vmap(run(step), in_axes=(None, 0))(c0, xs.reshape(2, 3)),
                       jax.vmap(plain, in_axes=(None, 0))(c0, xs.reshape(2, 3)))


def test_jit_inside_cond_branches():
    up = jax.jit(lambda x: jnp.sin(x) * x)
    down = jax.jit(lambda x: jnp.cos(x) - x ** 2)

    def f(x, use_up):
        return jnp.sum(lax.cond(use_up, up, down, x))

    def plain(x, use_up):
        return jnp.sum(lax.cond(use_up, up.__wrapped__, down.__wrapped__, x))

    for flag in (True, False):
        assert_trees_close(f(X, flag), plain(X, flag))
        assert_trees_close(jax.grad(f)(X, flag), jax.grad(plain)(X, flag))
        assert_trees_close(jax.jit(jax.grad(f))(X, flag), jax.grad(plain)(X, flag))
    flags = np.array([True, False, True])
    xs = np.stack([X, X + 1, X - 1])
    assert_trees_close(jax.vmap(f)(xs, flags), jax.vmap(plain)(xs, flags))
    assert_trees_close(jax.vmap(jax.grad(f))(xs, flags), jax.vmap(jax.grad(plain))(xs, flags))


def test_jit_inside_a_while_loop_under_jvp():
    halve = jax.jit(lambda x: x * 0.5 + jnp.sin(x) * 0.1)

    def f(x):
        return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, halve(c[1])), (0, x))[1]

    def plain(x):
        return lax.while_loop(lambda c: c[0] < 4,
                              lambda c: (c[0] + 1, halve.__wrapped__(c[1])), (0, x))[1]

    t = np.ones_like(X)
    assert_trees_close(jax.jvp(f, (X,), (t,)), jax.jvp(plain, (X,), (t,)))
    assert_trees_close(jax.jit(lambda x: jax.jvp(f, (x,), (t,)))(X), jax.jvp(plain, (X,), (t,)))


# --------------------------------------------------------------------------------------
# Closures over tracers of enclosing transformations


def test_grad_through_a_jit_closing_over_the_differentiated_value():
    g = jax.grad(lambda x: jax.jit(lambda y: x * y)(2.0))
    assert float(g(3.0)) == 2.0
    assert_trees_close(g(3.0), jax.grad(lambda x: x * 2.0)(3.0))


def test_closures_see_each_new_outer_value():
    def f(x):
        return jax.jit(lambda y: jnp.sin(x) * y + x ** 2)(1.5)

    for v in (0.1, 0.7, -2.0):  # the jitted closure must not keep an earlier trace's value
        assert_trees_close(jax.grad(f)(v), jax.grad(lambda x: jnp.sin(x) * 1.5 + x ** 2)(v))
    assert_trees_close(jax.vmap(f)(X), jnp.sin(X) * 1.5 + X ** 2)
    assert_trees_close(jax.jvp(f, (0.4,), (1.0,)),
                       jax.jvp(lambda x: jnp.sin(x) * 1.5 + x ** 2, (0.4,), (1.0,)))


def test_second_derivative_through_closures():
    def f(x):
        inner = jax.jit(lambda y: jnp.exp(x * y))
        return inner(x) + jax.grad(lambda z: inner(z) * z)(x)

    def plain(x):
        inner = lambda y: jnp.exp(x * y)  # noqa: E731
        return inner(x) + jax.grad(lambda z: inner(z) * z)(x)

    assert_trees_close(jax.grad(f)(0.3), jax.grad(plain)(0.3))
    assert_trees_close(jax.grad(jax.grad(f))(0.3), jax.grad(jax.grad(plain))(0.3))


def test_jit_closing_over_a_vmapped_value_under_grad():
    def f(w, x):
        return jax.jit(lambda v: jnp.sum(jnp.tanh(v * w)))(x)

    per_example = jax.vmap(jax.grad(f), in_axes=(None, 0))
    plain = jax.vmap(jax.grad(lambda w, x: jnp.sum(jnp.tanh(x * w))), in_axes=(None, 0))
    xs = np.stack([X, X * 2])
    assert_trees_close(per_example(0.7, xs), plain(0.7, xs))


# --------------------------------------------------------------------------------------
# Pytrees in and out


class Params(NamedTuple):
    w: object
    b: object


def mlp(params, batch):
    h = jnp.tanh(batch["x"] @ params[0].w + params[0].b)
    out = h @ params[1].w + params[1].b
    return {"loss": jnp.mean((out - batch["y"]) ** 2), "parts": (out, [h, None])}


PARAMS = [Params(np.linspace(-1, 1, 6).reshape(3, 2), np.array([0.1, -0.2])),
          Params(np.linspace(0.5, -0.5, 2).reshape(2, 1), np.array([0.05]))]
BATCH = {"x": np.linspace(-2, 2, 12).reshape(4, 3), "y": np.linspace(0, 1, 4).reshape(4, 1)}


def test_pytrees_in_and_out():
    assert_trees_close(jax.jit(mlp)(PARAMS, BATCH), mlp(PARAMS, BATCH))
    assert_trees_close(jax.jit(mlp)(PARAMS, batch=BATCH), mlp(PARAMS, BATCH))


def test_grad_of_jit_with_pytrees():
    def loss(p, b):
        return mlp(p, b)["loss"]

    want = jax.grad(loss)(PARAMS, BATCH)
    assert_trees_close(jax.grad(jax.jit(loss))(PARAMS, BATCH), want)
    assert_trees_close(jax.jit(jax.grad(loss))(PARAMS, BATCH), want)
    assert_trees_close(jax.jit(jax.value_and_grad(jax.jit(loss), argnums=(0, 1)))(PARAMS, BATCH),
                       jax.value_and_grad(loss, argnums=(0, 1))(PARAMS, BATCH))


def test_vmap_of_jit_with_pytrees_and_axes():
    batches = {"x": np.stack([BATCH["x"], -BATCH["x"]]), "y": np.stack([BATCH["y"]] * 2)}
    got = jax.vmap(jax.jit(mlp), in_axes=(None, 0))(PARAMS, batches)
    assert_trees_close(got, jax.vmap(mlp, in_axes=(None, 0))(PARAMS, batches))


def test_static_arguments_under_transformations():
    def f(x, power, scale=1.0):
        return jnp.sum(x ** power) * scale

    jf = jax.jit(f, static_argnums=1, static_argnames="scale")
    for power in (2, 3):
        assert_trees_close(jax.grad(jf)(X, power, scale=0.5), jax.grad(f)(X, power, 0.5))
        assert_trees_close(jax.vmap(jf, in_axes=(0, None))(np.stack([X, X]), power),
                           jax.vmap(f, in_axes=(0, None))(np.stack([X, X]), power))


def test_float32_dtypes_and_weak_types_under_transformations():
    def g(v):
        return jnp.sin(v) * 2.0

    with enable_x64(False):
        x = jnp.linspace(-1.0, 1.0, 4)
        pairs = [(jax.grad(jax.jit(smooth)), jax.grad(smooth), x),
                 (jax.vmap(jax.grad(jax.jit(g))), jax.vmap(jax.grad(g)), x),
                 (jax.jit(jax.grad(g)), jax.grad(g), 1.0),  # a weak scalar in and out
                 (jax.grad(jax.jit(g)), jax.grad(g), 1.0),
                 (jax.jit(jax.vmap(g)), jax.vmap(g), x)]
        for jitted, plain, arg in pairs:
            assert_trees_close(jitted(arg), plain(arg), rtol=1e-6, atol=1e-6)


def test_a_literal_result_of_a_branch_is_a_typed_array():
    # a cond branch returning a constant gave a Python float, which dot_general's code
    # then reshaped (found by the random programs)
    def f(p, x):
        y = lax.cond(p, lambda x: (x, 0.0), lambda x: (2 * x, 1.0), x)[1]
        return jnp.sum(jnp.dot(y, x))

    x = jnp.arange(1.0, 4.0)
    for p in (True, False):
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(p, x)), np.asarray(f(p, x)))
        np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(f, 1))(p, x)),
                                      np.asarray(jax.grad(f, 1)(p, x)))
