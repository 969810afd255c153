"""didax.numpy whole-array comparisons (comparisons.py): values against NumPy, result dtypes and
weak types against JAX (the table below was produced by running JAX 0.10.2)."""
import numpy as np
from numpy_testing import F, table_tests  # noqa: E402

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "isclose": (lambda m: m.isclose(F, 1.0), "bool", "bool"),
    "allclose": (lambda m: m.allclose(F, F), "bool", "bool"),
    "array_equal": (lambda m: m.array_equal(F, F), "bool", "bool"),
}


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


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
