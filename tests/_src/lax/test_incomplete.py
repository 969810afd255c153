"""lax.igamma, igammac, igamma_grad_a, random_gamma_grad and betainc: the NumPy algorithms
against mpmath and SciPy, special values, dtypes and derivatives against JAX 0.10.2,
check_grads, vmap against a loop and jit against eager."""
import mpmath
import numpy as np
import pytest
import scipy.special as sps

import didax
from didax import lax
from didax._src.config import enable_x64
from didax._src.numerics import incomplete as ia
from didax.scipy import special
from didax.test_util import check_grads

jax = pytest.importorskip("jax")

pytestmark = pytest.mark.filterwarnings("error")
mpmath.mp.dps = 40


def _rel(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    same = got == want  # underflowed to 0 on both sides
    return np.max(np.abs(got - want)[~same] / np.abs(want)[~same], initial=0.0)


def _gamma_points(n, seed):
    rng = np.random.default_rng(seed)
    a = np.exp(rng.uniform(-5, 5, n))
    return a, a * np.exp(rng.uniform(-1.5, 1.5, n))


def test_igamma_numpy_against_mpmath():
    a, x = _gamma_points(120, 0)
    p = [float(mpmath.gammainc(u, 0, v, regularized=True)) for u, v in zip(a, x)]
    q = [float(mpmath.gammainc(u, v, mpmath.inf, regularized=True)) for u, v in zip(a, x)]
    assert _rel(ia.igamma_numpy(a, x), p) < 1e-13
    assert _rel(ia.igammac_numpy(a, x), q) < 1e-13


def test_igammac_small_a_keeps_relative_accuracy():
    # 1 - P would cancel: Q(1e-300, 0.5) ~ 5.6e-301
    a = np.array([1e-300, 1e-8, 0.01, 0.3, 0.5])
    x = np.array([0.5, 1e-3, 0.8, 1.2, 0.01])
    q = [float(mpmath.gammainc(u, v, mpmath.inf, regularized=True)) for u, v in zip(a, x)]
    assert _rel(ia.igammac_numpy(a, x), q) < 1e-13


def test_igamma_large_a_against_scipy():
    a = np.array([1e3, 1e4, 1e5, 1e5, 3e5])
    x = a * np.array([1.0, 0.99, 1.001, 1.01, 0.998])
    assert _rel(ia.igamma_numpy(a, x), sps.gammainc(a, x)) < 1e-10
    assert _rel(ia.igammac_numpy(a, x), sps.gammaincc(a, x)) < 1e-10


def test_igamma_grad_a_and_random_gamma_grad_against_mpmath():
    a = np.array([1e-3, 0.5, 2.0, 2.0, 30.0, 30.0, 500.0, 700.0])
    x = np.array([2.0, 0.3, 1.0, 5.0, 25.0, 40.0, 510.0, 0.5])
    want = []
    for u, v in zip(a, x):
        d = mpmath.diff(lambda s, v=v: mpmath.gammainc(s, 0, v, regularized=True), u)
        dens = mpmath.exp(-v + (u - 1) * mpmath.log(v) - mpmath.loggamma(u))
        want.append((float(d), float(-d / dens)))
    want = np.array(want)
    assert _rel(ia.igamma_grad_a_numpy(a, x), want[:, 0]) < 3e-14
    assert _rel(ia.random_gamma_grad_numpy(a, x), want[:, 1]) < 3e-14


def test_betainc_numpy_against_mpmath():
    rng = np.random.default_rng(1)
    a, b, x = np.exp(rng.uniform(-3, 4, (2, 120))), None, rng.uniform(0, 1, 120)
    a, b = a
    want = [float(mpmath.betainc(u, v, 0, w, regularized=True)) for u, v, w in zip(a, b, x)]
    assert _rel(ia.betainc_numpy(a, b, x), want) < 1e-13


def test_betainc_large_parameters_against_scipy():
    a = np.array([1e3, 2e4, 5.0, 1e4, 300.0])
    b = np.array([1e3, 3e4, 1e4, 2.0, 700.0])
    x = np.array([0.49, 0.4003, 4e-4, 0.9998, 0.3])
    assert _rel(ia.betainc_numpy(a, b, x), sps.betainc(a, b, x)) < 1e-10


NAN, INF = np.nan, np.inf
GAMMA_EDGES = np.array([0.0, 1e-300, 0.5, 1.0, 2.0, 30.0, 700.0, INF, NAN, -1.0])


@pytest.mark.parametrize("name,ref", [("igamma", sps.gammainc), ("igammac", sps.gammaincc)])
@pytest.mark.parametrize("numpy_only", [True, False])
def test_gamma_special_values_as_scipy(name, ref, numpy_only):
    a, x = (v.ravel() for v in np.meshgrid(GAMMA_EDGES, GAMMA_EDGES))
    fn = getattr(ia, name + "_numpy") if numpy_only else getattr(ia, name)
    got, want = fn(a, x), ref(a, x)
    # JAX's nan where SciPy says 1 or 0: at a = x = 0, and at a NaN (SciPy 1.15)
    want = np.where(((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x), NAN, want)
    tiny = (np.abs(want) < 1e-300) & (np.abs(got) < 1e-300)  # denormal tails
    np.testing.assert_allclose(np.where(tiny, 0, got), np.where(tiny, 0, want), rtol=1e-12)


def test_betainc_special_values_as_jax():
    edges = np.array([0.0, 1e-300, 0.5, 2.0, 30.0, INF, NAN, -1.0])
    xs = np.array([0.0, 1e-300, 0.3, 0.5, 1.0, 1.5, NAN, -1.0])
    a, b, x = (v.ravel() for v in np.meshgrid(edges, edges, xs))
    with jax.enable_x64(True):
        want = np.asarray(jax.lax.betainc(a, b, x))
    for got in (ia.betainc_numpy(a, b, x), ia.betainc(a, b, x)):
        tiny = (np.abs(want) < 1e-300) & (np.abs(got) < 1e-300)
        np.testing.assert_allclose(np.where(tiny, 0, got), np.where(tiny, 0, want), rtol=1e-12)


@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
@pytest.mark.parametrize("x64", [False, True])
def test_gamma_values_and_dtypes_as_jax(name, x64):
    a, x = _gamma_points(40, 2)
    a, x = a[a < 200], x[a < 200]  # JAX's own random_gamma_grad drifts (1e-3) for large a
    dtype = np.float64 if x64 else np.float32
    with enable_x64(x64), jax.enable_x64(x64):
        got = getattr(lax, name)(a.astype(dtype), x.astype(dtype))
        want = getattr(jax.lax, name)(a.astype(dtype), x.astype(dtype))
        scalar = getattr(lax, name)(dtype(2.0), 1.5)
        x_ref = jax.numpy.asarray(1.5) if name == "random_gamma_grad" else 1.5  # JAX needs .shape
        scalar_ref = getattr(jax.lax, name)(jax.numpy.asarray(dtype(2.0)), x_ref)
    assert got.dtype == want.dtype == dtype
    assert (scalar.dtype, scalar.weak_type) == (scalar_ref.dtype, scalar_ref.weak_type)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9 if x64 else 2e-5)


@pytest.mark.parametrize("x64", [False, True])
def test_scipy_special_dtypes_as_jax(x64):
    with enable_x64(x64), jax.enable_x64(x64):
        for name, args in [("gammainc", (2, 1)), ("gammaincc", (np.int32(3), 1.5)),
                           ("betainc", (2, 3.0, 0.5)), ("betainc", (np.float32(2), 3, 0.5))]:
            got = getattr(special, name)(*args)
            want = getattr(jax.scipy.special, name)(*args)
            assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), name
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_lax_rejects_mixed_and_integer_dtypes():
    with enable_x64(), pytest.raises(TypeError, match="same dtype"):
        lax.igamma(np.float32(2), np.float64(1))
    with pytest.raises(TypeError):
        lax.betainc(np.int32(2), np.int32(1), np.int32(0))


