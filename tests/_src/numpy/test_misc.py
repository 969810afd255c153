"""didax.numpy nan_to_num, interp and apply_over_axes (misc.py): values against NumPy, result dtypes
and weak types against JAX (the table below was produced by running JAX 0.10.2), derivatives and
errors."""
import numpy as np
import pytest

import didax.numpy as jnp

from numpy_testing import (  # noqa: F401
    X64, assert_matches as _assert_matches, leaves as _leaves,
)
from numpy_testing import (  # noqa: E402
    check_derivatives, check_matches_numpy, check_result_dtypes,
)


# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)
U = np.array([3, 1, 2], np.uint8)
S = np.array([1., 2., 4.], np.float32)

DTYPE_CASES = {
    "nan_to_num_int": lambda m: m.nan_to_num(I),
    "interp": lambda m: m.interp(S, S, S),
    "interp_int": lambda m: m.interp(U, U, U),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'nan_to_num_int': ('int32', 'int32'),
    'interp': ('float32', 'float32'),
    'interp_int': ('float32', 'float32'),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@X64
def test_result_dtypes_match_jax(name, x64):
    check_result_dtypes(DTYPE_CASES[name], JAX_DTYPES[name], x64)


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal(7)
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


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "interp": (lambda x, fp: jnp.interp(x, np.array([-1., 0, 1, 2]), fp), (V, np.arange(4.))),
    "interp_xp": (lambda xp: jnp.interp(np.array([0.3, 1.2]), xp, np.array([1., 3, 2, 0])),
                  (np.array([-1., 0, 1, 2]),)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.interp(1., np.ones(2), np.ones(3)), ValueError),
    (lambda: jnp.interp(1., np.ones(2), np.ones(2), left="x"), ValueError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
