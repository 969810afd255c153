"""lax.linalg.qdwh against JAX 0.10.2: the polar factors, iteration counts and convergence
flags (with the default, a loose and a cut-short stopping rule), types, dynamic_shape's
padding, jit and vmap, forward-mode derivatives, and JAX's errors."""
import jax
import numpy as np
import pytest
from jax_absent import needs_jax
from jax_testing import both_x64
from linalg_testing import draw as _draw

import didax
from didax.lax import linalg
from didax.test_util import check_grads


def _assert_like(got, want, tol=None):
    """Same types, iteration counts and flags; the same factors within `tol` if given."""
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        assert np.shape(g) == np.shape(w)
        assert getattr(g, "weak_type", False) == getattr(w, "weak_type", False)
    assert int(got[2]) == int(want[2]) and bool(got[3]) == bool(want[3])
    if tol is not None:
        np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), atol=tol)
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), atol=tol)


@pytest.mark.parametrize("shape, dtype, x64", [((5, 3), np.float32, False),
                                               ((4, 4), np.float64, True),
                                               ((5, 3), np.complex128, True),
                                               ((3, 3), np.complex64, False)], ids=str)
def test_qdwh_as_jax(shape, dtype, x64):
    x = _draw(np.random.default_rng(0), shape, dtype)
    tol = 1e-12 if x64 and np.finfo(dtype).bits == 64 else 2e-5
    with both_x64(x64):
        got, want = linalg.qdwh(x), jax.lax.linalg.qdwh(x)
        assert type(got) is type(want) is tuple
        _assert_like(got, want, tol)
        u, h = np.asarray(got[0]), np.asarray(got[1])
        np.testing.assert_allclose(u @ h, x, atol=tol * 10)
        np.testing.assert_allclose(np.conj(u.T) @ u, np.eye(shape[1]), atol=tol * 10)


@pytest.mark.parametrize("kwargs", [dict(max_iterations=2), dict(eps=1e-3)], ids=str)
def test_qdwh_stopping_rule_as_jax(kwargs):
    """The same number of steps and verdict; the iterates before convergence are not
    compared (JAX scales x and bounds its singular values its own way; the iteration
    forgets the difference)."""
    x = _draw(np.random.default_rng(1), (4, 3), np.float64)
    with both_x64():
        _assert_like(linalg.qdwh(x, **kwargs), jax.lax.linalg.qdwh(x, **kwargs))


def test_qdwh_dynamic_shape_ignores_the_padding():
    rng = np.random.default_rng(2)
    x = np.zeros((6, 4), np.float32)
    x[:5, :3] = rng.standard_normal((5, 3))
    x[5, 3], x[0, 3] = 7, 2  # outside the true shape: ignored
    got = linalg.qdwh(x, dynamic_shape=(5, 3))
    _assert_like(got, jax.lax.linalg.qdwh(x, dynamic_shape=(5, 3)), 2e-5)


def test_qdwh_jit_vmap_and_forward_derivatives():
    rng = np.random.default_rng(3)
    xs = _draw(rng, (2, 4, 3), np.float64)
    with both_x64():
        eager = [linalg.qdwh(x) for x in xs]
        jitted = didax.jit(linalg.qdwh)(xs[0])
        for g, e in zip(jitted, eager[0]):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), atol=1e-14)
        mapped = didax.vmap(linalg.qdwh)(xs)
        for k in range(4):
            np.testing.assert_allclose(np.asarray(mapped[k]),
                                       np.stack([np.asarray(e[k]) for e in eager]), atol=1e-14)
        u_of = lambda x: linalg.qdwh(x)[0]  # noqa: E731
        check_grads(u_of, (xs[0],), order=1, modes=("fwd",))
        got = didax.jvp(u_of, (xs[0],), (xs[1],))
        want = jax.jvp(lambda x: jax.lax.linalg.qdwh(x)[0], (xs[0],), (xs[1],))
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), atol=1e-10)


@needs_jax
@pytest.mark.parametrize("x", [np.ones((2, 3), np.float32), np.ones((3, 2), np.int32),
                               np.ones(3, np.float32), np.ones((2, 3, 2), np.float32)],
                         ids=["wide", "int", "rank_1", "rank_3"])
def test_qdwh_errors_as_jax(x):
    with pytest.raises(Exception) as want:
        jax.lax.linalg.qdwh(x)
    with pytest.raises(want.type):
        linalg.qdwh(x)
