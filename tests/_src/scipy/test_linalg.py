"""didax.scipy.linalg against scipy.linalg (values, SciPy's conventions: upper factors by
default, trans codes, LAPACK pivots), batching and broadcasting as JAX does it, derivatives
of order 2 in both modes, and errors."""
import numpy as np
import pytest
import scipy.linalg as sla

import didax
import didax.scipy.linalg as dla
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

BOTH = ("fwd", "rev")


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def _data(shape, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _spd(shape, seed=0, complex_=False):
    x = _data(shape, seed, complex_)
    return x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])


def _close(got, want, tol=1e-10):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_public_module():
    import didax.scipy

    assert didax.scipy.linalg is dla
    assert {"cholesky", "cho_factor", "cho_solve", "solve_triangular"} <= set(dir(dla))


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
def test_cholesky_and_cho_solve(lower, complex_):
    a = _spd((4, 4), complex_=complex_)
    b = _data((4, 2), 1, complex_)
    _close(dla.cholesky(a, lower=lower), sla.cholesky(a, lower=lower))
    c, low = dla.cho_factor(a, lower=lower)
    assert low is lower
    _close(dla.cho_solve((c, low), b), sla.cho_solve(sla.cho_factor(a, lower=lower), b))
    _close(dla.cho_solve((c, low), b[:, 0]), np.linalg.solve(a, b[:, 0]))


def test_cholesky_reads_one_triangle():
    a = _spd((4, 4))
    messy = np.triu(a) + np.tril(_data((4, 4), 1), -1)  # only the upper triangle is right
    _close(dla.cholesky(messy), sla.cholesky(a))


def test_batched_cho_solve_broadcasts():
    a, b = _spd((3, 4, 4)), _data((4, 2), 1)
    c = dla.cho_factor(a, lower=True)
    _close(dla.cho_solve(c, b), np.linalg.solve(a, b))


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_solve_triangular(trans, lower, unit_diagonal):
    a = _data((4, 4), complex_=True) + 3 * np.eye(4)
    b = _data((4, 3), 1, complex_=True)
    kw = dict(trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    _close(dla.solve_triangular(a, b, **kw), sla.solve_triangular(a, b, **kw))
    _close(dla.solve_triangular(a, b[:, 0], **kw), sla.solve_triangular(a, b[:, 0], **kw))


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve(assume_a, lower):
    a, b = _spd((4, 4)), _data((4, 2), 1)
    _close(dla.solve(a, b, assume_a=assume_a, lower=lower),
           sla.solve(a, b, assume_a=assume_a, lower=lower))


def test_inv_det():
    a = _data((4, 4))
    _close(dla.inv(a), sla.inv(a))
    _close(dla.det(a), sla.det(a))


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_factor_and_lu_solve(trans):
    a, b = _data((4, 4), complex_=True), _data((4, 2), 1, complex_=True)
    lu, piv = dla.lu_factor(a)
    want_lu, want_piv = sla.lu_factor(a)
    _close(lu, want_lu)
    np.testing.assert_array_equal(np.asarray(piv), want_piv)
    assert piv.dtype == np.int32
    _close(dla.lu_solve((lu, piv), b, trans=trans), sla.lu_solve((want_lu, want_piv), b,
                                                                  trans=trans))
    _close(dla.lu_solve((lu, piv), b[:, 0], trans=trans),
           sla.lu_solve((want_lu, want_piv), b[:, 0], trans=trans))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("permute_l", [False, True])
def test_lu(shape, permute_l):
    a = _data(shape)
    for got, want in zip(dla.lu(a, permute_l=permute_l), sla.lu(a, permute_l=permute_l)):
        _close(got, want)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr(shape, mode):
    a = _data(shape)
    got, want = dla.qr(a, mode=mode), sla.qr(a, mode=mode)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _close(g, w)


def test_eigh_and_svd():
    a = _spd((4, 4))
    w, v = dla.eigh(a)
    want_w, want_v = sla.eigh(a)
    _close(w, want_w)
    _close(np.abs(np.asarray(v)), np.abs(want_v))  # eigenvectors up to sign
    _close(dla.eigh(a, lower=False, eigvals_only=True), sla.eigh(a, eigvals_only=True))
    x = _data((5, 3))
    u, s, vh = dla.svd(x, full_matrices=False)
    _close(s, sla.svd(x, compute_uv=False))
    _close((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), x)
    _close(dla.svd(x, compute_uv=False), sla.svd(x, compute_uv=False))


def test_grads():
    a, b = _spd((3, 3)), _data((3, 2), 1)
    tri = np.tril(_data((3, 3), 2)) + 3 * np.eye(3)
    # One triangle is read: JAX's derivative (and didax's) is for symmetric perturbations.
    check_grads(lambda a: dla.cholesky(a + a.T, lower=True), (a,), order=2, modes=BOTH)
    check_grads(lambda a, b: dla.cho_solve(dla.cho_factor(a + a.T), b), (a, b), order=2,
                modes=BOTH)
    check_grads(lambda a, b: dla.solve_triangular(a, b, trans="T", lower=True), (tri, b),
                order=2, modes=BOTH)
    check_grads(lambda a, b: dla.solve(a + a.T, b, assume_a="pos"), (a, b), order=2,
                modes=BOTH)
    check_grads(lambda a, b: dla.lu_solve(dla.lu_factor(a), b), (a, b), order=2, modes=BOTH)


def test_positive_definite_solve_derivative_is_the_general_solve_derivative():
    a, b = _spd((3, 3)), _data((3, 2), 1)
    t = _data((3, 3), 2)  # not symmetric: a is differentiated as the full matrix it stands for
    pos = didax.jvp(lambda a: dla.solve(a, b, assume_a="pos"), (a,), (t,))[1]
    gen = didax.jvp(lambda a: dla.solve(a, b), (a,), (t,))[1]
    _close(pos, gen)


@pytest.mark.parametrize("call, error, match", [
    (lambda: dla.solve_triangular(np.eye(2), np.ones(2), trans=3), ValueError, "'trans'"),
    (lambda: dla.solve(np.eye(2), np.ones(2), assume_a="tri"), ValueError, "assume_a"),
    (lambda: dla.qr(np.eye(2), pivoting=True), NotImplementedError, "pivoting"),
    (lambda: dla.qr(np.eye(2), mode="raw"), ValueError, "Unsupported QR"),
    (lambda: dla.eigh(np.eye(2), np.eye(2)), NotImplementedError, "b=None"),
    (lambda: dla.cho_solve((np.eye(2), False), np.ones(3)), ValueError, "incompatible"),
    (lambda: dla.lu(np.ones((2, 2, 2))), ValueError, "matrix"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
