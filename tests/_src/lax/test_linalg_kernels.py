"""The small-matrix kernels behind lu, cholesky and triangular_solve: the C module and its
NumPy twin give the same bits (float32 and float64; the unrolled sizes up to 8 and larger
ones; non-square, singular, NaN and non-positive-definite matrices), on every call; the
primitives built on them agree with JAX (pivots exactly), on both sides of the size where
the blocked LAPACK paths take over, and jit on the native tier gives eager's bits."""
import jax
import numpy as np
import pytest
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.compiler.native import toolchain
from didax._src.config import flag_context
from didax._src.lax import linalg as linalg_impl
from didax._src.lax import linalg_kernels as kernels


def _tol(dtype):
    return 1e-12 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-5


def _batch(rng, shape, dtype):
    """Random matrices, with a zero column, a NaN and a repeated row among them."""
    a = rng.standard_normal(shape)
    if shape[0] > 3 and min(shape[1:]) > 1:
        a[1, :, 0] = 0.0
        a[2, 0, 1] = np.nan
        a[3, 1] = a[3, 0]
    return a.astype(dtype)


def _spd(rng, count, n, dtype):
    x = rng.standard_normal((count, n, n))
    return (x @ x.transpose(0, 2, 1) + n * np.eye(n)).astype(dtype)


@pytest.fixture
def native():
    if toolchain.toolchain() is None:
        pytest.skip("no C compiler: the NumPy twins serve every call")
    assert kernels.native_module(wait=True) is not None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 8, 8), (5, 3, 3), (4, 11, 11), (4, 5, 3), (4, 3, 5)])
def test_native_and_numpy_agree_bitwise(native, dtype, shape):
    rng = np.random.default_rng(0)
    a = _batch(rng, shape, dtype)
    with flag_context("didax_native_tier", "check"):  # (raises if the bits differ)
        lu = kernels.getrf(a)
    twin = kernels._getrf_numpy(a)
    for got, want in zip(lu, twin):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    count, n = shape[0], shape[1]
    spd = _spd(rng, count, n, dtype)
    spd[0, -1, -1] = -1.0  # (not positive definite: all NaN)
    t, b = np.tril(_batch(rng, (count, n, n), dtype)), _batch(rng, (count, n, 3), dtype)
    with flag_context("didax_native_tier", "check"):
        chol = kernels.potrf(spd)
        for unit in (False, True):
            kernels.lower_solve(t, b, unit)
            kernels.lower_solve(t, b[..., :1], unit)
    assert chol.tobytes() == kernels._potrf_numpy(spd).tobytes()
    assert np.isnan(chol[0]).all() and not np.isnan(chol[1:]).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("n", [8, 40])
def test_lu_matches_jax(dtype, n):
    """The same pivots as LAPACK's getrf (JAX's) for matrices without near ties."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((3, n, n))
    a = a.astype(dtype)
    with both_x64():
        got = lax.linalg.lu(a)
        want = jax.lax.linalg.lu(a)
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
    np.testing.assert_array_equal(np.asarray(got[2]), np.asarray(want[2]))
    scale = 100 if n > 8 else 10
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]),
                               rtol=scale * _tol(dtype), atol=scale * _tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [8, linalg_impl._SMALL, linalg_impl._SMALL + 1])
def test_cholesky_and_triangular_solve_match_jax_on_both_sides_of_the_blocked_paths(dtype, n):
    rng = np.random.default_rng(2)
    a = _spd(rng, 2, n, dtype)
    b = rng.standard_normal((2, n, 3)).astype(dtype)
    with both_x64():
        chol = np.asarray(lax.linalg.cholesky(a))
        np.testing.assert_allclose(chol, np.asarray(jax.lax.linalg.cholesky(a)),
                                   rtol=_tol(dtype), atol=_tol(dtype))
        for t in (False, True):
            got = lax.linalg.triangular_solve(chol, b, left_side=True, lower=True,
                                              transpose_a=t)
            want = jax.lax.linalg.triangular_solve(chol, b, left_side=True, lower=True,
                                                   transpose_a=t)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got), np.asarray(want),
                                       rtol=10 * _tol(dtype), atol=10 * _tol(dtype))


def test_batched_solve_and_cholesky_jit_on_the_native_tier_give_eager_bits(native):
    rng = np.random.default_rng(3)
    a = _spd(rng, 64, 8, np.float32)
    b = rng.standard_normal((64, 8)).astype(np.float32)
    solve, cholesky = didax.vmap(jnp.linalg.solve), didax.vmap(jnp.linalg.cholesky)
    with flag_context("didax_native_tier", "check"):  # (both tiers, compared bit for bit)
        jitted = [np.asarray(didax.jit(solve)(a, b)), np.asarray(didax.jit(cholesky)(a))]
    eager = [np.asarray(solve(a, b)), np.asarray(cholesky(a))]
    for got, want in zip(jitted, eager):
        assert got.tobytes() == want.tobytes()
    np.testing.assert_allclose(jitted[0], np.asarray(jax.vmap(jax.numpy.linalg.solve)(a, b)),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("left_side, lower", [(True, True), (False, False)])
@pytest.mark.parametrize("transpose_a, conjugate_a", [(False, False), (True, True)])
def test_complex_triangular_solve_matches_jax(left_side, lower, transpose_a, conjugate_a):
    """Complex matrices take the NumPy twin (no C kernel)."""
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((2, 5, 5)) + 1j * rng.standard_normal((2, 5, 5)) +
         4 * np.eye(5)).astype(np.complex64)
    b = (rng.standard_normal((2, 5, 5)) + 1j * rng.standard_normal((2, 5, 5))).astype(
        np.complex64)
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a)
    got = lax.linalg.triangular_solve(a, b, **params)
    want = jax.lax.linalg.triangular_solve(a, b, **params)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
