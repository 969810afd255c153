"""didax.scipy.linalg's special matrices and matrix functions against jax.scipy.linalg
0.10.2 (values and dtypes) and scipy.linalg (64-bit values); derivatives of order 2 in both
modes, vmap against a loop, and errors."""
import jax.scipy.linalg as jla
import numpy as np
import pytest
import scipy.linalg as sla
from jax_testing import assert_same as _same

import didax
import didax.numpy as jnp
import didax.scipy.linalg as dla
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

_RNG = np.random.default_rng(0)
A = _RNG.standard_normal((4, 4)).astype(np.float32)
E = _RNG.standard_normal((4, 4)).astype(np.float32)
B = _RNG.standard_normal((3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
C = _RNG.standard_normal((4, 3)).astype(np.float32)
D = _RNG.standard_normal(5).astype(np.float32)
OFF = _RNG.standard_normal(4).astype(np.float32)
I4 = np.eye(4, dtype=np.float32)


SPECIAL = {
    "block_diag": [(np.ones((2, 2)), np.array([[1, 2, 3]]), 5), ()],
    "circulant": [(np.array([1, 2, 3]),), (np.ones((2, 3)),)],
    "companion": [(np.array([2, 3, 4]),), (np.arange(1.0, 7).reshape(2, 3),)],
    "convolution_matrix": [(np.array([1, 2, 3]), 5, "same"), (np.array([1, 2, 3, 4.0]), 2,
                                                             "valid"),
                           (np.array([1, 2, 3]), 2, "full"), (np.array([1, 2, 3]), 2, "same")],
    "dft": [(4,), (5, "sqrtn"), (3, "n")],
    "fiedler": [(np.array([1, 4, 6]),)],
    "fiedler_companion": [(np.array([1.0, 4, 6, 2]),), (np.array([2.0, 4, 6, 2, 5, 7]),),
                          (np.array([1.0, 3]),)],
    "hadamard": [(4,), (8, np.float32)],
    "hankel": [(np.array([1, 2, 3]), np.array([3, 4, 5, 6])), (np.array([1, 2, 3]),)],
    "helmert": [(4,), (4, True), (1,)],
    "hilbert": [(3,)], "invhilbert": [(4,)],
    "invpascal": [(4,), (4, "lower"), (5, "upper")],
    "pascal": [(4,), (4, "upper"), (5, "lower")],
    "leslie": [(np.array([0.1, 2, 1]), np.array([0.2, 0.8]))],
    "toeplitz": [(np.array([1, 2, 3]), np.array([1, 4, 5, 6])), (np.array([1 + 1j, 2, 3]),),
                 (np.ones((2, 3)),)],
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_matrices_match_jax_and_scipy(name):
    for i, args in enumerate(SPECIAL[name]):
        if i == 0 or name in ("toeplitz", "dft"):  # JAX compiles each: a few for dtypes
            _same(getattr(dla, name)(*args), getattr(jla, name)(*args))
        batched = name in ("circulant", "companion", "toeplitz") and np.ndim(args[0]) > 1
        if args and not batched and name not in ("dft", "hadamard"):
            with enable_x64(True):
                want = getattr(sla, name)(*args)
                np.testing.assert_allclose(np.asarray(getattr(dla, name)(*args)), want,
                                           rtol=1e-12, atol=1e-12)


def test_special_matrices_differentiate_and_batch():
    with enable_x64(True):
        c, r = np.array([1.0, 2.0, 3.5]), np.array([1.0, -1.0, 0.5, 2.0])
        for fn in (dla.toeplitz, dla.hankel):
            check_grads(fn, (c, r), 2)
        for fn in (dla.circulant, dla.companion, dla.fiedler_companion):
            check_grads(fn, (c,), 2)
        check_grads(lambda f, s: dla.leslie(f, s), (c, r[:2]), 2)
        check_grads(lambda a: dla.convolution_matrix(a, 4, "same"), (c,), 2)
        check_grads(lambda x, y: dla.block_diag(x, y), (np.ones((2, 2)), c[None]), 2)
        rows = np.stack([c, 2 * c])
        _same(didax.vmap(dla.toeplitz)(rows), jnp.stack([dla.toeplitz(v) for v in rows]))
        _same(didax.vmap(dla.circulant)(rows), dla.circulant(rows))


def test_expm_and_frechet_match_jax():
    for a in (5 * A, A + 1j * E):
        _same(dla.expm(a), jla.expm(a), 1e-4)
    big = I4 * 1e6
    _same(dla.expm(big, max_squarings=4), jla.expm(big, max_squarings=4))  # NaN, as in JAX
    _same(dla.expm_frechet(A, E), jla.expm_frechet(A, E), 1e-4)
    with enable_x64(True):
        e = E.astype(np.float64)
        for a in (3 * A.astype(np.float64), 0.01 * A.astype(np.float64),
                  np.stack([A, 2 * A]).astype(np.float64)):
            np.testing.assert_allclose(np.asarray(dla.expm(a)), np.stack(
                [sla.expm(m) for m in a]) if a.ndim == 3 else sla.expm(a), rtol=1e-12)
        for got, want in zip(dla.expm_frechet(3 * A, e), sla.expm_frechet(3 * A, e)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


def test_expm_derivatives_and_vmap():
    with enable_x64(True):
        a = A.astype(np.float64)
        check_grads(dla.expm, (a,), 2)
        # through squarings: the JVP is the Frechet derivative (finite differences of a
        # matrix this large are too coarse to compare with)
        tangent = didax.jvp(dla.expm, (4 * a,), (E.astype(np.float64),))[1]
        np.testing.assert_allclose(np.asarray(tangent), sla.expm_frechet(4 * a, E)[1],
                                   rtol=1e-10, atol=1e-10)
        check_grads(lambda x, e: dla.expm_frechet(x, e, compute_expm=False),
                    (a, E.astype(np.float64)), 2)
        grad = didax.jit(didax.grad(lambda x: jnp.sum(dla.expm(x) ** 2)))
        np.testing.assert_allclose(np.asarray(grad(a)),
                                   np.asarray(didax.grad(lambda x: jnp.sum(dla.expm(x) ** 2))(a)),
                                   rtol=1e-10)
        stack = np.stack([a, -a, 2 * a])
        _same(didax.vmap(dla.expm)(stack), jnp.stack([dla.expm(x) for x in stack]), 1e-12)


def test_sqrtm():
    spd = A @ A.T + I4
    for a in (spd, A + 4 * I4):
        _same(dla.sqrtm(a), jla.sqrtm(a), 1e-4)
    with enable_x64(True):
        a = (A + 4 * I4).astype(np.float64)
        np.testing.assert_allclose(np.asarray(dla.sqrtm(a)), sla.sqrtm(a), rtol=1e-10,
                                   atol=1e-12)
        check_grads(lambda x: dla.sqrtm(x).real, (a,), 2)


@pytest.mark.parametrize("side", ["right", "left"])
def test_polar(side):
    for a in (A, A[:, :3], A + 1j * E):
        _same(dla.polar(a, side), jla.polar(a, side, method="svd"), 1e-4)
    with enable_x64(True):
        check_grads(lambda x: dla.polar(x, side)[0], (A.astype(np.float64),), 2)
        check_grads(lambda x: dla.polar(x, side)[1], (A.astype(np.float64),), 2)


def test_hessenberg_and_qr_multiply():
    _same(dla.hessenberg(A, calc_q=True), jla.hessenberg(A, calc_q=True), 1e-4)
    with enable_x64(True):
        a = A.astype(np.float64)
        for got, want in zip(dla.hessenberg(a, calc_q=True), sla.hessenberg(a, calc_q=True)):
            np.testing.assert_allclose(np.asarray(got), want, atol=1e-12)
        c = (A + 1j * E).astype(np.complex128)
        h, q = (np.asarray(x) for x in dla.hessenberg(c, calc_q=True))
        np.testing.assert_allclose(q @ h @ q.conj().T, c, atol=1e-12)
        np.testing.assert_array_equal(np.tril(h, -2), 0)
        np.testing.assert_allclose(q.conj().T @ q, np.eye(4), atol=1e-12)
        check_grads(dla.hessenberg, (a,), 2)
    for args, kw in [((A, C.T[:2]), {}), ((A[:, :3], C[:3]), {"mode": "left"}),
                     ((A, C[:, 0]), {}), ((A, C.T[:2]), {"conjugate": True})]:
        _same(dla.qr_multiply(*args, **kw), jla.qr_multiply(*args, **kw), 1e-4)


def test_solve_sylvester():
    a = A + 3 * I4
    _same(dla.solve_sylvester(a, B, C), jla.solve_sylvester(a, B, C), 1e-4)
    with enable_x64(True):
        a, b, c = (x.astype(np.float64) for x in (a, B, C))
        np.testing.assert_allclose(np.asarray(dla.solve_sylvester(a, b, c)),
                                   sla.solve_sylvester(a, b, c), rtol=1e-10)
        check_grads(dla.solve_sylvester, (a, b, c), 2)
        stacked = dla.solve_sylvester(np.stack([a, 2 * a]), b, c)
        np.testing.assert_allclose(np.asarray(stacked[1]), sla.solve_sylvester(2 * a, b, c),
                                   rtol=1e-10)


def test_eigh_tridiagonal():
    _same(dla.eigh_tridiagonal(D, OFF, eigvals_only=True),
          jla.eigh_tridiagonal(D, OFF, eigvals_only=True), 1e-4)
    _same(dla.eigh_tridiagonal(D, OFF, eigvals_only=True, select="i", select_range=(1, 3)),
          jla.eigh_tridiagonal(D, OFF, eigvals_only=True, select="i", select_range=(1, 3)),
          1e-4)
    with enable_x64(True):
        d, e = D.astype(np.float64), OFF.astype(np.float64)
        w, v = (np.asarray(x) for x in dla.eigh_tridiagonal(d, e))
        want_w, want_v = sla.eigh_tridiagonal(d, e)
        np.testing.assert_allclose(w, want_w, rtol=1e-12)
        np.testing.assert_allclose(np.abs(v), np.abs(want_v), atol=1e-10)
        check_grads(lambda d, e: dla.eigh_tridiagonal(d, e, eigvals_only=True), (d, e), 2)


def test_errors():
    with pytest.raises(ValueError, match="square"):
        dla.expm(np.ones((2, 3)))
    with pytest.raises(ValueError, match="power of 2"):
        dla.hadamard(6)
    with pytest.raises(NotImplementedError, match="select='v'"):
        dla.eigh_tridiagonal(D, OFF, select="v", select_range=(0, 1))
    with pytest.raises(NotImplementedError, match="pivot"):
        dla.qr_multiply(A, C.T, pivoting=True)
    with pytest.raises(ValueError, match="columns"):
        dla.qr_multiply(A, C)
    with pytest.raises(ValueError, match="kind"):
        dla.pascal(3, "diagonal")
    with pytest.raises(ValueError, match="A \\(n, n\\)"):
        dla.solve_sylvester(A, B, C.T)
    with pytest.raises(ValueError, match="mode"):
        dla.convolution_matrix(D, 3, "middle")
