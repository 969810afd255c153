"""lax.linalg.tridiagonal and tridiagonal_solve against JAX 0.10.2 (LAPACK's sytrd/hetrd and
gtsv on CPU): packed factors, diagonals and taus as LAPACK's for both triangles, the
solution with partial pivoting, singular systems (NaNs, or perturbed pivots), batching, jit
and vmap, JAX's errors; derivatives of the solve in every operand to second order in both
modes, and none for the reduction, as in JAX."""
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
from didax.test_util import check_grads


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 3), (1, 1), (2, 2)], ids=str)
def test_tridiagonal_is_lapacks(shape, dtype, lower):
    """[a_out, d, e, taus] as JAX's, and Q^H A Q is the tridiagonal matrix of d and e for the
    Hermitian A the chosen triangle stands for."""
    rng = np.random.default_rng(0)
    x = _draw(rng, shape, dtype)
    with both_x64():
        got = linalg.tridiagonal(x, lower=lower)
        want = jax.lax.linalg.tridiagonal(x, lower=lower)
    assert type(got) is type(want) is list
    for g, w in zip(got, want):
        _close(g, w, _tol(dtype) * 10)
    if shape == (5, 5):  # rebuild from the reflectors (Q's product order follows `lower`)
        a_out, d, e, taus = (np.asarray(v) for v in got)
        n = shape[-1]
        q = np.eye(n, dtype=dtype)
        for i in range(n - 1):
            v = np.zeros(n, dtype)
            if lower:
                v[i + 1], v[i + 2:] = 1, a_out[i + 2:, i]
            else:
                v[i], v[:i] = 1, a_out[:i, i + 1]
            h = np.eye(n, dtype=dtype) - taus[i] * np.outer(v, v.conj())
            q = q @ h if lower else h @ q
        tri = x if lower else np.conj(x.T)
        hermitian = np.tril(tri) + np.conj(np.tril(tri, -1).T)
        np.fill_diagonal(hermitian, hermitian.diagonal().real)
        t = np.diag(d) + np.diag(e, -1) + np.diag(e, 1)
        np.testing.assert_allclose(np.conj(q.T) @ hermitian @ q, t, atol=_tol(dtype) * 10)


def test_tridiagonal_jit_vmap_and_no_derivatives():
    x = _draw(np.random.default_rng(1), (3, 4, 4), np.float32)
    eager = linalg.tridiagonal(x, lower=False)
    f = lambda v: linalg.tridiagonal(v, lower=False)  # noqa: E731
    for got in (didax.jit(f)(x), didax.vmap(f)(x)):
        for g, e in zip(got, eager):
            _close(g, e, 0)
    with pytest.raises(NotImplementedError, match="tridiagonal"):
        didax.jvp(lambda v: linalg.tridiagonal(v)[0], (x,), (x,))


def _system(rng, batch, m, k, dtype):
    dl, d, du = (_draw(rng, batch + (m,), dtype) for _ in range(3))
    return dl, d, du, _draw(rng, batch + (m, k), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch, m, k", [((), 6, 2), ((2, 3), 5, 1), ((), 1, 3), ((), 2, 1)],
                         ids=str)
def test_tridiagonal_solve_as_jax(batch, m, k, dtype):
    """Not diagonally dominant: the rows interchange as gtsv's do."""
    args = _system(np.random.default_rng(m), batch, m, k, dtype)
    with both_x64():
        got = linalg.tridiagonal_solve(*args)
        want = jax.lax.linalg.tridiagonal_solve(*args)
    _close(got, want, _tol(dtype) * 100)
    dl, d, du, b = (np.asarray(a, np.complex128) for a in args)
    dense = (np.einsum("...i,ij->...ij", d, np.eye(m))
             + np.einsum("...i,ij->...ij", dl, np.eye(m, k=-1))
             + np.einsum("...i,ij->...ij", du, np.eye(m, k=1)))
    np.testing.assert_allclose(dense @ np.asarray(got), b, atol=_tol(dtype) * 100)


