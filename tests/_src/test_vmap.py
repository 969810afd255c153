"""vmap through the public API: in_axes/out_axes forms, errors, nesting, and every order of
composition with jvp, grad and make_jaxpr; compositions of shape operations against loops,
batched on every axis."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import ir


def loop(f, in_axes, *args):
    """The specification of vmap: apply f per example and stack the results on axis 0."""
    sizes = {np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None}
    (n,) = sizes
    outs = [f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)])
            for i in range(n)]
    return np.stack([np.asarray(o) for o in outs])


# Each primitive batched over each operand, against a loop, is its record's
# (tests/lax_records.py, driven by tests/_src/lax/test_records.py); here, compositions.

SHAPE_FNS = [
    lambda x: x.T,
    lambda x: x.reshape(-1),
    lambda x: x[::-1, 1:],
    lambda x: jnp.concatenate([x, 2 * x], axis=1),
    lambda x: jnp.pad(x, ((1, 0), (0, 2))),
    lambda x: lax.pad(x, 0.5, ((1, 1, 1), (0, 0, 0))),
    lambda x: jnp.expand_dims(x, 1).squeeze(1),
    lambda x: jnp.broadcast_to(x[:, :1], (3, 4, 2)),
    lambda x: lax.rev(x, (0, 1)),
    lambda x: jnp.stack([x, x + 1], axis=-1),
]


@pytest.mark.parametrize("f", SHAPE_FNS)
@pytest.mark.parametrize("ax", [0, 1, 2, -1])
def test_shape_ops_against_loop(f, ax):
    x = np.random.default_rng(2).normal(size=(3, 4, 2)).astype(np.float32)
    x = np.moveaxis(x, 0, ax)
    np.testing.assert_allclose(np.asarray(jax.vmap(f, in_axes=ax)(x)), loop(f, (ax,), x))


def test_pad_with_a_batched_padding_value():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    v = np.array([-1.0, -2.0], np.float32)
    f = lambda a, p: lax.pad(a, p, ((1, 2, 1),))  # noqa: E731
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(x, v)), loop(f, (0, 0), x, v))


def test_pytree_in_axes_out_axes_and_kwargs():
    xs = {"a": np.ones((4, 3), np.float32), "b": np.arange(3.0, dtype=np.float32)}

    def f(d, scale=1.0):
        return {"s": d["a"] * d["b"] * scale, "t": d["b"]}

    out = jax.vmap(f, in_axes=({"a": 0, "b": None},), out_axes={"s": 1, "t": None})(xs)
    assert out["s"].shape == (3, 4) and out["t"].shape == (3,)
    out = jax.vmap(lambda a, scale: a * scale)(np.ones((4, 3)), scale=np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(out), np.arange(4.0)[:, None] * np.ones((4, 3)))


def test_constants_and_unbatched_outputs_broadcast():
    out = jax.vmap(lambda x: (2.0, x))(np.arange(3.0))
    assert out[0].shape == (3,) and not out[0].weak_type
    assert jax.vmap(lambda x: 1.0, axis_size=5, in_axes=None)(0.0).shape == (5,)


def test_errors_name_arguments_and_sizes():
    with pytest.raises(ValueError, match=r"(?s)inconsistent sizes.*size 3: axis 0 of argument 0 "
                                         r"\(`a`\) of type f32\[3\].*size 4: axis 0 of "
                                         r"argument 1 \(`b`\)"):
        jax.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        jax.vmap(lambda a, b: a, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="at least one non-None"):
        jax.vmap(lambda a: a, in_axes=None)(np.ones(3))
    with pytest.raises(ValueError, match="along axis 2"):
        jax.vmap(lambda a: a, in_axes=2)(np.ones(3))
    with pytest.raises(ValueError, match=r"in_axes\[1\] = \{'x': 0, 'y': 0\} does not match "
                                         r"argument 1"):
        jax.vmap(lambda a, d: d, in_axes=(0, {"x": 0, "y": 0}))(np.ones(3), {"x": np.ones(3)})
    with pytest.raises(ValueError, match="out_axes is None"):
        jax.vmap(lambda a: a, out_axes=None)(np.ones(3))


def test_bool_of_batched_value_is_a_concretization_error():
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.vmap(lambda x: x if x > 0 else -x)(np.ones(3))


def test_three_levels_of_nesting():
    x = np.random.default_rng(3).normal(size=(2, 3, 4)).astype(np.float32)
    f = jax.vmap(jax.vmap(jax.vmap(lambda v: jnp.sin(v) * 2.0)))
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * 2.0, rtol=1e-6)
    g = jax.vmap(jax.vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))
    a, b = np.arange(3.0), np.arange(4.0)
    np.testing.assert_array_equal(np.asarray(g(a, b)), np.outer(b, a))


def loss(w, x):
    return jnp.sum(jnp.tanh(x * w) ** 2)


def test_per_example_gradients_against_a_loop():
    rng = np.random.default_rng(4)
    w, xs = rng.normal(size=5).astype(np.float32), rng.normal(size=(8, 5)).astype(np.float32)
    got = jax.vmap(jax.grad(loss), in_axes=(None, 0))(w, xs)
    np.testing.assert_allclose(np.asarray(got),
                               np.stack([np.asarray(jax.grad(loss)(w, x)) for x in xs]),
                               rtol=1e-5)


def test_grad_of_vmapped_loss_and_vmap_of_jvp():
    rng = np.random.default_rng(5)
    w, xs = rng.normal(size=5), rng.normal(size=(8, 5))
    g = jax.grad(lambda w: jnp.sum(jax.vmap(loss, in_axes=(None, 0))(w, xs)))(w)
    expected = sum(np.asarray(jax.grad(loss)(w, x)) for x in xs)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-5)
    ts = rng.normal(size=(8, 5))
    out = jax.vmap(lambda t: jax.jvp(lambda v: loss(v, xs[0]), (w,), (t,))[1])(ts)
    np.testing.assert_allclose(np.asarray(out), [float(jax.jvp(lambda v: loss(v, xs[0]), (w,),
                                                                (t,))[1]) for t in ts],
                               rtol=1e-5)


@pytest.mark.parametrize("order", ["vmap(jvp)", "jvp(vmap)", "vmap(grad)", "grad(vmap)",
                                   "vmap(make_jaxpr)", "make_jaxpr(vmap)"])
def test_interpreters_nest_in_every_order(order):
    x = np.linspace(0.1, 0.9, 6).reshape(2, 3)
    f = jnp.sin
    sin_cos = np.cos(x)
    if order == "vmap(jvp)":
        out = jax.vmap(lambda v: jax.jvp(f, (v,), (np.ones(3),))[1])(x)
    elif order == "jvp(vmap)":
        out = jax.jvp(jax.vmap(f), (x,), (np.ones_like(x),))[1]
    elif order == "vmap(grad)":
        out = jax.vmap(jax.vmap(jax.grad(f)))(x)
    elif order == "grad(vmap)":
        out = jax.grad(lambda v: jnp.sum(jax.vmap(f)(v)))(x)
    elif order == "vmap(make_jaxpr)":
        closed = jax.make_jaxpr(f)(x[0])
        out = jax.vmap(lambda v: ir.eval_jaxpr(closed.jaxpr, closed.consts, v)[0])(x)
        sin_cos = np.sin(x)
    else:
        closed = jax.make_jaxpr(jax.vmap(jax.grad(f)))(x[0])
        assert [e.primitive.name for e in closed.jaxpr.eqns].count("cos") == 1
        out = ir.eval_jaxpr(closed.jaxpr, closed.consts, x[0])[0]
        sin_cos = np.cos(x[0])
    np.testing.assert_allclose(np.asarray(out), sin_cos, rtol=1e-6)


def test_batched_jaxpr_has_no_per_example_loop():
    closed = jax.make_jaxpr(jax.vmap(lambda v: jnp.sin(v) * v + 1.0))(np.ones((100, 3)))
    assert len(closed.jaxpr.eqns) == 3
    ir.check_jaxpr(closed.jaxpr)


def test_jacobians_are_one_batched_pass():
    f = lambda x: jnp.sin(x) * jnp.sum(x)  # noqa: E731
    x = np.linspace(0.1, 0.5, 4)
    for jac in (jax.jacfwd, jax.jacrev):
        closed = jax.make_jaxpr(jac(f))(x)
        names = [e.primitive.name for e in closed.jaxpr.eqns]
        assert names.count("sin") == 1, names  # no loop over the 4 basis vectors
    np.testing.assert_allclose(np.asarray(jax.jacfwd(f)(x)), np.asarray(jax.jacrev(f)(x)),
                               rtol=1e-6)


def test_out_of_range_axis_error_states_the_rank():
    with pytest.raises(ValueError, match=r"at least 2, but it is only 1"):
        jax.vmap(lambda x: x, in_axes=1)(jnp.ones(3))
