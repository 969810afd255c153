"""lax.linalg primitives: values against NumPy's LAPACK (cholesky, qr, eigh and svd agree
exactly, being the same routines), triangular solves against a dense solve in every
parameter combination, NaNs where JAX gives them, error messages, derivatives of order 2 in
both modes against finite differences, the transpose of triangular_solve against the adjoint
identity, vmap against a loop, jit against eager, printing against JAX's text, and
random.multivariate_normal against values recorded from JAX 0.10.2."""
import itertools

import numpy as np
import pytest
from vmap_testing import assert_same, loop

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

linalg = lax.linalg
BOTH = ("fwd", "rev")


def _same(got, want):
    """LAPACK's result, up to the last bits (which can depend on memory alignment)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
        return
    tol = 1e-13 if np.finfo(got.dtype).bits == 64 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _spd(rng, shape, dtype=np.float64):
    """Well-conditioned Hermitian positive-definite matrices of `shape` (..., n, n)."""
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    n = shape[-1]
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)


def _well_conditioned(rng, m, n):
    """An m x n matrix with singular values k + 1, ..., 2 (well separated)."""
    u = np.linalg.qr(rng.standard_normal((m, m)))[0]
    v = np.linalg.qr(rng.standard_normal((n, n)))[0]
    k = min(m, n)
    s = np.zeros((m, n))
    s[range(k), range(k)] = np.arange(k, 0, -1) + 1.0
    return u @ s @ v.T


def _triangular(rng, shape, lower, dtype=np.float64):
    """A triangular matrix with a dominant diagonal, and garbage in the other triangle (which
    triangular_solve must not read)."""
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    n = shape[-1]
    x = x + 3 * np.eye(n)
    garbage = 100 * rng.standard_normal(shape)
    keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    return np.where(keep, x, garbage).astype(dtype)


# --------------------------------------------------------------------------------------
# cholesky


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_cholesky_matches_numpy(dtype):
    a = _spd(_rng(), (2, 3, 4, 4), dtype)
    with enable_x64(True):
        out = linalg.cholesky(a)
    assert out.dtype == dtype
    _same(out, np.linalg.cholesky(a))


def test_cholesky_without_symmetrizing_reads_the_lower_triangle():
    a = _spd(_rng(), (4, 4))
    messy = np.tril(a) + np.triu(_rng(1).standard_normal((4, 4)), 1)
    with enable_x64(True):
        _same(linalg.cholesky(messy, symmetrize_input=False), np.linalg.cholesky(a))


def test_cholesky_of_a_non_positive_definite_matrix_is_nan_as_in_jax():
    bad = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    out = np.asarray(linalg.cholesky(np.stack([bad, np.eye(2, dtype=np.float32)])))
    # JAX 0.10.2: [[nan, 0.], [nan, nan]] for the failed matrix, the others unaffected.
    np.testing.assert_array_equal(out[0], [[np.nan, 0.0], [np.nan, np.nan]])
    np.testing.assert_array_equal(out[1], np.eye(2))


def test_cholesky_of_empty_matrices():
    assert linalg.cholesky(np.zeros((3, 0, 0), np.float32)).shape == (3, 0, 0)


# --------------------------------------------------------------------------------------
# triangular_solve


def _op(a, lower, transpose_a, conjugate_a, unit_diagonal):
    """op(A) as a dense matrix, from the triangle triangular_solve reads."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(a.shape[-1])
    t = np.conj(t) if conjugate_a else t
    return t.T if transpose_a else t


FLAGS = list(itertools.product([False, True], repeat=5))


