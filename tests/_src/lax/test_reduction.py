"""Tests for the reduction family: reduce_*, argmin/argmax, cumulative reductions, sort, top_k.

Impls are compared with independent pure-Python/NumPy references on hypothesis-drawn shapes
and axes (empty arrays and ties included); derivatives with `check_grads` (order 2, float64,
forward and reverse mode); transposes of the linear maps against the adjoint identity.
Literals marked "JAX" were produced by running JAX 0.10.2.
"""
import functools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from didax._src import core, dtypes
from didax._src.config import enable_x64
from didax._src.lax import reduction as lax
from didax._src.transforms import api
from didax._src.transforms.public_test_util import check_grads
from didax._src.tree_util import tree_leaves

SETTINGS = settings(max_examples=25, deadline=None)
GRAD_SETTINGS = settings(max_examples=6, deadline=None)
nan, inf = np.nan, np.inf


@pytest.fixture(autouse=True, scope="module")
def _x64():
    with enable_x64(True):
        yield


def arr(x, dtype=None):
    return np.asarray(x, dtype)


# --------------------------------------------------------------------------------------
# Strategies: shapes (scalars and empty dims included), axes, and values from a seed.


@st.composite
def shape_and_axes(draw, min_ndim=0, max_size=4, nonempty=False):
    lo = 1 if nonempty else 0
    shape = tuple(draw(st.lists(st.integers(lo, max_size), min_size=min_ndim, max_size=3)))
    axes = tuple(draw(st.permutations(range(len(shape))))[:draw(st.integers(0, len(shape)))])
    return shape, axes


def values(seed, shape, dtype, low=-3, high=4):
    """Small integers (so ties are frequent), cast to `dtype`."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.unsignedinteger):
        low = 0
    x = rng.integers(low, high, shape)
    if np.issubdtype(dtype, np.complexfloating):
        return (x + 1j * rng.integers(low, high, shape)).astype(dtype)
    return x.astype(dtype)


def distinct(seed, shape, scale=1.0):
    """float64 values without ties (for derivatives of max/min/sort)."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    return (rng.permutation(n) * scale + rng.uniform(0.1, 0.4, n)).reshape(shape) - n * scale / 2


seeds = st.integers(0, 2**32 - 1)


# --------------------------------------------------------------------------------------
# Independent references


def ref_reduce(x, axes, op, identity):
    """Folds `op` with Python over the reduced axes moved last and flattened."""
    keep = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, keep + list(axes)).reshape(
        [x.shape[i] for i in keep] + [math.prod(x.shape[a] for a in axes)])
    out = np.empty(moved.shape[:-1], x.dtype)
    for idx in np.ndindex(*moved.shape[:-1]):
        out[idx] = functools.reduce(op, moved[idx], np.asarray(identity, x.dtype)[()])
    return out


def _max_op(a, b):
    return a if a != a or a >= b else b  # NaN propagates


def _min_op(a, b):
    return a if a != a or a <= b else b