@pytest.mark.parametrize("perturb", [False, True])
@pytest.mark.parametrize("dl, d, du", [
    ([0, 1], [1, 1], [1, 0]),  # singular after elimination
    ([0, 0, 0], [2, 0, 3], [0, 0, 0]),  # a zero pivot, eps * max|U| when perturbed
    ([0, 0, 0], [0, 0, 0], [0, 0, 0]),  # U zero: the smallest normal number
    ([0, 1, 1, 1], [0, 0, 0, 1], [1, 1, 0, 0]),  # pivoting avoids every zero
])
def test_tridiagonal_solve_singular_as_jax(dl, d, du, perturb):
    args = [np.asarray(v, np.float64) for v in (dl, d, du)]
    b = np.ones((len(d), 2))
    with both_x64():
        got = linalg.tridiagonal_solve(*args, b, perturb_singular=perturb)
        want = jax.lax.linalg.tridiagonal_solve(*args, b, perturb_singular=perturb)
    _close(got, want, 1e-12)


def test_tridiagonal_solve_jit_vmap_with_unbatched_operands():
    dl, d, du, b = _system(np.random.default_rng(2), (3,), 4, 2, np.float32)
    eager = linalg.tridiagonal_solve(dl, d, du, b)
    _close(didax.jit(linalg.tridiagonal_solve)(dl, d, du, b), eager, 0)
    _close(didax.vmap(linalg.tridiagonal_solve)(dl, d, du, b), eager, 1e-6)
    # the matrix shared, the right-hand sides batched (along their last axis)
    shared = didax.vmap(linalg.tridiagonal_solve, in_axes=(None, None, None, 2), out_axes=2)
    got = shared(dl[0], d[0], du[0], np.moveaxis(b, 0, 2))
    loop = np.stack([np.asarray(linalg.tridiagonal_solve(dl[0], d[0], du[0], b[i]))
                     for i in range(3)], 2)
    _close(got, loop, 1e-6)
    assert str(didax.make_jaxpr(linalg.tridiagonal_solve)(dl[0], d[0], du[0], b[0])) == str(
        jax.make_jaxpr(jax.lax.linalg.tridiagonal_solve)(dl[0], d[0], du[0], b[0]))


@pytest.mark.parametrize("dtype, order", [(np.float64, 2), (np.complex128, 1)])
def test_tridiagonal_solve_derivatives(dtype, order):
    rng = np.random.default_rng(3)
    dl, d, du, b = _system(rng, (), 3, 2, dtype)
    d = d + 4  # well conditioned
    with both_x64():
        check_grads(linalg.tridiagonal_solve, (dl, d, du, b), order=order,
                    modes=("fwd", "rev"))
        got = didax.jvp(linalg.tridiagonal_solve, (dl, d, du, b), (du, dl, d, b))
        want = jax.jvp(jax.lax.linalg.tridiagonal_solve, (dl, d, du, b), (du, dl, d, b))
        for g, w in zip(got, want):
            _close(g, w, 1e-12)
        loss = lambda *a: (linalg.tridiagonal_solve(*a) ** 2).real.sum()  # noqa: E731
        jax_loss = lambda *a: (jax.lax.linalg.tridiagonal_solve(*a) ** 2).real.sum()  # noqa: E731
        got = didax.grad(loss, argnums=(0, 1, 2, 3))(dl, d, du, b)
        want = jax.grad(jax_loss, argnums=(0, 1, 2, 3))(dl, d, du, b)
        for g, w in zip(got, want):
            _close(g, w, 1e-11)


@needs_jax
@pytest.mark.parametrize("args", [
    (np.zeros(3), np.zeros(3), np.zeros(4), np.ones((3, 1))),
    (np.zeros(3), np.zeros(3), np.zeros(3), np.ones((4, 1))),
    (np.zeros(3, np.float32), np.zeros(3), np.zeros(3), np.ones((3, 1))),
    (np.zeros(3, int), np.zeros(3, int), np.zeros(3, int), np.ones((3, 1), int)),
    (np.zeros(3), np.zeros(3), np.zeros(3), np.ones(3)),
    (np.ones(3), np.ones(3), np.ones(3), np.ones((2, 3, 2))),
], ids=["diagonals", "b_rows", "dtypes", "ints", "b_rank", "batch_rank"])
def test_tridiagonal_solve_errors_as_jax(args):
    with both_x64():
        with pytest.raises(Exception) as want:
            jax.lax.linalg.tridiagonal_solve(*args)
        with pytest.raises(want.type):
            linalg.tridiagonal_solve(*args)
