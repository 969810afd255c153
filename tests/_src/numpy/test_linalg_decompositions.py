"""didax.numpy.linalg decompositions, solves and determinants: values against numpy.linalg,
dtypes against JAX 0.10.2 (the table was produced by running it), derivatives of order 2 in
both modes (including the determinant's at singular matrices), vmap against a loop, jit
against eager, and errors."""
import itertools

import numpy as np
import pytest
from vmap_testing import assert_same, loop

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

BOTH = ("fwd", "rev")


def _rng(seed=0):
    return np.random.default_rng(seed)


def _data(shape, dtype=np.float64, seed=0):
    rng = _rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _spd(shape, dtype=np.float64, seed=0):
    x = _data(shape, dtype, seed)
    n = shape[-1]
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)


def _same(got, want):
    """LAPACK's result, up to the last bits (which can depend on memory alignment)."""
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
        return
    tol = 1e-13 if np.finfo(got.dtype).bits == 64 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _close(got, want, x64=True):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    tol = 1e-10 if x64 else 2e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# --------------------------------------------------------------------------------------
# Public names and dtypes (JAX 0.10.2, for a 2x2 input of each dtype below)

NAMES = ["cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "matrix_rank", "solve", "inv",
         "det", "slogdet"]
FNS = {name: getattr(jnp.linalg, name) for name in NAMES}
FNS["solve"] = lambda x: jnp.linalg.solve(x, x[0])
INPUTS = [np.int32, np.complex64, bool]
JAX_DTYPES = {
    "cholesky": ["float32", "complex64", "float32"],
    "qr": ["float32 float32", "complex64 complex64", "float32 float32"],
    "eigh": ["float32 float32", "float32 complex64", "float32 float32"],
    "eigvalsh": ["float32", "float32", "float32"],
    "svd": ["float32 float32 float32", "complex64 float32 complex64", "float32 float32 float32"],
    "svdvals": ["float32", "float32", "float32"],
    "matrix_rank": ["int32", "int32", "int32"],
    "solve": ["float32", "complex64", "float32"],
    "inv": ["float32", "complex64", "float32"],
    "det": ["float32", "complex64", "float32"],
    "slogdet": ["float32 float32", "complex64 float32", "float32 float32"],
}


@pytest.mark.parametrize("name", NAMES)
def test_dtypes_match_jax(name):
    a = np.array([[4, 1], [1, 3]])
    for dtype, want in zip(INPUTS, JAX_DTYPES[name]):
        outs = didax.tree_util.tree_leaves(FNS[name](a.astype(dtype)))
        assert " ".join(str(o.dtype) for o in outs) == want, dtype
        assert not any(o.weak_type for o in outs)


def test_public_module_and_result_types():
    assert set(NAMES) <= set(dir(jnp.linalg))
    a = _spd((3, 3), np.float32)
    assert jnp.linalg.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert jnp.linalg.qr(a)._fields == ("Q", "R")
    assert jnp.linalg.svd(a)._fields == ("U", "S", "Vh")
    assert jnp.linalg.slogdet(a)._fields == ("sign", "logabsdet")


# --------------------------------------------------------------------------------------
# Decompositions against numpy.linalg


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_cholesky(upper, dtype):
    a = _spd((2, 4, 4), dtype)
    with enable_x64(True):
        got = jnp.linalg.cholesky(a, upper=upper)
    assert got.dtype == dtype
    want = np.linalg.cholesky(a, upper=upper)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode):
    a = _data(shape, np.float32)
    got, want = jnp.linalg.qr(a, mode), np.linalg.qr(a, mode)
    for g, w in zip(didax.tree_util.tree_leaves(got), (want,) if mode == "r" else want):
        _same(g, w)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_eigh_and_eigvalsh(dtype):
    a = _spd((3, 4, 4), dtype)
    with enable_x64(True):
        w, v = jnp.linalg.eigh(a)
        vals = jnp.linalg.eigvalsh(a)
    ew, ev = np.linalg.eigh(a)
    _same(w, ew)
    _same(v, ev)
    _same(vals, ew)


