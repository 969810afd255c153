"""Every primitive with a native rule: native tier == NumPy tier == eager, on float32 and
float64, over drawn values (NaN, infinities, signed zeros included) and every broadcasting
lax allows. One jitted function computes all of them, so each (dtype, operand shapes)
builds one module and hypothesis examples reuse it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import didax
import didax.numpy as jnp
from didax import lax
from didax._src import core
from didax._src.compiler.native import emit
from didax._src.config import enable_x64

from .conftest import Tiers, assert_native, assert_same, executable

# Exactly rounded in C as in NumPy (IEEE operations): bitwise equal.
UNARY_EXACT = {
    "neg": lax.neg, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt, "abs": lax.abs,
    "square": lax.square,
    "integer_pow": lambda x: [lax.integer_pow(x, y) for y in (0, 1, 2, 3, 5, -1, -2, -7)],
    "convert_element_type": lambda x: lax.convert_element_type(
        lax.convert_element_type(x, np.float32 if x.dtype == np.float64 else np.float64),
        x.dtype),
}
BINARY_EXACT = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "max": lax.max,
    "min": lax.min, "eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt,
    "ge": lax.ge,
    "select_n": lambda x, y: [  # a predicate of the cases' shape, and a rank-0 one
        lax.select_n(lax.lt(x, y), lax.add(x, y), lax.sub(x, y)),
        lax.select_n(jnp.max(x) > 0, lax.mul(x, y), lax.div(x, y))],
}
# Functions NumPy computes with its own loops (which the native tier calls).
UNARY_LIBM = {"exp": lax.exp, "log": lax.log, "log1p": lax.log1p, "expm1": lax.expm1,
              "tanh": lax.tanh, "logistic": lax.logistic, "sin": lax.sin, "cos": lax.cos}
BINARY_LIBM = {"pow": lax.pow}
# Integer and block rules the random draws run natively (tests/_src/test_random_eager.py).
RANDOM = {"shift_left", "shift_right_logical", "sort", "threefry2x32"}
COUNTING = {"iota"}
CUMULATIVE = {"cumsum", "cumprod", "cummax", "cummin"}
# Integer rules with edges the C operators do not share (trapping division, wrapping |x|).
INTEGER = {"sign": lambda x, y: lax.sign(x),
           "population_count": lambda x, y: lax.population_count(x),
           "abs": lambda x, y: lax.abs(x) if x.dtype.kind == "i" else x,  # (signed only)
           "div": lax.div, "rem": lax.rem, "shift_right_arithmetic": lax.shift_right_arithmetic,
           "clamp": lambda x, y: [lax.clamp(y, x, y + 1), lax.clamp(x[0], x, y[-1])]}
COPIES = {"concatenate", "split"}


def test_primitives_with_native_rules():
    have = {n for n, p in core.all_primitives.items() if "native" in p.rules}
    from .test_gathers_scatters import GATHERS_SCATTERS
    from .test_loops import CONTROL, LAYOUT
    from .test_products_reductions_views import PRODUCTS_REDUCTIONS_VIEWS
    assert have == (set(UNARY_EXACT) | set(BINARY_EXACT) | set(UNARY_LIBM) | set(BINARY_LIBM)
                    | PRODUCTS_REDUCTIONS_VIEWS | CONTROL | LAYOUT | RANDOM | COUNTING
                    | CUMULATIVE | set(INTEGER) | COPIES | GATHERS_SCATTERS)


def _unary(x):
    return {k: f(x) for k, f in {**UNARY_EXACT, **UNARY_LIBM}.items()}


def _binary(x, y):
    return {k: f(x, y) for k, f in {**BINARY_EXACT, **BINARY_LIBM}.items()}


_unary_tiers = Tiers(_unary)
_binary_tiers = Tiers(_binary)

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 100.0, -100.0, 1e-30]


def _arrays(dtype, shape):
    width = 32 if dtype == np.float32 else 64
    elements = st.one_of(st.sampled_from(SPECIAL),
                         st.floats(width=width, allow_nan=True, allow_infinity=True),
                         st.floats(-30, 30, width=width))
    return hnp.arrays(dtype, shape, elements=elements)


def _compare(native, numpy_, eager, exact):
    for k in native:
        many = isinstance(native[k], list)
        for n, m, e in zip(*((t[k] if many else [t[k]]) for t in (native, numpy_, eager))):
            assert_same(m, e)  # the NumPy tier runs the impls
            assert_same(n, m)  # the native tier calls NumPy's loops


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=25, deadline=None)  # each example builds C with gcc
@given(data=st.data())
def test_unary(dtype, data):
    with enable_x64(dtype == np.float64):
        x = data.draw(_arrays(dtype, (3, 5)))
        native, numpy_, eager = _unary_tiers(x)
        assert_native(_unary_tiers.native, x)
        _compare(native, numpy_, eager, UNARY_EXACT)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("y_shape", [(3, 5), (1, 5), (3, 1), ()])
@settings(max_examples=15, deadline=None)  # each example builds C with gcc
@given(data=st.data())
def test_binary_broadcasting(dtype, y_shape, data):
    with enable_x64(dtype == np.float64):
        x = data.draw(_arrays(dtype, (3, 5)))
        y = data.draw(_arrays(dtype, y_shape))
        native, numpy_, eager = _binary_tiers(x, y)
        _compare(native, numpy_, eager, BINARY_EXACT)
        assert_native(_binary_tiers.native, x, y)
        native, numpy_, eager = _binary_tiers(y, x)  # the broadcast operand first
        _compare(native, numpy_, eager, BINARY_EXACT)


CAST_VALUES = [np.inf, -np.inf, np.nan, 0.0, -0.0, 0.9, -0.9, -1.5, 2.5, 127.5, 128.0, -129.0,
               255.9, 256.0, 32767.9, 65535.5, 2147483520.0, 2.0 ** 31, -2.0 ** 31 - 1e3, 3e9,
               4294967040.0, 2.0 ** 32, 9.2e18, 2.0 ** 63, -2.0 ** 63, 1.8e19, 2.0 ** 64, 1e20,
               -1e20]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_float_to_integer_conversions_saturate_as_jax(src):
    """Float to integer: truncation, saturating at the extremes (infinities too), NaN to 0,
    in C as in the impl and as in JAX."""
    import jax

    def f(x):
        return [lax.convert_element_type(x, d) for d in INTS]

    x = np.array(CAST_VALUES, src)
    tiers = Tiers(f)
    with enable_x64(True), jax.enable_x64(True):
        native, numpy_, eager = tiers(x)
        want = jax.jit(lambda x: [jax.lax.convert_element_type(x, d) for d in INTS])(x)
        assert_native(tiers.native, x)
    for n, m, e, w in zip(native, numpy_, eager, want):
        assert_same(m, e)
        assert_same(n, m)
        assert_same(e, np.asarray(w))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logistic_tail_in_some_blocks(dtype):
    """logistic(x) is exp(x) where exp(-x) overflows: the native loop calls NumPy's exp on
    x only for the blocks (of 128 elements) holding such an x, and gives the NumPy tier's
    bits in every block."""
    with enable_x64(dtype == np.float64):
        x = np.linspace(-5, 5, 400).astype(dtype)
        x[200:210] = np.linspace(-1000, -80, 10).astype(dtype)  # in the second block only
        tiers = Tiers(lambda x: lax.logistic(x) * 2.0)
        native, numpy_, eager = tiers(x)
        assert_same(native, numpy_)
        assert_same(numpy_, eager)
        tiny = np.log(np.finfo(dtype).smallest_subnormal)
        assert np.all(native[200:210][x[200:210] > tiny + 1] > 0)  # (exp(x), not 0)
        assert np.any(x[200:210] > tiny + 1)
        assert_native(tiers.native, x)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.float32])
@pytest.mark.parametrize("shape, dimension", [((5,), 0), ((3, 4), 0), ((3, 4), 1),
                                              ((2, 3, 4), 1), ((300,), 0)])
def test_iota(dtype, shape, dimension):
    """Each element's index along `dimension`, written by one native loop."""
    tiers = Tiers(lambda x: lax.broadcasted_iota(dtype, shape, dimension) + x)
    one = np.asarray(1, dtype)
    native, numpy_, eager = tiers(one)
    want = np.arange(shape[dimension], dtype=dtype).reshape(
        [-1 if i == dimension else 1 for i in range(len(shape))]) + one
    assert_same(native, np.broadcast_to(want, shape))
    assert_same(native, numpy_)
    assert_same(native, eager)
    assert_native(tiers.native, one)



