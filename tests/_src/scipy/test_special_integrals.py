"""erfcx, dawsn, exp1, expi, expn, spence, sici and fresnel: float64 against SciPy on a broad
grid (and mpmath where SciPy itself is off), float32 against JAX 0.10.2, derivatives against
JAX and finite differences to second order."""
import mpmath
import numpy as np
import pytest
import scipy.special as sps

import didax
import didax.scipy.special as special
from didax._src.config import enable_x64
from didax.test_util import check_grads
from tests.jax_testing import both_x64

jax = pytest.importorskip("jax")
import jax.scipy.special as jspecial  # noqa: E402

GRID = np.concatenate([np.linspace(-50, 50, 20001), np.geomspace(1e-30, 1e30, 1201),
                       -np.geomspace(1e-30, 1e30, 1201), [0.0, np.inf, -np.inf, np.nan]])
UNARY = ["erfcx", "dawsn", "exp1", "expi", "spence"]
PAIRS = ["sici", "fresnel"]
# Relative accuracy against SciPy in float64; next to the zeros of Ei (0.3725) and Ci the
# error is absolute, so those points are compared with an absolute tolerance.
RTOL = 5e-14


def _assert_close(got, want, rtol=RTOL, atol=0.0):
    got, want = np.asarray(got), np.asarray(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", UNARY)
def test_float64_as_scipy(name):
    with enable_x64():
        got = getattr(special, name)(GRID)
    want = getattr(sps, name)(GRID)
    if name == "expi":
        want = np.where(GRID == np.inf, np.inf, want)  # Ei(inf) = inf (SciPy 1.15: nan)
        far_from_zero = np.abs(GRID - 0.3725074107813666) > 1e-3
        _assert_close(np.asarray(got)[far_from_zero], want[far_from_zero])
        _assert_close(got, want, atol=1e-15)
    elif name == "erfcx":  # SciPy's exp(x^2) for x < 0 carries x^2 ulps; see below
        _assert_close(got, want, rtol=1e-13)
    else:
        _assert_close(got, want)


def test_erfcx_for_negative_x_as_mpmath():
    mpmath.mp.dps = 30
    with enable_x64():
        for x in [-26.6, -25.3, -20.17, -12.3, -5.55, -0.3]:
            want = mpmath.exp(mpmath.mpf(x) ** 2) * mpmath.erfc(x)
            np.testing.assert_allclose(float(special.erfcx(x)), float(want), rtol=3e-16)


@pytest.mark.parametrize("name", PAIRS)
def test_pairs_float64_as_scipy(name):
    # beyond 100, SciPy's phase pi x^2 / 2 carries x^2 ulps (~1e-13 at 1e4; see below)
    x = GRID[np.abs(GRID) < (1e4 if name == "sici" else 100)]
    with enable_x64():
        got = getattr(special, name)(x)
    want = getattr(sps, name)(x)
    for g, w in zip(got, want):
        if name == "sici":  # Ci has zeros: absolute error there
            _assert_close(g, w, rtol=RTOL, atol=5e-16)
        else:
            _assert_close(g, w)


def test_fresnel_and_expn_where_scipy_is_off():
    mpmath.mp.dps = 30
    with enable_x64():
        for x in [204173794.46695065, 3.3e7, 1.2e12, 3000.7, 157.3]:
            s, c = special.fresnel(x)
            np.testing.assert_allclose(float(s), float(mpmath.fresnels(x)), rtol=1e-15)
            np.testing.assert_allclose(float(c), float(mpmath.fresnelc(x)), rtol=1e-15)
        for n, x in [(60, 30.0), (60, 1e-30), (40, 1.9), (120, 0.5), (3, 700.0)]:
            np.testing.assert_allclose(float(special.expn(n, x)), float(mpmath.expint(n, x)),
                                       rtol=1e-14)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 10, 39, 40, 41])
