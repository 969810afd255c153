"""scipy.linalg.schur, rsf2csf and funm against JAX 0.10.2 and SciPy: the factors
reconstruct the input, rsf2csf's complex form as SciPy's from the same real form, funm's
values (and SciPy's error estimate), dtypes, batching and broadcasting, jit and vmap, and
the errors."""
import jax
import jax.numpy as jax_jnp
import numpy as np
import pytest
import scipy.linalg
from jax_absent import needs_jax
from jax_testing import both_x64
from linalg_testing import tol as _tol

import didax
import didax.numpy as jnp
from didax.scipy import linalg


@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_schur_reconstructs_with_jaxs_types(dtype, output):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 5, 5)).astype(dtype)
    with both_x64():
        got = linalg.schur(a, output=output)
        want = jax.scipy.linalg.schur(a, output=output)
    assert type(got) is type(want)
    t, z = (np.asarray(v) for v in got)
    assert t.dtype == z.dtype == np.asarray(want[0]).dtype
    tol = _tol(dtype) * 10
    np.testing.assert_allclose(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, atol=tol)
    if t.dtype.kind == "c":  # JAX's eigenvalues on the diagonal, in some order
        assert not np.tril(t, -1).any()
        for g, w in zip(np.diagonal(t, axis1=1, axis2=2),
                        np.diagonal(np.asarray(want[0]), axis1=1, axis2=2)):
            w = list(w)
            for x in g:
                j = int(np.argmin(np.abs(np.asarray(w) - x)))
                assert abs(x - w.pop(j)) <= tol * 10


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 4, 7])
def test_rsf2csf_as_scipy_and_jax(n, dtype):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(dtype)
    with both_x64():
        t, z = (np.asarray(v) for v in linalg.schur(a))
        got = linalg.rsf2csf(t, z)
        want = jax.scipy.linalg.rsf2csf(t, z)
    reference = scipy.linalg.rsf2csf(t, z)
    tol = _tol(dtype) * 10
    assert type(got) is tuple
    for g, w, r in zip(got, want, reference):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), w, atol=tol)
        np.testing.assert_allclose(np.asarray(g), r, atol=tol)
    tc, zc = (np.asarray(v) for v in got)
    assert not np.tril(tc, -1).any()
    np.testing.assert_allclose(zc @ tc @ np.conj(zc.T), a, atol=tol)


def test_rsf2csf_broadcasts_and_runs_under_jit_and_vmap():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4, 4)).astype(np.float32)
    t, z = linalg.schur(a)
    eager = linalg.rsf2csf(t, z)
    for got in (didax.jit(linalg.rsf2csf)(t, z), didax.vmap(linalg.rsf2csf)(t, z)):
        for g, e in zip(got, eager):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), atol=1e-6)
    shared = linalg.rsf2csf(t, np.asarray(z)[0])  # Z's batch dimensions broadcast
    want = jax.scipy.linalg.rsf2csf(np.asarray(t), np.asarray(z)[0])
    for g, w in zip(shared, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), atol=1e-5)


@pytest.mark.parametrize("dtype, func, jax_func, np_func", [
    (np.float32, jnp.exp, jax_jnp.exp, np.exp), (np.float64, jnp.sin, jax_jnp.sin, np.sin),
    (np.complex128, lambda x: x * x + 1, lambda x: x * x + 1, lambda x: x * x + 1),
], ids=["exp-float32", "sin-float64", "polynomial-complex128"])
def test_funm_as_jax_and_scipy(dtype, func, jax_func, np_func):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 5))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal((5, 5))
    a = a.astype(dtype)
    with both_x64():
        got, err = linalg.funm(a, func, disp=False)
        want = jax.scipy.linalg.funm(a, jax_func)
    reference, reference_err = scipy.linalg.funm(a, np_func, disp=False)
    tol = _tol(dtype) * 100
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.asarray(err).dtype == np.finfo(want.dtype).dtype
    np.testing.assert_allclose(np.asarray(got), want, atol=tol)
    np.testing.assert_allclose(np.asarray(got), reference, atol=tol)
    np.testing.assert_allclose(float(err), reference_err, rtol=1e-3)
    assert np.asarray(linalg.funm(a, func)).shape == (5, 5)


def test_funm_of_a_defective_matrix_and_under_jit():
    """A repeated eigenvalue leaves Parlett's quotient undivided, as in SciPy and JAX."""
    a = np.array([[2.0, 1.0], [0.0, 2.0]], np.float32)
    got, err = linalg.funm(a, jnp.sin, disp=False)
    want, want_err = scipy.linalg.funm(a, np.sin, disp=False)
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)
    assert float(err) == float(want_err) == 1.0
    b = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(didax.jit(lambda x: linalg.funm(x, jnp.exp))(b)),
        np.asarray(linalg.funm(b, jnp.exp)), atol=1e-6)


@needs_jax
@pytest.mark.parametrize("name, args", [
    ("schur", (np.ones((3, 3)), "x")),
    ("schur", ([[1.0, 2.0], [3.0, 4.0]],)),
    ("schur", (np.eye(3, dtype=np.int32),)),
    ("rsf2csf", (np.eye(3), np.eye(2))),
    ("rsf2csf", (np.ones(2), np.ones(2))),
    ("rsf2csf", (np.ones((3, 2, 2)), np.ones((2, 2, 2)))),
    ("funm", (np.ones((2, 3)), np.exp)),
    ("funm", (np.ones((2, 3, 3)), np.exp)),
], ids=["output", "list", "int", "shapes", "rank_1", "batches", "not_square", "batched"])
def test_errors_as_jax(name, args):
    with pytest.raises(Exception) as want:
        getattr(jax.scipy.linalg, name)(*args)
    with pytest.raises(want.type):
        getattr(linalg, name)(*args)


def test_schur_has_no_derivatives():
    a = np.eye(3, dtype=np.float32)
    with pytest.raises(NotImplementedError, match="schur"):
        didax.grad(lambda x: linalg.funm(x, jnp.exp).real.sum())(a)
