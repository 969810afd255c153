"""didax.numpy index helpers and index tricks (index_tricks.py): values against NumPy, result dtypes
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

U = np.array([3, 1, 2], np.uint8)

DTYPE_CASES = {
    "unravel_index": lambda m: m.unravel_index(5, (2, 3)),
    "ravel_multi_index": lambda m: m.ravel_multi_index((U, U), (4, 4)),
    "mgrid": lambda m: m.mgrid[0:2, 0:3],
    "r_": lambda m: m.r_[U, 1.5],
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'unravel_index': ('int32* int32*', 'int64* int64*'),
    'ravel_multi_index': ('uint8', 'uint8'),
    'mgrid': ('int32', 'int64'),
    'r_': ('float32*', 'float64*'),
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
    "ix_": lambda m: m.ix_(np.array([0, 2]), np.array([1, 0, 3])),
    "mgrid": lambda m: [m.mgrid[0:3, 1:4:2], m.mgrid[0:1:5j]],
    "ogrid": lambda m: m.ogrid[0:3, 0:2],
    "r_c_": lambda m: [m.r_[K, 0, 3:5], m.r_["0,2", K, K], m.c_[K, K]],
    "ravel_multi_index": lambda m: m.ravel_multi_index((np.array([0, 1, 2]),
                                                        np.array([3, 0, 1])), (3, 4)),
    "unravel_index": lambda m: m.unravel_index(np.array([0, 5, 11]), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "r_": (lambda x: jnp.r_[x, 0., x], (V,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.ravel_multi_index((np.array([3]),), (3,)), ValueError),
    (lambda: jnp.ravel_multi_index((np.array([1.]),), (3,), mode="clip"), ValueError),
    (lambda: jnp.ravel_multi_index((np.array([1.]),), (3,), dtype=int), TypeError),
    (lambda: jnp.r_["x", 1], ValueError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
