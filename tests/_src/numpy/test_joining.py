"""didax.numpy joining and splitting (joining.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives and errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax.numpy as jnp

from numpy_testing import (  # noqa: F401
    X64, assert_matches as _assert_matches, leaves as _leaves,
)
from numpy_testing import (  # noqa: E402
    check_derivatives, check_matches_numpy, check_result_dtypes, check_shape_function,
)


# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

F = np.arange(6, dtype=np.float32).reshape(2, 3)
I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)

DTYPE_CASES = {
    "concatenate_mixed": lambda m: m.concatenate([I, F]),
    "concatenate_weak": lambda m: m.concatenate([m.asarray([1.0]) * 2.0,
                                                 m.asarray([1.0]) * 3.0]),
    "stack_py": lambda m: m.stack([1, 2.0]),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'concatenate_mixed': ('float32', 'float32'),
    'concatenate_weak': ('float32', 'float64'),
    'stack_py': ('float32*', 'float64*'),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@X64
def test_result_dtypes_match_jax(name, x64):
    check_result_dtypes(DTYPE_CASES[name], JAX_DTYPES[name], x64)


# --------------------------------------------------------------------------------------
# Against NumPy, on random shapes (including empty arrays and scalars)


def _axis(draw, x, extra=0):
    return draw(st.integers(-x.ndim - extra, x.ndim - 1 + extra))


def _case_concatenate(draw, x):
    axis = _axis(draw, x)
    return lambda m: m.concatenate([x, 2 * x, x], axis)


def _case_stack(draw, x):
    axis = _axis(draw, x, extra=1)
    return lambda m: m.stack([x, 2 * x], axis)


def _case_joins(draw, x):
    fn = draw(st.sampled_from(["hstack", "vstack", "dstack", "column_stack", "append"]))
    if fn == "append":
        axis = draw(st.none() | st.integers(0, x.ndim - 1))
        return lambda m: m.append(x, 2 * x, axis)
    return lambda m: getattr(m, fn)([x, 2 * x])


def _case_split(draw, x):
    axis = _axis(draw, x)
    n = x.shape[axis]
    spec = draw(st.integers(1, 4) | st.lists(st.integers(0, n), max_size=3).map(sorted))
    return lambda m: m.array_split(x, spec, axis)


SHAPE_CASES = {  # name: (case builder, minimum rank, minimum axis size)
    "concatenate": (_case_concatenate, 1, 0),
    "stack": (_case_stack, 0, 0),
    "joins": (_case_joins, 1, 0),
    "array_split": (_case_split, 1, 0),
}


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_shape_functions_match_numpy(name, data):
    check_shape_function(*SHAPE_CASES[name], data)


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal(7)


NUMPY_CASES = {
    "block": lambda m: m.block([[A, A], [A[:1], A[:1]]]),
    "split": lambda m: m.split(V[:6], [2, 5]),
    "hsplit_vsplit": lambda m: m.hsplit(A, 2) + m.vsplit(A, [1]),
    "unstack": lambda m: jnp.unstack(A, axis=1) if m is jnp else list(A.T),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
@X64
def test_functions_match_numpy(name, x64):
    check_matches_numpy(NUMPY_CASES[name], x64)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "concatenate": (lambda a, b: jnp.concatenate([a, b], 1), (A, A[::-1])),
    "stack": (lambda a, b: jnp.stack([a, b], -1), (A, A[::-1])),
    "block": (lambda a, b: jnp.block([[a, b], [b, a]]), (A, A[::-1])),
    "split": (lambda a: jnp.split(a, [1, 3], axis=1)[1], (A,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.concatenate([np.ones(2), np.ones((2, 2))]), TypeError),
    (lambda: jnp.concatenate([1., 2.]), ValueError),
    (lambda: jnp.concatenate([]), ValueError),
    (lambda: jnp.stack([np.ones(2), np.ones(3)]), ValueError),
    (lambda: jnp.split(np.ones(5), 2), ValueError),
    (lambda: jnp.vsplit(np.ones(5), 5), ValueError),
    (lambda: jnp.block([(1., 2.)]), ValueError),
    (lambda: jnp.block([[1.], 2.]), ValueError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
