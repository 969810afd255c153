"""didax.numpy cov and corrcoef (statistics.py): values against NumPy, result dtypes and weak types
against JAX (the table below was produced by running JAX 0.10.2), derivatives and errors."""
import numpy as np
from numpy_testing import A, F, I, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "cov_int": (lambda m: m.cov(I), "float32", "float32"),
    "corrcoef": (lambda m: m.corrcoef(F), "float32", "float32"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "cov": lambda m: [m.cov(A), m.cov(A, rowvar=False), m.cov(A[0], A[1]), m.cov(A, bias=True),
                      m.cov(A, ddof=2), m.cov(A, fweights=np.array([1, 2, 1, 3]),
                                              aweights=np.array([1., 2, 1, 3]))],
    "corrcoef": lambda m: [m.corrcoef(A), m.corrcoef(A[0], A[1]), m.corrcoef(A[:2] + 1j * A[1:])],
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "cov_corrcoef": (lambda a, w: jnp.cov(a, aweights=w) + jnp.corrcoef(a), (A, np.abs(V[:4]))),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.cov(np.ones((2, 2, 2))), ValueError),
    (lambda: jnp.cov(np.ones((2, 3)), fweights=np.ones(3)), TypeError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
