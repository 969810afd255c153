"""didax.numpy shape information and rearrangement (shape_ops.py): values against NumPy, result
dtypes and weak types against JAX (the table below was produced by running JAX 0.10.2),
derivatives, tracing and errors."""
import numpy as np
from hypothesis import strategies as st
from numpy_testing import assert_matches as _assert_matches  # noqa: E402
from numpy_testing import table_tests

import didax.numpy as jnp

# --------------------------------------------------------------------------------------
# Result dtypes and weak types, as JAX 0.10.2 gives them

DTYPE_CASES = {  # name: (case, its result dtypes as JAX 0.10.2 gives them in x32 and
    # x64 mode; '*' marks a weak type)
    "reshape_weak": (lambda m: m.reshape(2.0, (1, 1)), "float32*", "float64*"),
}


# --------------------------------------------------------------------------------------
# Against NumPy, on random shapes (including empty arrays and scalars)


def _axis(draw, x, extra=0):
    return draw(st.integers(-x.ndim - extra, x.ndim - 1 + extra))


def _case_transpose(draw, x):
    perm = draw(st.permutations(range(x.ndim)))
    return lambda m: m.transpose(x, perm)


def _case_moveaxis(draw, x):
    src, dst = _axis(draw, x), _axis(draw, x)
    return lambda m: m.moveaxis(x, src, dst)


def _case_swapaxes(draw, x):
    a, b = _axis(draw, x), _axis(draw, x)
    return lambda m: m.swapaxes(x, a, b)


def _case_expand_dims(draw, x):
    axis = _axis(draw, x, extra=1)
    return lambda m: m.expand_dims(x, axis)


def _case_squeeze(draw, x):
    y = x.reshape((1,) + x.shape + (1,))
    axis = draw(st.sampled_from([None, 0, -1, (0, -1)]))
    return lambda m: m.squeeze(y, axis)


def _axis_or_none(draw, x):
    return draw(st.none() | st.integers(-x.ndim, x.ndim - 1)) if x.ndim else None


def _case_flip(draw, x):
    axis = _axis_or_none(draw, x)
    return lambda m: m.flip(x, axis)


def _case_roll(draw, x):
    shift = draw(st.integers(-7, 7))
    axis = _axis_or_none(draw, x)
    return lambda m: m.roll(x, shift, axis)


def _case_rot90(draw, x):
    k = draw(st.integers(-2, 5))
    return lambda m: m.rot90(x, k, (0, x.ndim - 1))


def _case_atleast(draw, x):
    fn = draw(st.sampled_from(["atleast_1d", "atleast_2d", "atleast_3d"]))
    return lambda m: getattr(m, fn)(x)


SHAPE_CASES = {  # name: (case builder, minimum rank, minimum axis size)
    "reshape": (lambda d, x: lambda m: m.reshape(x, (-1, 1)), 0, 0),
    "reshape_F": (lambda d, x: lambda m: m.reshape(x, x.shape[::-1], order="F"), 0, 0),
    "ravel_F": (lambda d, x: lambda m: m.ravel(x, order="F"), 0, 0),
    "transpose": (_case_transpose, 0, 0),
    "moveaxis": (_case_moveaxis, 1, 0),
    "swapaxes": (_case_swapaxes, 1, 0),
    "expand_dims": (_case_expand_dims, 0, 0),
    "squeeze": (_case_squeeze, 0, 0),
    "flip": (_case_flip, 0, 0),
    "roll": (_case_roll, 1, 0),
    "rot90": (_case_rot90, 2, 0),
    "atleast": (_case_atleast, 0, 0),
}


# --------------------------------------------------------------------------------------
# Derivatives (forward mode, second order, float64)

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))


GRAD_CASES = {
    "reshape_F": (lambda a: jnp.reshape(a, (4, 3), order="F"), (A,)),
    "moveaxis": (lambda a: jnp.moveaxis(a[None], 0, -1), (A,)),
    "roll": (lambda a: jnp.roll(a, (1, -2), (0, 1)), (A,)),
    "roll_traced_shift": (lambda a: jnp.roll(a, jnp.asarray(2), 1), (A,)),
    "rot90": (lambda a: jnp.rot90(a, 3), (A,)),
}


# --------------------------------------------------------------------------------------
# Tracing: shapes that depend on values need concrete inputs, or a static size

TRACEABLE = {
    "roll_traced": lambda x: jnp.roll(x, jnp.astype(x[0], int)),
}


# --------------------------------------------------------------------------------------
# Errors

ERROR_CASES = [
    # TypeError, as JAX raises for its own arrays (for a NumPy input it passes on NumPy's)
    (lambda: jnp.reshape(np.ones(6), (4, -1)), TypeError),
    (lambda: jnp.reshape(np.ones(6), (-1, -1)), ValueError),
    (lambda: jnp.reshape(np.ones(6), 6, order="A"), NotImplementedError),
    (lambda: jnp.squeeze(np.ones((1, 2)), 1), ValueError),
    (lambda: jnp.transpose(np.ones((1, 2)), (0, 0)), TypeError),
    (lambda: jnp.moveaxis(np.ones((1, 2)), (0, 1), 0), ValueError),
    (lambda: jnp.rot90(np.ones(3)), ValueError),
    (lambda: jnp.broadcast_shapes((2,), (3,)), ValueError),
]


# --------------------------------------------------------------------------------------
# Array information and small helpers


def test_small_helpers():
    assert jnp.ndim(A) == 2 and jnp.shape(A) == (3, 4) and jnp.size(A) == 12
    assert jnp.size(A, 1) == 4 and jnp.size(A, (0, 1)) == 12 and jnp.size(2.) == 1
    assert jnp.isscalar(1.) and jnp.isscalar(jnp.asarray(2)) and not jnp.isscalar(A)
    assert jnp.iterable(A) and not jnp.iterable(1.)
    assert jnp.can_cast(np.int32, np.float64) and not jnp.can_cast(np.float64, np.int32)
    assert jnp.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    assert jnp.s_[1:2] == np.s_[1:2] and jnp.index_exp[1] == (1,)
    x = jnp.frombuffer(np.arange(3, dtype=np.float32).tobytes(), np.float32)
    _assert_matches(x, [0., 1., 2.])
    _assert_matches(jnp.fromstring("1 2", sep=" "), [1., 2.])
    _assert_matches(jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int),
                    np.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int))
    _assert_matches(jnp.astype(np.array([1.7, -1.7]), int), [1, -1])
    _assert_matches(jnp.astype(np.array([1j, 0]), bool), [True, False])
    _assert_matches(jnp.copy(A), A)
    _assert_matches(jnp.mask_indices(3, jnp.triu, 1), np.mask_indices(3, np.triu, 1))


# The tests of the tables above (numpy_testing.table_tests)
globals().update(table_tests(globals()))
