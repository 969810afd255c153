"""jnp.linalg.eig/eigvals (LAPACK geev through NumPy), jnp.roots and jnp.poly of a matrix,
against JAX on CPU; derivatives of distinct eigenvalues in both modes."""
import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax.test_util import check_grads

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)).astype(np.float32)
ROT = np.array([[0.0, -2.0], [1.0, 0.5]], np.float32)  # complex pair


def _sorted(w):
    w = np.asarray(w)
    return w[np.lexsort((np.round(w.imag, 4), np.round(w.real, 4)))]


@pytest.mark.parametrize("a", [A, ROT, A.astype(np.complex64), np.stack([A, A.T])],
                         ids=["real", "complex_pair", "complex_input", "batched"])
def test_eig_matches_jax(a):
    w, v = jnp.linalg.eig(a)
    jw, jv = jnp_jax.linalg.eig(a)
    assert w.dtype == jw.dtype and v.dtype == jv.dtype and v.shape == jv.shape
    np.testing.assert_allclose(w, jw, rtol=1e-4, atol=1e-5)  # the same LAPACK order
    np.testing.assert_allclose(jnp.linalg.eigvals(a), jnp_jax.linalg.eigvals(a), rtol=1e-4,
                               atol=1e-5)
    # Eigenvectors: unit norm and A v = w v (each is defined up to a phase).
    a_c = np.asarray(a, np.complex128)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(v), axis=-2), 1, rtol=1e-5)
    np.testing.assert_allclose(a_c @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :],
                               atol=1e-4)
    np.testing.assert_allclose(didax.vmap(jnp.linalg.eigvals)(a[None]), [jw], rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(didax.jit(jnp.linalg.eigvals)(a), jw, rtol=1e-4, atol=1e-5)


def test_eigvals_jaxpr_as_jax():
    ours = str(didax.make_jaxpr(jnp.linalg.eigvals)(A))
    theirs = str(jax.make_jaxpr(jnp_jax.linalg.eigvals)(A))
    assert "eig[" in ours and "compute_right_eigenvectors=False" in ours
    assert ours.split("eig[")[1].split("]")[0].split() == \
        theirs.split("eig[")[1].split("]")[0].split()


def test_eigvals_derivatives_match_jax_and_finite_differences():
    t = RNG.standard_normal((4, 4)).astype(np.float32)
    _, ours = didax.jvp(jnp.linalg.eigvals, (A,), (t,))
    _, theirs = jax.jit(lambda a, t: jax.jvp(jnp_jax.linalg.eigvals, (a,), (t,)))(A, t)
    np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-4)

    def loss(m):
        return lambda a: m.sum(m.abs(m.linalg.eigvals(a)) ** 2 + m.linalg.eigvals(a).real)
    np.testing.assert_allclose(didax.grad(loss(jnp))(A), jax.jit(jax.grad(loss(jnp_jax)))(A),
                               rtol=1e-3, atol=1e-4)
    with both_x64():
        a64 = A.astype(np.float64)
        check_grads(lambda a: jnp.linalg.eigvals(a).real, (a64,), order=1, modes=("fwd", "rev"))


def test_eigenvector_derivatives_are_refused_as_in_jax():
    with pytest.raises(NotImplementedError):
        jax.jvp(lambda a: jnp_jax.linalg.eig(a)[1], (A,), (A,))
    with pytest.raises(NotImplementedError, match="non-symmetric eigenvectors"):
        didax.jvp(lambda a: jnp.linalg.eig(a)[1], (A,), (A,))
    with pytest.raises(ValueError, match=r"\[..., n, n\]"):
        jnp.linalg.eig(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="left eigenvectors"):
        didax.lax.linalg.eig(A, compute_left_eigenvectors=True)


@pytest.mark.parametrize("p,strip", [
    ([0.0, 0.0, 1.0, -3.0, 2.0], True), ([1.0, 0.0, 1.0], True),
    ([1.0, -3.0, 2.0, 0.0, 0.0], True), ([2.0, 1.0, -4.0, 0.5], False), ([3.0], True),
    ([1, 2, 3], True),
])
def test_roots_match_jax(p, strip):
    ours, theirs = jnp.roots(np.array(p), strip_zeros=strip), \
        jnp_jax.roots(np.array(p), strip_zeros=strip)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(_sorted(ours), _sorted(theirs), rtol=1e-4, atol=1e-5)


def test_roots_under_jit_and_derivatives():
    p = np.array([1.0, -3.0, 2.0], np.float32)
    np.testing.assert_allclose(
        _sorted(didax.jit(lambda p: jnp.roots(p, strip_zeros=False))(p)), [1, 2], rtol=1e-5)
    with pytest.raises(didax.errors.ConcretizationTypeError, match="strip_zeros=False"):
        didax.jit(jnp.roots)(p)
    np.testing.assert_allclose(
        didax.jacfwd(lambda p: jnp.roots(p, strip_zeros=False).real)(p),
        jax.jit(jax.jacfwd(lambda p: jnp_jax.roots(p, strip_zeros=False).real))(p), rtol=1e-4)
    with both_x64():
        check_grads(lambda p: jnp.roots(p, strip_zeros=False).real,
                    (np.array([1.0, -3.5, 2.0]),), order=1, modes=("fwd", "rev"))


def test_poly_of_a_matrix_matches_jax():
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    ours, theirs = jnp.poly(m), jnp_jax.poly(m)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
