"""The interpreters and their nesting: the worked examples of the seed document, tracers,
escaped tracers, concretization errors, the jaxpr round trip and the type checker."""
import re

import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import core, ir
from didax._src.interpreters.jvp import JVPTracer
from didax.errors import ConcretizationTypeError, UnexpectedTracerError


def foo(x):
    return x * (x + 3.0)


def derivative(f, x):
    return jax.jvp(f, (x,), (1.0,))[1]


def nth_order_derivative(n, f, x):
    if n == 0:
        return f(x)
    return derivative(lambda x: nth_order_derivative(n - 1, f, x), x)


# --------------------------------------------------------------------------------------
# The seed document's examples


def test_eval():
    assert foo(jnp.asarray(2.0)) == 10.0
    assert float(foo(2.0)) == 10.0


def test_jvp():
    primal, tangent = jax.jvp(foo, (2.0,), (1.0,))
    assert (float(primal), float(tangent)) == (10.0, 7.0)


def test_higher_order_derivatives():
    assert [float(nth_order_derivative(n, foo, 2.0)) for n in range(5)] == [10, 7, 2, 0, 0]


def test_perturbation_confusion():
    def f(x):
        def g(y):
            return x  # constant in y: its derivative must be zero

        should_be_zero = derivative(g, 0.0)
        return x * should_be_zero

    assert float(derivative(f, 0.0)) == 0.0


def test_perturbation_confusion_nonzero_inner_derivative():
    # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x
    def f(x):
        return x * derivative(lambda y: x * y, 1.0)

    assert float(derivative(f, 3.0)) == 6.0


def test_roundtrip_eval_jaxpr_differentiates_again():
    closed = jax.make_jaxpr(foo)(2.0)

    def staged(x):
        return ir.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]

    p, t = jax.jvp(staged, (2.0,), (1.0,))
    assert (float(p), float(t)) == (10.0, 7.0)
    assert [float(nth_order_derivative(n, staged, 2.0)) for n in range(4)] == [10, 7, 2, 0]
    assert str(jax.make_jaxpr(staged)(2.0)) == str(closed)


# --------------------------------------------------------------------------------------
# Tracers and their interpreters


def test_jvp_tracers_are_tagged_with_their_interpreter():
    seen = []

    def f(x):
        seen.append(x)
        return x

    jax.jvp(f, (1.0,), (1.0,))
    assert isinstance(seen[0], JVPTracer)
    assert not seen[0]._interp.active


def test_constants_inside_jvp_are_not_traced():
    def f(x):
        c = jnp.sin(jnp.asarray(1.0))  # depends on nothing traced
        assert isinstance(c, core.Array)
        return x * c

    p, t = jax.jvp(f, (2.0,), (1.0,))
    assert np.isclose(float(t), np.sin(1.0))


def test_python_control_flow_on_concrete_primal_inside_jvp():
    def f(x):
        return x if x > 0 else -x

    assert tuple(map(float, jax.jvp(f, (-2.0,), (1.0,)))) == (2.0, -1.0)
    assert tuple(map(float, jax.jvp(f, (3.0,), (1.0,)))) == (3.0, 1.0)


def test_escaped_tracer_is_reported_with_its_origin():
    stash = []

    def f(x):
        stash.append(x)
        return x * 2.0

    jax.jvp(f, (1.0,), (1.0,))
    with pytest.raises(UnexpectedTracerError) as e:
        jnp.sin(stash[0])
    msg = str(e.value)
    assert "jvp" in msg and "test_core.py" in msg and "has already ended" in msg


def test_escaped_staging_tracer_names_where_it_was_created():
    stash = []

    def f(x):
        y = jnp.sin(x)
        stash.append(y)
        return y

    jax.make_jaxpr(f)(1.0)
    with pytest.raises(UnexpectedTracerError, match=r"created at .*test_core.py:\d+"):
        stash[0] + 1.0


def test_concretization_error_names_user_line_and_suggests_fixes():
    def f(x):
        if x > 0:  # the offending line
            return x
        return -x

    with pytest.raises(ConcretizationTypeError) as e:
        jax.make_jaxpr(f)(1.0)
    assert isinstance(e.value, TypeError)
    msg = str(e.value)
    line = f.__code__.co_firstlineno + 1
    assert f"test_core.py:{line}" in msg
    assert "lax.cond" in msg and "jnp.where" in msg and "static_argnums" in msg


