"""Concretizing a value: Python and NumPy conversions of values being differentiated or
batched raise JAX's exception types (never a silently dropped derivative), naming the
user's line; values with no tangent, and Python control flow on concrete primals under
eager differentiation, work as in JAX 0.10.2."""
import operator

import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

# --------------------------------------------------------------------------------------
# Conversions of a value being differentiated

# (name, conversion, the exception JAX 0.10.2 raises for it under grad/jvp/jacfwd/jacrev).
# Each conversion is a lambda on its own line: the error must name that line.
DROPS_THE_TANGENT = [
    ("float", lambda x: float(x), ConcretizationTypeError),
    ("complex", lambda x: complex(x), ConcretizationTypeError),
    ("tolist", lambda x: x.tolist(), ConcretizationTypeError),
    ("np.asarray", lambda x: np.asarray(x), TracerArrayConversionError),
    ("np.sin", lambda x: np.sin(x), TracerArrayConversionError),
    ("np.array", lambda x: np.array(x, np.float64), TracerArrayConversionError),
    # JAX returns the primal here, dropping the derivative; didax raises (see README)
    ("item", lambda x: x.item(), ConcretizationTypeError),
]


def _grad(f, x):
    return jax.grad(lambda v: jnp.sum(f(v)))(x)


def _jvp(f, x):
    return jax.jvp(f, (x,), (jnp.ones_like(x),))


def _jacfwd(f, x):
    return jax.jacfwd(f)(x)


def _jacrev(f, x):
    return jax.jacrev(f)(x)


def _vjp(f, x):
    return jax.vjp(f, x)


def _hessian(f, x):
    return jax.hessian(lambda v: jnp.sum(f(v)))(x)


def _grad_of_grad(f, x):
    return jax.grad(jax.grad(lambda v: jnp.sum(f(v))))(x)


def _vmap_of_grad(f, x):
    return jax.vmap(jax.grad(lambda v: jnp.sum(f(v))))(jnp.stack([x, x]))


DIFFERENTIATING = [_grad, _jvp, _jacfwd, _jacrev, _vjp, _hessian, _grad_of_grad,
                   _vmap_of_grad]


@pytest.mark.parametrize("transform", DIFFERENTIATING, ids=lambda t: t.__name__[1:])
@pytest.mark.parametrize("name,convert,error", DROPS_THE_TANGENT,
                         ids=[c[0] for c in DROPS_THE_TANGENT])
def test_conversion_of_a_differentiated_value_raises(transform, name, convert, error):
    def f(x):
        return x * jnp.asarray(convert(x), jnp.float32)

    with pytest.raises(error) as e:
        transform(f, jnp.float32(1.5))
    assert type(e.value) is error
    msg = str(e.value)
    assert f"test_concretization.py:{convert.__code__.co_firstlineno} " in msg
    assert "being differentiated" in msg and "f32[]" in msg
    assert "stop_gradient" in msg and "jnp" in msg


def test_the_reported_silent_zero_gradient_is_an_error():
    with pytest.raises(ConcretizationTypeError, match="float\\(\\) of a value being "
                                                      "differentiated"):
        jax.grad(lambda x: float(x) * 2.0)(1.0)


@pytest.mark.parametrize("transform", [_grad, _jvp, _jacrev], ids=["grad", "jvp", "jacrev"])
def test_conversion_of_a_differentiated_array_raises(transform):
    with pytest.raises(TracerArrayConversionError, match="f32\\[3\\]"):
        transform(lambda x: x * np.asarray(x), jnp.arange(3.0))
    with pytest.raises(ConcretizationTypeError, match="tolist"):
        transform(lambda x: x * jnp.asarray(x.tolist()), jnp.arange(3.0))


@pytest.mark.parametrize("convert", [float, int, complex], ids=["float", "int", "complex"])
def test_scalar_conversion_of_a_differentiated_array_is_a_shape_error(convert):
    # as in JAX: the shape is checked first, a plain TypeError
    with pytest.raises(TypeError, match="Only scalar arrays") as e:
        _jvp(lambda x: x * convert(x), jnp.arange(3.0))
    assert not isinstance(e.value, ConcretizationTypeError)


def test_index_of_a_differentiated_value_is_a_type_error():
    # JAX: a float is no index, whether or not it is differentiated (a plain TypeError)
    for transform in (_grad, _jvp, _jacfwd, _jacrev):
        with pytest.raises(TypeError, match="integer scalar") as e:
            transform(lambda x: x * [1.0, 2.0, 3.0][x], jnp.float32(1.5))
        assert not isinstance(e.value, ConcretizationTypeError)


