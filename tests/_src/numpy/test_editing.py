"""didax.numpy delete, insert and trim_zeros (editing.py): values against NumPy, derivatives,
tracing and errors."""
import numpy as np
from numpy_testing import A, K, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "delete": lambda m: [m.delete(A, 1), m.delete(A, np.array([0, 2]), axis=1),
                         m.delete(A, slice(0, 3, 2), axis=0), m.delete(V, V > 0)],
    "insert": lambda m: [m.insert(V, 2, 9.), m.insert(V, np.array([1, 1, 7, 0]), K.sum()),
                         m.insert(A, 1, A[0] * 2, axis=0), m.insert(A, np.array([0, 2]), 5, 1),
                         m.insert(V, slice(1, 4), K)],
    "trim_zeros": lambda m: [m.trim_zeros(np.array([0, 0, 1, 2, 0, 3, 0]), t)
                             for t in ("fb", "f", "b")] + [m.trim_zeros(np.zeros(3))],
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "insert": (lambda a, v: jnp.insert(a, np.array([0, 2, 2]), v, axis=1), (A, K)),
    "delete": (lambda a: jnp.delete(a, np.array([0, 2]), axis=1), (A,)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

CONCRETE_ONLY = {
    "trim_zeros": lambda x: jnp.trim_zeros(x),
    "delete": lambda x: jnp.delete(x, jnp.astype(x[:1], int)),
    "insert": lambda x: jnp.insert(x, jnp.astype(x[:1], int), 1.),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.delete(np.ones(3), [0]), TypeError),
    (lambda: jnp.delete(np.ones(3), np.array([1.5])), ValueError),
    (lambda: jnp.insert(np.ones(3), np.array([[1]]), 1.), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
