"""didax.numpy convolve and correlate (convolution.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives and errors."""
import numpy as np
from numpy_testing import K, S, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "convolve": (lambda m: m.convolve(S, S), "float32", "float32"),
    "convolve_int": (lambda m: m.convolve(U, U), "float32", "float32"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "convolve": lambda m: [m.convolve(a, b, md) for md in ("full", "same", "valid")
                           for a, b in ((V, K), (K, V), (V, K[:2]))],
    "correlate": lambda m: [m.correlate(a, b, md) for md in ("full", "same", "valid")
                            for a, b in ((V, K), (K, V), (V * 1j + 1, K))],
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "convolve": (lambda x, k: jnp.convolve(x, k, "same"), (V, K)),
    "correlate": (lambda x, k: jnp.correlate(x, k, "full"), (V, K)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.convolve(np.ones((2, 2)), np.ones(2)), ValueError),
    (lambda: jnp.convolve(np.ones(2), np.ones(0)), ValueError),
    (lambda: jnp.convolve(np.ones(2), np.ones(2), mode="circular"), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