def test_error_names_the_transformation_that_differentiates():
    def f(x):
        return float(x)

    with pytest.raises(ConcretizationTypeError) as e:
        jax.grad(f)(1.0)  # the transformation's line
    msg = str(e.value)
    line = f.__code__.co_firstlineno + 1
    assert f"test_concretization.py:{line} (f)" in msg
    assert "jvp transformation" in msg and "started at" in msg and "(test_error_names" in msg


def test_an_escaped_differentiated_value_is_reported_as_escaped():
    stash = []
    jax.grad(lambda x: (stash.append(x), x)[1])(1.0)
    with pytest.raises(UnexpectedTracerError):
        float(stash[0])
    with pytest.raises(UnexpectedTracerError):
        np.asarray(stash[0])


# --------------------------------------------------------------------------------------
# Conversions of a batched value

# (name, conversion, the exception JAX raises under vmap of a float and of an int value)
BATCHED = [
    ("float", lambda x: float(x), ConcretizationTypeError, ConcretizationTypeError),
    ("int", lambda x: int(x), ConcretizationTypeError, ConcretizationTypeError),
    ("complex", lambda x: complex(x), ConcretizationTypeError, ConcretizationTypeError),
    ("item", lambda x: x.item(), ConcretizationTypeError, ConcretizationTypeError),
    ("tolist", lambda x: x.tolist(), ConcretizationTypeError, ConcretizationTypeError),
    ("np.asarray", lambda x: np.asarray(x), TracerArrayConversionError,
     TracerArrayConversionError),
    ("bool", lambda x: bool(x), TracerBoolConversionError, TracerBoolConversionError),
    ("if x > 0", lambda x: 1 if x > 0 else 0, TracerBoolConversionError,
     TracerBoolConversionError),
    ("__index__", lambda x: operator.index(x), TypeError, TracerIntegerConversionError),
    ("range", lambda x: range(x), TypeError, TracerIntegerConversionError),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["float", "int"])
@pytest.mark.parametrize("name,convert,float_error,int_error", BATCHED,
                         ids=[c[0] for c in BATCHED])
def test_conversion_of_a_batched_value_raises(name, convert, float_error, int_error, dtype):
    error = float_error if dtype is np.float32 else int_error

    def f(x):
        convert(x)
        return x

    with pytest.raises(error) as e:
        jax.vmap(f)(np.arange(3, dtype=dtype))
    assert type(e.value) is error
    if error is TypeError:  # not a concretization problem: a float is no index
        assert "integer scalar" in str(e.value)
        return
    msg = str(e.value)
    assert f"test_concretization.py:{convert.__code__.co_firstlineno} " in msg
    assert "batched by vmap" in msg and "jnp.where" in msg and "in_axes=None" in msg


def test_batched_value_inside_grad_names_vmap():
    with pytest.raises(TracerBoolConversionError, match="batched by vmap"):
        jax.grad(lambda x: jnp.sum(jax.vmap(lambda y: y if y > x else -y)(jnp.arange(3.0))))(1.0)


def test_unbatched_values_under_vmap_convert():
    c = jnp.float32(3.0)
    out = jax.vmap(lambda x, y: x * float(y) * float(c) * np.asarray(y),
                   in_axes=(0, None))(jnp.ones(2), jnp.float32(2.0))
    np.testing.assert_array_equal(np.asarray(out), [12.0, 12.0])


# --------------------------------------------------------------------------------------
# Values with no tangent convert under eager differentiation, as in JAX


def test_stop_gradient_values_convert():
    def f(x):
        s = lax.stop_gradient(x)
        v = lax.stop_gradient(x * jnp.ones(2))
        return x * float(s) * complex(s).real * np.asarray(s) * jnp.asarray(s).item() \
            * v.tolist()[0] / 32.0

    assert float(jax.grad(f)(2.0)) == 1.0
    assert float(jax.jvp(f, (2.0,), (1.0,))[1]) == 1.0
    assert float(jax.jacfwd(f)(2.0)) == 1.0
    assert float(jax.jacrev(f)(2.0)) == 1.0