def _cumulative(x):
    return {f"{name} {axis} {reverse}": getattr(lax, name)(x, axis, reverse)
            for name in sorted(CUMULATIVE) for axis in range(x.ndim) for reverse in (0, 1)}


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (3, 70), (2, 3, 5)])
def test_cumulative_reductions_in_order(dtype, shape):
    """Each line combined in order, as NumPy's accumulate: sums and products wrap on
    integers; NaN, infinities and signed zeros (equal zeros: the later one) as NumPy's."""
    rng = np.random.default_rng(4)
    x = rng.integers(-4, 5, shape)
    if np.dtype(dtype).kind == "f":
        x = x.astype(dtype)
        x[x == 4] = np.nan
        x[x == 3] = -0.0
        x[x == -4] = np.inf
        x = x * rng.uniform(0.5, 1.5, shape).astype(dtype)
    else:
        x = (x * 37).astype(dtype)
    tiers = Tiers(_cumulative)
    native, numpy_, eager = tiers(x)
    for k in native:
        assert_same(native[k], numpy_[k])
        assert_same(native[k], eager[k])
    assert_native(tiers.native, x)


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _edges(dtype):
    """Every pair of a value and a divisor (or shift count) from the dtype's edges."""
    info = np.iinfo(dtype)
    values = sorted({v for v in (int(info.min), int(info.min) + 1, -7, -2, -1, 0, 1, 2, 7,
                                 8, 31, 32, 63, 64, 100, int(info.max) - 1, int(info.max))
                     if info.min <= v <= info.max})
    v = np.array(values, object)
    return (np.repeat(v, len(v)).astype(dtype), np.tile(v, len(v)).astype(dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_rules_at_the_edges(dtype):
    """x / 0, x % 0, INT_MIN / -1, INT_MIN % -1, |INT_MIN|, shifts by negative counts and
    counts beyond the width: the native tier gives the impls' (XLA's) values, not C's."""
    x, y = _edges(dtype)
    with enable_x64(np.dtype(dtype).itemsize == 8):
        tiers = Tiers(lambda x, y: {k: f(x, y) for k, f in INTEGER.items()})
        tiers_out = native, numpy_, eager = tiers(x, y)
        for k in native:
            for n, m, e in zip(*(t[k] if k == "clamp" else [t[k]] for t in tiers_out)):
                assert_same(n, m)
                assert_same(n, e)
        assert_native(tiers.native, x, y)
        assert executable(tiers.native, x, y).native.plan.python_equations == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint32, np.bool_])
