"""didax.numpy joining and splitting (joining.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives and errors."""
import numpy as np
from hypothesis import strategies as st
from numpy_testing import A, F, I, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "concatenate_mixed": (lambda m: m.concatenate([I, F]), "float32", "float32"),
    "concatenate_weak": (lambda m: m.concatenate([m.asarray([1.0]) * 2.0,
                                                 m.asarray([1.0]) * 3.0]),
                         "float32", "float64"),
    "stack_py": (lambda m: m.stack([1, 2.0]), "float32*", "float64*"),
}


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


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "block": lambda m: m.block([[A, A], [A[:1], A[:1]]]),
    "split": lambda m: m.split(V[:6], [2, 5]),
    "hsplit_vsplit": lambda m: m.hsplit(A, 2) + m.vsplit(A, [1]),
    "unstack": lambda m: jnp.unstack(A, axis=1) if m is jnp else list(A.T),
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "concatenate": (lambda a, b: jnp.concatenate([a, b], 1), (A, A[::-1])),
    "stack": (lambda a, b: jnp.stack([a, b], -1), (A, A[::-1])),
    "block": (lambda a, b: jnp.block([[a, b], [b, a]]), (A, A[::-1])),
    "split": (lambda a: jnp.split(a, [1, 3], axis=1)[1], (A,)),
}


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


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
