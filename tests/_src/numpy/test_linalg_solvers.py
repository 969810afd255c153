"""didax.numpy.linalg's pseudo-inverse, least squares, matrix powers, condition numbers and
tensor inverses: values against numpy.linalg, dtypes against JAX 0.10.2 (the table was
produced by running it), JAX's pinv derivative rule, derivatives (float64, order 2, both
modes), jit and vmap, and JAX's errors."""
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

BOTH = ("fwd", "rev")


def _data(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.fixture
def x64():
    with enable_x64(True):
        yield


def _close(got, want, atol=1e-10):
    np.testing.assert_allclose(np.asarray(got), want, atol=atol, rtol=atol)


# --------------------------------------------------------------------------------------
# Values against NumPy (float64)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 3, 5)])
def test_pinv_matches_numpy(x64, shape):
    a = _data(shape)
    _close(jnp.linalg.pinv(a), np.linalg.pinv(a))
    c = a + 1j * _data(shape, seed=1)
    _close(jnp.linalg.pinv(c), np.linalg.pinv(c))


def test_pinv_hermitian_rtol_and_rank_deficient(x64):
    a = _data((4, 2)) @ _data((2, 4), seed=1)  # rank 2
    _close(jnp.linalg.pinv(a), np.linalg.pinv(a, rcond=1e-12), atol=1e-8)
    h = a + a.T
    _close(jnp.linalg.pinv(h, hermitian=True), np.linalg.pinv(h, hermitian=True), atol=1e-8)
    _close(jnp.linalg.pinv(a, rtol=0.5), np.linalg.pinv(a, rcond=0.5))
    _close(jnp.linalg.pinv(a, rcond=0.5), np.linalg.pinv(a, rcond=0.5))
    assert jnp.linalg.pinv(np.ones((0, 3))).shape == (3, 0)
    with pytest.raises(ValueError, match="only one of rtol and rcond"):
        jnp.linalg.pinv(a, rtol=0.1, rcond=0.1)


@pytest.mark.parametrize("shape,bshape", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3, 2)),
                                          ((4, 4), (4,))])
def test_lstsq_matches_numpy(x64, shape, bshape):
    a, b = _data(shape), _data(bshape, seed=1)
    x, resid, rank, s = jnp.linalg.lstsq(a, b)
    wx, wresid, wrank, ws = np.linalg.lstsq(a, b, rcond=None)
    _close(x, wx)
    _close(s, ws)
    assert int(rank) == wrank
    if wresid.size:
        _close(resid, wresid)
    else:  # JAX always returns residuals; NumPy's are empty when m <= n
        _close(resid, np.sum((b - a @ wx) ** 2, axis=0).reshape(np.shape(resid)))
    assert jnp.linalg.lstsq(a, b, numpy_resid=True)[1].shape == wresid.shape


def test_lstsq_rank_deficient(x64):
    a = _data((5, 2)) @ _data((2, 3), seed=1)
    b = _data((5,), seed=2)
    x, _, rank, _ = jnp.linalg.lstsq(a, b)
    _close(x, np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-8)
    assert int(rank) == 2
    x, _, rank, _ = jnp.linalg.lstsq(a, b, rcond=-1)
    assert int(rank) == 2


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 4, 5, 11])
def test_matrix_power_matches_numpy(x64, n):
    a = _data((2, 3, 3)) / 2 + np.eye(3)
    _close(jnp.linalg.matrix_power(a, n), np.linalg.matrix_power(a, n), atol=1e-8)
    i = np.arange(9).reshape(3, 3) % 4
    if n >= 0:
        got = jnp.linalg.matrix_power(i, n)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.linalg.matrix_power(i, n))


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"])
def test_cond_matches_numpy(x64, p):
    a = _data((2, 3, 3))
    _close(jnp.linalg.cond(a, p), np.linalg.cond(a, p), atol=1e-8)
    if p in (None, 2, -2):
        r = _data((4, 3))
        _close(jnp.linalg.cond(r, p), np.linalg.cond(r, p), atol=1e-8)