@pytest.mark.parametrize("left_side,lower,transpose_a,conjugate_a,unit_diagonal", FLAGS)
def test_triangular_solve_matches_a_dense_solve(left_side, lower, transpose_a, conjugate_a,
                                                unit_diagonal):
    rng = _rng()
    a = _triangular(rng, (2, 5, 5), lower, np.complex128)
    shape = (2, 5, 3) if left_side else (2, 3, 5)
    b = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    with enable_x64(True):
        x = np.asarray(linalg.triangular_solve(
            a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal))
    op = np.stack([_op(m, lower, transpose_a, conjugate_a, unit_diagonal) for m in a])
    expected = (np.linalg.solve(op, b) if left_side
                else np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2),
                                                 np.swapaxes(b, -1, -2)), -1, -2))
    np.testing.assert_allclose(x, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lower", [False, True])
def test_triangular_solve_of_many_rows_in_blocks(lower):
    rng = _rng(3)
    a = _triangular(rng, (70, 70), lower)
    b = rng.standard_normal((70, 4))
    with enable_x64(True):
        x = np.asarray(linalg.triangular_solve(a, b, left_side=True, lower=lower))
    np.testing.assert_allclose(x, np.linalg.solve(np.tril(a) if lower else np.triu(a), b),
                               rtol=1e-10, atol=1e-10)


def test_triangular_solve_of_a_vector_and_in_float32():
    rng = _rng()
    a = _triangular(rng, (4, 4), True, np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    right = linalg.triangular_solve(a, b, left_side=False, lower=True)
    left = linalg.triangular_solve(a, b, left_side=True, lower=True)
    assert right.shape == left.shape == (4,) and right.dtype == left.dtype == np.float32
    np.testing.assert_allclose(np.asarray(left), np.linalg.solve(np.tril(a), b), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(right), np.linalg.solve(np.tril(a).T, b), rtol=1e-5)


def test_triangular_solve_in_float16_as_jax_does():
    a = (3 * np.eye(4) + 0.1).astype(np.float16)
    x = linalg.triangular_solve(a, a, left_side=True, lower=True)
    assert x.dtype == np.float16
    np.testing.assert_allclose(np.asarray(x, np.float32),
                               np.linalg.solve(np.tril(a).astype(np.float32), a.astype(np.float32)),
                               atol=2e-3)


def test_triangular_solve_with_a_zero_pivot_gives_infinities_not_an_error():
    a = np.array([[0.0, 0.0], [1.0, 1.0]], np.float32)
    x = np.asarray(linalg.triangular_solve(a, np.ones((2, 1), np.float32), left_side=True,
                                           lower=True))
    assert not np.isfinite(x).all()


# --------------------------------------------------------------------------------------
# lu, qr, eigh, svd


def test_lu_matches_jax_pivots_and_reconstructs():
    a = np.array([[1.0, 2.0, 0.5], [4.0, -1.0, 3.0], [-6.0, 0.0, 1.0], [2.0, 5.0, -2.0]],
                 np.float64)
    with enable_x64(True):
        lu, pivots, perm = linalg.lu(a)
    # JAX 0.10.2: pivots [2 3 3], permutation [2 3 1 0]
    np.testing.assert_array_equal(np.asarray(pivots), [2, 3, 3])
    np.testing.assert_array_equal(np.asarray(perm), [2, 3, 1, 0])
    assert pivots.dtype == perm.dtype == np.int32
    lu = np.asarray(lu)
    low = np.tril(lu, -1)[:, :3] + np.eye(4, 3)
    np.testing.assert_allclose(low @ np.triu(lu)[:3], a[np.asarray(perm)], rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(linalg.lu_pivots_to_permutation(pivots, 4)),
                                  np.asarray(perm))


@pytest.mark.parametrize("shape", [(2, 4, 4), (5, 3), (3, 5), (0, 0)])
def test_lu_reconstructs_and_handles_singular_matrices(shape):
    a = _rng().standard_normal(shape)
    if a.size:
        a[..., 1] = 0.0  # a zero column: a zero pivot, which must not raise
    lu, _, perm = (np.asarray(v) for v in linalg.lu(a.astype(np.float32)))
    *_, m, n = shape
    k = min(m, n)
    low = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    permuted = np.take_along_axis(a, perm[..., None], axis=-2)
    np.testing.assert_allclose(low @ np.triu(lu)[..., :k, :], permuted, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_qr_matches_numpy(shape, full_matrices):
    a = _rng().standard_normal(shape).astype(np.float32)
    q, r = linalg.qr(a, full_matrices=full_matrices)
    eq, er = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    assert q.dtype == r.dtype == np.float32
    _same(q, eq)
    _same(r, er)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_eigh_matches_numpy(dtype):
    a = _spd(_rng(), (3, 4, 4), dtype)
    with enable_x64(True):
        v, w = linalg.eigh(a)
    ew, ev = np.linalg.eigh(a)
    assert v.dtype == dtype and w.dtype == np.finfo(dtype).dtype
    _same(w, ew)
    _same(v, ev)


def test_eigh_reads_the_requested_triangle():
    a = _spd(_rng(), (4, 4))
    messy = np.triu(a) + np.tril(_rng(1).standard_normal((4, 4)), -1)
    with enable_x64(True):
        _, w = linalg.eigh(messy, lower=False, symmetrize_input=False)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(a), rtol=1e-12)


@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_matches_numpy(shape, full_matrices):
    a = _rng().standard_normal(shape).astype(np.float32)
    u, s, vh = linalg.svd(a, full_matrices=full_matrices)
    eu, es, evh = np.linalg.svd(a, full_matrices=full_matrices)
    for got, want in ((u, eu), (s, es), (vh, evh)):
        assert got.dtype == np.float32
        _same(got, want)
    _same(linalg.svd(a, compute_uv=False), es)


# --------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("call, error, match", [
    (lambda: linalg.cholesky(np.ones((2, 3), np.float32), symmetrize_input=False), ValueError,
     r"must be a square matrix. Got shape \(2, 3\)"),
    (lambda: linalg.cholesky(np.ones(3, np.float32), symmetrize_input=False), TypeError,
     "must have rank at least 2"),
    (lambda: linalg.cholesky(np.ones((2, 2), np.int32), symmetrize_input=False), TypeError,
     "cholesky does not accept dtype int32"),
    (lambda: linalg.triangular_solve(np.ones((3, 3), np.float32), np.ones((3, 1), np.float16),
                                     left_side=True), TypeError,
     "requires arguments to have the same dtypes, got float32, float16"),
    (lambda: linalg.triangular_solve(np.ones((2, 3, 3)), np.ones((2, 1, 3, 1)),
                                     left_side=True), TypeError, "same number of batch"),
    (lambda: linalg.triangular_solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)), left_side=True),
     TypeError, "equal batch dimensions"),
    (lambda: linalg.triangular_solve(np.ones((3, 3)), np.ones((2, 1)), left_side=True),
     ValueError, "Incompatible shapes"),
    (lambda: linalg.qr(np.ones((3, 3)), pivoting=True), NotImplementedError, "pivoting"),
    (lambda: linalg.eigh(np.eye(3), subset_by_index=(0, 2)), NotImplementedError,
     "subset_by_index"),
    (lambda: linalg.eigh(np.ones((2, 3)), symmetrize_input=False), ValueError, r"\[..., n, n\]"),
    (lambda: linalg.lu_pivots_to_permutation(np.zeros(3, np.int32), 2), ValueError, "exceed"),
    # LAPACK has no float16 routines: JAX 0.10.2 on CPU raises the same error
    (lambda: linalg.cholesky(np.eye(2, dtype=np.float16)), NotImplementedError,
     "Unsupported dtype float16"),
    (lambda: linalg.lu(np.eye(2, dtype=np.float16)), NotImplementedError, "float16"),
    (lambda: linalg.svd(np.eye(2, dtype=np.float16)), NotImplementedError, "float16"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --------------------------------------------------------------------------------------
# Derivatives (float64, order 2, forward and reverse)


@pytest.fixture
def x64():
    with enable_x64(True):
        yield


def test_cholesky_grads(x64):
    check_grads(linalg.cholesky, (_spd(_rng(), (2, 3, 3)),), order=2, modes=BOTH)


@pytest.mark.parametrize("left_side,lower,transpose_a",
                         list(itertools.product([False, True], repeat=3)))
def test_triangular_solve_grads(x64, left_side, lower, transpose_a):
    rng = _rng()
    a = _triangular(rng, (3, 3), lower)
    b = rng.standard_normal((3, 2) if left_side else (2, 3))
    check_grads(lambda a, b: linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                                      transpose_a=transpose_a),
                (a, b), order=2, modes=BOTH)


