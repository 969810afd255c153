"""didax.numpy cov and corrcoef (statistics.py): values against NumPy, result dtypes and weak types
against JAX (the table below was produced by running JAX 0.10.2), derivatives and errors."""
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

F = np.arange(6, dtype=np.float32).reshape(2, 3)
I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)

DTYPE_CASES = {
    "cov_int": lambda m: m.cov(I),
    "corrcoef": lambda m: m.corrcoef(F),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'cov_int': ('float32', 'float32'),
    'corrcoef': ('float32', 'float32'),
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


NUMPY_CASES = {
    "cov": lambda m: [m.cov(A), m.cov(A, rowvar=False), m.cov(A[0], A[1]), m.cov(A, bias=True),
                      m.cov(A, ddof=2), m.cov(A, fweights=np.array([1, 2, 1, 3]),
                                              aweights=np.array([1., 2, 1, 3]))],
    "corrcoef": lambda m: [m.corrcoef(A), m.corrcoef(A[0], A[1]), m.corrcoef(A[:2] + 1j * A[1:])],
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "cov_corrcoef": (lambda a, w: jnp.cov(a, aweights=w) + jnp.corrcoef(a), (A, np.abs(V[:4]))),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.cov(np.ones((2, 2, 2))), ValueError),
    (lambda: jnp.cov(np.ones((2, 3)), fweights=np.ones(3)), TypeError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