def test_eigh_upper_triangle_without_symmetrizing():
    a = _spd((4, 4))
    messy = np.triu(a) + np.tril(_data((4, 4), seed=1), -1)
    with enable_x64(True):
        w = jnp.linalg.eigvalsh(messy, UPLO="U", symmetrize_input=False)
    _close(w, np.linalg.eigvalsh(a))


@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd(shape, full_matrices):
    a = _data(shape)
    with enable_x64(True):
        u, s, vh = jnp.linalg.svd(a, full_matrices=full_matrices)
        vals = jnp.linalg.svdvals(a)
    eu, es, evh = np.linalg.svd(a, full_matrices=full_matrices)
    for g, w in ((u, eu), (s, es), (vh, evh), (vals, es)):
        _same(g, w)


def test_hermitian_svd_takes_absolute_eigenvalues():
    a = _spd((2, 4, 4)) - 6 * np.eye(4)  # indefinite: some negative eigenvalues
    with enable_x64(True):
        u, s, vh = (np.asarray(t) for t in jnp.linalg.svd(a, hermitian=True))
        vals = jnp.linalg.svd(a, hermitian=True, compute_uv=False)
    _close(s, np.linalg.svd(a, compute_uv=False))
    _close(vals, np.linalg.svd(a, compute_uv=False))
    _close((u * s[..., None, :]) @ vh, a)


def test_matrix_rank():
    low_rank = _data((2, 5, 2)) @ _data((2, 2, 4), seed=1)
    with enable_x64(True):
        np.testing.assert_array_equal(np.asarray(jnp.linalg.matrix_rank(low_rank)), [2, 2])
        assert int(jnp.linalg.matrix_rank(np.eye(3), rtol=0.5)) == 3
        assert int(jnp.linalg.matrix_rank(np.diag([1.0, 1e-3]), tol=1e-2)) == 1
        assert int(jnp.linalg.matrix_rank(np.zeros(3))) == 0


# --------------------------------------------------------------------------------------
# Solves, inverses and determinants against numpy.linalg


@pytest.mark.parametrize("a_shape,b_shape", [((4, 4), (4,)), ((4, 4), (4, 2)),
                                             ((3, 4, 4), (4,)), ((3, 4, 4), (3, 4, 2)),
                                             ((4, 4), (2, 4, 3)), ((2, 1, 4, 4), (3, 4, 1))])