def test_cond_of_singular_matrix_is_inf():
    assert float(jnp.linalg.cond(np.array([[1., 2.], [0., 0.]]))) == np.inf
    assert float(jnp.linalg.cond(np.array([[1., 2.], [0., 0.]]), 1)) == np.inf
    assert np.isnan(float(jnp.linalg.cond(np.array([[np.nan, 2.], [0., 1.]]), 1)))


def test_tensorinv_and_tensorsolve_match_numpy(x64):
    a = _data((4, 6, 8, 3))
    _close(jnp.linalg.tensorinv(a, ind=2), np.linalg.tensorinv(a, ind=2), atol=1e-8)
    a = _data((24, 4, 3, 2))
    _close(jnp.linalg.tensorinv(a, ind=1), np.linalg.tensorinv(a, ind=1), atol=1e-8)
    a, b = _data((2, 3, 6)), _data((2, 3), seed=1)
    _close(jnp.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a, b), atol=1e-8)
    a, b = _data((6, 2, 3)), _data((2, 3), seed=1)
    _close(jnp.linalg.tensorsolve(a, b, axes=(0,)), np.linalg.tensorsolve(a, b, axes=(0,)),
           atol=1e-8)


# --------------------------------------------------------------------------------------
# Dtypes as JAX gives them (float32 by default)

CASES = {
    "pinv": lambda x: jnp.linalg.pinv(x),
    "lstsq": lambda x: jnp.linalg.lstsq(x, x[:, 0]),
    "matrix_power": lambda x: jnp.linalg.matrix_power(x, 3),
    "matrix_power_neg": lambda x: jnp.linalg.matrix_power(x, -1),
    "cond": lambda x: jnp.linalg.cond(x),
    "cond_1": lambda x: jnp.linalg.cond(x, 1),
    "tensorinv": lambda x: jnp.linalg.tensorinv(x.reshape(3, 1, 3), 1),
    "tensorsolve": lambda x: jnp.linalg.tensorsolve(x, x[0]),
}
INPUTS = {"f32": np.float32, "i32": np.int32, "b": bool, "c64": np.complex64}
JAX_DTYPES = {
    'pinv': 'float32 float32 float32 complex64',
    'lstsq': 'float32,float32,int32,float32 float32,float32,int32,float32 '
             'float32,float32,int32,float32 complex64,float32,int32,float32',
    'matrix_power': 'float32 int32 bool complex64',
    'matrix_power_neg': 'float32 float32 float32 complex64',
    'cond': 'float32 float32 float32 float32',
    'cond_1': 'float32 float32 float32 float32',
    'tensorinv': 'float32 float32 float32 complex64',
    'tensorsolve': 'float32 float32 float32 complex64',
}


@pytest.mark.parametrize("name", list(CASES))
def test_dtypes_match_jax(name):
    x = np.eye(3) + np.arange(9).reshape(3, 3) % 2
    got = []
    for d in INPUTS.values():
        leaves = didax.tree_util.tree_leaves(CASES[name](x.astype(d)))
        assert not any(leaf.weak_type for leaf in leaves)
        got.append(",".join(str(leaf.dtype) for leaf in leaves))
    assert " ".join(got) == JAX_DTYPES[name]


# --------------------------------------------------------------------------------------
# Derivatives


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_pinv_grads(x64, shape):
    check_grads(jnp.linalg.pinv, (_data(shape),), order=2, modes=BOTH)


def test_pinv_grads_hermitian_and_complex(x64):
    a = _data((3, 3))
    check_grads(lambda x: jnp.linalg.pinv(x, hermitian=True), (a + a.T,), order=2, modes=BOTH)
    c = _data((3, 2)) + 1j * _data((3, 2), seed=1)
    check_grads(jnp.linalg.pinv, (c,), order=1, modes=BOTH)


