"""didax.numpy array creation (creation.py): values against NumPy, result dtypes and weak types
against JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing and
errors."""
import numpy as np
from numpy_testing import A, F, I, K, S, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "zeros": (lambda m: m.zeros(3), "float32", "float64"),
    "ones_int": (lambda m: m.ones(3, int), "int32", "int64"),
    "full_py_int": (lambda m: m.full((2,), 3), "int32*", "int64*"),
    "full_py_float": (lambda m: m.full((2,), 3.0), "float32*", "float64*"),
    "full_f32": (lambda m: m.full((2,), np.float32(3)), "float32", "float32"),
    "zeros_like_py_float": (lambda m: m.zeros_like(2.0), "float32*", "float64*"),
    "zeros_like_i32": (lambda m: m.zeros_like(I), "int32", "int32"),
    "full_like_f32": (lambda m: m.full_like(F, 1), "float32", "float32"),
    "ones_like_dtype": (lambda m: m.ones_like(F, dtype=bool), "bool", "bool"),
    "arange_int": (lambda m: m.arange(5), "int32", "int64"),
    "arange_float": (lambda m: m.arange(0.0, 1.0, 0.25), "float32", "float64"),
    "arange_f32_start": (lambda m: m.arange(np.float32(1), 4), "float32", "float32"),
    "linspace": (lambda m: m.linspace(0, 1, 5), "float32", "float64"),
    "linspace_int": (lambda m: m.linspace(0, 10, 5, dtype=int), "int32", "int64"),
    "linspace_i32_arr": (lambda m: m.linspace(m.asarray(I), 10, 3), "float32", "float32"),
    "logspace": (lambda m: m.logspace(0, 2, 3), "float32", "float64"),
    "geomspace": (lambda m: m.geomspace(1, 100, 3), "float32", "float64"),
    "eye": (lambda m: m.eye(3), "float32", "float64"),
    "identity_int": (lambda m: m.identity(3, int), "int32", "int64"),
    "tri": (lambda m: m.tri(3), "float32", "float32"),
    "indices": (lambda m: m.indices((2, 3)), "int32", "int64"),
    "meshgrid": (lambda m: m.meshgrid(m.arange(2), S), "int32 float32", "int64 float32"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


NUMPY_CASES = {
    "zeros": lambda m: m.zeros((2, 3), int),
    "full": lambda m: m.full((2, 2), np.array([1., 2.])),
    "full_like": lambda m: m.full_like(A, 2.5),
    "arange": lambda m: [m.arange(5), m.arange(1, 6, 2), m.arange(0, 1, 0.25), m.arange(5, 1)],
    "arange_neg_step": lambda m: m.arange(5, 1, -1.5),
    "linspace": lambda m: [m.linspace(0, 1, 7), m.linspace(0, 1, 5, endpoint=False),
                           m.linspace(2, 3, 1), m.linspace(0, 1, 0)],
    "linspace_retstep": lambda m: m.linspace(-1, 2, 4, retstep=True),
    "linspace_arrays": lambda m: m.linspace(K, 2 * K + 1, 4, axis=-1),
    "linspace_int": lambda m: m.linspace(0, 10, 7, dtype=int),
    "logspace": lambda m: m.logspace(0, 2, 5, base=2),
    "geomspace": lambda m: [m.geomspace(1, 1000, 4), m.geomspace(-1, -100, 3, endpoint=False)],
    "eye": lambda m: [m.eye(3), m.eye(3, 4, 1), m.eye(4, 3, -2), m.identity(2)],
    "tri": lambda m: [m.tri(3), m.tri(3, 5, -1)],
    "meshgrid": lambda m: m.meshgrid(K, V, indexing="xy") + m.meshgrid(K, V, indexing="ij",
                                                                      sparse=True),
    "indices": lambda m: [m.indices((2, 3)), *m.indices((2, 3), sparse=True)],
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "linspace": (lambda a, b: jnp.linspace(a, b, 5, axis=1), (K, K[::-1])),
    "logspace": (lambda a, b: jnp.logspace(a, b, 5), (K, K[::-1])),
    "geomspace": (lambda a: jnp.geomspace(a, 10., 4), (np.abs(K) + 1,)),
    "full": (lambda v: jnp.full((2, 3), v), (np.float64(1.5),)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "linspace": lambda x: jnp.linspace(x[0], x[1], 4),
    "eye_traced_k": lambda x: jnp.eye(3, k=jnp.astype(x[0], int)),
}

CONCRETE_ONLY = {
    "arange": lambda x: jnp.arange(x[0]),
    "linspace_num": lambda x: jnp.linspace(0, 1, jnp.astype(x[0], int)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.zeros(3, 4), TypeError),
    (lambda: jnp.zeros((2, -1)), ValueError),
    (lambda: jnp.full((2,), [1, 2]), TypeError),
    (lambda: jnp.arange(np.ones(2)), ValueError),
    (lambda: jnp.arange(1j), ValueError),
    (lambda: jnp.linspace(0, 1, -1), ValueError),
    (lambda: jnp.eye(2, k=1.5), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
