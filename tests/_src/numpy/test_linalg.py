"""didax.numpy.linalg norms (including those of singular values), products and matrix views
against numpy.linalg on hypothesis-drawn shapes, dtypes against JAX (the table was produced by
running JAX 0.10.2), errors, derivatives and tracing. The decompositions are tested in
test_linalg_decompositions.py."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax as jax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

SETTINGS = settings(max_examples=20, deadline=None)
inf = np.inf

# --------------------------------------------------------------------------------------
# Dtypes as JAX gives them, for inputs of shape (2, 3) and the dtypes of INPUTS (in order)

INPUTS = {"f32": np.float32, "f16": np.float16, "i8": np.int8, "i32": np.int32, "b": bool,
          "c64": np.complex64}
FNS = {
    "norm": lambda x: jnp.linalg.norm(x),
    "norm_1": lambda x: jnp.linalg.norm(x, 1, axis=1),
    "norm_0": lambda x: jnp.linalg.norm(x, 0, axis=1),
    "norm_inf": lambda x: jnp.linalg.norm(x, inf),
    "norm_3": lambda x: jnp.linalg.norm(x, 3, axis=0),
    "vector_norm": lambda x: jnp.linalg.vector_norm(x),
    "matrix_norm": lambda x: jnp.linalg.matrix_norm(x, ord=1),
    "trace": lambda x: jnp.linalg.trace(x),
    "diagonal": lambda x: jnp.linalg.diagonal(x),
    "matrix_transpose": lambda x: jnp.linalg.matrix_transpose(x),
    "multi_dot": lambda x: jnp.linalg.multi_dot([x, x.T, x]),
    "vecdot": lambda x: jnp.linalg.vecdot(x, x),
    "outer": lambda x: jnp.linalg.outer(x[0], x[1]),
}
JAX_DTYPES = {
    'norm': 'float32 float16 float32 float32 float32 float32',
    'norm_1': 'float32 float16 float32 float32 float32 float32',
    'norm_0': 'float32 float16 float32 float32 float32 float32',
    'norm_inf': 'float32 float16 float32 float32 float32 float32',
    'norm_3': 'float32 float16 float32 float32 float32 float32',
    'vector_norm': 'float32 float16 float32 float32 float32 float32',
    'matrix_norm': 'float32 float16 float32 float32 float32 float32',
    'trace': 'float32 float16 int32 int32 int32 complex64',
    'diagonal': 'float32 float16 int8 int32 bool complex64',
    'matrix_transpose': 'float32 float16 int8 int32 bool complex64',
    'multi_dot': 'float32 float16 int8 int32 bool complex64',
    'vecdot': 'float32 float16 int8 int32 bool complex64',
    'outer': 'float32 float16 int8 int32 bool complex64',
}


@pytest.mark.parametrize("name", list(FNS))
def test_dtypes_match_jax(name):
    outs = [FNS[name](np.ones((2, 3), d)) for d in INPUTS.values()]
    assert not any(o.weak_type for o in outs)
    assert " ".join(str(o.dtype) for o in outs) == JAX_DTYPES[name]


def test_public_module():
    names = {"norm", "vector_norm", "matrix_norm", "vecdot", "matmul", "outer", "tensordot",
             "trace", "diagonal", "cross", "matrix_transpose", "multi_dot"}
    assert names <= set(dir(jnp.linalg))
    for name in ("norm", "vector_norm", "matrix_norm", "multi_dot"):  # not merged into jnp
        assert not hasattr(jnp, name)


# --------------------------------------------------------------------------------------
# Values against numpy.linalg


def _data(seed, shape, x64, complex_=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
        return x.astype(np.complex128 if x64 else np.complex64)
    return x.astype(np.float64 if x64 else np.float32)


def _close(got, expected, x64):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    tol = 1e-10 if x64 else 1e-4
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


VECTOR_ORDS = [None, 1, 2, inf, -inf, 0, 3, 0.5, -1, -2]
MATRIX_ORDS = [None, "fro", 1, -1, inf, -inf, "nuc", 2, -2]


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data(),
       ord=st.sampled_from(VECTOR_ORDS), keepdims=st.booleans(), complex_=st.booleans(),
       seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_vector_norm_matches_numpy(shape, data, ord, keepdims, complex_, seed, x64):
    x = _data(seed, tuple(shape), x64, complex_)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    with enable_x64(x64):
        _close(jnp.linalg.norm(x, ord, axis=axis, keepdims=keepdims),
               np.linalg.norm(x, ord, axis=axis, keepdims=keepdims), x64)
        if len(shape) == 1:
            _close(jnp.linalg.norm(x, ord), np.linalg.norm(x, ord), x64)
        axes = tuple(data.draw(st.permutations(range(len(shape))))[:data.draw(
            st.integers(1, len(shape)))])
        vord = 2 if ord is None else ord
        _close(jnp.linalg.vector_norm(x, axis=axes, ord=vord, keepdims=keepdims),
               np.linalg.vector_norm(x, axis=axes, ord=vord, keepdims=keepdims), x64)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), data=st.data(),
       ord=st.sampled_from(MATRIX_ORDS), keepdims=st.booleans(), complex_=st.booleans(),
       seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_matrix_norm_matches_numpy(shape, data, ord, keepdims, complex_, seed, x64):
    x = _data(seed, tuple(shape), x64, complex_)
    n = len(shape)
    axis = tuple(a - n if data.draw(st.booleans()) else a
                 for a in data.draw(st.permutations(range(n)))[:2])
    with enable_x64(x64):
        _close(jnp.linalg.norm(x, ord, axis=axis, keepdims=keepdims),
               np.linalg.norm(x, ord, axis=axis, keepdims=keepdims), x64)
        mord = "fro" if ord is None else ord
        _close(jnp.linalg.matrix_norm(x, ord=mord, keepdims=keepdims),
               np.linalg.matrix_norm(x, ord=mord, keepdims=keepdims), x64)
        if n == 2:
            _close(jnp.linalg.norm(x, ord, keepdims=keepdims),
                   np.linalg.norm(x, ord, keepdims=keepdims), x64)


def test_norm_defaults_and_empty():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    _close(jnp.linalg.norm(x), np.sqrt(np.sum(x ** 2)), False)
    assert jnp.linalg.norm(x, keepdims=True).shape == (1, 1, 1)
    assert float(jnp.linalg.norm(np.zeros((0, 3)), ord=1, axis=(0, 1))) == 0.0
    assert float(jnp.linalg.norm(np.zeros((0,)), ord=inf)) == 0.0


@SETTINGS
@given(batch=st.lists(st.integers(0, 3), max_size=2), n=st.integers(0, 4), m=st.integers(0, 4),
       offset=st.integers(-5, 5), seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_trace_diagonal_transpose_match_numpy(batch, n, m, offset, seed, x64):
    x = _data(seed, tuple(batch) + (n, m), x64)
    i = np.random.default_rng(seed).integers(-5, 5, tuple(batch) + (n, m)).astype(np.int8)
    with enable_x64(x64):
        _close(jnp.linalg.diagonal(x, offset=offset), np.linalg.diagonal(x, offset=offset), x64)
        _close(jnp.linalg.trace(x, offset=offset), np.linalg.trace(x, offset=offset), x64)
        np.testing.assert_array_equal(jnp.linalg.trace(i, offset=offset),
                                      np.trace(i, offset, -2, -1, dtype=np.int32))
        _close(jnp.linalg.trace(x, offset=offset, dtype=np.float32),
               np.linalg.trace(x, offset=offset, dtype=np.float32), False)
        _close(jnp.linalg.matrix_transpose(x), np.linalg.matrix_transpose(x), x64)


@SETTINGS
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 3),
       seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_products_match_numpy(batch, n, seed, x64):
    a = _data(seed, tuple(batch) + (n, 3), x64, complex_=True)
    b = _data(seed + 1, (n, 3), x64, complex_=True)
    with enable_x64(x64):
        _close(jnp.linalg.vecdot(a, b), np.linalg.vecdot(a, b), x64)
        _close(jnp.linalg.vecdot(a, b, axis=-2), np.linalg.vecdot(a, b, axis=-2), x64)
        _close(jnp.linalg.matmul(a, b.T), np.linalg.matmul(a, b.T), x64)
        _close(jnp.linalg.tensordot(a, b, axes=2), np.linalg.tensordot(a, b, axes=2), x64)
        _close(jnp.linalg.outer(b[0], b[-1]), np.linalg.outer(b[0], b[-1]), x64)
        _close(jnp.linalg.cross(a, b), np.linalg.cross(a, b), x64)
        _close(jnp.linalg.cross(np.swapaxes(a, -1, -2), b.T, axis=-2),
               np.linalg.cross(np.swapaxes(a, -1, -2), b.T, axis=-2), x64)


@SETTINGS
@given(dims=st.lists(st.integers(1, 4), min_size=3, max_size=6), first_vec=st.booleans(),
       last_vec=st.booleans(), seed=st.integers(0, 2 ** 31), x64=st.booleans())
def test_multi_dot_matches_numpy(dims, first_vec, last_vec, seed, x64):
    arrays = [_data(seed + i, (dims[i], dims[i + 1]), x64) for i in range(len(dims) - 1)]
    if first_vec:
        arrays[0] = arrays[0][0]
    if last_vec:
        arrays[-1] = arrays[-1][:, 0]
    with enable_x64(x64):
        _close(jnp.linalg.multi_dot(arrays), np.linalg.multi_dot(arrays), x64)


# --------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("call, error, match", [
    (lambda: jnp.linalg.norm(np.ones((2, 3)), 3), ValueError, "Invalid order '3' for matrix"),
    (lambda: jnp.linalg.norm(np.ones((2, 3)), "fro", axis=0), ValueError, "for vector norm"),
    (lambda: jnp.linalg.vector_norm(np.ones(3), ord="inf"), ValueError, "jax.numpy.inf"),
    (lambda: jnp.linalg.norm(np.ones((2, 3, 4)), 1), ValueError, "Improper number of axes"),
    (lambda: jnp.linalg.norm(np.ones((2, 3)), axis=2), ValueError, "out of bounds"),
    (lambda: jnp.linalg.outer(np.ones((2, 2)), np.ones(2)), ValueError, "one-dimensional"),
    (lambda: jnp.linalg.cross(np.ones(2), np.ones(2)), ValueError, "3-dimensional vectors"),
    (lambda: jnp.linalg.trace(np.ones(3)), ValueError, "at least two dimensions"),
    (lambda: jnp.linalg.diagonal(np.ones(3)), ValueError, "at least two dimensions"),
    (lambda: jnp.linalg.matrix_transpose(np.ones(3)), ValueError, "at least 2 dimensions"),
    (lambda: jnp.linalg.multi_dot([np.ones((2, 2))]), ValueError, "at least two arrays"),
    (lambda: jnp.linalg.multi_dot([np.ones((2, 3)), np.ones((2, 3))]), ValueError,
     "must match first dimension"),
    (lambda: jnp.linalg.norm([1.0, 2.0]), TypeError, "requires ndarray or scalar"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --------------------------------------------------------------------------------------
# Derivatives (float64) and tracing

GRAD_FNS = {
    "norm": lambda x: jnp.linalg.norm(x),
    "norm_vector_1": lambda x: jnp.linalg.norm(x, 1, axis=0),
    "norm_vector_3": lambda x: jnp.linalg.norm(x, 3, axis=1, keepdims=True),
    "norm_vector_inf": lambda x: jnp.linalg.norm(x, inf, axis=-1),
    "norm_matrix_1": lambda x: jnp.linalg.norm(x, 1, axis=(0, 1)),
    "norm_matrix_inf": lambda x: jnp.linalg.matrix_norm(x, ord=-inf),
    "norm_matrix_2": lambda x: jnp.linalg.norm(x, 2),
    "norm_matrix_-2": lambda x: jnp.linalg.norm(x, -2, axis=(1, 0)),
    "norm_nuc": lambda x: jnp.linalg.matrix_norm(x, ord="nuc"),
    "vector_norm": lambda x: jnp.linalg.vector_norm(x, ord=0.5),
    "trace": lambda x: jnp.linalg.trace(x, offset=1),
    "diagonal": lambda x: jnp.linalg.diagonal(x, offset=-1),
    "multi_dot": lambda x: jnp.linalg.multi_dot([x, x.T, x]),
    "vecdot": lambda x: jnp.linalg.vecdot(x, x),
    "cross": lambda x: jnp.linalg.cross(x[:, :3], x[:, 1:]),
}


def _distinct(shape):
    rng = np.random.default_rng(0)
    signs = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return signs * (rng.permutation(int(np.prod(shape))).reshape(shape) * 0.3 + 0.5)


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_grads(name):
    with enable_x64():
        check_grads(GRAD_FNS[name], (_distinct((3, 4)),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_jacrev_matches_jacfwd(name):
    with enable_x64():
        x = _distinct((3, 4))
        np.testing.assert_allclose(np.asarray(jax.jacrev(GRAD_FNS[name])(x)),
                                   np.asarray(jax.jacfwd(GRAD_FNS[name])(x)), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_make_jaxpr_matches_eager(name):
    x = _distinct((3, 4)).astype(np.float32)
    _, shape = jax.make_jaxpr(GRAD_FNS[name], return_shape=True)(x)
    eager = GRAD_FNS[name](x)
    assert (shape.shape, shape.dtype) == (eager.shape, eager.dtype)


def test_norm_jaxpr_matches_jax():
    # JAX: mul a a; reduce_sum[axes=(0, 1)]; sqrt (the real/conj of a real input are no-ops).
    text = str(jax.make_jaxpr(jnp.linalg.norm)(np.ones((2, 3), np.float32)))
    assert "mul a a" in text and "reduce_sum[axes=(0, 1)" in text and "sqrt" in text
