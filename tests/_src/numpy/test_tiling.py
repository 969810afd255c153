"""didax.numpy tile, repeat and resize (tiling.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing and
errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax.numpy as jnp

from numpy_testing import (  # noqa: F401
    X64, assert_matches as _assert_matches, leaves as _leaves,
)
from numpy_testing import (  # noqa: E402
    check_derivatives, check_needs_concrete_inputs, check_result_dtypes, check_shape_function,
    check_traces,
)


# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)

DTYPE_CASES = {
    "tile_weak": lambda m: m.tile(2.0, 3),
    "repeat_i32": lambda m: m.repeat(I, 2),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'tile_weak': ('float32*', 'float64*'),
    'repeat_i32': ('int32', 'int32'),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@X64
def test_result_dtypes_match_jax(name, x64):
    check_result_dtypes(DTYPE_CASES[name], JAX_DTYPES[name], x64)


# --------------------------------------------------------------------------------------
# Against NumPy, on random shapes (including empty arrays and scalars)


def _axis_or_none(draw, x):
    return draw(st.none() | st.integers(-x.ndim, x.ndim - 1)) if x.ndim else None


def _case_tile(draw, x):
    reps = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=4)))
    return lambda m: m.tile(x, reps)


def _case_repeat(draw, x):
    axis = _axis_or_none(draw, x)
    n = x.size if axis is None else x.shape[axis]
    reps = draw(st.integers(0, 3) | st.lists(st.integers(0, 3), min_size=n, max_size=n))
    reps = np.asarray(reps, np.int32)
    return lambda m: m.repeat(x, reps, axis)


def _case_resize(draw, x):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    return lambda m: m.resize(x, shape)


SHAPE_CASES = {  # name: (case builder, minimum rank, minimum axis size)
    "tile": (_case_tile, 0, 0),
    "repeat": (_case_repeat, 1, 0),
    "resize": (_case_resize, 0, 0),
}


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_shape_functions_match_numpy(name, data):
    check_shape_function(*SHAPE_CASES[name], data)


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal(7)


GRAD_CASES = {
    "tile": (lambda a: jnp.tile(a, (2, 1, 2)), (A,)),
    "repeat": (lambda a: jnp.repeat(a, np.array([1, 0, 2]), axis=0), (A,)),
    "repeat_total": (lambda a: jnp.repeat(a, jnp.asarray([1, 0, 2]), axis=0,
                                          total_repeat_length=4), (A,)),
    "resize": (lambda x: jnp.resize(x, (3, 5)), (V,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "repeat_total": lambda x: jnp.repeat(x, jnp.astype(x > 0, int), total_repeat_length=6),
}

CONCRETE_ONLY = {
    "repeat": lambda x: jnp.repeat(x, jnp.astype(x, int)),
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
    (lambda: jnp.repeat(np.ones(3), -1), ValueError),
    (lambda: jnp.repeat(np.ones(3), [1, 2, 3]), TypeError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