def test_concatenations_and_splits_are_copies(dtype):
    def f(a, b, c):
        x = jnp.concatenate([a, b], axis=0)
        y = jnp.concatenate([a.T, c, c[:, :0]], axis=1)
        p, q, r = lax.split(y, (1, 0, 5), axis=1)
        u, w = lax.split(x, (2, 3))
        # (an operand twice in one block: jnp.stack([b, b]))
        return (x, y, p, q, r, u, w, jnp.concatenate([w[:, 1], u[0]]), jnp.stack([b, b]),
                lax.dynamic_update_slice(b, b, (1, 0)))

    rng = np.random.default_rng(1)
    args = [(rng.integers(-9, 9, s) * 13).astype(dtype) for s in ((2, 3), (3, 3), (3, 4))]
    tiers = Tiers(f)
    native, numpy_, eager = tiers(*args)
    for n, m, e in zip(native, numpy_, eager):
        assert_same(n, m)
        assert_same(n, e)
    assert_native(tiers.native, *args)
    assert executable(tiers.native, *args).native.plan.python_equations == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_views_of_constants_are_filled_natively(dtype):
    """A broadcast (or reshape) of a literal too large to fold into a constant is its value
    in every element, computed by the loop that reads it; in a branch, and empty, too."""
    one = np.asarray(1, dtype)

    def f(x, big):
        full = lax.broadcast_in_dim(one, big.shape, ())
        fill = lax.cond(x[0, 0] == 0, lambda x: lax.broadcast_in_dim(one, x.shape, ()),
                        lambda x: x, x)
        return (lax.broadcast_in_dim(one, (0,), ()), full, big + full * big, fill,
                lax.reshape(one, (1, 1)))

    x = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    big = (np.arange(256 * 300).reshape(256, 300) % 3).astype(dtype)  # (> FOLD_MAX_SIZE)
    closed = didax.make_jaxpr(f)(x, big)
    assert emit.native_kind(closed.jaxpr.eqns[0]) == "elementwise"
    tiers = Tiers(f)
    native, numpy_, eager = tiers(x, big)
    for n, m, e in zip(native, numpy_, eager):
        assert_same(n, m)
        assert_same(n, e)
    assert_native(tiers.native, x, big)
    assert executable(tiers.native, x, big).native.plan.python_equations == 0