def test_integer_arguments_convert():
    def f(x, n):
        return x * float(n) * int(n) * np.asarray(n) * n.item() * n.tolist() * operator.index(n)

    assert float(jax.grad(f)(2.0, jnp.int32(3))) == 729.0
    f0 = np.zeros((), jax.dtypes.float0)
    # an integer's tangent is float0: converting it drops nothing
    p, t = jax.jvp(lambda n: jnp.float32(float(n)) + jnp.asarray(np.asarray(n) + n.item()),
                   (jnp.int32(3),), (f0,))
    assert float(p) == 9.0 and float(t) == 0.0


def test_closed_over_constants_convert():
    c = jnp.float32(3.0)
    a = jnp.arange(2.0)

    def f(x):
        return x * float(c) * np.asarray(c) * c.item() + x * np.sum(np.asarray(a)) \
            * a.tolist()[1]

    assert float(jax.grad(f)(2.0)) == 28.0
    # a value of an enclosing differentiation is a constant to an inner one, but it is
    # still being differentiated: converting it raises
    with pytest.raises(ConcretizationTypeError, match="being differentiated"):
        jax.grad(lambda x: jax.grad(lambda y: y * float(x))(1.0))(2.0)


def test_int_of_a_differentiated_value_is_piecewise_constant():
    # as in JAX: int() (like floor) has a zero derivative, so dropping the tangent is right
    assert float(jax.grad(lambda x: x * int(x))(2.5)) == 2.0
    assert float(jax.grad(lambda x: x * int(jnp.floor(x)))(2.5)) == 2.0
    assert float(jax.grad(lambda x: x * [1.0, 2.0, 3.0][x.astype(int)])(1.5)) == 2.0


# --------------------------------------------------------------------------------------
# Comparisons and bool() on concrete primals, as in JAX


def absolute(x):
    return x if x > 0 else -x


@pytest.mark.parametrize("x,slope", [(-2.0, -1.0), (2.0, 1.0)])
def test_python_branches_on_concrete_primals(x, slope):
    assert float(jax.grad(absolute)(x)) == slope
    assert float(jax.jvp(absolute, (x,), (1.0,))[1]) == slope
    assert float(jax.jacfwd(absolute)(x)) == slope
    assert float(jax.jacrev(absolute)(x)) == slope
    assert float(jax.grad(lambda v: absolute(v) * (v == x))(x)) == slope


def test_python_loops_and_array_predicates_on_concrete_primals():
    def doubling(x):
        while x < 10.0:
            x = x * 2.0
        return x

    assert float(jax.grad(doubling)(1.5)) == 8.0  # 1.5 -> 12: three doublings
    assert float(jax.grad(lambda x: x**3 if x > 0 else -x)(2.0)) == 12.0
    assert float(jax.grad(jax.grad(lambda x: x**3 if x > 0 else -x))(2.0)) == 12.0
    g = jax.grad(lambda x: jnp.sum(x) if bool(jnp.all(x > 0)) else 0.0)(jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0])


def test_python_branches_on_staged_values_raise():
    with pytest.raises(TracerBoolConversionError, match="static_argnums"):
        jax.jit(jax.grad(absolute))(2.0)
    with pytest.raises(ConcretizationTypeError, match="being differentiated"):
        jax.jit(jax.grad(lambda x: float(x)))(2.0)


@pytest.mark.parametrize("size", [0, 3])
def test_bool_of_a_traced_array_that_is_not_one_element_is_a_value_error(size):
    # as in JAX: the size is checked before concretization, so jit, vmap and grad agree
    x = jnp.ones(size)
    with pytest.raises(ValueError, match="ambiguous"):
        jax.jit(lambda v: bool(v))(x)
    with pytest.raises(ValueError, match="ambiguous"):
        jax.vmap(lambda v: bool(v))(jnp.ones((2, size)))
    with pytest.raises(ValueError, match="ambiguous"):
        jax.grad(lambda v: jnp.sum(v) if v else 0.0)(x)


def test_error_types_are_the_builtin_exceptions_jaxs_are():
    """Each error type of didax.errors is a subclass of the same builtin exceptions as
    JAX's (an escaped tracer is a TypeError there: `except TypeError` catches it in both)."""
    import jax.errors

    import didax.errors

    builtins = (TypeError, ValueError, IndexError, LookupError, RuntimeError, Exception)
    for name in dir(jax.errors):
        theirs = getattr(jax.errors, name)
        ours = getattr(didax.errors, name, None)
        if not (isinstance(theirs, type) and issubclass(theirs, BaseException)) or ours is None:
            continue
        assert [issubclass(theirs, b) for b in builtins] == [
            issubclass(ours, b) for b in builtins], name
    assert issubclass(didax.errors.UnexpectedTracerError, TypeError)