@pytest.mark.parametrize("convert", [int, float, bool, lambda t: [0, 1, 2][t]])
def test_concretization_error_for_conversions(convert):
    with pytest.raises(ConcretizationTypeError):
        jax.make_jaxpr(lambda x: convert(x))(jnp.asarray(1))


def test_numpy_conversion_of_tracer_is_an_error():
    with pytest.raises(TypeError, match="NumPy"):
        jax.make_jaxpr(lambda x: np.sin(np.asarray(x)))(1.0)


# --------------------------------------------------------------------------------------
# Operator overloading on tracers and arrays


def _values(f, *args):
    """f evaluated eagerly, under jvp, and via its staged jaxpr: all must agree."""
    eager = f(*args)
    under_jvp = jax.jvp(f, args, tuple(np.zeros_like(np.asarray(a)) for a in args))[0]
    closed = jax.make_jaxpr(f)(*args)
    staged = ir.eval_jaxpr(closed.jaxpr, closed.consts, *args)[0]
    return np.asarray(eager), np.asarray(under_jvp), np.asarray(staged)


@pytest.mark.parametrize("f,expected", [
    (lambda x: 2 - x, [1.0, 0.0]),
    (lambda x: 1 / x, [1.0, 0.5]),
    (lambda x: 2 ** x, [2.0, 4.0]),
    (lambda x: x ** 2, [1.0, 4.0]),
    (lambda x: -x + +x * 3, [2.0, 4.0]),
    (lambda x: abs(-x), [1.0, 2.0]),
    (lambda x: 7 // x + 7 % x, [7.0, 4.0]),
    (lambda x: sum([x, x]), [2.0, 4.0]),
    (lambda x: (x > 1) & (x <= 2), [False, True]),
    (lambda x: (x == 1) | (x != 1), [True, True]),
    (lambda x: np.ones(2, np.float32) + x, [2.0, 3.0]),
    (lambda x: np.ones(2, np.float32) * x - x, [0.0, 0.0]),
])
def test_operators(f, expected):
    x = jnp.asarray(np.array([1.0, 2.0], np.float32))
    for v in _values(f, x):
        np.testing.assert_allclose(v, expected)


def test_numpy_array_defers_to_tracer():
    out = []

    def f(x):
        y = np.arange(3.0) + x
        out.append(type(y))
        return y

    jax.make_jaxpr(f)(jnp.asarray(np.ones(3, np.float32)))
    assert issubclass(out[0], core.Tracer)


def test_setitem_points_to_at():
    x = jnp.asarray(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        x[0] = 2.0


# --------------------------------------------------------------------------------------
# Arrays


def test_array_repr_matches_jax():
    assert repr(jnp.asarray(np.array([1, 2, 3], np.float32))) == \
        "Array([1., 2., 3.], dtype=float32)"
    assert repr(jnp.asarray(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(jnp.asarray(np.array([1, 2, 3]))) == "Array([1, 2, 3], dtype=int32)"
    assert repr(jnp.asarray(True)) == "Array(True, dtype=bool)"
    assert repr(jnp.asarray(np.ones((2, 3), np.float32))) == (
        "Array([[1., 1., 1.],\n       [1., 1., 1.]], dtype=float32)")
    assert repr(jnp.asarray(np.ones((0, 3), np.float32))) == \
        "Array([], shape=(0, 3), dtype=float32)"


def test_array_is_immutable_and_converts_to_numpy():
    a = np.arange(3.0, dtype=np.float32)
    x = jnp.asarray(a)
    a[0] = 100  # the array does not alias the caller's buffer
    assert float(np.asarray(x)[0]) == 0.0
    view = np.asarray(x)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 1.0
    assert x.block_until_ready() is x
    assert (x.shape, x.dtype, x.ndim, x.size) == ((3,), np.float32, 1, 3)
    with pytest.raises(TypeError):
        hash(x)


def test_x64_defaults():
    assert jnp.asarray(np.arange(3)).dtype == np.int32
    assert jnp.asarray(np.ones(3)).dtype == np.float32
    jax.config.update("jax_enable_x64", True)
    try:
        assert jnp.asarray(np.ones(3)).dtype == np.float64
        assert jnp.asarray(1.0).dtype == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert jnp.asarray(1.0).dtype == np.float32


# --------------------------------------------------------------------------------------
# Jaxprs: evaluation, type checking


def test_make_jaxpr_hoists_array_constants_and_inlines_scalars():
    c = np.arange(3.0, dtype=np.float32)
    closed = jax.make_jaxpr(lambda x: x + c + 2.0)(jnp.asarray(np.ones(3, np.float32)))
    assert len(closed.jaxpr.constvars) == 1
    np.testing.assert_array_equal(np.asarray(closed.consts[0]), c)
    assert "2.0:f32[]" in str(closed)
    ir.check_jaxpr(closed.jaxpr)


def test_type_checker_rejects_ill_typed_jaxprs():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * x)(1.0)
    ir.check_jaxpr(closed.jaxpr)
    bad_type = ir.Jaxpr(closed.jaxpr.constvars, closed.jaxpr.invars, closed.jaxpr.outvars,
                        list(closed.jaxpr.eqns))
    eqn = bad_type.eqns[0]
    bad_type.eqns[0] = ir.JaxprEqn(eqn.primitive, eqn.invars,
                                   [ir.Var(core.ShapedArray((2,), np.float32))], eqn.params)
    with pytest.raises(ir.JaxprTypeError, match="binder has type f32"):
        ir.check_jaxpr(bad_type)
    unbound = ir.Jaxpr([], [], closed.jaxpr.outvars, [])
    with pytest.raises(ir.JaxprTypeError, match="used before it is defined"):
        ir.check_jaxpr(unbound)


def test_eval_shape():
    out = jax.eval_shape(lambda x, y: {"s": x * y, "t": (x > 0)},
                         jax.ShapeDtypeStruct((2, 3), np.float32),
                         jnp.asarray(np.ones(3, np.float32)))
    assert out["s"] == jax.ShapeDtypeStruct((2, 3), np.float32)
    assert out["t"] == jax.ShapeDtypeStruct((2, 3), np.bool_)


def test_jvp_pytrees_and_has_aux():
    def f(p):
        return {"y": p["a"] * p["b"]}, "aux"

    primals = ({"a": 2.0, "b": 3.0},)
    tangents = ({"a": 1.0, "b": 0.0},)
    out, t, aux = jax.jvp(f, primals, tangents, has_aux=True)
    assert float(out["y"]) == 6.0 and float(t["y"]) == 3.0 and aux == "aux"


def test_jvp_argument_errors():
    with pytest.raises(ValueError, match="same shape"):
        jax.jvp(jnp.sin, (jnp.asarray(np.ones(3, np.float32)),),
                (jnp.asarray(np.ones(2, np.float32)),))
    with pytest.raises(TypeError, match="tuples or lists"):
        jax.jvp(jnp.sin, 1.0, 1.0)
    with pytest.raises(TypeError, match="tree structure"):
        jax.jvp(lambda a: a, ((1.0, 2.0),), ([1.0, 2.0],))


def test_jvp_of_integer_input_has_zero_tangent():
    float0_zero = np.zeros((), jax.dtypes.float0)
    p, t = jax.jvp(lambda n, x: x * n, (jnp.asarray(3), 2.0), (float0_zero, 1.0))
    assert float(p) == 6.0 and float(t) == 3.0
    with pytest.raises(TypeError, match="float0"):
        jax.jvp(lambda n, x: x * n, (jnp.asarray(3), 2.0), (jnp.asarray(0), 1.0))


def test_jacfwd_matches_analytic():
    x = jnp.asarray(np.array([0.5, 1.0, 1.5], np.float32))
    jac = np.asarray(jax.jacfwd(lambda v: jnp.sin(v) * v)(x))
    xs = np.asarray(x)
    np.testing.assert_allclose(jac, np.diag(np.cos(xs) * xs + np.sin(xs)), rtol=1e-6)
    assert jac.shape == (3, 3)


def test_jacfwd_pytree_and_argnums():
    def f(a, b):
        return {"u": a * b, "v": a + 2 * b}

    jac = jax.jacfwd(f, argnums=(0, 1))(2.0, 3.0)
    assert float(jac["u"][0]) == 3.0 and float(jac["u"][1]) == 2.0
    assert float(jac["v"][0]) == 1.0 and float(jac["v"][1]) == 2.0


def test_lax_ops_bind_under_every_interpreter():
    f = lambda x: lax.exp(lax.sin(x))  # noqa: E731
    closed = jax.make_jaxpr(f)(1.0)
    assert re.search(r"sin a.*exp b", str(closed))
    np.testing.assert_allclose(float(f(1.0)), np.exp(np.sin(1.0)), rtol=1e-6)