def ident_max(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return False
    return np.iinfo(dtype).min if dtype.kind in "iu" else -inf


def ident_min(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).max if dtype.kind in "iu" else inf


REDUCERS = {
    "reduce_sum": (lax.reduce_sum, lambda a, b: a + b, lambda d: 0,
                   ["int8", "uint8", "int32", "float32", "float64", "complex64"]),
    "reduce_prod": (lax.reduce_prod, lambda a, b: a * b, lambda d: 1,
                    ["int8", "int32", "uint16", "float64", "complex128"]),
    "reduce_max": (lax.reduce_max, _max_op, ident_max,
                   ["bool", "int8", "uint8", "int64", "float32", "float64"]),
    "reduce_min": (lax.reduce_min, _min_op, ident_min,
                   ["bool", "int8", "uint8", "int64", "float32", "float64"]),
    "reduce_and": (lax.reduce_and, lambda a, b: a & b,
                   lambda d: True if d == np.bool_ else np.asarray(-1).astype(d),
                   ["bool", "int8", "uint8", "int32"]),
    "reduce_or": (lax.reduce_or, lambda a, b: a | b, lambda d: 0, ["bool", "int16", "uint32"]),
    "reduce_xor": (lax.reduce_xor, lambda a, b: a ^ b, lambda d: 0, ["bool", "int8", "uint64"]),
}


@pytest.mark.parametrize("name", sorted(REDUCERS))
@SETTINGS
@given(sa=shape_and_axes(), seed=seeds, data=st.data())
def test_reduce_matches_reference(name, sa, seed, data):
    fn, op, identity, dts = REDUCERS[name]
    dtype = np.dtype(data.draw(st.sampled_from(dts)))
    shape, axes = sa
    x = values(seed, shape, dtype)
    out = fn(x, axes)
    with np.errstate(over="ignore"):
        expected = ref_reduce(x, axes, op, identity(dtype))
    assert out.dtype == dtype  # integer reductions keep their dtype at the lax level
    assert out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_reductions_of_empty_arrays_give_the_identity():
    # JAX: reductions over an empty axis.
    cases = [
        (lax.reduce_sum, "float32", 0.0), (lax.reduce_prod, "int8", 1),
        (lax.reduce_max, "float32", -inf), (lax.reduce_min, "float32", inf),
        (lax.reduce_max, "int8", -128), (lax.reduce_min, "int8", 127),
        (lax.reduce_max, "uint8", 0), (lax.reduce_min, "uint8", 255),
        (lax.reduce_max, "bool", False), (lax.reduce_min, "bool", True),
        (lax.reduce_and, "int8", -1), (lax.reduce_and, "uint8", 255),
        (lax.reduce_and, "bool", True), (lax.reduce_or, "int8", 0),
        (lax.reduce_xor, "bool", False), (lax.reduce_max, "complex64", -inf),
        (lax.reduce_prod, "complex64", 1),
    ]
    for fn, dtype, expected in cases:
        out = fn(np.zeros((0, 2), dtype), (0,))
        assert out.dtype == np.dtype(dtype) and out.shape == (2,), (fn, dtype)
        np.testing.assert_array_equal(np.asarray(out), np.full((2,), expected, dtype))


def test_integer_reductions_wrap_and_keep_dtype():
    x = arr([100, 100, 3], np.int8)
    assert lax.reduce_sum(x, (0,)).dtype == np.int8
    assert int(lax.reduce_sum(x, (0,))) == -53  # JAX: wraps like int8 arithmetic
    assert int(lax.reduce_prod(arr([100, 100], np.int8), (0,))) == 16  # JAX
    assert int(lax.reduce_xor(arr([5, 3, 1], np.int32), (0,))) == 7  # JAX
    assert int(lax.reduce_and(arr([5, 3, 7], np.int32), (0,))) == 1  # JAX
    assert bool(lax.reduce_xor(arr([True, True, True]), (0,)))  # JAX


def test_reduce_max_min_propagate_nan():
    x = arr([1.0, nan, 3.0, -1.0])
    assert np.isnan(float(lax.reduce_max(x, (0,))))
    assert np.isnan(float(lax.reduce_min(x, (0,))))
    np.testing.assert_array_equal(np.asarray(lax.reduce_max(arr([[nan, 1.0], [0.0, 2.0]]), (1,))),
                                  [nan, 2.0])


def test_weak_types_follow_jax():
    weak = core.Array(np.ones((2, 3)), weak_type=True)
    for out in (lax.reduce_sum(weak, (0,)), lax.reduce_max(weak, (1,)), lax.cumsum(weak, 1),
                lax.sort(weak), *lax.top_k(weak, 2)):  # JAX keeps the weak type (top_k: both)
        assert out.weak_type
    weak_int = core.Array(np.ones(3, np.int32), weak_type=True)
    for out in (lax.reduce_or(weak_int, (0,)), lax.argmax(weak, 0, np.int32)):
        assert not out.weak_type  # JAX strips it from logical reductions and argmin/argmax


# --------------------------------------------------------------------------------------
# argmax, argmin


def ref_argminmax(x, axis, better):
    moved = np.moveaxis(x, axis, -1)
    out = np.empty(moved.shape[:-1], np.int64)
    for idx in np.ndindex(*moved.shape[:-1]):
        row = moved[idx]
        best = 0
        for i in range(1, len(row)):
            if row[best] != row[best]:  # a NaN is already chosen: the first NaN wins
                break
            if row[i] != row[i] or better(row[i], row[best]):
                best = i
        out[idx] = best
    return out


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@SETTINGS
@given(sa=shape_and_axes(min_ndim=1, nonempty=True), seed=seeds, data=st.data())
def test_argminmax_matches_reference(name, sa, seed, data):
    fn = getattr(lax, name)
    shape, _ = sa
    axis = data.draw(st.integers(0, len(shape) - 1))
    dtype = data.draw(st.sampled_from(["bool", "int8", "uint8", "float32", "float64"]))
    index_dtype = data.draw(st.sampled_from([np.int32, np.int64, np.uint8]))
    x = values(seed, shape, dtype)
    if dtype.startswith("float") and data.draw(st.booleans()):
        x = np.where(values(seed + 1, shape, "int8") == 3, nan, x).astype(dtype)
    better = (lambda a, b: a > b) if name == "argmax" else (lambda a, b: a < b)
    out = fn(x, axis, index_dtype)
    assert out.dtype == np.dtype(index_dtype)
    np.testing.assert_array_equal(np.asarray(out), ref_argminmax(x, axis, better))


def test_argminmax_first_nan_and_first_tie_win():
    x = arr([1.0, nan, 3.0, nan, -1.0])
    assert int(lax.argmax(x, 0, np.int32)) == 1  # JAX
    assert int(lax.argmin(x, 0, np.int32)) == 1  # JAX
    assert int(lax.argmax(arr([-inf, -inf]), 0, np.int32)) == 0
    assert int(lax.argmax(arr([1, 5, 5], np.uint8), 0, np.int64)) == 1
    assert int(lax.argmin(arr([2, 0, 0, 1]), 0, np.int32)) == 1


def test_argmax_has_a_float0_zero_tangent():
    x = arr([3.0, 1.0, 2.0])
    out, t = api.jvp(lambda x: lax.argmax(x, 0, np.int32), (x,), (x,))
    assert int(out) == 0
    assert t.dtype == dtypes.float0 and t.shape == ()


# --------------------------------------------------------------------------------------
# Cumulative reductions


def ref_cumulative(x, axis, reverse, op):
    moved = np.moveaxis(x, axis, -1)
    out = np.empty_like(moved)
    for idx in np.ndindex(*moved.shape[:-1]):
        row = moved[idx][::-1] if reverse else moved[idx]
        acc = []
        for v in row:
            acc.append(v if not acc else op(acc[-1], v))
        res = np.asarray(acc, x.dtype).reshape(row.shape)
        out[idx] = res[::-1] if reverse else res
    return np.moveaxis(out, -1, axis)


def _logaddexp_op(a, b):
    return np.log(np.exp(np.float64(a)) + np.exp(np.float64(b)))  # small values: no overflow


CUMULATIVE = {
    "cumsum": (lambda a, b: a + b, ["int8", "uint8", "float32", "float64", "complex64"]),
    "cumprod": (lambda a, b: a * b, ["int8", "int32", "float64", "complex128"]),
    "cummax": (_max_op, ["int8", "uint16", "float32", "float64"]),
    "cummin": (_min_op, ["int8", "uint16", "float32", "float64"]),
    "cumlogsumexp": (_logaddexp_op, ["float32", "float64"]),
}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@SETTINGS
@given(sa=shape_and_axes(min_ndim=1), seed=seeds, reverse=st.booleans(), data=st.data())
def test_cumulative_matches_reference(name, sa, seed, reverse, data):
    op, dts = CUMULATIVE[name]
    shape, _ = sa
    axis = data.draw(st.integers(0, len(shape) - 1))
    dtype = np.dtype(data.draw(st.sampled_from(dts)))
    x = values(seed, shape, dtype)
    out = getattr(lax, name)(x, axis, reverse)
    with np.errstate(over="ignore"):
        expected = ref_cumulative(x, axis, reverse, op)
    assert out.dtype == dtype and out.shape == x.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)


