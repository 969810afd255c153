"""didax.numpy pad (padding.py): values against NumPy, result dtypes and weak types against JAX (the
table below was produced by running JAX 0.10.2), derivatives, tracing and errors."""
import numpy as np
from hypothesis import strategies as st
from numpy_testing import I, table_tests  # noqa: E402

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them


DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "pad_weak": (lambda m: m.pad(m.asarray([1.0]) * 2.0, 1), "float32", "float64"),
    "pad_mean_int": (lambda m: m.pad(I, 1, mode="mean"), "int32", "int32"),
}


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


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))


GRAD_CASES = {
    "pad": (lambda a: jnp.pad(a, ((1, 5), (3, 1)), mode="reflect", reflect_type="odd"), (A,)),
    "pad_stats": (lambda a: jnp.pad(a, 2, mode="median", stat_length=2)
                  + jnp.pad(a, 2, mode="mean") + jnp.pad(a, 2, mode="linear_ramp"), (A,)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "pad": lambda x: jnp.pad(x, 2, mode="symmetric"),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    (lambda: jnp.pad(np.ones(3), -1), ValueError),
    (lambda: jnp.pad(np.ones(3), 1, mode="foo"), NotImplementedError),
    (lambda: jnp.pad(np.ones(3), 1, mode="edge", constant_values=1), ValueError),
    (lambda: jnp.pad(np.ones(3), ((1, 2, 3),)), ValueError),
    (lambda: jnp.pad(np.ones(0), 1, mode="wrap"), ValueError),
]


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
