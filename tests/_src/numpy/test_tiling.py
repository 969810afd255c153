"""didax.numpy tile, repeat and resize (tiling.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing and
errors."""
import numpy as np
from hypothesis import strategies as st
from numpy_testing import A, I, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "tile_weak": (lambda m: m.tile(2.0, 3), "float32*", "float64*"),
    "repeat_i32": (lambda m: m.repeat(I, 2), "int32", "int32"),
}


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


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)


GRAD_CASES = {
    "tile": (lambda a: jnp.tile(a, (2, 1, 2)), (A,)),
    "repeat": (lambda a: jnp.repeat(a, np.array([1, 0, 2]), axis=0), (A,)),
    "repeat_total": (lambda a: jnp.repeat(a, jnp.asarray([1, 0, 2]), axis=0,
                                          total_repeat_length=4), (A,)),
    "resize": (lambda x: jnp.resize(x, (3, 5)), (V,)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "repeat_total": lambda x: jnp.repeat(x, jnp.astype(x > 0, int), total_repeat_length=6),
}

CONCRETE_ONLY = {
    "repeat": lambda x: jnp.repeat(x, jnp.astype(x, int)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.repeat(np.ones(3), -1), ValueError),
    (lambda: jnp.repeat(np.ones(3), [1, 2, 3]), TypeError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
