"""didax.numpy finite differences and integrals (differences.py): values against NumPy, result
dtypes and weak types against JAX (the table below was produced by running JAX 0.10.2),
derivatives and errors."""
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

DTYPE_CASES = {
    "diff_bool": lambda m: m.diff(I > 0),
    "gradient_int": lambda m: m.gradient(I),
    "trapezoid_int": lambda m: m.trapezoid(I),
    "unwrap_int": lambda m: m.unwrap(I),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'diff_bool': ('bool', 'bool'),
    'gradient_int': ('float32 float32', 'float32 float32'),
    'trapezoid_int': ('float32', 'float32'),
    'unwrap_int': ('float32', 'float64'),
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
K = RNG.standard_normal(3)


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


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "diff": (lambda a: jnp.diff(a, 2, prepend=0.), (A,)),
    "gradient": (lambda a, h: jnp.gradient(a, h, 0.5), (A, np.cumsum(np.abs(K)))),
    "trapezoid": (lambda y, x: jnp.trapezoid(y, x), (A, np.cumsum(np.abs(V[:4])))),
    "unwrap": (lambda p: jnp.unwrap(p * 3), (V,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


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


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
