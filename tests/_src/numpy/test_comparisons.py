"""didax.numpy whole-array comparisons (comparisons.py): values against NumPy, result dtypes and
weak types against JAX (the table below was produced by running JAX 0.10.2)."""
import numpy as np
import pytest


from numpy_testing import (  # noqa: F401
    X64, assert_matches as _assert_matches, leaves as _leaves,
)
from numpy_testing import (  # noqa: E402
    check_matches_numpy, check_result_dtypes,
)


# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

F = np.arange(6, dtype=np.float32).reshape(2, 3)

DTYPE_CASES = {
    "isclose": lambda m: m.isclose(F, 1.0),
    "allclose": lambda m: m.allclose(F, F),
    "array_equal": lambda m: m.array_equal(F, F),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'isclose': ('bool', 'bool'),
    'allclose': ('bool', 'bool'),
    'array_equal': ('bool', 'bool'),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@X64
def test_result_dtypes_match_jax(name, x64):
    check_result_dtypes(DTYPE_CASES[name], JAX_DTYPES[name], x64)


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
N = np.array([3., np.nan, -np.inf, np.inf, -2.], np.float32)


NUMPY_CASES = {
    "isclose": lambda m: [m.isclose(N, np.array([3.00001, np.nan, -np.inf, 1., -2.1])),
                          m.isclose(N, N, equal_nan=True), m.isclose(A, A + .01, 0, .02)],
    "allclose": lambda m: m.stack([m.allclose(A, A + 1e-9), m.allclose(A, A + 1)]),
    "array_equal": lambda m: m.stack([m.array_equal(A, A), m.array_equal(A, A[0]),
                                      m.array_equal(N, N), m.array_equal(N, N, equal_nan=True),
                                      m.array_equiv(A[0], A[:1]), m.array_equiv(A, A[:1] + 1)]),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)