def test_expn_float64_as_scipy(n):
    x = GRID[np.abs(GRID) < 1e3]
    with enable_x64():
        got = special.expn(n, x)
    _assert_close(got, sps.expn(n, x))


def test_expn_special_values():
    n = np.array([0, 1, 2, 5, -1])
    with enable_x64():
        np.testing.assert_array_equal(special.expn(n, 0.0), sps.expn(n, 0.0))
        assert np.isnan(special.expn(2, -1.0))
        assert np.isnan(special.expn(1.5, 1.0))  # a non-integer order
        # d/dx E_n = -E_(n-1); the order is an integer, not differentiated
        np.testing.assert_allclose(didax.grad(special.expn, 1)(3, 0.7), -sps.expn(2, 0.7),
                                   rtol=1e-14)
    with pytest.raises(TypeError):
        didax.grad(special.expn)(3, 0.7)


F32 = np.concatenate([np.linspace(-12, 12, 481), np.geomspace(1e-4, 1e4, 81)]).astype(np.float32)


@pytest.mark.parametrize("name", UNARY + PAIRS + ["expn"])
def test_float32_as_jax(name):
    """A few ulps apart; both within a few ulps of the float64 value."""
    ours = getattr(special, name)
    theirs = getattr(jspecial, name)
    if name == "expn":
        ours, theirs = (lambda x: special.expn(3, x)), (lambda x: jspecial.expn(3, x))
    x = F32
    if name in ("exp1", "spence", "expn"):
        x = x[x > 0]
    if name == "erfcx":
        x = x[np.abs(x) < 9]  # erfcx(-9.4) overflows float32; JAX's is 0 from x = 9.2 on
    got, want = ours(x), theirs(x)
    with enable_x64():
        exact = ours(x.astype(np.float64))
    got, want, exact = [tuple(v) if isinstance(v, tuple) else (v,) for v in (got, want, exact)]
    for g, w, e in zip(got, want, exact):
        assert g.dtype == np.float32 and g.dtype == w.dtype
        e = np.asarray(e)
        ok = np.isfinite(e) & (np.abs(e) < 3e38)
        np.testing.assert_array_equal(np.asarray(g)[~ok], np.asarray(e, np.float32)[~ok])
        # absolute near zeros (Ei at 0.37, Ci at 0.62, 3.38, ..., spence at 1)
        scale = np.maximum(np.abs(e[ok]), 0.1 if name in ("expi", "sici") else 1e-6)
        ours_err = np.abs(np.asarray(g, np.float64)[ok] - e[ok]) / scale
        jax_err = np.abs(np.asarray(w, np.float64)[ok] - e[ok]) / scale
        assert ours_err.max() < 1e-6, (ours_err.max(), x[ok][np.argmax(ours_err)])
        # (JAX's own error is larger where exp(x^2) or exp(x) amplifies the input's rounding)
        assert jax_err.max() < 1e-5, (jax_err.max(), x[ok][np.argmax(jax_err)])
    scalar, scalar_ref = ours(0.5), theirs(0.5)
    for s, r in zip(scalar if isinstance(scalar, tuple) else (scalar,),
                    scalar_ref if isinstance(scalar_ref, tuple) else (scalar_ref,)):
        assert (s.dtype, s.weak_type) == (r.dtype, r.weak_type)


GRAD_POINTS = {"erfcx": [-1.3, 0.4, 15.0], "dawsn": [-0.3, 2.0, 14.0], "exp1": [0.3, 4.0],
               "expi": [-2.0, 0.3, 45.0], "spence": [0.2, 0.9, 1.0, 3.0],
               "sici": [-0.5, 2.0, 7.0], "fresnel": [-0.5, 1.5, 3.0]}