def test_pinv_jvp_is_jaxs_rule(x64):
    """At a rank-deficient matrix the SVD's derivative is undefined; the custom rule gives
    JAX's tangent (the values were produced by JAX 0.10.2 on these inputs)."""
    a = np.array([[1., 2.], [2., 4.], [0., 0.]])
    t = np.array([[0.5, -1.], [0.25, 1.], [1., 0.]])
    _, tan = didax.jvp(jnp.linalg.pinv, (a,), (t,))
    want = np.array([[-0.0184, 0.0052, 0.008], [-0.0448, -0.0056, 0.016]])
    np.testing.assert_allclose(np.asarray(tan), want, atol=1e-12)


def test_other_grads(x64):
    a, b = _data((5, 3)), _data((5, 2), seed=1)
    check_grads(lambda a, b: jnp.linalg.lstsq(a, b)[0], (a, b), order=2, modes=BOTH)
    sq = _data((3, 3)) / 2 + np.eye(3)
    for n in (-2, 0, 3, 5):
        check_grads(lambda x, n=n: jnp.linalg.matrix_power(x, n), (sq,), order=2, modes=BOTH)
    for p in (None, 1, "fro"):
        check_grads(lambda x, p=p: jnp.linalg.cond(x, p), (sq,), order=2, modes=BOTH)
    check_grads(lambda x: jnp.linalg.tensorinv(x.reshape(3, 1, 3), 1), (sq,), order=2,
                modes=BOTH)
    check_grads(jnp.linalg.tensorsolve, (sq.reshape(3, 3), b[:3, 0]), order=2, modes=BOTH)


# --------------------------------------------------------------------------------------
# jit and vmap


def test_jit_and_vmap(x64):
    a = _data((3, 4, 3))
    for f in [jnp.linalg.pinv, lambda x: jnp.linalg.lstsq(x, x[:, 0]),
              lambda x: jnp.linalg.matrix_power(x[:3], 5), jnp.linalg.cond,
              lambda x: jnp.linalg.tensorsolve(x[:3], x[0]),
              didax.grad(lambda x: jnp.linalg.pinv(x).sum())]:
        for leaf_j, leaf_e in zip(didax.tree_util.tree_leaves(didax.jit(f)(a[0])),
                                  didax.tree_util.tree_leaves(f(a[0]))):
            _close(leaf_j, np.asarray(leaf_e), atol=1e-9)
        batched = didax.tree_util.tree_leaves(didax.vmap(f)(a))
        looped = [didax.tree_util.tree_leaves(f(x)) for x in a]
        for i, leaf in enumerate(batched):
            _close(leaf, np.stack([np.asarray(r[i]) for r in looped]), atol=1e-9)


# --------------------------------------------------------------------------------------
# Errors (JAX's messages)


def test_errors():
    with pytest.raises(TypeError, match="Array must be at least two-dimensional"):
        jnp.linalg.matrix_power(np.ones(3), 2)
    with pytest.raises(TypeError, match="must be square"):
        jnp.linalg.matrix_power(np.ones((2, 3)), 2)
    with pytest.raises(TypeError, match="exponent must be an integer"):
        jnp.linalg.matrix_power(np.ones((2, 2)), 1.5)
    with pytest.raises(ValueError, match="must be at least 2D"):
        jnp.linalg.cond(np.ones(3))
    with pytest.raises(ValueError, match="must be square"):
        jnp.linalg.cond(np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match="must not be empty"):
        jnp.linalg.cond(np.ones((0, 3)))
    with pytest.raises(ValueError, match="Leading dimensions"):
        jnp.linalg.lstsq(np.ones((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match="ind must be a positive integer"):
        jnp.linalg.tensorinv(np.ones((2, 2)), 0)
    with pytest.raises(ValueError, match="tensorinv is only possible"):
        jnp.linalg.tensorinv(np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match="leading shape of a must match"):
        jnp.linalg.tensorsolve(np.ones((2, 3)), np.ones(3))
