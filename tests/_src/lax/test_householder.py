"""QR in LAPACK's packed form: lax.linalg.geqrf, geqp3, householder_product and ormqr, and
jnp.linalg.qr(mode="raw"), against JAX 0.10.2 (whose geqrf and geqp3 live in
jax._src.lax.linalg) and against NumPy's LAPACK and dense products: values, shapes and
dtypes with leading batch dimensions, JAX's errors, no derivatives (as in JAX), vmap against
a loop, jit against eager, printing against JAX's text, and lineax's QR solver on didax."""
import functools
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import jax
import jax._src.lax.linalg as jax_linalg
import jax.numpy as jax_jnp
import numpy as np
import pytest
from jax_absent import needs_jax
from jax_testing import both_x64
from vmap_testing import loop

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64, flag_context
from didax._src.lax import linalg  # noqa: E402  (geqrf and geqp3 are internal, as in JAX)

ROOT = pathlib.Path(__file__).parents[3]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(4, 3), (3, 4), (3, 3), (1, 1), (5, 1), (2, 4, 3), (2, 3, 2, 4), (0, 3), (3, 0),
          (0, 4, 3)]


def _draw(rng, shape, dtype=np.float64):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _tol(dtype):
    return 1e-12 if np.finfo(dtype).bits == 64 else 2e-5


