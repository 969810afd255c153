"""didax.numpy bincount and histograms (histograms.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing and
errors."""
import numpy as np
from numpy_testing import A, S, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "bincount": (lambda m: m.bincount(U), "int32", "int64"),
    "bincount_weights": (lambda m: m.bincount(U, weights=S), "float32", "float32"),
    "histogram": (lambda m: m.histogram(S, 2), "float32 float32", "float32 float32"),
    "histogram_int": (lambda m: m.histogram(U, 2), "float32 float32", "float32 float32"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "bincount": lambda m: [m.bincount(np.array([0, 1, 1, 3, 2, 1, 7])),
                           m.bincount(np.array([0, 1, 1, 3]), np.array([.5, 1., 2., 3.]), 6)],
    "histogram": lambda m: m.histogram(V, 4),
    "histogram_weighted": lambda m: m.histogram(V, np.array([-2., 0., 0.5, 2.]), weights=V ** 2,
                                                density=True),
    "histogram2d": lambda m: m.histogram2d(A[0], A[1], 3)[0],
    "histogramdd": lambda m: m.histogramdd(A[:, :2], (2, 3), density=True)[0],
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "histogram_weights": (lambda w: jnp.histogram(V, 3, weights=w)[0], (np.abs(V),)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "bincount_length": lambda x: jnp.bincount(jnp.astype(x, int), length=4),
    "histogram": lambda x: jnp.histogram(x, 3)[0],
}

CONCRETE_ONLY = {
    "bincount": lambda x: jnp.bincount(jnp.astype(x, int)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.bincount(np.ones(2)), TypeError),
    (lambda: jnp.bincount(np.ones((2, 2), int)), ValueError),
    (lambda: jnp.histogram_bin_edges(np.ones(3), "auto"), NotImplementedError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
