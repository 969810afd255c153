"""didax.numpy bincount and histograms (histograms.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing and
errors."""
import numpy as np
import pytest

import didax.numpy as jnp

from numpy_testing import (  # noqa: F401
    X64, assert_matches as _assert_matches, leaves as _leaves,
)
from numpy_testing import (  # noqa: E402
    check_derivatives, check_matches_numpy, check_needs_concrete_inputs, check_result_dtypes,
    check_traces,
)


# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

U = np.array([3, 1, 2], np.uint8)
S = np.array([1., 2., 4.], np.float32)

DTYPE_CASES = {
    "bincount": lambda m: m.bincount(U),
    "bincount_weights": lambda m: m.bincount(U, weights=S),
    "histogram": lambda m: m.histogram(S, 2),
    "histogram_int": lambda m: m.histogram(U, 2),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'bincount': ('int32', 'int64'),
    'bincount_weights': ('float32', 'float32'),
    'histogram': ('float32 float32', 'float32 float32'),
    'histogram_int': ('float32 float32', 'float32 float32'),
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
    "bincount": lambda m: [m.bincount(np.array([0, 1, 1, 3, 2, 1, 7])),
                           m.bincount(np.array([0, 1, 1, 3]), np.array([.5, 1., 2., 3.]), 6)],
    "histogram": lambda m: m.histogram(V, 4),
    "histogram_weighted": lambda m: m.histogram(V, np.array([-2., 0., 0.5, 2.]), weights=V ** 2,
                                                density=True),
    "histogram2d": lambda m: m.histogram2d(A[0], A[1], 3)[0],
    "histogramdd": lambda m: m.histogramdd(A[:, :2], (2, 3), density=True)[0],
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "histogram_weights": (lambda w: jnp.histogram(V, 3, weights=w)[0], (np.abs(V),)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "bincount_length": lambda x: jnp.bincount(jnp.astype(x, int), length=4),
    "histogram": lambda x: jnp.histogram(x, 3)[0],
}

CONCRETE_ONLY = {
    "bincount": lambda x: jnp.bincount(jnp.astype(x, int)),
}

SAMPLE = np.array([1., -2., 0., 3., 1.], np.float32)


@pytest.mark.parametrize("name", sorted(TRACEABLE))
def test_traces_to_jaxpr(name):
    check_traces(TRACEABLE[name], SAMPLE)


@pytest.mark.parametrize("name", sorted(CONCRETE_ONLY))
def test_value_dependent_shapes_need_concrete_inputs(name):
    check_needs_concrete_inputs(CONCRETE_ONLY[name], SAMPLE)


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.bincount(np.ones(2)), TypeError),
    (lambda: jnp.bincount(np.ones((2, 2), int)), ValueError),
    (lambda: jnp.histogram_bin_edges(np.ones(3), "auto"), NotImplementedError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