def _close(got, want, tol=None):
    """Same shape and dtype, values within `tol` (by default, of the dtype)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        tol = _tol(got.dtype) if tol is None else tol
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _leaves(tree):
    return [np.asarray(v) for v in didax.tree_util.tree_leaves(tree)]


def _dense_q(a, taus, m):
    """H_0 ... H_{k-1} as a dense m x m matrix, one reflector at a time (NumPy)."""
    q = np.eye(m, dtype=a.dtype)
    for i, tau in enumerate(taus):
        v = np.zeros(m, a.dtype)
        v[i], v[i + 1:] = 1, a[i + 1:, i]
        q = q @ (np.eye(m, dtype=a.dtype) - tau * np.outer(v, v.conj()))
    return q


# --------------------------------------------------------------------------------------
# jnp.linalg.qr(mode="raw") and geqrf


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_qr_raw_matches_numpy_and_jax(shape, dtype):
    """h is LAPACK's packed matrix transposed, (..., n, m), and tau (..., min(m, n)): NumPy's
    layout, batched over the leading dimensions, as JAX has it."""
    a = _draw(np.random.default_rng(len(shape)), shape, dtype)
    with both_x64():
        h, tau = jnp.linalg.qr(a, mode="raw")
        jh, jtau = jax_jnp.linalg.qr(a, mode="raw")
    assert h.shape == (*shape[:-2], shape[-1], shape[-2]) and tau.shape == (
        *shape[:-2], min(shape[-2:]))
    _close(h, np.asarray(jh))
    _close(tau, np.asarray(jtau))
    if len(shape) == 2:  # NumPy's own qr(mode="raw") is unbatched
        nh, ntau = np.linalg.qr(a, mode="raw")
        _close(h, nh)
        _close(tau, ntau)


def test_qr_raw_result_type_and_dtypes_are_jaxs():
    """JAX returns the pair in a QRResult (Q=h, R=tau); integers and booleans promote to the
    default float."""
    a = np.array([[4, 1], [1, 3], [2, 2]])
    for dtype in (np.int32, bool, np.float32, np.complex64):
        out, ref = jnp.linalg.qr(a.astype(dtype), mode="raw"), jax_jnp.linalg.qr(
            a.astype(dtype), mode="raw")
        assert type(out).__name__ == type(ref).__name__ == "QRResult"
        assert [o.dtype for o in out] == [r.dtype for r in ref]
        assert not any(o.weak_type for o in out)
        _close(out.Q, np.asarray(ref.Q), 2e-5)
        _close(out.R, np.asarray(ref.R), 2e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_geqrf_is_qr_raw_untransposed_and_jaxs(dtype):
    a = _draw(np.random.default_rng(1), (2, 5, 3), dtype)
    with both_x64():
        packed, taus = linalg.geqrf(a)
        jpacked, jtaus = jax_linalg.geqrf(a)
        h, tau = jnp.linalg.qr(a, mode="raw")
    _close(packed, np.asarray(jpacked))
    _close(taus, np.asarray(jtaus))
    np.testing.assert_array_equal(np.swapaxes(np.asarray(packed), -1, -2), h)
    np.testing.assert_array_equal(taus, tau)
    # R in the upper triangle, Q from the reflectors below it: a = Q R
    for b in range(2):
        q = _dense_q(np.asarray(packed[b]), np.asarray(taus[b]), 5)
        r = np.triu(np.asarray(packed[b]))
        np.testing.assert_allclose(q @ r, a[b], atol=1e3 * _tol(dtype))


def test_geqrf_of_zeros_and_nans_is_lapacks():
    with both_x64():
        for a in (np.zeros((3, 2)), np.full((3, 2), np.nan), np.ones((3, 3))):
            for got, want in zip(linalg.geqrf(a), jax_linalg.geqrf(a)):
                _close(got, np.asarray(want))


# --------------------------------------------------------------------------------------
# householder_product


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", [(5, 3, 3), (5, 3, 2), (5, 3, 0), (4, 4, 4), (4, 4, 3),
                                   (3, 1, 1), (0, 0, 0)])
def test_householder_product_matches_jax(m, n, k, dtype):
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    a = _draw(rng, (2, m, n), dtype)
    taus = _draw(rng, (2, k), dtype)
    with both_x64():
        got = linalg.householder_product(a, taus)
        want = jax_linalg.householder_product(a, taus)
    _close(got, np.asarray(want), 20 * _tol(dtype))
    for b in range(2):
        _close(got[b], _dense_q(a[b], taus[b], m)[:, :n], 20 * _tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_householder_product_of_geqrf_is_numpys_q(dtype):
    a = _draw(np.random.default_rng(2), (3, 6, 4), dtype)
    with enable_x64(True):
        q = linalg.householder_product(*linalg.geqrf(a))
    _close(q, np.linalg.qr(a)[0].astype(dtype), 10 * _tol(dtype))


def test_householder_product_reads_only_below_the_diagonal():
    rng = np.random.default_rng(3)
    with enable_x64(True):
        packed, taus = linalg.geqrf(rng.standard_normal((5, 3)))
        garbage = np.asarray(packed) + 100 * np.triu(rng.standard_normal((5, 3)))
        np.testing.assert_array_equal(linalg.householder_product(garbage, taus),
                                      linalg.householder_product(packed, taus))
        c = rng.standard_normal((5, 2))
        np.testing.assert_array_equal(linalg.ormqr(garbage, taus, c),
                                      linalg.ormqr(packed, taus, c))


# --------------------------------------------------------------------------------------
# ormqr


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("m,n,k", [(5, 3, 3), (5, 3, 1), (3, 5, 3), (4, 4, 4), (4, 4, 0)])
def test_ormqr_matches_jax_and_the_dense_product(m, n, k, left, transpose, dtype):
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    a = _draw(rng, (2, m, n), dtype)
    taus = _draw(rng, (2, k), dtype)
    c = _draw(rng, (2, m, 2) if left else (2, 2, m), dtype)
    with both_x64():
        got = linalg.ormqr(a, taus, c, left=left, transpose=transpose)
        want = jax_linalg.ormqr(a, taus, c, left=left, transpose=transpose)
    _close(got, np.asarray(want), 20 * _tol(dtype))
    for b in range(2):
        q = _dense_q(a[b], taus[b], m)
        q = q.conj().T if transpose else q
        _close(got[b], q @ c[b] if left else c[b] @ q, 20 * _tol(dtype))


def test_ormqr_as_its_docstring_uses_it():
    """JAX's example: Q from jnp.linalg.qr(mode="raw") (h transposed) applied to I is the
    complete Q."""
    a = np.array([[1., 2.], [3., 4.], [5., 6.]], np.float32)
    h, taus = jnp.linalg.qr(a, mode="raw")
    q_times_c = linalg.ormqr(h.mT, taus, jnp.eye(3))
    np.testing.assert_allclose(q_times_c, jnp.linalg.qr(a, mode="complete")[0], atol=1e-5)


# --------------------------------------------------------------------------------------
# geqp3


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 4), (4, 5), (4, 4), (2, 6, 3), (2, 2, 3, 5), (1, 3),
                                   (3, 1)], ids=str)
def test_geqp3_matches_jax(shape, dtype):
    """The same pivots (1-based, as LAPACK's), and the same factors to rounding."""
    rng = np.random.default_rng(sum(shape))
    scale = np.geomspace(0.1, 10, shape[-1])[rng.permutation(shape[-1])]
    a = (_draw(rng, shape, dtype) * scale).astype(dtype)
    for jpvt in (np.zeros(shape[:-2] + shape[-1:], np.int32),
                 rng.integers(0, 2, shape[:-2] + shape[-1:]).astype(np.int32)):
        with both_x64():
            got = linalg.geqp3(a, jpvt)
            want = jax_linalg.geqp3(a, jpvt)
        _close(got[1], np.asarray(want[1]))
        _close(got[0], np.asarray(want[0]), 100 * _tol(dtype))
        _close(got[2], np.asarray(want[2]), 100 * _tol(dtype))


def test_geqp3_of_empty_matrices():
    """(JAX's CPU compiler crashes on these: SIGFPE.) Nothing to factor: the fixed columns
    are swapped to the front, the others keep their places."""
    with enable_x64(True):
        for shape in [(0, 3), (2, 0, 3)]:
            a = np.ones(shape)
            jpvt = np.zeros(shape[:-2] + shape[-1:], np.int32)
            jpvt[..., -1:] = 1
            packed, perm, taus = linalg.geqp3(a, jpvt)
            assert packed.shape == shape and taus.shape == shape[:-2] + (0,)
            assert perm.shape == jpvt.shape and perm.dtype == np.int32
            want = np.arange(1, shape[-1] + 1)
            want[[0, -1]] = want[[-1, 0]]  # (LAPACK swaps a fixed column to the front)
            np.testing.assert_array_equal(perm, np.broadcast_to(want, jpvt.shape))
        packed, perm, taus = linalg.geqp3(np.ones((3, 0)), np.zeros(0, np.int32))
        assert packed.shape == (3, 0) and perm.shape == taus.shape == (0,)


def test_geqp3_factors_the_permuted_matrix():
    """a[..., jpvt - 1] = Q R, with R's diagonal non-increasing in magnitude; the columns
    marked in jpvt come first, in LAPACK's order."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 6, 5)) * np.array([0.1, 5, 1, 3, 0.5])
    with enable_x64(True):
        packed, perm, taus = linalg.geqp3(a, np.zeros((3, 5), np.int32))
        q = linalg.householder_product(packed, taus)
        r = np.triu(np.asarray(packed))[:, :5]
        np.testing.assert_allclose(q @ r, np.take_along_axis(a, np.asarray(perm)[:, None] - 1,
                                                             -1), atol=1e-12)
        diag = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
        assert (np.diff(diag, axis=-1) <= 1e-12).all()
        _, perm, _ = linalg.geqp3(a[0], np.array([0, 0, 1, 0, 2], np.int32))
    np.testing.assert_array_equal(perm[:2], [3, 5])
    assert perm.dtype == np.int32


def test_geqp3_of_dependent_columns_is_jaxs():
    """The same pivots and R; the reflectors of columns reduced to rounding noise are that
    noise's, which depends on the order of the BLAS's operations: they are not compared."""
    with both_x64():
        for a in (np.ones((3, 3)), np.zeros((3, 3)), np.eye(3),
                  np.array([[1., 1, 2], [1, 1, 2], [0, 0, 0]])):
            got, want = linalg.geqp3(a, np.zeros(3, np.int32)), jax_linalg.geqp3(
                a, np.zeros(3, np.int32))
            _close(got[1], np.asarray(want[1]))
            _close(np.triu(got[0]), np.triu(np.asarray(want[0])), 1e-12)


# --------------------------------------------------------------------------------------
# Errors, as JAX raises them


def _raises_like_jax(call, error, match):
    with pytest.raises(error, match=match):
        call(linalg)
    with pytest.raises(error, match=match):
        call(jax_linalg)


A53 = np.ones((5, 3))


@pytest.mark.parametrize("call, error, match", [
    (lambda L: L.geqrf(np.ones(3)), TypeError, "Input 0 to geqrf must have rank at least 2"),
    (lambda L: L.geqrf(np.ones((3, 3), np.int32)), TypeError, "geqrf does not accept dtype"),
    (lambda L: L.householder_product(A53.T, np.ones(3)), ValueError,
     "must have at least as many rows as columns"),
    (lambda L: L.householder_product(A53, np.ones(4)), ValueError,
     "must not have more rows than the minimum"),
    (lambda L: L.householder_product(np.stack([A53, A53]), np.ones(3)), TypeError,
     "same number of batch dimensions"),
    (lambda L: L.householder_product(A53.astype(np.float32), np.ones(3)), TypeError,
     "lax.householder_product requires arguments to have the same dtypes"),
    (lambda L: L.householder_product(np.ones(3), np.ones(1)), TypeError,
     "Input 0 to householder_product must have rank at least 2"),
    (lambda L: L.householder_product(A53, np.float64(1)), TypeError,
     "Input 1 to householder_product must have rank at least 1"),
    (lambda L: L.householder_product(np.ones((3, 3), np.int32), np.ones(3, np.int32)),
     TypeError, "householder_product does not accept dtype int32 at position 0"),
    (lambda L: L.ormqr(A53, np.ones(3), np.ones((3, 2))), ValueError,
     "left=True expects c to have the same number of rows"),
    (lambda L: L.ormqr(A53, np.ones(3), np.ones((5, 2)), left=False), ValueError,
     "left=False expects c to have the same number of columns"),
    (lambda L: L.ormqr(A53, np.ones(3), np.ones(5)), TypeError,
     "Input 2 to ormqr must have rank at least 2"),
    (lambda L: L.ormqr(A53, np.ones(3), np.ones((2, 5, 2))), TypeError,
     "same number of batch dimensions"),
    (lambda L: L.ormqr(A53, np.ones(3), np.ones((5, 2), np.float32)), TypeError,
     "lax.ormqr requires arguments to have the same dtypes"),
    (lambda L: L.geqp3(A53, np.zeros(3)), TypeError, "geqp3 does not accept dtype float"),
    (lambda L: L.geqp3(A53, np.zeros((), np.int32)), TypeError,
     "Input 1 to geqp3 must have rank at least 1"),
    (lambda L: L.geqp3(np.ones((2, 5, 3)), np.zeros(3, np.int32)), TypeError,
     "same number of batch dimensions"),
])
def test_errors_are_jaxs(call, error, match):
    with both_x64():
        _raises_like_jax(call, error, match)


@pytest.mark.parametrize("call, match", [
    # JAX does not check these (LAPACK then fails, or reads past the reflectors)
    (lambda: linalg.ormqr(A53, np.ones(4), np.ones((5, 2))), "holds at most 3"),
    (lambda: linalg.geqp3(A53, np.zeros(2, np.int32)), "one entry per column"),
    (lambda: linalg.householder_product(np.ones((2, 5, 3)), np.ones((3, 3))),
     "same batch dimensions"),
])
def test_errors_where_jax_checks_nothing(call, match):
    with enable_x64(True), pytest.raises(ValueError, match=match):
        call()


def test_float16_is_refused_as_lapack_has_no_such_routines():
    with pytest.raises(NotImplementedError, match="float16"):
        linalg.geqrf(np.ones((3, 2), np.float16))
    with pytest.raises(NotImplementedError, match="float16"):
        jnp.linalg.qr(np.ones((3, 2), np.float16), mode="raw")
    with pytest.raises(NotImplementedError, match="float16"):
        linalg.geqp3(np.ones((3, 2), np.float16), np.zeros(2, np.int32))


# --------------------------------------------------------------------------------------
# No derivatives, as in JAX


def _not_differentiable():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 3))
    packed, taus = (np.asarray(v) for v in linalg.geqrf(a))
    c = rng.standard_normal((4, 2))
    return [
        ("geqrf", lambda L, x: L.geqrf(x)[0], a),
        ("geqrf", lambda L, x: (jnp if L is linalg else jax_jnp).linalg.qr(x, mode="raw")[1], a),
        ("geqp3", lambda L, x: L.geqp3(x, np.zeros(3, np.int32))[0], a),
        ("householder_product", lambda L, x: L.householder_product(x, taus), packed),
        ("householder_product", lambda L, t: L.householder_product(packed, t), taus),
        ("ormqr", lambda L, x: L.ormqr(packed, taus, x), c),  # (not even in c)
        ("ormqr", lambda L, x: L.ormqr(x, taus, c, transpose=True), packed),
    ]


@pytest.mark.parametrize("case", range(len(_not_differentiable())))
def test_no_derivatives_as_in_jax(case):
    name, f, x = _not_differentiable()[case]
    with both_x64():
        with pytest.raises(NotImplementedError, match=f"rule for '{name}' not implemented"):
            jax.jvp(lambda v: f(jax_linalg, v), (x,), (x,))
        for transform in (
                lambda g: didax.jvp(g, (x,), (x,)),
                lambda g: didax.grad(lambda v: g(v).real.sum())(x),
                lambda g: didax.vjp(g, x)[1](g(x)),
                lambda g: didax.jit(didax.grad(lambda v: g(v).real.sum()))(x),
                lambda g: didax.jacfwd(g)(x)):
            with pytest.raises(NotImplementedError,
                               match=f"jvp rule for '{name}' not implemented: JAX defines no "
                                     f"derivative for {name}"):
                transform(lambda v: f(linalg, v))


def test_qr_in_other_modes_still_differentiates():
    a = np.random.default_rng(6).standard_normal((4, 3))
    with enable_x64(True):
        didax.test_util.check_grads(lambda x: jnp.linalg.qr(x)[1], (a,), order=1,
                                    modes=("fwd", "rev"))


# --------------------------------------------------------------------------------------
# vmap against a loop


def _vmap_cases():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 5, 4))  # three examples
    with enable_x64(True):
        packed = np.stack([np.asarray(linalg.geqrf(e)[0]) for e in a])
    taus = rng.uniform(0.5, 1.5, (3, 4))
    c_left, c_right = rng.standard_normal((3, 5, 2)), rng.standard_normal((3, 2, 5))
    jpvt = np.stack([np.zeros(4, np.int32), np.array([0, 1, 0, 0], np.int32),
                     np.array([1, 0, 0, 1], np.int32)])

    def moved(x, axis):
        return np.moveaxis(x, 0, axis)

    cases = [
        ("geqrf", linalg.geqrf, (0,), (a,)),
        ("geqrf_axis2", linalg.geqrf, (2,), (moved(a, 2),)),
        ("qr_raw", lambda x: jnp.linalg.qr(x, mode="raw"), (1,), (moved(a, 1),)),
        ("geqp3", linalg.geqp3, (0, 0), (a, jpvt)),
        ("geqp3_a", linalg.geqp3, (1, None), (moved(a, 1), jpvt[1])),
        ("geqp3_jpvt", linalg.geqp3, (None, 0), (a[0], jpvt)),
        ("householder_product", linalg.householder_product, (0, 0), (packed, taus)),
        ("householder_product_a", linalg.householder_product, (2, None),
         (moved(packed, 2), taus[0])),
        ("householder_product_taus", linalg.householder_product, (None, 1),
         (packed[0], moved(taus, 1))),
    ]
    for left, c in ((True, c_left), (False, c_right)):
        for transpose in (False, True):
            def f(x, t, y, left=left, transpose=transpose):
                return linalg.ormqr(x, t, y, left=left, transpose=transpose)
            tag = f"ormqr_{'left' if left else 'right'}{'_T' if transpose else ''}"
            cases += [
                (tag + "_c", f, (None, None, 0), (packed[0], taus[0], c)),
                (tag + "_c_last", f, (None, None, 2), (packed[0], taus[0], moved(c, 2))),
                (tag + "_c_middle", f, (None, None, 1), (packed[0], taus[0], moved(c, 1))),
                (tag + "_a", f, (0, None, None), (packed, taus[0], c[0])),
                (tag + "_taus", f, (None, 1, None), (packed[0], moved(taus, 1), c[0])),
                (tag + "_all", f, (2, 1, 0), (moved(packed, 2), moved(taus, 1), c)),
            ]
    return cases


VMAP_CASES = _vmap_cases()


@pytest.mark.parametrize("name,f,in_axes,args", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_a_loop(name, f, in_axes, args):
    with enable_x64(True):
        got = _leaves(didax.vmap(f, in_axes=in_axes)(*args))
        want = loop(f, in_axes, 3, *args)
    want = list(want) if isinstance(want, tuple) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _close(g, w, 1e-12)


def test_vmap_of_batched_operands_and_nested_vmap():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 3, 4, 5, 3))
    with enable_x64(True):
        got = didax.vmap(didax.vmap(linalg.geqrf))(a)
        packed, taus = got
        c = rng.standard_normal((3, 4, 5, 2))
        ormqr = didax.vmap(lambda x, t: linalg.ormqr(x, t, c))(packed, taus)
        want = linalg.ormqr(packed, taus, np.broadcast_to(c, (2, 3, 4, 5, 2)))
        for g, w in zip(got, linalg.geqrf(a)):
            np.testing.assert_array_equal(g, w)
    _close(ormqr, np.asarray(want), 1e-12)


# --------------------------------------------------------------------------------------
# jit against eager, and printing


def _jit_cases():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2, 5, 3)).astype(np.float32)
    packed, taus = (np.asarray(v) for v in linalg.geqrf(a))
    c = rng.standard_normal((2, 5, 2)).astype(np.float32)
    return [
        (linalg.geqrf, (a,)),
        (lambda x: jnp.linalg.qr(x, mode="raw"), (a,)),
        (lambda x: linalg.geqp3(x, np.zeros((2, 3), np.int32)), (a,)),
        (linalg.householder_product, (packed, taus)),
        (lambda x, t, y: linalg.ormqr(x, t, y, transpose=True), (packed, taus, c)),
        (lambda x, t, y: linalg.ormqr(x, t, y.mT, left=False), (packed, taus, c)),
        # lineax's least-squares solve: R^-1 (Q^H b)[:n]
        (lambda x: lax.linalg.triangular_solve(
            jnp.triu(linalg.geqrf(x)[0][..., :3, :]),
            linalg.ormqr(*linalg.geqrf(x), c, transpose=True)[..., :3, :], left_side=True),
         (a,)),
    ]


@pytest.mark.parametrize("tier", ["off", "check"])
@pytest.mark.parametrize("case", range(len(_jit_cases())))
def test_jit_matches_eager(case, tier):
    f, args = _jit_cases()[case]
    want = _leaves(f(*args))
    with flag_context("didax_native_tier", tier):
        got = _leaves(didax.jit(f)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_jaxprs_are_jax_text():
    a = np.ones((5, 3), np.float32)
    taus, c, jpvt = np.ones(3, np.float32), np.ones((5, 2), np.float32), np.zeros(3, np.int32)
    for f, args in [(lambda L, x: L.geqrf(x), (a,)),
                    (lambda L, x, j: L.geqp3(x, j), (a, jpvt)),
                    (lambda L, x, t: L.householder_product(x, t), (a, taus)),
                    (lambda L, x, t, y: L.ormqr(x, t, y), (a, taus, c)),
                    (lambda L, x, t, y: L.ormqr(x, t, y.T, left=False, transpose=True),
                     (a, taus, c))]:
        ours = str(didax.make_jaxpr(functools.partial(f, linalg))(*args))
        theirs = str(jax.make_jaxpr(functools.partial(f, jax_linalg))(*args))
        assert ours == theirs


# --------------------------------------------------------------------------------------
# lineax's QR solver on didax


LINEAX_SCRIPT = textwrap.dedent("""
    import json, sys
    if sys.argv[1] == "didax":
        import didax
        didax.install_as_jax()
    import jax, jax.numpy as jnp, lineax as lx, numpy as np
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    out = {}
    for shape in [(6, 3), (3, 6), (4, 4)]:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape[0])
        solve = lambda a, b: lx.linear_solve(lx.MatrixLinearOperator(a), b,
                                             solver=lx.QR()).value
        out[str(shape)] = [np.asarray(solve(jnp.asarray(a), jnp.asarray(b))).tolist(),
                           np.asarray(jax.jit(solve)(a, b)).tolist(),
                           np.linalg.lstsq(a, b, rcond=None)[0].tolist()]
    print(json.dumps(out))
""")


@needs_jax
def test_lineax_qr_solver_runs_on_didax():
    """Least squares (tall), least norm (wide) and square solves, eager and jitted, as on JAX
    and as NumPy's lstsq."""
    pytest.importorskip("lineax")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        JAX_PLATFORMS="cpu")
    results = {}
    for which in ("didax", "jax"):
        proc = subprocess.run([sys.executable, "-c", LINEAX_SCRIPT, which], capture_output=True,
                              text=True, env=env, timeout=300, cwd=str(ROOT))
        assert proc.returncode == 0, proc.stderr[-3000:]
        results[which] = json.loads(proc.stdout)
    for shape, (eager, jitted, lstsq) in results["didax"].items():
        np.testing.assert_allclose(eager, lstsq, atol=1e-12, err_msg=shape)
        np.testing.assert_allclose(jitted, lstsq, atol=1e-12, err_msg=shape)
        np.testing.assert_allclose(eager, results["jax"][shape][0], atol=1e-12, err_msg=shape)