def test_cumulative_nan_and_infinities():
    x = arr([1.0, nan, 3.0, 0.0])
    np.testing.assert_array_equal(np.asarray(lax.cummax(x)), [1.0, nan, nan, nan])  # JAX
    np.testing.assert_array_equal(np.asarray(lax.cummin(x)), [1.0, nan, nan, nan])  # JAX
    np.testing.assert_array_equal(np.asarray(lax.cumlogsumexp(arr([-inf, -inf, 0.0]))),
                                  [-inf, -inf, 0.0])  # JAX
    np.testing.assert_array_equal(np.asarray(lax.cumlogsumexp(arr([inf, inf, 0.0]))),
                                  [inf, inf, inf])  # JAX
    np.testing.assert_array_equal(np.asarray(lax.cumsum(arr([100, 100], np.int8))),
                                  arr([100, -56], np.int8))  # JAX


# --------------------------------------------------------------------------------------
# sort and top_k


def _sort_key(v):
    """Python ordering key of JAX's sort: NaN last, -0 == 0, complex by (real, imag)."""
    if isinstance(v, (complex, np.complexfloating)):
        return _sort_key(v.real) + _sort_key(v.imag)
    v = v.item() if hasattr(v, "item") else v
    return (True, 0) if v != v else (False, v)


def ref_sort(operands, dimension, num_keys):
    moved = [np.moveaxis(o, dimension, -1) for o in operands]
    outs = [np.empty_like(m) for m in moved]
    for idx in np.ndindex(*moved[0].shape[:-1]):
        rows = [m[idx] for m in moved]
        perm = sorted(range(len(rows[0])),
                      key=lambda i: tuple(_sort_key(r[i]) for r in rows[:num_keys]))
        for out, r in zip(outs, rows):
            out[idx] = r[perm]
    return [np.moveaxis(o, -1, dimension) for o in outs]


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    if a.dtype.kind == "f":  # the sign of zeros is kept (outputs are a permutation)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


@SETTINGS
@given(sa=shape_and_axes(min_ndim=1), seed=seeds, data=st.data())
def test_sort_matches_reference(sa, seed, data):
    shape, _ = sa
    dimension = data.draw(st.integers(-len(shape), len(shape) - 1))
    n_ops = data.draw(st.integers(1, 3))
    num_keys = data.draw(st.integers(1, n_ops))
    kinds = data.draw(st.lists(st.sampled_from(["bool", "int8", "uint8", "float32", "float64",
                                                "complex64"]), min_size=n_ops, max_size=n_ops))
    ops = []
    for i, dt in enumerate(kinds):
        x = values(seed + i, shape, dt, -2, 2)
        if dt.startswith("float"):  # NaNs of both signs and signed zeros
            special = np.array([nan, -nan, -0.0, 0.0], dt)
            pick = values(seed + 7 + i, shape, "uint8", 0, 8)
            x = np.where(pick < 4, special[np.minimum(pick, 3)], x).astype(dt)
        ops.append(x)
    out = lax.sort(ops, dimension, data.draw(st.booleans()), num_keys)
    assert isinstance(out, tuple) and len(out) == n_ops
    for o, e in zip(out, ref_sort(ops, dimension % len(shape), num_keys)):
        assert_same(o, e)


