"""didax.numpy unique and set operations (setops.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing and
errors."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_testing import F, I, V, table_tests  # noqa: E402
from numpy_testing import assert_matches as _assert_matches

import didax as jax
import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "unique_all": (lambda m: m.unique(I, True, True, True),
                   "int32 int32 int32 int32", "int32 int64 int64 int64"),
    "unique_size": (lambda m: m.unique(F, size=3), "float32", "float32"),
    "isin": (lambda m: m.isin(I, U), "bool", "bool"),
    "union1d": (lambda m: m.union1d(I, U), "int32", "int32"),
    "intersect1d": (lambda m: m.intersect1d(I, U, return_indices=True),
                    "int32 int32 int32", "int32 int64 int64"),
    "setdiff1d": (lambda m: m.setdiff1d(I, U), "int32", "int32"),
    "setxor1d": (lambda m: m.setxor1d(I, U), "int32", "int32"),
}


# --------------------------------------------------------------------------------------
# Against NumPy, on random integer arrays


def _ints(max_dims=2, min_side=0):
    return hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=max_dims,
                                                 min_side=min_side, max_side=5),
                      elements=st.integers(-3, 3))


@settings(max_examples=20, deadline=None)
@given(case=st.tuples(_ints(2), st.none()) | st.tuples(_ints(2, min_side=1), st.just(0)))
def test_unique_matches_numpy(case):
    x, axis = case
    got = jnp.unique(x, True, True, True, axis=axis)
    want = np.unique(x, True, True, True, axis=axis)
    _assert_matches(got[:2] + got[3:], want[:2] + want[3:])
    _assert_matches(np.reshape(got[2], np.shape(want[2])), want[2])
    if x.size:
        n = want[0].shape[0]
        values = jnp.unique(x, size=n + 2, fill_value=7, axis=axis)
        fill = np.full((2,) + want[0].shape[1:], 7, x.dtype)
        _assert_matches(values, np.concatenate([want[0], fill]))


def test_unique_of_empty_slices_follows_jax():
    """JAX (unlike NumPy) returns one empty slice when the slices have no elements."""
    for shape, counts in [((3, 0), [3]), ((0, 0), []), ((0, 3), None)]:
        values, index, inverse, count = jnp.unique(np.zeros(shape), True, True, True, axis=0)
        assert values.shape == ((0, 3) if counts is None else (1, 0))
        _assert_matches(count, np.array(counts or []))
        _assert_matches(inverse, np.zeros(shape[0], int))


def test_unique_nan_handling():
    x = np.array([np.nan, 1., np.nan, 1., 0.])
    _assert_matches(jnp.unique(x), np.unique(x))
    _assert_matches(jnp.unique(x, equal_nan=False), np.unique(x, equal_nan=False))
    values, counts = jnp.unique_counts(np.array([2, 1, 2, 2]))
    _assert_matches((values, counts), ([1, 2], [1, 3]))
    assert jnp.unique_all(np.array([2, 1])).inverse_indices.tolist() == [1, 0]
    _assert_matches(jnp.unique_inverse(np.array([[2, 1]])).inverse_indices, np.array([[1, 0]]))
    _assert_matches(jnp.unique_values(x), np.unique(x, equal_nan=False))


@settings(max_examples=20, deadline=None)
@given(a=_ints(2), b=_ints(1), method=st.sampled_from(["auto", "binary_search", "sort"]))
def test_set_functions_match_numpy(a, b, method):
    _assert_matches(jnp.isin(a, b, method=method), np.isin(a, b))
    _assert_matches(jnp.isin(a, b, invert=True, method=method), np.isin(a, b, invert=True))
    _assert_matches(jnp.union1d(a, b), np.union1d(a, b))
    _assert_matches(jnp.setdiff1d(a, b), np.setdiff1d(a, b))
    _assert_matches(jnp.setxor1d(a, b), np.setxor1d(a, b))
    _assert_matches(jnp.intersect1d(a, b, return_indices=True),
                    np.intersect1d(a, b, return_indices=True))
    for name in ("intersect1d", "setdiff1d", "setxor1d", "union1d"):
        want = getattr(np, name)(a, b)
        got = getattr(jnp, name)(a, b, size=want.size + 2, fill_value=-9)
        _assert_matches(got, np.concatenate([want, [-9, -9]]))


def test_set_functions_with_assume_unique():
    a, b = np.array([5, 1, 3, 7]), np.array([3, 9, 2, 5])
    _assert_matches(jnp.intersect1d(a, b, True, True), np.intersect1d(a, b, True, True))
    _assert_matches(jnp.intersect1d(a, b, True, True, size=3),
                    ([3, 5, 3], [2, 0, 4], [0, 3, 4]))
    _assert_matches(jnp.setdiff1d(a, b, True), np.setdiff1d(a, b, True))
    _assert_matches(jnp.setxor1d(a, b, True), np.setxor1d(a, b, True))
    _assert_matches(jnp.setxor1d(a, b, True, size=5), [1, 2, 7, 9, 1])


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)


GRAD_CASES = {
    "unique": (lambda x: jnp.unique(jnp.concatenate([x, x[:3]])), (V,)),
    "unique_size": (lambda x: jnp.unique(x, size=9, fill_value=0.), (V,)),
    "setdiff1d_size": (lambda x: jnp.setdiff1d(x, x[:2], size=5), (V,)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "unique_size": lambda x: jnp.unique(x, True, True, True, size=3),
    "union1d_size": lambda x: jnp.union1d(x, x, size=4),
    "intersect1d_size": lambda x: jnp.intersect1d(x, -x, return_indices=True, size=2),
    "setxor1d_size": lambda x: jnp.setxor1d(x, -x, size=2),
    "setdiff1d_size": lambda x: jnp.setdiff1d(x, -x, size=2),
}

CONCRETE_ONLY = {
    "unique": lambda x: jnp.unique(x),
    "union1d": lambda x: jnp.union1d(x, x),
    "setdiff1d": lambda x: jnp.setdiff1d(x, x),
    "intersect1d": lambda x: jnp.intersect1d(x, x),
}


def test_unique_under_jvp_carries_tangents():
    x = jnp.asarray([3., 1., 3., 2.])
    out, tangent = jax.jvp(jnp.unique, (x,), (jnp.asarray([10., 20., 30., 40.]),))
    _assert_matches(out, [1., 2., 3.])
    _assert_matches(tangent, [20., 40., 10.])


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.unique(np.ones(0), size=2), ValueError),
    (lambda: jnp.isin(np.ones(2), np.ones(2), method="hash"), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
