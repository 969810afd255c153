"""didax.numpy index helpers and index tricks (index_tricks.py): values against NumPy, result dtypes
and weak types against JAX (the table below was produced by running JAX 0.10.2), derivatives and
errors."""
import numpy as np
from numpy_testing import K, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "unravel_index": (lambda m: m.unravel_index(5, (2, 3)), "int32* int32*", "int64* int64*"),
    "ravel_multi_index": (lambda m: m.ravel_multi_index((U, U), (4, 4)), "uint8", "uint8"),
    "mgrid": (lambda m: m.mgrid[0:2, 0:3], "int32", "int64"),
    "r_": (lambda m: m.r_[U, 1.5], "float32*", "float64*"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "ix_": lambda m: m.ix_(np.array([0, 2]), np.array([1, 0, 3])),
    "mgrid": lambda m: [m.mgrid[0:3, 1:4:2], m.mgrid[0:1:5j]],
    "ogrid": lambda m: m.ogrid[0:3, 0:2],
    "r_c_": lambda m: [m.r_[K, 0, 3:5], m.r_["0,2", K, K], m.c_[K, K]],
    "ravel_multi_index": lambda m: m.ravel_multi_index((np.array([0, 1, 2]),
                                                        np.array([3, 0, 1])), (3, 4)),
    "unravel_index": lambda m: m.unravel_index(np.array([0, 5, 11]), (3, 4)),
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "r_": (lambda x: jnp.r_[x, 0., x], (V,)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.ravel_multi_index((np.array([3]),), (3,)), ValueError),
    (lambda: jnp.ravel_multi_index((np.array([1.]),), (3,), mode="clip"), ValueError),
    (lambda: jnp.ravel_multi_index((np.array([1.]),), (3,), dtype=int), TypeError),
    (lambda: jnp.r_["x", 1], ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
