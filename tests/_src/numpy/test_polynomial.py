"""didax.numpy polyval and vander (polynomial.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives and errors."""
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

U = np.array([3, 1, 2], np.uint8)
S = np.array([1., 2., 4.], np.float32)

DTYPE_CASES = {
    "polyval_int": lambda m: m.polyval(U, U),
    "polyval_weak": lambda m: m.polyval(S, 2.0),
    "vander": lambda m: m.vander(S),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'polyval_int': ('uint8', 'uint8'),
    'polyval_weak': ('float32', 'float32'),
    'vander': ('float32', 'float32'),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@X64
def test_result_dtypes_match_jax(name, x64):
    check_result_dtypes(DTYPE_CASES[name], JAX_DTYPES[name], x64)


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode

RNG = np.random.default_rng(0)  # A, V, K in this order, as in every test file
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal(7)
K = RNG.standard_normal(3)


NUMPY_CASES = {
    "polyval": lambda m: m.polyval(K, V),
    "vander": lambda m: [m.vander(K), m.vander(K, 5, True)],
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "polyval": (lambda p, x: jnp.polyval(p, x), (K, V)),
    "vander": (lambda x: jnp.vander(x, 4), (K,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.vander(np.ones((2, 2))), ValueError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
