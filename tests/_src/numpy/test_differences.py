"""didax.numpy finite differences and integrals (differences.py): values against NumPy, result
dtypes and weak types against JAX (the table below was produced by running JAX 0.10.2),
derivatives and errors."""
import numpy as np
from numpy_testing import A, I, K, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "diff_bool": (lambda m: m.diff(I > 0), "bool", "bool"),
    "gradient_int": (lambda m: m.gradient(I), "float32 float32", "float32 float32"),
    "trapezoid_int": (lambda m: m.trapezoid(I), "float32", "float32"),
    "unwrap_int": (lambda m: m.unwrap(I), "float32", "float64"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "diff": lambda m: [m.diff(A), m.diff(A, 2, 0), m.diff(A, prepend=0, append=A[:, :1]),
                       m.diff(A > 0)],
    "ediff1d": lambda m: m.ediff1d(A, to_end=np.array([1., 2.]), to_begin=-1),
    "gradient": lambda m: [*m.gradient(A), m.gradient(V, 0.5), *m.gradient(A, K, 2.),
                           m.gradient(A, np.cumsum(np.abs(K)), axis=0)],
    "trapezoid": lambda m: [m.trapezoid(A), m.trapezoid(A, np.cumsum(np.abs(V[:4]))),
                            m.trapezoid(A, A, axis=0), m.trapezoid(A, dx=0.5, axis=0)],
    "unwrap": lambda m: [m.unwrap(np.cumsum(V) * 3), m.unwrap(A * 4, discont=4, axis=0),
                         m.unwrap(np.array([0, 7, 15, 4]), period=10)],
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "diff": (lambda a: jnp.diff(a, 2, prepend=0.), (A,)),
    "gradient": (lambda a, h: jnp.gradient(a, h, 0.5), (A, np.cumsum(np.abs(K)))),
    "trapezoid": (lambda y, x: jnp.trapezoid(y, x), (A, np.cumsum(np.abs(V[:4])))),
    "unwrap": (lambda p: jnp.unwrap(p * 3), (V,)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.diff(1.), ValueError),
    (lambda: jnp.diff(np.ones(2), -1), ValueError),
    (lambda: jnp.gradient(np.ones(1)), ValueError),
    (lambda: jnp.gradient(np.ones(3), np.ones(2)), ValueError),
    (lambda: jnp.gradient(np.ones(3), edge_order=2), NotImplementedError),
    (lambda: jnp.unwrap(np.ones(3) * 1j), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
