"""didax.numpy delete, insert and trim_zeros (editing.py): values against NumPy, derivatives,
tracing and errors."""
import numpy as np
import pytest

import didax.numpy as jnp

from numpy_testing import (  # noqa: F401
    X64, assert_matches as _assert_matches, leaves as _leaves,
)
from numpy_testing import (  # noqa: E402
    check_derivatives, check_matches_numpy, check_needs_concrete_inputs,
)


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal(7)
K = RNG.standard_normal(3)


NUMPY_CASES = {
    "delete": lambda m: [m.delete(A, 1), m.delete(A, np.array([0, 2]), axis=1),
                         m.delete(A, slice(0, 3, 2), axis=0), m.delete(V, V > 0)],
    "insert": lambda m: [m.insert(V, 2, 9.), m.insert(V, np.array([1, 1, 7, 0]), K.sum()),
                         m.insert(A, 1, A[0] * 2, axis=0), m.insert(A, np.array([0, 2]), 5, 1),
                         m.insert(V, slice(1, 4), K)],
    "trim_zeros": lambda m: [m.trim_zeros(np.array([0, 0, 1, 2, 0, 3, 0]), t)
                             for t in ("fb", "f", "b")] + [m.trim_zeros(np.zeros(3))],
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "insert": (lambda a, v: jnp.insert(a, np.array([0, 2, 2]), v, axis=1), (A, K)),
    "delete": (lambda a: jnp.delete(a, np.array([0, 2]), axis=1), (A,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

CONCRETE_ONLY = {
    "trim_zeros": lambda x: jnp.trim_zeros(x),
    "delete": lambda x: jnp.delete(x, jnp.astype(x[:1], int)),
    "insert": lambda x: jnp.insert(x, jnp.astype(x[:1], int), 1.),
}

SAMPLE = np.array([1., -2., 0., 3., 1.], np.float32)


@pytest.mark.parametrize("name", sorted(CONCRETE_ONLY))
def test_value_dependent_shapes_need_concrete_inputs(name):
    check_needs_concrete_inputs(CONCRETE_ONLY[name], SAMPLE)


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.delete(np.ones(3), [0]), TypeError),
    (lambda: jnp.delete(np.ones(3), np.array([1.5])), ValueError),
    (lambda: jnp.insert(np.ones(3), np.array([[1]]), 1.), ValueError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
