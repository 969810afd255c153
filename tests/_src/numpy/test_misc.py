"""didax.numpy nan_to_num, interp and apply_over_axes (misc.py): values against NumPy, result dtypes
and weak types against JAX (the table below was produced by running JAX 0.10.2), derivatives and
errors."""
import numpy as np
from numpy_testing import A, I, S, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "nan_to_num_int": (lambda m: m.nan_to_num(I), "int32", "int32"),
    "interp": (lambda m: m.interp(S, S, S), "float32", "float32"),
    "interp_int": (lambda m: m.interp(U, U, U), "float32", "float32"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode

N = np.array([3., np.nan, -np.inf, np.inf, -2.], np.float32)
GRID = np.linspace(-1, 5, 13)
XP, FP = np.array([0., 1, 2, 4]), np.array([1., 3, 2, 0])


NUMPY_CASES = {
    "nan_to_num": lambda m: [m.nan_to_num(N), m.nan_to_num(N, nan=-1, posinf=9, neginf=-9),
                             m.nan_to_num((N * 1j).astype(np.complex64))],
    "interp": lambda m: m.interp(GRID, XP, FP),
    "interp_left_right": lambda m: m.interp(GRID, XP, FP, left=-7, right=9),
    "interp_period": lambda m: m.interp(GRID, XP - 1, FP, period=3),
    "apply_over_axes": lambda m: m.apply_over_axes(m.sum, A[None], (0, 2)),
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "interp": (lambda x, fp: jnp.interp(x, np.array([-1., 0, 1, 2]), fp), (V, np.arange(4.))),
    "interp_xp": (lambda xp: jnp.interp(np.array([0.3, 1.2]), xp, np.array([1., 3, 2, 0])),
                  (np.array([-1., 0, 1, 2]),)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.interp(1., np.ones(2), np.ones(3)), ValueError),
    (lambda: jnp.interp(1., np.ones(2), np.ones(2), left="x"), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