def test_triangular_solve_unit_diagonal_grads_ignore_the_diagonal(x64):
    a = _triangular(_rng(), (3, 3), True)
    b = _rng(1).standard_normal((3, 2))

    def f(a, b):
        return linalg.triangular_solve(a, b, left_side=True, lower=True, unit_diagonal=True)

    check_grads(f, (a, b), order=2, modes=BOTH)
    ga = np.asarray(didax.grad(lambda a: jnp.sum(f(a, b)))(a))
    np.testing.assert_array_equal(np.triu(ga), 0)  # nothing on or above the diagonal is read


def test_triangular_solve_transpose_is_the_adjoint(x64):
    rng = _rng()
    a = _triangular(rng, (4, 4), False)
    b, ct = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def solve(b):
        return linalg.triangular_solve(a, b, left_side=True, lower=False, transpose_a=True)

    (ct_b,) = didax.linear_transpose(solve, b)(ct)
    np.testing.assert_allclose(np.sum(ct * np.asarray(solve(b))), np.sum(np.asarray(ct_b) * b),
                               rtol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_qr_grads(x64, shape, full_matrices):
    a = _well_conditioned(_rng(), *shape)
    check_grads(lambda a: linalg.qr(a, full_matrices=full_matrices), (a,), order=2, modes=BOTH)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_svd_grads(x64, shape):
    a = _well_conditioned(_rng(), *shape)
    check_grads(lambda a: linalg.svd(a, full_matrices=False), (a,), order=2, modes=BOTH)
    check_grads(lambda a: linalg.svd(a, compute_uv=False), (a,), order=2, modes=BOTH)
    if shape[0] == shape[1]:
        check_grads(linalg.svd, (a,), order=1, modes=BOTH)


def test_svd_jvp_of_full_non_square_matrices_is_not_implemented(x64):
    with pytest.raises(NotImplementedError, match="full matrices"):
        didax.jvp(linalg.svd, (np.ones((3, 2)),), (np.ones((3, 2)),))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_lu_grads(x64, shape):
    a = _rng().standard_normal(shape)
    check_grads(lambda a: linalg.lu(a)[0], (a,), order=2, modes=BOTH)


# --------------------------------------------------------------------------------------
# vmap against a loop


def test_vmap_of_the_decompositions(x64):
    rng = _rng()
    spd = _spd(rng, (3, 4, 4))
    general = rng.standard_normal((4, 3, 5))
    for f, x, axis in [(linalg.cholesky, spd, 0), (linalg.eigh, spd, 2),
                       (lambda x: linalg.qr(x, full_matrices=False), general, 1),
                       (linalg.svd, general, 0), (linalg.lu, general, 2)]:
        x = np.moveaxis(x, 0, axis)
        assert_same(didax.vmap(f, in_axes=axis)(x), loop(f, (axis,), x.shape[axis], x))


@pytest.mark.parametrize("left_side", [False, True])
@pytest.mark.parametrize("in_axes", [(0, 0), (None, 1), (None, 2), (2, None), (1, 0)])
def test_vmap_of_triangular_solve(x64, left_side, in_axes):
    rng = _rng()
    a = _triangular(rng, (4, 4), True)
    b = rng.standard_normal((4, 2) if left_side else (2, 4))
    size = 3
    a_batched = a if in_axes[0] is None else np.stack(
        [a + 0.1 * i for i in range(size)], in_axes[0])
    b_batched = b if in_axes[1] is None else np.stack(
        [b * (i + 1) for i in range(size)], in_axes[1])

    def f(a, b):
        return linalg.triangular_solve(a, b, left_side=left_side, lower=True, transpose_a=True)

    assert_same(didax.vmap(f, in_axes=in_axes)(a_batched, b_batched),
                loop(f, in_axes, size, a_batched, b_batched))


# --------------------------------------------------------------------------------------
# jit against eager, and printing


def test_jit_matches_eager():
    rng = _rng()
    spd = _spd(rng, (2, 3, 3), np.float32)
    tri = _triangular(rng, (2, 3, 3), True, np.float32)
    b = rng.standard_normal((2, 3, 2)).astype(np.float32)
    for f, args in [(linalg.cholesky, (spd,)), (linalg.eigh, (spd,)), (linalg.qr, (b,)),
                    (linalg.svd, (b,)), (linalg.lu, (b,)),
                    (lambda a, b: linalg.triangular_solve(a, b, left_side=True), (tri, b)),
                    (didax.grad(lambda a: jnp.sum(linalg.cholesky(a))), (spd,))]:
        want = didax.tree_util.tree_leaves(f(*args))
        got = didax.tree_util.tree_leaves(didax.jit(f)(*args))
        for g, w in zip(got, want):
            _same(g, w)


def test_cholesky_jaxpr_is_jax_text():
    text = str(didax.make_jaxpr(linalg.cholesky)(np.ones((2, 2), np.float32)))
    assert text == """{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = transpose[permutation=(1, 0)] a
    c:f32[2,2] = add a b
    d:f32[2,2] = div c 2.0:f32[]
    e:f32[2,2] = cholesky d
    f:i32[2,2] = iota[dimension=0 dtype=int32 shape=(2, 2) sharding=None] \n\
    g:i32[2,2] = add f 0:i32[]
    h:i32[2,2] = iota[dimension=1 dtype=int32 shape=(2, 2) sharding=None] \n\
    i:bool[2,2] = ge g h
    j:f32[2,2] = broadcast_in_dim 0.0:f32[]
    k:f32[2,2] = select_n i j e
  in (k,) }"""


def test_triangular_solve_and_lu_jaxprs_are_jax_text():
    a = np.ones((2, 2), np.float32)
    text = str(didax.make_jaxpr(lambda a, b: linalg.triangular_solve(
        a, b, left_side=True, lower=True))(a, a))
    assert text == """{ lambda ; a:f32[2,2] b:f32[2,2]. let
    c:f32[2,2] = triangular_solve[
      conjugate_a=False
      left_side=True
      lower=True
      transpose_a=False
      unit_diagonal=False
    ] a b
  in (c,) }"""
    assert str(didax.make_jaxpr(linalg.lu)(a)) == (
        "{ lambda ; a:f32[2,2]. let b:f32[2,2] c:i32[2] d:i32[2] = lu a in (b, c, d) }")


# --------------------------------------------------------------------------------------
# random.multivariate_normal, which needed a matrix factor


MEAN = np.array([1.0, -2.0, 0.5], np.float32)
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32)
JAX_SAMPLES = {  # jax.random.multivariate_normal(jax.random.key(42), MEAN, COV, (2,), method)
    "cholesky": [[0.95997125, -1.5495039, 0.5928383], [1.2171468, -2.0886378, 0.68311065]],
    "eigh": [[0.4823562, -1.7004623, 0.28674707], [0.7140893, -2.1565115, 0.63012725]],
    "svd": [[1.1234726, -2.3370967, 0.8588462], [0.7398031, -1.895525, 0.5715859]],
}


@pytest.mark.parametrize("method", list(JAX_SAMPLES))
def test_multivariate_normal_matches_jax(method):
    out = didax.random.multivariate_normal(didax.random.key(42), MEAN, COV, (2,),
                                           method=method)
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(out), JAX_SAMPLES[method], rtol=1e-5, atol=1e-5)
