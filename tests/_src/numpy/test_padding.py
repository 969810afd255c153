"""didax.numpy pad (padding.py): values against NumPy, result dtypes and weak types against JAX (the
table below was produced by running JAX 0.10.2), derivatives, tracing and errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax.numpy as jnp

from numpy_testing import (  # noqa: F401
    X64, assert_matches as _assert_matches, leaves as _leaves,
)
from numpy_testing import (  # noqa: E402
    check_derivatives, check_result_dtypes, check_shape_function, check_traces,
)


# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)

DTYPE_CASES = {
    "pad_weak": lambda m: m.pad(m.asarray([1.0]) * 2.0, 1),
    "pad_mean_int": lambda m: m.pad(I, 1, mode="mean"),
}

JAX_DTYPES = {  # name: (x32 result dtypes, x64 result dtypes); '*' marks a weak type
    'pad_weak': ('float32', 'float64'),
    'pad_mean_int': ('int32', 'int32'),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
@X64
def test_result_dtypes_match_jax(name, x64):
    check_result_dtypes(DTYPE_CASES[name], JAX_DTYPES[name], x64)


# --------------------------------------------------------------------------------------
# Against NumPy, on random shapes (including empty arrays and scalars)

PAD_MODES = ["constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp", "maximum",
             "minimum", "mean", "median"]


def _case_pad(draw, x):
    widths = [tuple(draw(st.lists(st.integers(0, 5), min_size=2, max_size=2)))
              for _ in range(x.ndim)]
    mode = draw(st.sampled_from(PAD_MODES))
    kwargs = {}
    if mode in ("reflect", "symmetric"):
        kwargs["reflect_type"] = draw(st.sampled_from(["even", "odd"]))
    if mode in ("maximum", "minimum", "mean", "median"):
        kwargs["stat_length"] = draw(st.none() | st.integers(1, 3))
    if mode == "constant":
        kwargs["constant_values"] = draw(st.sampled_from([0, 1.5, ((1, 2),)]))
    return lambda m: m.pad(x, widths, mode, **kwargs)


SHAPE_CASES = {  # name: (case builder, minimum rank, minimum axis size)
    "pad": (_case_pad, 1, 1),
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


GRAD_CASES = {
    "pad": (lambda a: jnp.pad(a, ((1, 5), (3, 1)), mode="reflect", reflect_type="odd"), (A,)),
    "pad_stats": (lambda a: jnp.pad(a, 2, mode="median", stat_length=2)
                  + jnp.pad(a, 2, mode="mean") + jnp.pad(a, 2, mode="linear_ramp"), (A,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_jvp_matches_finite_differences(name):
    check_derivatives(*GRAD_CASES[name])


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "pad": lambda x: jnp.pad(x, 2, mode="symmetric"),
}


SAMPLE = np.array([1., -2., 0., 3., 1.], np.float32)


@pytest.mark.parametrize("name", sorted(TRACEABLE))
def test_traces_to_jaxpr(name):
    check_traces(TRACEABLE[name], SAMPLE)


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.pad(np.ones(3), -1), ValueError),
    (lambda: jnp.pad(np.ones(3), 1, mode="foo"), NotImplementedError),
    (lambda: jnp.pad(np.ones(3), 1, mode="edge", constant_values=1), ValueError),
    (lambda: jnp.pad(np.ones(3), ((1, 2, 3),)), ValueError),
    (lambda: jnp.pad(np.ones(0), 1, mode="wrap"), ValueError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    fn, exc = ERROR_CASES[i]
    with pytest.raises(exc):
        fn()
