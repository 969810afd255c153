"""didax.scipy.special: values against SciPy (float64 and float32, tails included), result
dtypes and weak types against JAX (tables recorded by running JAX 0.10.2), JAX's derivative
conventions (xlogy at x = 0, entr at 0), and numerical derivative checks of order 2."""
import mpmath
import numpy as np
import pytest
import scipy.special as sps

import didax
import didax.scipy.special as special
from didax import nn
from didax._src.config import enable_x64
from didax.test_util import check_grads

# name: (SciPy reference, points spanning the domain and its tails, float64 rtol)
UNARY = {
    "erf": (sps.erf, [-30, -5, -1, -1e-8, 0, 1e-3, 0.5, 2, 6, 30], 1e-15),
    "erfc": (sps.erfc, [-30, -5, -1, 0, 0.5, 2, 6, 10, 26], 1e-14),
    "erfinv": (sps.erfinv, [-1, -0.999999, -0.5, 0, 1e-8, 0.3, 0.9, 0.99999, 1], 1e-14),
    "gammaln": (sps.gammaln, [-3.5, -0.5, 1e-8, 0.5, 1, 2, 3.7, 10, 150, 1e6], 1e-14),
    "digamma": (sps.digamma, [-3.5, -0.5, 1e-8, 0.5, 1, 1.4616, 3.7, 100, 1e6], 1e-13),
    "expit": (sps.expit, [-800, -30, -1, 0, 1, 30, 800], 1e-15),
    "logit": (sps.logit, [0, 1e-30, 1e-8, 0.3, 0.5, 0.9, 1 - 1e-8, 1], 1e-15),
    "ndtr": (sps.ndtr, [-40, -10, -3, -0.5, 0, 0.5, 3, 10, 40], 1e-14),
    "ndtri": (sps.ndtri, [0, 1e-300, 1e-30, 1e-8, 0.01, 0.135, 0.5, 0.9, 0.99999, 1], 1e-14),
    "log_ndtr": (sps.log_ndtr, [-1e3, -40, -20.5, -10, -3, 0, 3, 8.5, 10, 40], 1e-10),
    "gamma": (sps.gamma, [-3.5, -0.5, 1e-8, 0.5, 1, 2, 3.7, 10, 30], 1e-13),
    "gammasgn": (sps.gammasgn, [-3.5, -2.5, -0.5, 0.5, 1, 10], 0),
    "loggamma": (sps.loggamma, [-1.5, 0.5, 1, 2, 3.7, 10, 150], 1e-14),
    "factorial": (lambda n: sps.factorial(n, exact=False), [-1, 0, 0.5, 1, 3, 4.5, 10, 20],
                  1e-13),
    "entr": (sps.entr, [-1, 0, 1e-300, 0.3, 1, 10, 1e10], 1e-15),
}

# float32 rtol where rounding the input or exp(lgamma) amplifies float32's 6e-8.
# log_ndtr: log(ndtr(x)) near 1 for 0 < x < 5, as JAX computes it in float32.
RTOL32 = {"gamma": 1e-5, "factorial": 1e-5, "log_ndtr": 3e-5, "ndtri": 1e-5, "logit": 1e-6}


def _finite_float32(points):
    x = np.asarray(points, np.float64).astype(np.float32)
    return x[np.isfinite(x)]


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float64(name):
    ref, points, rtol = UNARY[name]
    x = np.asarray(points, np.float64)
    with enable_x64():
        got = getattr(special, name)(x)
    assert np.asarray(got).dtype == np.float64
    np.testing.assert_allclose(got, ref(x), rtol=rtol, atol=0)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32(name):
    ref, points, _ = UNARY[name]
    x = _finite_float32(points)
    got = np.asarray(getattr(special, name)(x))
    expected = ref(x.astype(np.float64))
    assert got.dtype == np.float32
    # Finite wherever the float32 reference is: no overflow on the way.
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected.astype(np.float32)))
    np.testing.assert_allclose(got, expected, rtol=RTOL32.get(name, 2e-6), atol=1e-37)


