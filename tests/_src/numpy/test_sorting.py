"""didax.numpy sorting (sorting.py): values against NumPy, result dtypes and weak types against JAX
(the table below was produced by running JAX 0.10.2), derivatives, tracing and errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import didax.numpy as jnp

from numpy_testing import (  # noqa: F401
    X64, assert_matches as _assert_matches, leaves as _leaves,
)
from numpy_testing import (  # noqa: E402
    check_derivatives, check_matches_numpy, check_result_dtypes, check_traces,
)


# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

F = np.arange(6, dtype=np.float32).reshape(2, 3)
I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)
U = np.array([3, 1, 2], np.uint8)
S = np.array([1., 2., 4.], np.float32)

DTYPE_CASES = {
    "sort": lambda m: m.sort(I),
    "argsort": lambda m: m.argsort(F),
    "lexsort": lambda m: m.lexsort([S, S]),
    "argpartition": lambda m: m.argpartition(F, 1),
    "partition_u8": lambda m: m.partition(U, 1),
    "sort_complex": lambda m: m.sort_complex(I),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'sort': ('int32', 'int32'),
    'argsort': ('int32', 'int64'),
    'lexsort': ('int32', 'int64'),
    'argpartition': ('int32', 'int32'),
    'partition_u8': ('uint8', 'uint8'),
    'sort_complex': ('complex64', 'complex64'),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@X64
def test_result_dtypes_match_jax(name, x64):
    check_result_dtypes(DTYPE_CASES[name], JAX_DTYPES[name], x64)


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


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "sort": (lambda a: jnp.sort(a, 0, descending=True), (A,)),
    "partition": (lambda a: jnp.partition(a, 1), (A,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "sort_argsort": lambda x: jnp.argsort(x) + jnp.sort(x),
}


SAMPLE = np.array([1., -2., 0., 3., 1.], np.float32)


@pytest.mark.parametrize("name", sorted(TRACEABLE))
def test_traces_to_jaxpr(name):
    check_traces(TRACEABLE[name], SAMPLE)


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.sort(np.ones(3), kind="stable"), TypeError),
    (lambda: jnp.partition(np.ones(3, np.complex64), 1), NotImplementedError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
