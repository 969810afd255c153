"""lax.linalg.hessenberg and schur against JAX 0.10.2 (LAPACK's gehrd and gees on CPU):
hessenberg's packed factors as LAPACK's, schur's factors reconstructing the input with
JAX's eigenvalues on the diagonal (its order is the iteration's, not fixed), 2x2 blocks in
LAPACK's standard form, batching, jit and vmap, JAX's errors, no derivatives; and
lax.linalg.EigImplementation as eig's `implementation`."""
import jax
import numpy as np
import pytest
from jax_absent import needs_jax
from jax_testing import both_x64
from linalg_testing import LAPACK_DTYPES as DTYPES
from linalg_testing import close as _close
from linalg_testing import draw as _draw
from linalg_testing import tol as _tol

import didax
from didax.lax import linalg


def _quasi_triangular_eigenvalues(t):
    """The eigenvalues of a real Schur form, checking each 2x2 block is LAPACK's standard
    form (equal diagonal entries, off-diagonal entries of opposite signs)."""
    n, i, out = t.shape[-1], 0, []
    assert not np.tril(t, -2).any()
    while i < n:
        if i + 1 < n and t[i + 1, i] != 0:
            a, b, c, d = t[i, i], t[i, i + 1], t[i + 1, i], t[i + 1, i + 1]
            assert a == d and b * c < 0, (a, b, c, d)
            root = np.sqrt(-complex(b) * complex(c))
            out += [a + root, a - root]
            assert i + 2 >= n or t[i + 2, i + 1] == 0  # blocks do not overlap
            i += 2
        else:
            out.append(t[i, i])
            i += 1
    return np.asarray(out, complex)


def _same_multiset(got, want, tol):
    """Equal up to order: each of `got` matched with the nearest unmatched of `want`."""
    want = list(want)
    scale = max(1.0, max(abs(w) for w in want))
    for g in got:
        j = int(np.argmin([abs(g - w) for w in want]))
        assert abs(g - want[j]) <= tol * scale * 10, (got, want)
        want.pop(j)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 4, 4), (1, 1), (2, 2)], ids=str)
def test_hessenberg_is_lapacks_packed_form(shape, dtype):
    """Packed reflectors and taus as LAPACK's gehrd (JAX's CPU result), and
    householder_product of them is the Q with a = Q h Q^H."""
    rng = np.random.default_rng(0)
    x = _draw(rng, shape, dtype)
    with both_x64():
        got = linalg.hessenberg(x)
        want = jax.lax.linalg.hessenberg(x)
        assert type(got) is type(want) is list
        for g, w in zip(got, want):
            _close(g, w, _tol(dtype) * 10)
        a_out, taus = (np.asarray(v) for v in got)
        n = shape[-1]
        if n > 1:
            q = np.asarray(linalg.householder_product(a_out[..., 1:, :-1], taus))
            full_q = np.zeros(shape, dtype)
            full_q[..., 0, 0] = 1
            full_q[..., 1:, 1:] = q
            h = np.triu(a_out, -1)
            rebuilt = full_q @ h @ np.conj(np.swapaxes(full_q, -1, -2))
            np.testing.assert_allclose(rebuilt, x, atol=_tol(dtype) * 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 6, 12])
def test_schur_reconstructs_with_jaxs_eigenvalues(n, dtype):
    rng = np.random.default_rng(n)
    x = _draw(rng, (n, n), dtype)
    with both_x64():
        t, q = (np.asarray(v) for v in linalg.schur(x))
        jt, _ = (np.asarray(v) for v in jax.lax.linalg.schur(x))
    assert t.dtype == q.dtype == jt.dtype == dtype
    tol = _tol(dtype) * n
    np.testing.assert_allclose(q @ t @ np.conj(q.T), x, atol=tol)
    np.testing.assert_allclose(np.conj(q.T) @ q, np.eye(n), atol=tol)
    if np.iscomplexobj(x):
        assert not np.tril(t, -1).any()
        got, want = np.diag(t), np.diag(jt)
    else:
        got, want = _quasi_triangular_eigenvalues(t), _quasi_triangular_eigenvalues(jt)
    _same_multiset(got, want, tol)


