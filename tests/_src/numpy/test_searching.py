"""didax.numpy searching (searching.py): values against NumPy, result dtypes and weak types against
JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing and errors."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_testing import F, I, S, table_tests  # noqa: E402
from numpy_testing import assert_matches as _assert_matches

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "searchsorted": (lambda m: m.searchsorted(S, F), "int32", "int32"),
    "digitize": (lambda m: m.digitize(F, S), "int32", "int32"),
    "nonzero": (lambda m: m.nonzero(I), "int32 int32", "int64 int64"),
    "argwhere": (lambda m: m.argwhere(I), "int32", "int64"),
    "flatnonzero_size": (lambda m: m.flatnonzero(I, size=5), "int32", "int64"),
}


# --------------------------------------------------------------------------------------
# Against NumPy, on random integer arrays


def _ints(max_dims=2, min_side=0):
    return hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=max_dims,
                                                 min_side=min_side, max_side=5),
                      elements=st.integers(-3, 3))


@settings(max_examples=20, deadline=None)
@given(a=_ints(1), v=_ints(2), side=st.sampled_from(["left", "right"]),
       method=st.sampled_from(["scan", "scan_unrolled", "compare_all", "sort"]))
def test_searchsorted_matches_numpy(a, v, side, method):
    a = np.sort(a)
    _assert_matches(jnp.searchsorted(a, v, side, method=method), np.searchsorted(a, v, side))
    if a.size:
        _assert_matches(jnp.digitize(v, a), np.digitize(v, a))
        _assert_matches(jnp.digitize(v, a[::-1], right=True), np.digitize(v, a[::-1], True))


def test_searchsorted_puts_nan_last():
    a = np.array([-np.inf, -1., 0., 2., np.inf, np.nan], np.float32)
    v = np.array([np.nan, np.inf, -0., 1.], np.float32)
    for method in ["scan", "compare_all", "sort"]:
        for side in ["left", "right"]:
            _assert_matches(jnp.searchsorted(a, v, side, method=method),
                            np.searchsorted(a, v, side))
    perm = np.array([1, 2, 0])
    _assert_matches(jnp.searchsorted(np.array([3., 1., 2.]), 2.5, sorter=perm), 2)


@settings(max_examples=20, deadline=None)
@given(x=_ints(3))
def test_nonzero_family_matches_numpy(x):
    _assert_matches(jnp.nonzero(x), np.nonzero(x))
    _assert_matches(jnp.flatnonzero(x), np.flatnonzero(x))
    _assert_matches(jnp.argwhere(x), np.argwhere(x))
    n = np.count_nonzero(x)
    padded = jnp.nonzero(x, size=n + 2, fill_value=-1)
    for got, want in zip(padded, np.nonzero(x)):  # JAX ignores fill_value for empty inputs
        _assert_matches(got, np.concatenate([want, [-1, -1] if x.size else [0, 0]]))
    _assert_matches(jnp.extract(x > 0, x), np.extract(x > 0, x))
    _assert_matches(jnp.compress(x.ravel() > 0, x), np.compress(x.ravel() > 0, x))


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))


GRAD_CASES = {
    "compress": (lambda a: jnp.compress(np.array([True, False, True]), a, axis=0, size=2), (A,)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "searchsorted": lambda x: jnp.searchsorted(jnp.sort(x), x),
    "nonzero_size": lambda x: jnp.nonzero(x > 0, size=3, fill_value=-1),
    "argwhere_size": lambda x: jnp.argwhere(x, size=2),
    "extract_size": lambda x: jnp.extract(x > 0, x, size=2),
}

CONCRETE_ONLY = {
    "nonzero": lambda x: jnp.nonzero(x),
    "flatnonzero": lambda x: jnp.flatnonzero(x),
    "argwhere": lambda x: jnp.argwhere(x),
    "compress": lambda x: jnp.compress(x > 0, x),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.searchsorted(np.ones((2, 2)), 1.), ValueError),
    (lambda: jnp.searchsorted(np.ones(2), 1., method="bisect"), ValueError),
    (lambda: jnp.nonzero(1.), ValueError),
    (lambda: jnp.nonzero(np.ones(2), size=2, fill_value=(1, 2)), ValueError),
    (lambda: jnp.compress(np.array([True, False, True]), np.ones(2)), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