def test_sort_single_operand_and_sort_key_val():
    assert_same(lax.sort(arr([3.0, nan, -0.0, 0.0, -inf, inf, 1.0, -nan])),
                arr([-inf, -0.0, 0.0, 1.0, 3.0, inf, nan, -nan]))  # JAX (stable)
    k, v = lax.sort_key_val(arr([0.0, -0.0, 0.0, -0.0]), np.arange(4))  # JAX: stable on +-0
    assert_same(k, arr([0.0, -0.0, 0.0, -0.0]))
    assert_same(v, np.arange(4))
    k, v = lax.sort_key_val(arr([1.0, nan, -nan, 0.0]), np.arange(4))
    assert_same(v, arr([3, 0, 1, 2]))  # JAX: NaNs of any sign last, in order
    assert_same(lax.sort(arr([1 + 1j, 1 - 1j, nan + 0j, -1 + 0j])),
                arr([-1 + 0j, 1 - 1j, 1 + 1j, nan + 0j]))  # JAX: lexicographic
    assert_same(lax.sort(arr([[3, 1], [0, 2]], np.int32), dimension=0),
                arr([[0, 1], [3, 2]], np.int32))
    k1, k2, v = lax.sort((arr([1, 0, 1, 0, 1], np.int32), arr([3.0, 2.0, nan, 5.0, 3.0]),
                          np.arange(5)), num_keys=2)
    assert_same(k2, arr([2.0, 5.0, 3.0, 3.0, nan]))  # lexicographic on (k1, k2), stable
    assert_same(v, arr([1, 3, 0, 4, 2]))
    k1, v = lax.sort((arr([1, 0, 1]), arr([2, 1, 0])), num_keys=1)
    assert_same(v, arr([1, 2, 0]))  # the second operand is not a key


def ref_top_k(x, k):
    """Descending in the total order -NaN < -inf < ... < -0 < 0 < ... < inf < NaN; ties by
    lower index."""
    def key(v):
        if v != v:
            return (-1 if np.signbit(v) else 1, 0, 0)
        return (0, v, 0 if np.signbit(v) else 1)

    rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    idx = np.array([sorted(range(len(r)), key=lambda i: (key(r[i]), -i), reverse=True)[:k]
                    for r in rows], np.int32).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, idx, -1), idx


@SETTINGS
@given(sa=shape_and_axes(min_ndim=1), seed=seeds, data=st.data())
def test_top_k_matches_reference(sa, seed, data):
    shape, _ = sa
    dtype = data.draw(st.sampled_from(["bool", "int8", "uint8", "float32", "float64"]))
    k = data.draw(st.integers(0, shape[-1]))
    x = values(seed, shape, dtype, -2, 2)
    if dtype.startswith("float"):
        special = np.array([nan, -nan, -0.0, 0.0, -inf, inf], dtype)
        pick = values(seed + 1, shape, "uint8", 0, 12)
        x = np.where(pick < 6, special[np.minimum(pick, 5)], x).astype(dtype)
    values_out, idx = lax.top_k(x, k)
    exp_values, exp_idx = ref_top_k(x, k)
    assert_same(idx, exp_idx)
    assert_same(values_out, exp_values)


def test_top_k_axis_and_jax_examples():
    v, i = lax.top_k(arr([1.0, -nan, -inf, nan, -nan, 2.0]), 6)
    assert_same(i, arr([3, 5, 0, 2, 1, 4], np.int32))  # JAX
    v, i = lax.top_k(arr([-0.0, 0.0, -0.0]), 3)
    assert_same(i, arr([1, 0, 2], np.int32))  # JAX: 0 ranks before -0
    v, i = lax.top_k(arr([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]), 1, axis=0)
    assert_same(v, arr([[3.0, 5.0, 4.0]]))  # JAX
    assert_same(i, arr([[0, 1, 1]], np.int32))
    v, i = lax.top_k(np.ones((2, 0)), 0)
    assert v.shape == i.shape == (2, 0) and i.dtype == np.int32


# --------------------------------------------------------------------------------------
# Type errors