def test_solve(a_shape, b_shape):
    a, b = _data(a_shape), _data(b_shape, seed=1)
    with enable_x64(True):
        got = jnp.linalg.solve(a, b)
    if len(b_shape) == 1:
        want = np.linalg.solve(a, b[..., None])[..., 0]
    else:
        want = np.linalg.solve(a, b)
    _close(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_inv(dtype):
    a = _data((3, 4, 4), dtype)
    with enable_x64(True):
        got = jnp.linalg.inv(a)
    assert got.dtype == dtype
    _close(got, np.linalg.inv(a), dtype != np.float32)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_det_and_slogdet(n, dtype):
    a = _data((3, n, n), dtype)
    with enable_x64(True):
        det = jnp.linalg.det(a)
        sign, logabsdet = jnp.linalg.slogdet(a)
    _close(det, np.linalg.det(a))
    want_sign, want_log = np.linalg.slogdet(a)
    _close(sign, want_sign)
    _close(logabsdet, want_log)


def test_singular_determinants():
    with enable_x64(True):
        sign, logabsdet = jnp.linalg.slogdet(np.zeros((4, 4)))
        assert (float(sign), float(logabsdet)) == (0.0, -np.inf)
        singular = _data((4, 3)) @ _data((3, 4), seed=1)
        assert abs(float(jnp.linalg.det(singular))) < 1e-12


# --------------------------------------------------------------------------------------
# Derivatives (float64, order 2, forward and reverse)


@pytest.fixture
def x64():
    with enable_x64(True):
        yield


def test_solve_grads(x64):
    a, b = _data((3, 3)) + 3 * np.eye(3), _data((3, 2), seed=1)
    check_grads(jnp.linalg.solve, (a, b), order=2, modes=BOTH)
    check_grads(jnp.linalg.solve, (a, b[:, 0]), order=2, modes=BOTH)


@pytest.mark.parametrize("name", ["inv", "det", "slogdet"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_inverse_and_determinant_grads(x64, name, n):
    a = _data((n, n)) + 2 * np.eye(n)
    check_grads(getattr(jnp.linalg, name), (a,), order=2, modes=BOTH)


def _cofactors(a):
    n = a.shape[0]
    c = np.empty_like(a)
    for i, j in itertools.product(range(n), repeat=2):
        minor = np.delete(np.delete(a, i, 0), j, 1)
        c[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return c


@pytest.mark.parametrize("rank", [3, 2])
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(x64, rank):
    a = _data((4, rank)) @ _data((rank, 4), seed=1)
    grad = np.asarray(didax.grad(jnp.linalg.det)(a))
    np.testing.assert_allclose(grad, _cofactors(a), atol=1e-10)


def test_decomposition_grads(x64):
    spd = _spd((3, 3))
    a = np.diag([1.0, 2.0, 4.0]) + 0.1 * _data((3, 3))
    check_grads(lambda x: jnp.linalg.cholesky(x, upper=True), (spd,), order=2, modes=BOTH)
    check_grads(jnp.linalg.eigh, (a,), order=2, modes=BOTH)
    check_grads(jnp.linalg.eigvalsh, (a,), order=2, modes=BOTH)
    check_grads(jnp.linalg.qr, (_data((4, 3)),), order=2, modes=BOTH)
    check_grads(lambda x: jnp.linalg.svd(x, full_matrices=False), (a,), order=2, modes=BOTH)


# --------------------------------------------------------------------------------------
# vmap, jit


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 1)])
def test_vmap_of_solve(x64, in_axes):
    a, b = _data((3, 4, 4)), _data((3, 4, 2), seed=1)
    a = a[0] if in_axes[0] is None else a
    b = b[0] if in_axes[1] is None else (np.moveaxis(b, 0, 1) if in_axes[1] == 1 else b)
    assert_same(didax.vmap(jnp.linalg.solve, in_axes=in_axes)(a, b),
                loop(jnp.linalg.solve, in_axes, 3, a, b))


def test_vmap_of_grad_of_det(x64):
    a = _data((3, 4, 4))
    f = didax.grad(jnp.linalg.det)
    assert_same(didax.vmap(f)(a), loop(f, (0,), 3, a))


def test_jit_matches_eager():
    a = _data((2, 4, 4), np.float32)
    for f in [jnp.linalg.inv, jnp.linalg.det, jnp.linalg.slogdet, jnp.linalg.eigh,
              lambda x: jnp.linalg.solve(x, x[..., :1]),
              didax.grad(lambda x: jnp.linalg.det(x[0]))]:
        want = didax.tree_util.tree_leaves(f(a))
        got = didax.tree_util.tree_leaves(didax.jit(f)(a))
        for g, w in zip(got, want):
            _same(g, w)


# --------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("call, error, match", [
    (lambda: jnp.linalg.qr(np.eye(2), mode="thin"), ValueError, "Unsupported QR"),
    (lambda: jnp.linalg.eigh(np.eye(2), UPLO="X"), ValueError, "UPLO must be one of"),
    (lambda: jnp.linalg.cholesky(np.ones((2, 3))), ValueError, r"shape \[..., n, n\]"),
    (lambda: jnp.linalg.solve(np.ones(2), np.ones(2)), ValueError, "at least two dimensional"),
    (lambda: jnp.linalg.solve(np.ones((3, 2, 2)), np.ones((3, 2))), ValueError,
     "batched 1-dimensional solve"),
    (lambda: jnp.linalg.solve(np.ones((2, 2)), np.ones((3, 1))), ValueError,
     "must have shapes"),
    (lambda: jnp.linalg.inv(np.ones((2, 3))), ValueError, "Argument to inv"),
    (lambda: jnp.linalg.det(np.ones((2, 3))), ValueError, r"\[..., n, n\]"),
    (lambda: jnp.linalg.slogdet(np.eye(3), method="qr"), NotImplementedError, "method='qr'"),
    (lambda: jnp.linalg.slogdet(np.eye(3), method="x"), ValueError, "Unknown slogdet method"),
    (lambda: jnp.linalg.svd(np.ones(3)), ValueError, "at least two dimensions"),
    (lambda: jnp.linalg.cholesky([[1.0]]), TypeError, "requires ndarray or scalar"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
