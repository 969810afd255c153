"""Elementwise primitives beyond their records (tests/lax_records.py): broadcasting and empty
operands, integer division, shifts, selection, conversions, complex parts, derivative
conventions (ties, zero bases, |x| at 0) and the errors they raise."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax as jax
from didax import lax
from didax._src import ir
from didax._src.config import enable_x64


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


# Values and derivatives of every elementwise primitive, at each dtype and through every
# interpreter, are its record's (tests/lax_records.py, driven by test_records.py); here:
# broadcasting, empty operands, comparisons' and conversions' conventions, errors.

BINARY = [("add", lax.add, np.add), ("sub", lax.sub, np.subtract), ("mul", lax.mul, np.multiply),
          ("div", lax.div, np.divide), ("pow", lax.pow, np.power), ("max", lax.max, np.maximum),
          ("min", lax.min, np.minimum), ("atan2", lax.atan2, np.arctan2)]

COMPARISONS = [
    ("eq", lax.eq, np.equal), ("ne", lax.ne, np.not_equal), ("lt", lax.lt, np.less),
    ("le", lax.le, np.less_equal), ("gt", lax.gt, np.greater), ("ge", lax.ge, np.greater_equal),
]

LOGIC = [
    ("and", lax.bitwise_and, np.bitwise_and), ("or", lax.bitwise_or, np.bitwise_or),
    ("xor", lax.bitwise_xor, np.bitwise_xor),
]

SHAPES = [(), (3,), (2, 3), (0,), (2, 0, 3), (1, 4)]
# Pairs of shapes lax broadcasts: equal ranks with size-1 dims, or a rank-0 operand.
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (1, 3)), ((2, 1), (1, 3)),
                 ((2, 3), ()), ((), (4,)), ((0,), (0,)), ((0, 2), (1, 2))]

seeds = st.integers(0, 2 ** 16)


@pytest.mark.parametrize("name,fn,ref", BINARY, ids=[b[0] for b in BINARY])
@settings(max_examples=4, deadline=None)
@given(shapes=st.sampled_from(BINARY_SHAPES), seed=seeds)
def test_binary_broadcasting(name, fn, ref, shapes, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0.5, 2.0, shapes[0]), rng.uniform(-2.0, 2.0, shapes[1])
    out = np.asarray(fn(x, y))
    np.testing.assert_allclose(out, ref(x, y), rtol=1e-12, atol=1e-12)
    assert out.shape == np.broadcast_shapes(*shapes)
    # The staged JVP type-checks: tangents of broadcast operands take the output's shape.
    closed = jax.make_jaxpr(lambda a, b: jax.jvp(fn, (a, b), (a, b)))(x, y)
    ir.check_jaxpr(closed.jaxpr)
    _, t = jax.jvp(fn, (x, y), (np.ones_like(x), np.ones_like(y)))
    assert t.shape == out.shape


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unary_shapes_including_empty(shape):
    x = np.random.default_rng(0).uniform(0.5, 2.0, shape)
    for fn, ref in [(lax.sin, np.sin), (lax.log, np.log), (lax.floor, np.floor)]:
        out = np.asarray(fn(x))
        assert out.shape == shape
        np.testing.assert_allclose(out, ref(x), rtol=1e-12)
        _, t = jax.jvp(fn, (x,), (np.ones_like(x),))
        assert t.shape == shape


@pytest.mark.parametrize("name,fn,ref", COMPARISONS, ids=[c[0] for c in COMPARISONS])
@settings(max_examples=5, deadline=None)
@given(shapes=st.sampled_from(BINARY_SHAPES), seed=seeds)
def test_comparisons(name, fn, ref, shapes, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 3, shapes[0]).astype(float), rng.integers(0, 3, shapes[1]).astype(float)
    out = fn(x, y)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(out), ref(x, y))
    _, t = jax.jvp(lambda a: fn(a, y), (x,), (np.ones_like(x),))
    assert t.dtype == jax.dtypes.float0


@pytest.mark.parametrize("name,fn,ref", LOGIC, ids=[c[0] for c in LOGIC])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8])
def test_logic(name, fn, ref, dtype):
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 7, (3, 4)).astype(dtype), rng.integers(0, 7, (3, 4)).astype(dtype)
    out = fn(x, y)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), ref(x, y))
    np.testing.assert_array_equal(np.asarray(lax.bitwise_not(x)), np.invert(x))


def test_integer_division_truncates_like_c():
    x = np.array([7, -7, 7, -7, 3], np.int32)
    y = np.array([2, 2, -2, -2, 0], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.div(x, y)), [3, -3, -3, 3, -1])  # (XLA's x/0)
    np.testing.assert_array_equal(np.asarray(lax.rem(x, y)), [1, -1, 1, -1, 3])


def test_shifts():
    x = np.array([1, -8, 5], np.int32)
    s = np.array([1, 1, 40], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.shift_left(x, s)), [2, -16, 0])
    np.testing.assert_array_equal(np.asarray(lax.shift_right_arithmetic(x, s)), [0, -4, 0])
    np.testing.assert_array_equal(np.asarray(lax.shift_right_logical(x, s)),
                                  [0, 2147483644, 0])


def test_select_n_clamp_and_their_jvps():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    pred = x > 0
    np.testing.assert_array_equal(np.asarray(lax.select_n(pred, x, y)), np.where(pred, y, x))
    which = rng.integers(0, 3, (3, 4)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(lax.select_n(which, x, y, x + y)),
                                  np.choose(which, [x, y, x + y]))
    z = rng.uniform(-1, 1, (20,))
    z = z[np.abs(np.abs(z) - 0.5) > 0.05]
    np.testing.assert_array_equal(np.asarray(lax.clamp(-0.5, z, 0.5)), np.clip(z, -0.5, 0.5))
    _, t = jax.jvp(lambda a: lax.clamp(-0.5, a, 0.5), (z,), (np.ones_like(z),))
    np.testing.assert_array_equal(np.asarray(t), (np.abs(z) < 0.5).astype(float))


def test_convert_element_type():
    x = np.array([1.7, -2.5, np.nan, 1e12])
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(x, np.int32)),
                                  [1, -2, 0, 2147483647])
    out = lax.convert_element_type(x[:2], np.float32)
    assert out.dtype == np.float32
    _, t = jax.jvp(lambda a: lax.convert_element_type(a, np.int32), (x,), (np.ones(4),))
    assert t.dtype == jax.dtypes.float0


def test_complex_parts():
    z = np.array([1 + 2j, -3 + 0.5j])
    np.testing.assert_array_equal(np.asarray(lax.real(z)), z.real)
    np.testing.assert_array_equal(np.asarray(lax.imag(z)), z.imag)
    np.testing.assert_array_equal(np.asarray(lax.conj(z)), z.conj())
    np.testing.assert_array_equal(np.asarray(lax.complex(z.real, z.imag)), z)
    np.testing.assert_allclose(np.asarray(lax.abs(z)), np.abs(z))
    assert lax.abs(z).dtype == np.float64


def test_max_jvp_splits_ties_evenly():
    # JAX: the gradient of max at a tie is split 0.5 / 0.5.
    _, t = jax.jvp(lambda a: lax.max(a, np.float64(1.0)), (np.float64(1.0),), (np.float64(1.0),))
    assert float(t) == 0.5


def test_pow_derivative_at_zero_base():
    """As JAX 0.10.2: 0 ** y has slope 0 in y; in x at 0 ** 0 the slope y x ** (y - 1) is
    0 * inf = NaN for a float exponent, and 0 for an integer one (a Python int too)."""
    _, t = jax.jvp(lambda y: lax.pow(np.float64(0.0), y), (np.float64(2.0),), (np.float64(1.0),))
    assert float(t) == 0.0
    _, t = jax.jvp(lambda x: lax.pow(x, np.float64(0.0)), (np.float64(0.0),), (np.float64(1.0),))
    assert np.isnan(float(t))
    for y in (0, np.int32(0), np.zeros(3, np.int8)):
        _, t = jax.jvp(lambda x, y=y: lax.pow(x, y), (np.zeros(3),), (np.ones(3),))
        np.testing.assert_array_equal(np.asarray(t), [0.0, 0.0, 0.0])


# --------------------------------------------------------------------------------------
# Type errors name the operation, dtypes and shapes


def test_dtype_errors():
    with pytest.raises(TypeError, match="sin does not accept dtype int32"):
        lax.sin(np.ones(3, np.int32))
    with pytest.raises(TypeError, match="same dtypes, got float32, int32"):
        lax.add(np.ones(3, np.float32), np.ones(3, np.int32))
    with pytest.raises(TypeError,
                       match=r"incompatible shapes for broadcasting: \(3, 4\), \(2, 4\)"):
        lax.mul(np.ones((3, 4)), np.ones((2, 4)))
    with pytest.raises(TypeError, match="same number of dimensions"):
        lax.mul(np.ones((3, 4)), np.ones(4))
    with pytest.raises(TypeError, match="negative exponent"):
        lax.integer_pow(np.ones(3, np.int32), -1)


def test_errors_raised_while_staging_too():
    with pytest.raises(TypeError, match="sin does not accept dtype int32"):
        jax.make_jaxpr(lax.sin)(np.ones(3, np.int32))


def test_weak_types_propagate():
    assert lax.mul(2.0, 3.0).weak_type
    assert not lax.mul(np.float64(2.0), 3.0).weak_type
    assert lax.exp(2.0).weak_type
    assert math.isclose(float(lax.exp(1.0)), math.e)


def test_abs_derivative_conventions_as_jax():
    """JAX 0.10.2: the slope of |x| is +1 at 0 and -0, -1 at NaN; for complex x it is 0 at
    0 (values recorded from JAX)."""
    import didax.numpy as jnp

    points = np.array([-2.0, -0.0, 0.0, 3.0, np.nan], np.float32)
    grads = [float(jax.grad(jnp.abs)(p)) for p in points]
    np.testing.assert_array_equal(grads, [-1.0, 1.0, 1.0, 1.0, -1.0])
    _, t = jax.jvp(jnp.abs, (points,), (np.full(5, 2.0, np.float32),))
    np.testing.assert_array_equal(t, [-2.0, 2.0, 2.0, 2.0, -2.0])
    _, t = jax.jvp(jnp.abs, (np.complex64(0),), (np.complex64(1),))
    assert float(t) == 0.0
    _, t = jax.jvp(jnp.abs, (np.complex64(3 + 4j),), (np.complex64(1),))
    np.testing.assert_allclose(float(t), 0.6, rtol=1e-6)