ERRORS = [
    (lambda: lax.reduce_sum(np.ones(3, bool), (0,)), TypeError, "reduce_sum does not accept "
     "dtype bool"),
    (lambda: lax.reduce_prod(np.ones(3, bool), (0,)), TypeError, "reduce_prod .* bool"),
    (lambda: lax.reduce_and(np.ones(3), (0,)), TypeError, "reduce_and does not accept dtype "
     "float64"),
    (lambda: lax.reduce_xor(np.ones(3, np.complex64), (0,)), TypeError, "complex64"),
    (lambda: lax.reduce_sum(np.ones((2, 3)), (0, 0)), ValueError, "duplicate"),
    (lambda: lax.reduce_max(np.ones((2, 3)), (2,)), ValueError, r"out-of-bounds.*\(2, 3\)"),
    (lambda: lax.reduce_min(np.ones((2, 3)), (-1,)), ValueError, "negative"),
    (lambda: lax.argmax(np.zeros((0, 3)), 0, np.int32), ValueError, "non-empty"),
    (lambda: lax.argmax(np.zeros((2, 3)), 2, np.int32), ValueError, r"axis 2.*\(2, 3\)"),
    (lambda: lax.argmin(np.zeros((2, 3)), -1, np.int32), ValueError, "invalid axis -1"),
    (lambda: lax.argmax(np.zeros(3), 0, np.float32), TypeError, "index_dtype must be an integer"),
    (lambda: lax.argmax(np.zeros(3), 0, np.bool_), TypeError, "index_dtype .* bool"),
    (lambda: lax.argmax(np.zeros(3, np.complex64), 0, np.int32), TypeError, "argmax .* complex"),
    (lambda: lax.cumsum(np.ones(3, bool)), TypeError, "cumsum does not accept dtype bool"),
    (lambda: lax.cumlogsumexp(np.ones(3, np.int32)), TypeError, "cumlogsumexp .* int32"),
    (lambda: lax.cumprod(np.ones((2, 3)), -1), ValueError, "negative"),
    (lambda: lax.cummax(np.ones((2, 3)), 2), ValueError, r"out of bounds.*\(2, 3\)"),
    (lambda: lax.cummin(np.ones(()), 0), ValueError, r"out of bounds.*\(\)"),
    (lambda: lax.sort((np.ones((2, 3)), np.ones((3, 2)))), TypeError, "equal shapes"),
    (lambda: lax.sort((np.ones(3), np.ones(3)), num_keys=3), ValueError, "num_keys=3"),
    (lambda: lax.sort((np.ones(3),), num_keys=0), ValueError, "num_keys=0"),
    (lambda: lax.sort(np.ones(3), num_keys=2), ValueError, "single operand"),
    (lambda: lax.sort(()), TypeError, "at least one operand"),
    (lambda: lax.sort(np.ones(())), ValueError, "out of bounds"),
    (lambda: lax.sort(np.ones((2, 3)), dimension=2), ValueError, "out of bounds"),
    (lambda: lax.sort_key_val(np.ones(3), np.ones(4)), TypeError, "equal shapes"),
    (lambda: lax.sort_p.bind(np.ones(3), dimension=1, is_stable=True, num_keys=1), ValueError,
     r"dimension 1 .*\(3,\)"),
    (lambda: lax.top_k(np.ones(4), 5), ValueError, "k=5 is larger"),
    (lambda: lax.top_k(np.ones(4), -1), ValueError, "non-negative"),
    (lambda: lax.top_k(np.ones(()), 1), ValueError, "out of bounds"),
    (lambda: lax.top_k(np.ones(3, np.complex64), 1), TypeError, "top_k .* complex64"),
    (lambda: lax.top_k(np.ones(3), 1.5), TypeError, "float"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, pattern = ERRORS[i]
    with pytest.raises(exc, match=pattern):
        fn()


def test_errors_are_raised_when_staging_too():
    with pytest.raises(ValueError, match="duplicate"):
        api.make_jaxpr(lambda x: lax.reduce_sum(x, (1, 1)))(np.ones((2, 3)))


# --------------------------------------------------------------------------------------
# Derivatives


def grads(f, *args, eps=1e-4):
    check_grads(f, args, order=2, modes=("fwd", "rev"), eps=eps)


# Finite differences of products of many factors (and of their pullbacks, for the
# second-order reverse check) carry an eps**2 truncation error that can exceed the tolerance
# at eps=1e-4, around zero factors especially; float64 leaves room for a smaller step.
PRODUCT_EPS = 1e-5


@GRAD_SETTINGS
@given(sa=shape_and_axes(), seed=seeds)
def test_reduce_sum_prod_grads(sa, seed):
    shape, axes = sa
    x = distinct(seed, shape, 0.3)
    grads(lambda x: lax.reduce_sum(x, axes), x)
    grads(lambda x: lax.reduce_prod(x, axes), x, eps=PRODUCT_EPS)
    # Zeros in the operand: the product tree needs no division. (Values are kept small: with
    # several zeros, finite differences of the second-order JVP carry an eps**2 * product
    # truncation error that would exceed the tolerance for large products.)
    z = np.where(values(seed, shape, "int8") > 1, 0.0, x / 4)
    grads(lambda x: lax.reduce_prod(x, axes), z, eps=PRODUCT_EPS)


@GRAD_SETTINGS
@given(sa=shape_and_axes(), seed=seeds)
def test_reduce_max_min_grads(sa, seed):
    shape, axes = sa
    assume(all(shape[a] for a in axes))  # an empty max is -inf: no finite differences
    x = distinct(seed, shape)
    grads(lambda x: lax.reduce_max(x, axes), x)
    grads(lambda x: lax.reduce_min(x, axes), x)


def test_reduce_prod_jvp_with_zeros_matches_jax():
    t = arr([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]])
    out, dt = api.jvp(lambda x: lax.reduce_prod(x, (1,)), (arr([[2.0, 0.0, 3.0],
                                                                [0.0, 5.0, 0.0]]),), (t,))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 0.0])  # JAX
    np.testing.assert_array_equal(np.asarray(dt), [12.0, 0.0])  # JAX
    out, dt = api.jvp(lambda x: lax.reduce_prod(x, (0, 1)), (arr([[2.0, 0.0, 3.0],
                                                                  [1.0, 5.0, 7.0]]),), (t,))
    assert float(out) == 0.0 and float(dt) == 420.0  # JAX
    out, dt = api.jvp(lambda x: lax.reduce_prod(x, (0,)), (np.zeros((0, 2)),), (np.zeros((0, 2)),))
    np.testing.assert_array_equal(np.asarray(out), [1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(dt), [0.0, 0.0])


def test_reduce_max_min_ties_split_the_tangent_like_jax():
    x = arr([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    t = arr([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]])
    expected = {  # JAX: axes -> (reduce_max tangent, reduce_min tangent)
        (0,): ([8.0, 2.0, 4.0], [1.0, 16.0, 32.0]),
        (1,): ([3.0, 12.0], [1.0, 32.0]),
        (0, 1): (3.0, 32.0),
        (1, 0): (3.0, 32.0),
    }
    for axes, (e_max, e_min) in expected.items():
        _, t_max = api.jvp(lambda x, axes=axes: lax.reduce_max(x, axes), (x,), (t,))
        _, t_min = api.jvp(lambda x, axes=axes: lax.reduce_min(x, axes), (x,), (t,))
        np.testing.assert_array_equal(np.asarray(t_max), e_max)
        np.testing.assert_array_equal(np.asarray(t_min), e_min)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@GRAD_SETTINGS
@given(sa=shape_and_axes(min_ndim=1, max_size=5), seed=seeds, reverse=st.booleans(),
       data=st.data())
def test_cumulative_grads(name, sa, seed, reverse, data):
    shape, _ = sa
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = distinct(seed, shape, 0.5)
    if name == "cumprod":  # zeros are handled exactly; factors of magnitude at most 1.5 keep
        # the products' finite-difference errors within the tolerance
        x = np.where(values(seed, shape, "int8") > 1, 0.0, x * (3 / max(x.size, 1)))
    fn = getattr(lax, name)
    grads(lambda x: fn(x, axis, reverse), x)


def test_cumlogsumexp_is_twice_differentiable_at_ties_and_large_values():
    grads(lambda x: lax.cumlogsumexp(x, 0), np.zeros(5))
    grads(lambda x: lax.cumlogsumexp(x, 1, True), arr([[800.0, 1.0, -700.0, 800.5]]))


def test_cumulative_jvps_at_zeros_and_ties_match_jax():
    t = arr([1.0, 2.0, 4.0, 8.0, 16.0])
    cases = [  # JAX
        (lambda x: lax.cumprod(x), [2.0, 0.0, 3.0, 0.0, 5.0], [1.0, 4.0, 12.0, 0.0, 0.0]),
        (lambda x: lax.cummax(x), [1.0, 1.0, 1.0, 0.5, 1.0], [1.0, 1.5, 2.75, 2.75, 9.375]),
        (lambda x: lax.cummin(x), [1.0, 1.0, 1.0, 0.5, 1.0], [1.0, 1.5, 2.75, 8.0, 8.0]),
        (lambda x: lax.cummax(x, reverse=True), [1.0, 1.0, 1.0, 0.5, 1.0],
         [5.25, 9.5, 10.0, 16.0, 16.0]),
        (lambda x: lax.cumlogsumexp(x), [0.1, 0.5, 2.0, 1.0],
         [1.0, 1.5986876601124522, 3.3480243507065586, 4.331241411570291]),
    ]
    for f, x, expected in cases:
        _, dt = api.jvp(f, (arr(x),), (t[:len(x)],))
        np.testing.assert_allclose(np.asarray(dt), expected, rtol=1e-12)
    y = arr([[2.0, 2.0, 1.0, 2.0, 3.0, 3.0, 0.0]])
    ty = 2.0 ** np.arange(7.0)[None]
    _, dt = api.jvp(lambda x: lax.cummax(x, 1), (y,), (ty,))
    np.testing.assert_array_equal(np.asarray(dt), [[1.0, 1.5, 1.5, 4.75, 16.0, 24.0, 24.0]])
    _, dt = api.jvp(lambda x: lax.cummin(x, 1, True), (y,), (ty,))
    np.testing.assert_array_equal(np.asarray(dt), np.full((1, 7), 64.0))  # JAX


@GRAD_SETTINGS
@given(sa=shape_and_axes(min_ndim=1), seed=seeds, data=st.data())
def test_sort_grads(sa, seed, data):
    shape, _ = sa
    dimension = data.draw(st.integers(0, len(shape) - 1))
    keys = distinct(seed, shape)
    vals = distinct(seed + 1, shape)
    grads(lambda x: lax.sort(x, dimension), keys)
    grads(lambda k, v: lax.sort((k, v), dimension, num_keys=1), keys, vals)
    # Integer keys (no tangent) with tied values broken by the float second key.
    ints = values(seed, shape, "int8", 0, 2)
    grads(lambda k, v: lax.sort((ints, k, v), dimension, num_keys=2)[1:], keys, vals)


def test_sort_and_top_k_jvps_match_jax():
    x = arr([2.0, 1.0, 2.0, nan, 1.0])
    t = arr([1.0, 2.0, 4.0, 8.0, 16.0])
    _, dt = api.jvp(lambda x: lax.sort(x), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(dt), [2.0, 16.0, 1.0, 4.0, 8.0])  # JAX
    _, dt = api.jvp(lambda x: lax.top_k(x, 3)[0], (x,), (t,))
    np.testing.assert_array_equal(np.asarray(dt), [8.0, 1.0, 4.0])  # JAX
    _, dt = api.jvp(lambda x: lax.top_k(x, 2)[0], (x,), (arr([1.0, 2.0, 4.0, inf, 16.0]),))
    np.testing.assert_array_equal(np.asarray(dt), [inf, 1.0])  # other tangents stay out


@GRAD_SETTINGS
@given(sa=shape_and_axes(min_ndim=1), seed=seeds, data=st.data())
def test_top_k_grads(sa, seed, data):
    shape, _ = sa
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    grads(lambda x: lax.top_k(x, k, axis=axis)[0], distinct(seed, shape))


JVP_CASES = [
    lambda x: lax.reduce_sum(x, (1,)), lambda x: lax.reduce_prod(x, (0, 1)),
    lambda x: lax.reduce_max(x, (0,)), lambda x: lax.reduce_min(x, (1,)),
    lambda x: lax.cumsum(x, 1), lambda x: lax.cumprod(x, 1, True), lambda x: lax.cummax(x, 0),
    lambda x: lax.cummin(x, 1), lambda x: lax.cumlogsumexp(x, 1),
    lambda x: lax.sort((x, x * 2), 0, num_keys=1), lambda x: lax.top_k(x, 2)[0],
    lambda x: lax.argmin(x, 1, np.int32),
]


@pytest.mark.parametrize("i", range(len(JVP_CASES)))
def test_jvp_rules_stage_into_jaxprs(i):
    """Rules use only lax ops: staging a JVP and evaluating the jaxpr gives the eager JVP."""
    f = JVP_CASES[i]
    x, t = distinct(0, (3, 4)), distinct(1, (3, 4))

    def jvp_fn(x, t):
        return api.jvp(f, (x,), (t,))

    closed = api.make_jaxpr(jvp_fn)(x, t)
    staged = closed(x, t)
    eager = jvp_fn(x, t)
    for a, b in zip(tree_leaves(staged), tree_leaves(eager), strict=True):
        if np.asarray(b).dtype != dtypes.float0:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


# --------------------------------------------------------------------------------------
# Reverse mode: transposes of the linear maps, and pullbacks at ties against JAX


def assert_adjoint(f, u, v):
    """`linear_transpose(f)` is the adjoint of the linear map f: <v, f(u)> == <f^T(v), u>."""
    (ct,) = api.linear_transpose(f, u)(v)

    def inner(xs, ys):
        return sum(np.vdot(np.asarray(a), np.asarray(b))
                   for a, b in zip(tree_leaves(xs), tree_leaves(ys), strict=True))

    for c, x in zip(tree_leaves(ct), tree_leaves(u), strict=True):
        assert c.shape == x.shape and c.dtype == x.dtype
    np.testing.assert_allclose(inner(v, f(u)), inner(ct, u), rtol=1e-12, atol=1e-12)
    return ct


@SETTINGS
@given(sa=shape_and_axes(), seed=seeds, reverse=st.booleans(), data=st.data())
def test_reduce_sum_and_cumsum_transposes_are_adjoints(sa, seed, reverse, data):
    shape, axes = sa
    u = distinct(seed, shape)
    ct = assert_adjoint(lambda x: lax.reduce_sum(x, axes), u,
                        distinct(seed + 1, tuple(d for i, d in enumerate(shape) if i not in axes)))
    assert np.asarray(ct).shape == shape
    if shape:
        axis = data.draw(st.integers(0, len(shape) - 1))
        assert_adjoint(lambda x: lax.cumsum(x, axis, reverse), u, distinct(seed + 2, shape))


@SETTINGS
@given(sa=shape_and_axes(min_ndim=1), seed=seeds, num_keys=st.integers(1, 2), data=st.data())
def test_sort_transpose_scatters_back_through_the_permutation(sa, seed, num_keys, data):
    shape, _ = sa
    dimension = data.draw(st.integers(0, len(shape) - 1))
    keys = [values(seed + i, shape, "float64", 0, 3) for i in range(num_keys)]  # many ties
    u = [distinct(seed + 5, shape), distinct(seed + 6, shape)]
    v = [distinct(seed + 7, shape), distinct(seed + 8, shape)]

    def f(u):
        return list(lax.sort((*keys, *u), dimension, num_keys=num_keys)[num_keys:])

    ct = assert_adjoint(f, u, v)
    perm = np.lexsort(keys[::-1], axis=dimension)  # stable: out[i] = in[perm[i]]
    for c, w in zip(ct, v):
        c = np.asarray(c)
        expected = np.zeros(shape)
        np.put_along_axis(expected, perm, w, axis=dimension)
        np.testing.assert_array_equal(c, expected)


def test_sort_transpose_rejects_linear_keys_and_keeps_zero_cotangents():
    x = np.arange(4.0)
    with pytest.raises(NotImplementedError, match="not linear in its keys"):
        api.linear_transpose(lambda k: lax.sort(k), x)(x)
    # The second output's cotangent is zero: its input's cotangent is a zero array.
    ft = api.linear_transpose(lambda a, b: lax.sort((x, a, b), num_keys=1)[1], x, x)
    a_ct, b_ct = ft(np.ones(4))
    assert a_ct.tolist() == [1.0] * 4 and b_ct.tolist() == [0.0] * 4


def test_sort_pullback_uses_sort_not_gather():
    x = distinct(0, (3, 4))
    text = str(api.make_jaxpr(lambda x, ct: api.vjp(lambda x: lax.sort(x, 0), x)[1](ct))(x, x))
    assert "gather" not in text and "scatter" not in text
    assert text.count("= sort[") == 3  # the primal, the permutation and the cotangent sorts


def test_pullbacks_at_ties_and_zeros_match_jax():
    x = arr([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    pull = api.vjp(lambda x: lax.reduce_max(x, (1,)), x)[1]
    np.testing.assert_array_equal(np.asarray(pull(arr([1.0, 10.0]))[0]),
                                  [[0.0, 0.5, 0.5], [5.0, 5.0, 0.0]])  # JAX
    pull = api.vjp(lambda x: lax.reduce_min(x, (0,)), x)[1]
    np.testing.assert_array_equal(np.asarray(pull(arr([1.0, 10.0, 100.0]))[0]),
                                  [[1.0, 0.0, 0.0], [0.0, 10.0, 100.0]])  # JAX
    pull = api.vjp(lambda x: lax.reduce_prod(x, (1,)), arr([[2.0, 0.0, 3.0],
                                                             [0.0, 5.0, 0.0]]))[1]
    np.testing.assert_array_equal(np.asarray(pull(arr([1.0, 10.0]))[0]),
                                  [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]])  # JAX
    ct = arr([1.0, 2.0, 4.0, 8.0, 16.0])
    cases = [  # JAX
        (lambda x: lax.cumprod(x), [2.0, 0.0, 3.0, 0.0, 5.0], [1.0, 28.0, 0.0, 0.0, 0.0]),
        (lambda x: lax.cummax(x), [1.0, 1.0, 1.0, 0.5, 1.0], [7.0, 6.0, 10.0, 0.0, 8.0]),
        (lambda x: lax.cummin(x), [1.0, 1.0, 1.0, 0.5, 1.0], [3.0, 2.0, 2.0, 24.0, 0.0]),
        (lambda x: lax.cummax(x, reverse=True), [1.0, 1.0, 1.0, 0.5, 1.0],
         [0.5, 0.625, 2.625, 0.0, 27.25]),
        (lambda x: lax.cumlogsumexp(x), [0.1, 0.5, 2.0, 1.0],
         [2.925906183244622, 2.8731144095043617, 7.510141561162005, 1.6908378460890126]),
        (lambda x: lax.sort(x), [2.0, 1.0, 2.0, nan, 1.0], [4.0, 1.0, 8.0, 16.0, 2.0]),
        (lambda x: lax.top_k(x, 3)[0], [2.0, 1.0, 2.0, nan, 1.0], [2.0, 0.0, 4.0, 1.0, 0.0]),
    ]
    for f, x, expected in cases:
        out, pull = api.vjp(f, arr(x))
        np.testing.assert_allclose(np.asarray(pull(ct[:out.shape[0]])[0]), expected,
                                   rtol=1e-12)


@pytest.mark.parametrize("i", range(len(JVP_CASES)))
def test_linearized_rules_have_transpose_rules(i):
    """Every primitive a JVP rule puts on the tangent path can be transposed."""
    from didax._src.interpreters.partial_eval import linearize_flat

    lin = linearize_flat(lambda x: tree_leaves(JVP_CASES[i](x)), [distinct(0, (3, 4))], [True])
    for eqn in lin.jaxpr.jaxpr.eqns:
        core.all_primitives[eqn.primitive.name].get_rule("transpose")


# --------------------------------------------------------------------------------------
# Jaxpr printing (texts from JAX's make_jaxpr)


def test_jaxpr_printing_matches_jax():
    with enable_x64(False):
        x = np.ones((3, 4), np.float32)
        assert str(api.make_jaxpr(lambda x: lax.reduce_sum(x, (0,)))(x)) == (
            "{ lambda ; a:f32[3,4]. let\n"
            "    b:f32[4] = reduce_sum[axes=(0,) out_sharding=None] a\n"
            "  in (b,) }")
        assert str(api.make_jaxpr(lambda x: lax.reduce_prod(x, (0, 1)))(x)) == (
            "{ lambda ; a:f32[3,4]. let b:f32[] = reduce_prod[axes=(0, 1)] a in (b,) }")
        assert str(api.make_jaxpr(lambda x: lax.sort((x, x), dimension=0, num_keys=2,
                                                     is_stable=False))(x)) == (
            "{ lambda ; a:f32[3,4]. let\n"
            "    b:f32[3,4] c:f32[3,4] = sort[dimension=0 is_stable=False num_keys=2] a a\n"
            "  in (b, c) }")
        assert str(api.make_jaxpr(lambda x: lax.sort(x))(x)) == (
            "{ lambda ; a:f32[3,4]. let\n"
            "    b:f32[3,4] = sort[dimension=1 is_stable=True num_keys=1] a\n"
            "  in (b,) }")
        assert str(api.make_jaxpr(lambda x: lax.argmax(x, 1, np.int32))(x)) == (
            "{ lambda ; a:f32[3,4]. let\n"
            "    b:i32[3] = argmax[axes=(1,) index_dtype=int32] a\n"
            "  in (b,) }")
        assert str(api.make_jaxpr(lambda x: lax.cumprod(x, 1, True))(x)) == (
            "{ lambda ; a:f32[3,4]. let b:f32[3,4] = cumprod[axis=1 reverse=True] a in (b,) }")
        assert str(api.make_jaxpr(lambda x: lax.top_k(x, 2))(np.ones(5, np.float32))) == (
            "{ lambda ; a:f32[5]. let b:f32[2] c:i32[2] = top_k[axis=0 k=2] a in (b, c) }")
        b = np.ones((3, 4), bool)
        assert str(api.make_jaxpr(lambda b: lax.reduce_xor(b, (0,)))(b)) == (
            "{ lambda ; a:bool[3,4]. let b:bool[4] = reduce_xor[axes=(0,)] a in (b,) }")