# ---------------------------------------------------------------------------------------------
# Derivatives


def test_gamma_derivatives_as_jax():
    a = np.array([0.3, 2.0, 5.0, 30.0])
    x = np.array([0.5, 1.0, 9.0, 28.0])
    with enable_x64(), jax.enable_x64(True):
        for name in ("igamma", "igammac"):
            got = didax.vmap(didax.grad(getattr(lax, name), (0, 1)))(a, x)
            want = jax.vmap(jax.grad(getattr(jax.lax, name), (0, 1)))(a, x)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-10)
        got = didax.vmap(didax.grad(lax.betainc, 2))(a, x, x / 40)
        want = jax.vmap(jax.grad(jax.lax.betainc, 2))(a, x, x / 40)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_check_grads():
    with enable_x64():
        check_grads(lambda x: lax.igamma(2.5, x), (1.7,), order=2, modes=("fwd", "rev"))
        check_grads(lambda x: lax.igammac(0.7, x), (2.3,), order=2, modes=("fwd", "rev"))
        check_grads(lambda a: lax.igamma(a, 1.7), (2.5,), order=1, modes=("fwd", "rev"))
        check_grads(lambda a: special.gammaincc(a, 3.0), (2.5,), order=1, modes=("fwd", "rev"))
        # the mixed second derivative of P, both ways round
        d_ax = didax.grad(didax.grad(lax.igamma, 0), 1)(2.5, 1.7)
        d_xa = didax.grad(didax.grad(lax.igamma, 1), 0)(2.5, 1.7)
        np.testing.assert_allclose(d_ax, d_xa, rtol=1e-12)


def test_derivatives_jax_does_not_define_raise():
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        didax.grad(special.betainc)(2.0, 3.0, 0.5)
    with pytest.raises(ValueError, match="Betainc gradient"):
        didax.jvp(lambda b: lax.betainc(2.0, b, 0.5), (3.0,), (1.0,))
    with pytest.raises(NotImplementedError, match="igamma_grad_a"):
        didax.grad(didax.grad(lax.igamma))(2.0, 3.0)
    with pytest.raises(NotImplementedError, match="random_gamma_grad"):
        didax.grad(lax.random_gamma_grad)(2.0, 3.0)


# ---------------------------------------------------------------------------------------------
# vmap and jit


# (each primitive's vmap over each operand and jit against eager: its record, in
# tests/lax_records.py)


def test_betainc_vmap_and_jit():
    rng = np.random.default_rng(4)
    a, b, x = rng.uniform(0.5, 5, (3, 4, 3)).astype(np.float32)
    x = x / 5
    loop = np.stack([lax.betainc(a[i], b[i], x[i]) for i in range(4)])
    np.testing.assert_array_equal(didax.vmap(lax.betainc)(a, b, x), loop)
    np.testing.assert_array_equal(didax.vmap(lax.betainc, (None, 0, 0))(a[0], b, x),
                                  np.stack([lax.betainc(a[0], b[i], x[i]) for i in range(4)]))
    np.testing.assert_array_equal(didax.jit(special.betainc)(a, b, x), special.betainc(a, b, x))
    g = didax.jit(didax.vmap(didax.grad(lambda x: lax.betainc(2.0, 3.0, x))))(x[0])
    np.testing.assert_allclose(g, didax.vmap(didax.grad(lambda x: lax.betainc(2.0, 3.0, x)))(x[0]),
                               rtol=1e-6)