# name: (SciPy reference, first arguments, second arguments, float64 rtol)
BINARY = {
    "xlogy": (sps.xlogy, [0, 0, 0, 1.5, 2, -3, 1e-300], [0, 2, np.nan, 0, 3, 1e-5, 1e300],
              1e-15),
    "xlog1py": (sps.xlog1py, [0, 0, 0, 1.5, 2, -3, 1e-300], [-1, 2, np.nan, -1, 3, 1e-10,
                                                            1e300], 1e-15),
    "betaln": (sps.betaln, [0.5, 2, 1e-3, 7, 1e3, 3e6, 10], [0.5, 3.5, 20, 9, 2e3, 5e6, 1e8],
               1e-12),
    "beta": (sps.beta, [0.5, 2, -0.5, 7, -2.5, 30], [0.5, 3.5, 3, 9, 1.2, 40], 1e-12),
    "rel_entr": (sps.rel_entr, [0, 0, 0.3, 0.3, -0.1, 2], [0.5, 0, 0, 0.6, 0.3, 1e-3], 1e-15),
    "kl_div": (sps.kl_div, [0, 0, 0.3, 0.3, -0.1, 2], [0.5, 0, 0, 0.6, 0.3, 1e-3], 1e-15),
    "boxcox": (sps.boxcox, [0.5, 2, 2, 10, 1e-3, 3], [0, 0, 0.3, -2, 1e-10, 4], 1e-14),
    "boxcox1p": (sps.boxcox1p, [-0.5, 2, 1e-12, 10, 0, 3], [0, 0, 0.3, -2, 0.5, 4], 1e-14),
    "poch": (sps.poch, [0.5, 2, 3.5, 10, -2.5, 1.5], [0, 1, 2.5, -3, 2, 0.5], 1e-13),
    "zeta": (sps.zeta, [0.5, 1, 1.0001, 1.5, 2, 3.5, 10, 50, 2, 2, 3, 4],
             [1, 1, 1, 0.5, 1, 2, 0.3, 1.5, 0, -1, 1e6, 100], 1e-13),
    "comb": (lambda n, k: sps.comb(n, k, exact=False), [10, 10, 10, 5, 40, 10.5],
             [0, 3, 11, -1, 20, 2.5], 1e-13),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("x64", [False, True])
def test_binary(name, x64):
    ref, a, b, rtol = BINARY[name]
    dtype = np.float64 if x64 else np.float32
    a, b = np.asarray(a, dtype), np.asarray(b, dtype)
    with np.errstate(all="ignore"):
        expected = ref(a.astype(np.float64), b.astype(np.float64))
    with enable_x64(x64):
        got = np.asarray(getattr(special, name)(a, b))
    assert got.dtype == dtype
    if not x64:
        rtol = 1e-5 if name in ("beta", "poch", "comb", "zeta") else 3e-6
    np.testing.assert_allclose(got, expected.astype(dtype), rtol=rtol, atol=1e-37)


def test_polygamma_and_multigammaln():
    x = np.array([-2.5, 0.5, 1, 3.7, 40])
    with enable_x64():
        for n in (0, 1, 2, 5):
            np.testing.assert_allclose(special.polygamma(n, x), sps.polygamma(n, x), rtol=1e-12)
        got = special.multigammaln(np.array([2.5, 7.0, 100.0]), 3)
    np.testing.assert_allclose(got, sps.multigammaln(np.array([2.5, 7.0, 100.0]), 3),
                               rtol=1e-14)
    with pytest.raises(ValueError, match="integer type"):
        special.polygamma(1.0, 0.5)


def test_bernoulli():
    exact = [float(mpmath.bernoulli(k)) for k in range(31)]  # (SciPy's B_4 is 2e-12 off)
    with enable_x64():
        np.testing.assert_allclose(special.bernoulli(30), exact, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(special.bernoulli(12), exact[:13], rtol=1e-6)
    np.testing.assert_allclose(special.bernoulli(1), [1, -0.5])
    with pytest.raises(ValueError, match="non-negative"):
        special.bernoulli(-1)


def test_softmax_over_all_axes_by_default():
    x = np.random.default_rng(1).normal(size=(3, 4))
    with enable_x64():
        np.testing.assert_allclose(special.softmax(x), sps.softmax(x), rtol=1e-14)
        np.testing.assert_allclose(special.log_softmax(x, axis=0), sps.log_softmax(x, axis=0),
                                   rtol=1e-14)
    assert special.logsumexp is nn.logsumexp


def test_zeta_and_ndtri_edge_cases():
    # As JAX: a negative non-integer q is outside the domain; the Riemann zeta is not there.
    assert np.isnan(special.zeta(2.0, -1.5))
    with pytest.raises(NotImplementedError, match="Riemann"):
        special.zeta(2.0)
    p = np.array([1e-8, 0.2, 0.5, 0.7, 1 - 1e-8])
    with enable_x64():
        np.testing.assert_allclose(special.ndtr(special.ndtri(p)), p, rtol=1e-14)
    for f in (special.ndtr, special.ndtri, special.log_ndtr):
        with pytest.raises(TypeError, match="not supported"):
            f(np.array([1, 2]))


def test_log_ndtr_series_order():
    x = np.array([-50.0, -30.0])
    with enable_x64():
        coarse = special.log_ndtr(x, series_order=0)
        fine = special.log_ndtr(x, series_order=10)
    np.testing.assert_allclose(fine, sps.log_ndtr(x), rtol=1e-15)
    assert np.all(np.abs(np.asarray(coarse) - sps.log_ndtr(x)) > 1e-5)
    with pytest.raises(ValueError, match="<= 30"):
        special.log_ndtr(x, series_order=31)


# --------------------------------------------------------------------------------------
# dtypes, as JAX gives them; "*" marks a weak type.

UNARY_INPUTS = [0.5, 1, np.float32(0.5), np.array([1, 2], np.int32),
                np.array([0.5, 0.25], np.float16), np.array([True, False])]
JAX_UNARY_DTYPES = {
    "erf": "float32* float32* float32 float32 float16 float32",
    "erfc": "float32* float32* float32 float32 float16 float32",
    "erfinv": "float32* float32* float32 float32 float16 float32",
    "gammaln": "float32* float32* float32 float32 float16 float32",
    "digamma": "float32* float32* float32 float32 float16 float32",
    "expit": "float32* float32* float32 float32 float16 float32",
    "logit": "float32* float32* float32 float32 float16 float32",
    "entr": "float32* float32* float32 float32 float16 float32",
    "ndtr": "float32 TypeError float32 TypeError TypeError TypeError",
    "ndtri": "float32 TypeError float32 TypeError TypeError TypeError",
    "log_ndtr": "float32 TypeError float32 TypeError TypeError TypeError",
    "gamma": "float32 float32 float32 float32 float16 float32",
    "gammasgn": "float32 float32 float32 float32 float16 float32",
    "loggamma": "float32* float32* float32 float32 float16 float32",
    "factorial": "float32* float32* float32 float32 float16 float32",
}
BINARY_INPUTS = [(0.5, 2.0), (np.float32(0.5), 2), (np.array([1, 2], np.int32), 1.5),
                 (np.array([0.5], np.float16), np.float32(2.)), (np.array([1.5], np.float16), 2.0)]
JAX_BINARY_DTYPES = {
    "xlogy": "float32* float32 float32* float32 float16",
    "xlog1py": "float32* float32 float32* float32 float16",
    "betaln": "float32* float32 float32* float32 float16",
    "beta": "float32 float32 float32 float32 float16",
    "rel_entr": "float32* float32 float32 float32 float16",
    "kl_div": "float32* float32 float32 float32 float16",
    "boxcox": "float32* float32 float32* float32 float16",
    "boxcox1p": "float32* float32 float32* float32 float16",
    "poch": "float32 float32 float32 float32 float16",
    "zeta": "float32* float32 float32* float32 float16",
    "comb": "float32* float32 float32* float32 float16",
}


def _dtype_str(f, args):
    try:
        y = f(*args)
    except Exception as e:  # noqa: BLE001 - the exception class is what is compared
        return type(e).__name__
    return str(np.asarray(y).dtype) + ("*" if didax.typeof(y).weak_type else "")


@pytest.mark.parametrize("name", sorted(JAX_UNARY_DTYPES))
def test_unary_dtypes_match_jax(name):
    got = " ".join(_dtype_str(getattr(special, name), (x,)) for x in UNARY_INPUTS)
    assert got == JAX_UNARY_DTYPES[name]


@pytest.mark.parametrize("name", sorted(JAX_BINARY_DTYPES))
def test_binary_dtypes_match_jax(name):
    got = " ".join(_dtype_str(getattr(special, name), args) for args in BINARY_INPUTS)
    assert got == JAX_BINARY_DTYPES[name]


def test_other_dtypes_match_jax():
    assert _dtype_str(special.polygamma, (1, 0.5)) == "float32*"
    assert _dtype_str(special.polygamma, (1, np.array([1, 2], np.int32))) == "float32"
    assert _dtype_str(special.multigammaln, (2.5, 3)) == "float32"
    assert _dtype_str(special.bernoulli, (5,)) == "float32"


# --------------------------------------------------------------------------------------
# Derivatives

def _grads(f, *args):
    with enable_x64():
        return [float(g) for g in didax.grad(f, argnums=tuple(range(len(args))))(*args)]


def test_xlogy_xlog1py_entr_derivative_conventions():
    # Values recorded from JAX: the derivative formula is applied as is, so x = 0 gives a
    # finite d/dx wherever log(y) is finite, and d/dy = x / y is 0 there.
    assert _grads(special.xlogy, 0., 2.) == [np.log(2.), 0.]
    assert _grads(special.xlogy, 0., 1e-300) == pytest.approx([np.log(1e-300), 0.])
    assert _grads(special.xlog1py, 0., 1.) == [np.log(2.), 0.]
    assert _grads(special.xlogy, 2., 3.) == pytest.approx([np.log(3.), 2 / 3])
    assert _grads(special.xlogy, 1.5, 0.) == [-np.inf, np.inf]
    g = _grads(special.xlogy, 0., 0.)
    assert g[0] == -np.inf and np.isnan(g[1])
    assert _grads(special.entr, 0.) == [np.inf]
    assert _grads(special.entr, 0.5) == pytest.approx([-np.log(0.5) - 1])
    assert _grads(special.rel_entr, 0., 0.5) == [0., 0.]
    assert _grads(special.rel_entr, 0.3, 0.) == [0., 0.]
    assert special.xlogy(0., np.nan) != special.xlogy(0., np.nan)  # nan propagates


def test_log_ndtr_derivative_in_the_far_tail():
    # d/dx log ndtr(x) = pdf(x) / ndtr(x) ~ -x as x -> -inf: finite where ndtr underflows.
    # (As JAX, pdf(x) / exp(log_ndtr(x)), so it inherits the 3-term series' 3e-9 at -20.5.)
    x = np.array([-1e3, -40., -20.5, 0., 10.])
    with enable_x64():
        g = didax.vmap(didax.grad(special.log_ndtr))(x)
    expected = np.exp(-x * x / 2 - np.log(np.sqrt(2 * np.pi)) - sps.log_ndtr(x))
    np.testing.assert_allclose(g, expected, rtol=1e-8)


UNARY_GRAD_POINTS = {
    "erf": [-2.5, -0.3, 0.7, 3.1], "erfc": [-2.5, -0.3, 0.7, 3.1],
    "erfinv": [-0.7, -0.2, 0.4, 0.8], "gammaln": [-2.5, 0.3, 1.7, 12.],
    "digamma": [-2.5, 0.3, 1.7, 12.], "expit": [-5., -0.3, 0.7, 5.],
    "logit": [0.1, 0.3, 0.6, 0.9], "ndtr": [-6., -0.3, 0.7, 6.],
    "ndtri": [0.15, 0.4, 0.6, 0.85], "log_ndtr": [-30., -6., 0.7, 9.],
    "gamma": [-2.5, 0.3, 1.7, 6.], "loggamma": [0.3, 1.7, 6.],
    "factorial": [0.3, 1.7, 6.], "entr": [0.2, 0.5, 2.],
}
BINARY_GRAD_POINTS = {
    "xlogy": ([0.5, 2., 3.], [0.2, 1.5, 9.]), "xlog1py": ([0.5, 2., 3.], [-0.8, 0.5, 9.]),
    "betaln": ([0.5, 2., 3., 20.], [0.7, 1.5, 30., 50.]),
    "beta": ([0.5, 2., 3.], [0.7, 1.5, 4.]),
    "rel_entr": ([0.5, 2.], [0.2, 1.5]), "kl_div": ([0.5, 2.], [0.2, 1.5]),
    "boxcox": ([0.5, 2.], [0.3, -1.2]), "boxcox1p": ([0.5, 2.], [0.3, -1.2]),
    "poch": ([0.5, 2.], [0.3, 1.7]), "zeta": ([2.5, 3.5], [0.7, 2.]),
    "comb": ([7.5, 10.], [2.3, 4.5]),
}


@pytest.mark.parametrize("name", sorted(UNARY_GRAD_POINTS))
def test_check_grads_unary(name):
    x = np.array(UNARY_GRAD_POINTS[name])
    with enable_x64():
        check_grads(getattr(special, name), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(BINARY_GRAD_POINTS))
def test_check_grads_binary(name):
    a, b = (np.array(v) for v in BINARY_GRAD_POINTS[name])
    with enable_x64():
        check_grads(getattr(special, name), (a, b), order=2, modes=("fwd", "rev"))


def test_check_grads_others():
    x = np.array([0.3, 1.7, 6.])
    with enable_x64():
        check_grads(lambda v: special.polygamma(2, v), (x,), order=2, modes=("fwd", "rev"))
        check_grads(lambda v: special.multigammaln(v, 3), (x + 2,), order=2,
                    modes=("fwd", "rev"))
        check_grads(lambda v: special.softmax(v, axis=0), (x,), order=2, modes=("fwd", "rev"))
        check_grads(special.log_softmax, (x,), order=2, modes=("fwd", "rev"))


def test_jit_matches_eager():
    x = np.array([0.05, 0.3, 0.6, 0.97], np.float32)
    for f in (special.logit, special.ndtri, special.log_ndtr, special.entr,
              lambda v: special.xlogy(v, 1 - v), lambda v: special.zeta(v + 1.5, 2 * v)):
        np.testing.assert_allclose(didax.jit(f)(x), f(x), rtol=1e-6)
        np.testing.assert_allclose(didax.jit(didax.grad(lambda v, f=f: f(v).sum()))(x),
                                   didax.grad(lambda v, f=f: f(v).sum())(x), rtol=1e-6)
