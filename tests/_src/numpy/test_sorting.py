"""didax.numpy sorting (sorting.py): values against NumPy, result dtypes and weak types against JAX
(the table below was produced by running JAX 0.10.2), derivatives, tracing and errors."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_testing import F, I, S, table_tests  # noqa: E402
from numpy_testing import assert_matches as _assert_matches

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "sort": (lambda m: m.sort(I), "int32", "int32"),
    "argsort": (lambda m: m.argsort(F), "int32", "int64"),
    "lexsort": (lambda m: m.lexsort([S, S]), "int32", "int64"),
    "argpartition": (lambda m: m.argpartition(F, 1), "int32", "int32"),
    "partition_u8": (lambda m: m.partition(U, 1), "uint8", "uint8"),
    "sort_complex": (lambda m: m.sort_complex(I), "complex64", "complex64"),
}


# --------------------------------------------------------------------------------------
# Against NumPy, on random integer arrays


def _ints(max_dims=2, min_side=0):
    return hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=max_dims,
                                                 min_side=min_side, max_side=5),
                      elements=st.integers(-3, 3))


@settings(max_examples=20, deadline=None)
@given(x=_ints(3), data=st.data())
def test_sorting_matches_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    _assert_matches(jnp.sort(x, axis), np.sort(x, axis))
    _assert_matches(jnp.sort(x, None), np.sort(x, None))
    _assert_matches(jnp.argsort(x, axis), np.argsort(x, axis, kind="stable"))
    _assert_matches(jnp.argsort(x, axis, descending=True), np.argsort(-x, axis, kind="stable"))
    _assert_matches(jnp.sort(x, axis, descending=True), np.flip(np.sort(x, axis), axis))
    _assert_matches(jnp.lexsort([x, x % 2], axis), np.lexsort([x, x % 2], axis))


@settings(max_examples=20, deadline=None)
@given(x=_ints(2, min_side=1), data=st.data())
def test_partition_orders_like_jax(x, data):
    """kth+1 smallest ascending, then the rest largest first (JAX's top_k-based order)."""
    kth = data.draw(st.integers(-x.shape[-1], x.shape[-1] - 1))
    k = kth % x.shape[-1]
    s = np.sort(x, -1)
    expected = np.concatenate([s[..., :k + 1], s[..., k + 1:][..., ::-1]], -1)
    _assert_matches(jnp.partition(x, kth), expected)
    idx = np.asarray(jnp.argpartition(x, kth))
    _assert_matches(np.take_along_axis(x, idx, -1)[..., k], s[..., k])
    _assert_matches(np.sort(idx, -1), np.broadcast_to(np.arange(x.shape[-1]), x.shape))
    assert np.all(np.take_along_axis(x, idx, -1)[..., :k + 1] <= s[..., k:k + 1])


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))


NUMPY_CASES = {
    "sort_complex": lambda m: m.sort_complex(np.array([1 + 2j, 1 - 1j, -3])),
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "sort": (lambda a: jnp.sort(a, 0, descending=True), (A,)),
    "partition": (lambda a: jnp.partition(a, 1), (A,)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "sort_argsort": lambda x: jnp.argsort(x) + jnp.sort(x),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.sort(np.ones(3), kind="stable"), TypeError),
    (lambda: jnp.partition(np.ones(3, np.complex64), 1), NotImplementedError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
