"""didax.numpy select, choose and piecewise (selection.py): values against NumPy, result dtypes and
weak types against JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing
and errors."""
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

F = np.arange(6, dtype=np.float32).reshape(2, 3)
I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)
S = np.array([1., 2., 4.], np.float32)

DTYPE_CASES = {
    "select": lambda m: m.select([I > 0], [F], 0),
    "choose": lambda m: m.choose(m.asarray([0, 1, 0]), [S, S * 2]),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'select': ('float32', 'float32'),
    'choose': ('float32', 'float32'),
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


PICK = np.array([[0, 2, 1, 0], [1, 1, 0, 2], [2, 0, 0, 1]])


NUMPY_CASES = {
    "select": lambda m: m.select([A > 0.5, A < -0.5], [A, 2 * A], default=-1.),
    "choose": lambda m: m.choose(PICK, [A, 2 * A, -A]),
    "choose_modes": lambda m: [m.choose(PICK * 2 - 1, [A, -A], mode=md)
                               for md in ("wrap", "clip")],
    "piecewise": lambda m: m.piecewise(V, [V < 0, V > 0.5], [lambda x: -x, lambda x: 2 * x, 7.]),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "select": (lambda a, b: jnp.select([a > 0, b > 0], [a * b, jnp.sin(a)], b), (A, A[::-1])),
    "choose": (lambda a, b: jnp.choose(PICK % 2, [a, b]), (A, A[::-1])),
    "piecewise": (lambda x: jnp.piecewise(x, [x < 0, x > .5], [jnp.sin, lambda t: t ** 2, 1.]),
                  (V,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "choose_clip": lambda x: jnp.choose(jnp.astype(x, int), [x, -x], mode="clip"),
}

CONCRETE_ONLY = {
    "choose_raise": lambda x: jnp.choose(jnp.astype(x > 1, int), [x, x]),
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
    (lambda: jnp.select([], []), ValueError),
    (lambda: jnp.select([True], [1, 2]), ValueError),
    (lambda: jnp.choose(np.array([0, 2]), [np.ones(2), np.ones(2)]), ValueError),
    (lambda: jnp.choose(np.array([0.]), [np.ones(1)], mode="clip"), ValueError),
    (lambda: jnp.piecewise(np.ones(2), [True], [1, 2, 3]), ValueError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