@pytest.mark.parametrize("name", sorted(GRAD_POINTS))
def test_derivatives(name):
    f = getattr(special, name)
    g = getattr(jspecial, name)
    outputs = 2 if name in PAIRS else 1
    with both_x64():
        for i in range(outputs):
            fi = (lambda x, i=i: f(x)[i]) if outputs == 2 else f
            gi = (lambda x, i=i: g(x)[i]) if outputs == 2 else g
            for x in GRAD_POINTS[name]:
                if not (name == "spence" and x == 1.0):
                    check_grads(fi, (x,), order=2, modes=("fwd", "rev"))
                want = -1.0 if (name, x) == ("spence", 1.0) else jax.grad(gi)(x)  # JAX: 0
                np.testing.assert_allclose(didax.grad(fi)(x), want, rtol=1e-10, atol=1e-15,
                                           err_msg=f"{name}[{i}] at {x}")


def test_under_jit_and_vmap():
    x = np.array([[0.3, 1.7, 5.0], [2.5, 0.01, 30.0]])
    for name in UNARY + PAIRS:
        f = getattr(special, name)
        np.testing.assert_allclose(didax.jit(f)(x), f(x), rtol=1e-6)
        np.testing.assert_allclose(didax.vmap(f)(x), f(x), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="erfcx of complex"):
        special.erfcx(np.complex64(1))


def test_owens_t():
    h = np.concatenate([np.linspace(-6, 6, 61), [0.0, np.inf]])[:, None]
    a = np.array([-50.0, -3.0, -1.0, -0.3, 0.0, 0.2, 0.9, 1.0, 1.1, 5.0, 1e3, np.inf])
    with enable_x64():
        got = special.owens_t(h, a)
    _assert_close(got, sps.owens_t(h, a), rtol=2e-13, atol=1e-300)
    x = np.array([-2.0, 0.3, 4.0], np.float32)
    np.testing.assert_allclose(special.owens_t(x[:, None], x), jspecial.owens_t(x[:, None], x),
                               rtol=2e-6, atol=1e-9)
    with both_x64():
        for point in [(0.7, 0.3), (-1.5, 2.5), (0.2, -0.8)]:
            check_grads(special.owens_t, point, order=2, modes=("fwd", "rev"))
            np.testing.assert_allclose(didax.grad(special.owens_t, (0, 1))(*point),
                                       jax.grad(jspecial.owens_t, (0, 1))(*point), rtol=1e-10)


def test_sph_harm_y():
    rng = np.random.default_rng(0)
    n, m = rng.integers(0, 30, 200), rng.integers(-30, 30, 200)
    theta, phi = rng.uniform(0, np.pi, 200), rng.uniform(-4, 4, 200)
    n[:3], m[:3], theta[:3] = [0, 1, 2], [0, 1, -2], [0.0, np.pi, 0.5]
    with both_x64():
        got = special.sph_harm_y(n, m, theta, phi)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, sps.sph_harm_y(n, m, theta, phi), rtol=1e-13,
                                   atol=5e-15)
        np.testing.assert_allclose(got[:20], jspecial.sph_harm_y(
            jax.numpy.asarray(n[:20]), jax.numpy.asarray(m[:20]), theta[:20], phi[:20]),
            rtol=1e-12, atol=1e-13)

        def real_part(t, p):
            return special.sph_harm_y(np.array([3]), np.array([-2]), t, p, n_max=3).real[0]

        check_grads(real_part, (0.7, 0.4), order=2, modes=("fwd", "rev"))
        jitted = didax.jit(lambda t: special.sph_harm_y(n[:5], m[:5], t, phi[:5], n_max=30))
        np.testing.assert_allclose(jitted(theta[:5]), got[:5], rtol=1e-13, atol=1e-15)
    assert special.sph_harm_y(np.array([2]), np.array([1]), np.float32([0.5]),
                              np.float32([0.3])).dtype == np.complex64
    with pytest.raises(TypeError, match="integer"):
        special.sph_harm_y(np.array([2.0]), np.array([1]), 0.5, 0.3)
    with pytest.raises(NotImplementedError, match="diff_n"):
        special.sph_harm_y(np.array([2]), np.array([1]), 0.5, 0.3, diff_n=1)