@pytest.mark.parametrize("name, matrix", [
    ("jordan", np.array([[2.0, 1, 0], [0, 2, 1], [0, 0, 2]])),
    ("cyclic", np.roll(np.eye(6), 1, axis=0)),  # eigenvalues on the unit circle
    ("zero", np.zeros((4, 4))),
    ("rank_one", np.ones((5, 5))),
    ("rotation", np.array([[0.0, -1], [1, 0]])),
    ("graded", np.diag(10.0 ** np.arange(-6, 6, 2)) + np.diag(np.ones(5), 1)),
])
def test_schur_of_hard_matrices(name, matrix):
    with both_x64():
        t, q = (np.asarray(v) for v in linalg.schur(matrix))
        jt, _ = (np.asarray(v) for v in jax.lax.linalg.schur(matrix))
    n = len(matrix)
    scale = max(1.0, np.abs(matrix).max())
    np.testing.assert_allclose(q @ t @ q.T, matrix, atol=1e-12 * scale)
    np.testing.assert_allclose(q.T @ q, np.eye(n), atol=1e-12)
    _same_multiset(_quasi_triangular_eigenvalues(t), _quasi_triangular_eigenvalues(jt), 1e-7)


def test_schur_of_non_finite_input_is_nan_as_in_jax():
    x = np.full((3, 3), np.nan, np.float32)
    for got, want in zip(linalg.schur(x), jax.lax.linalg.schur(x)):
        _close(got, want, 0)


def test_schur_batched_jit_vmap_and_without_vectors():
    rng = np.random.default_rng(1)
    x = _draw(rng, (3, 4, 4), np.float32)
    eager = linalg.schur(x)
    for got in (didax.jit(linalg.schur)(x), didax.vmap(linalg.schur)(x)):
        for g, e in zip(got, eager):
            _close(g, e, 0)
    for i in range(3):
        for g, e in zip(linalg.schur(x[i]), eager):
            _close(g, np.asarray(e)[i], 0)
    only_t = linalg.schur(x, compute_schur_vectors=False)
    assert type(only_t) is list and len(only_t) == 1
    _close(only_t[0], eager[0], 0)
    assert str(didax.make_jaxpr(linalg.schur)(x[0])) == str(jax.make_jaxpr(
        jax.lax.linalg.schur)(x[0]))


@needs_jax
@pytest.mark.parametrize("fn", ["schur", "hessenberg"])
@pytest.mark.parametrize("x", [np.ones((3, 4), np.float32), np.eye(3, dtype=np.int32),
                               np.ones(3, np.float32), np.eye(3, dtype=np.float16)],
                         ids=["not_square", "int", "rank_1", "float16"])
def test_errors_as_jax(fn, x):
    with pytest.raises(Exception) as want:
        getattr(jax.lax.linalg, fn)(x)
    with pytest.raises(want.type):
        getattr(linalg, fn)(x)


@needs_jax
@pytest.mark.parametrize("fn", ["schur", "hessenberg"])
def test_no_derivatives_as_jax(fn):
    x = np.eye(3, dtype=np.float32)
    with pytest.raises(NotImplementedError):
        jax.jvp(lambda v: getattr(jax.lax.linalg, fn)(v)[0], (x,), (x,))
    with pytest.raises(NotImplementedError, match=fn):
        didax.jvp(lambda v: getattr(linalg, fn)(v)[0], (x,), (x,))
    with pytest.raises(NotImplementedError, match=fn):
        didax.grad(lambda v: getattr(linalg, fn)(v)[0].sum())(x)


@needs_jax
def test_eig_implementation_enum_as_jax():
    assert [(m.name, m.value) for m in linalg.EigImplementation] == [
        (m.name, m.value) for m in jax.lax.linalg.EigImplementation]
    x = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
    got = linalg.eig(x, implementation=linalg.EigImplementation.LAPACK)
    want = jax.lax.linalg.eig(x, implementation=jax.lax.linalg.EigImplementation.LAPACK,
                              compute_left_eigenvectors=False)
    for g, w in zip(got, want):
        _close(g, w, 1e-6)
    with pytest.raises(NotImplementedError, match="MAGMA"):
        linalg.eig(x, implementation=linalg.EigImplementation.MAGMA)
