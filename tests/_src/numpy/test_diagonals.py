"""didax.numpy diagonals and triangles (diagonals.py): values against NumPy, result dtypes and weak
types against JAX (the table below was produced by running JAX 0.10.2), derivatives and errors."""
import numpy as np
from hypothesis import strategies as st
from numpy_testing import A, I, K, S, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "tril_weak": (lambda m: m.tril(m.ones((2, 2)) * 2.0), "float32", "float64"),
    "diag": (lambda m: m.diag(S), "float32", "float32"),
    "trace_int": (lambda m: m.trace(I), "int32", "int64"),
    "trace_u8": (lambda m: m.trace(m.ones((2, 2), np.uint8)), "uint32", "uint64"),
    "tril_indices": (lambda m: m.tril_indices(3), "int32 int32", "int64 int64"),
    "diag_indices": (lambda m: m.diag_indices(3), "int32 int32", "int64 int64"),
}


# --------------------------------------------------------------------------------------
# Against NumPy, on random shapes (including empty arrays and scalars)


def _case_tri(draw, x):
    fn, k = draw(st.sampled_from(["tril", "triu"])), draw(st.integers(-4, 4))
    return lambda m: getattr(m, fn)(x, k)


def _case_diagonal(draw, x):
    a, b = draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=2, max_size=2,
                         unique_by=lambda i: i % x.ndim))
    offset = draw(st.integers(-5, 5))
    return lambda m: m.diagonal(x, offset, a, b)


def _case_trace(draw, x):
    offset = draw(st.integers(-3, 3))
    return lambda m: m.trace(x, offset, 0, x.ndim - 1)


SHAPE_CASES = {  # name: (case builder, minimum rank, minimum axis size)
    "tril_triu": (_case_tri, 2, 0),
    "diagonal": (_case_diagonal, 2, 0),
    "trace": (_case_trace, 2, 0),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "diag": lambda m: [m.diag(K, k) for k in (-2, 0, 1)] + [m.diag(A, 1)],
    "diagflat": lambda m: m.diagflat(A[:2, :2], -1),
    "fill_diagonal": lambda m: jnp.fill_diagonal(np.zeros((5, 3)), K[:2], inplace=False)
    if m is jnp else _np_fill_diagonal(np.zeros((5, 3)), K[:2]),
    "tri_indices": lambda m: [*m.tril_indices(4, 1, 3), *m.triu_indices(3, -1),
                              *m.tril_indices_from(A), *m.triu_indices_from(A, 2),
                              *m.diag_indices(3, 3), *m.diag_indices_from(np.ones((2, 2)))],
}


def _np_fill_diagonal(a, val):
    np.fill_diagonal(a, val)
    return a


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "diagonal": (lambda a: jnp.diagonal(a[None], 1, 2, 1), (A,)),
    "trace": (lambda a: jnp.trace(a, -1), (A,)),
    "diag": (lambda x: jnp.diag(x, -2), (K,)),
    "tril": (lambda a: jnp.tril(a, 1), (A,)),
    "fill_diagonal": (lambda a, v: jnp.fill_diagonal(a, v, inplace=False), (A, K)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.tril(np.ones(3)), ValueError),
    (lambda: jnp.diagonal(np.ones(3)), ValueError),
    (lambda: jnp.trace(np.ones((2, 2)), axis1=1, axis2=1), ValueError),
    (lambda: jnp.diag(np.ones((2, 2, 2))), ValueError),
    (lambda: jnp.fill_diagonal(np.ones((2, 2)), 1.), NotImplementedError),
    (lambda: jnp.fill_diagonal(np.ones((2, 3, 2)), 1., inplace=False), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
