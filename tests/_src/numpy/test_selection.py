"""didax.numpy select, choose and piecewise (selection.py): values against NumPy, result dtypes and
weak types against JAX (the table below was produced by running JAX 0.10.2), derivatives, tracing
and errors."""
import numpy as np
from numpy_testing import A, F, I, S, V, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "select": (lambda m: m.select([I > 0], [F], 0), "float32", "float32"),
    "choose": (lambda m: m.choose(m.asarray([0, 1, 0]), [S, S * 2]), "float32", "float32"),
}


# --------------------------------------------------------------------------------------
# Values against NumPy, in float32 and in float64 mode


PICK = np.array([[0, 2, 1, 0], [1, 1, 0, 2], [2, 0, 0, 1]])


NUMPY_CASES = {
    "select": lambda m: m.select([A > 0.5, A < -0.5], [A, 2 * A], default=-1.),
    "choose": lambda m: m.choose(PICK, [A, 2 * A, -A]),
    "choose_modes": lambda m: [m.choose(PICK * 2 - 1, [A, -A], mode=md)
                               for md in ("wrap", "clip")],
    "piecewise": lambda m: m.piecewise(V, [V < 0, V > 0.5], [lambda x: -x, lambda x: 2 * x, 7.]),
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

GRAD_CASES = {
    "select": (lambda a, b: jnp.select([a > 0, b > 0], [a * b, jnp.sin(a)], b), (A, A[::-1])),
    "choose": (lambda a, b: jnp.choose(PICK % 2, [a, b]), (A, A[::-1])),
    "piecewise": (lambda x: jnp.piecewise(x, [x < 0, x > .5], [jnp.sin, lambda t: t ** 2, 1.]),
                  (V,)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "choose_clip": lambda x: jnp.choose(jnp.astype(x, int), [x, -x], mode="clip"),
}

CONCRETE_ONLY = {
    "choose_raise": lambda x: jnp.choose(jnp.astype(x > 1, int), [x, x]),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.select([], []), ValueError),
    (lambda: jnp.select([True], [1, 2]), ValueError),
    (lambda: jnp.choose(np.array([0, 2]), [np.ones(2), np.ones(2)]), ValueError),
    (lambda: jnp.choose(np.array([0.]), [np.ones(1)], mode="clip"), ValueError),
    (lambda: jnp.piecewise(np.ones(2), [True], [1, 2, 3]), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
