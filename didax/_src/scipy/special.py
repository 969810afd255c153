"""`didax.scipy.special`: SciPy's special functions, written with didax.numpy and didax.lax.

The lax special-function primitives (erf, erfc, erf_inv, lgamma, digamma, polygamma) carry
their own derivative rules; the compositions here follow JAX's formulas, so values, dtypes
and derivative conventions (xlogy's derivative at x = 0, log_ndtr's in its far tail) agree
with `jax.scipy.special`, with two deliberate exceptions where JAX 0.10.2 is inaccurate:
betaln follows SciPy's cdflib algdiv as written (JAX's transcription has relative errors up
to 1e-6 for min(a, b) < 8 <= max(a, b)), and bernoulli uses an accurate zeta(m) (JAX's
truncated series is 3e-6 off at B_4).
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src import dtypes
from didax._src.core import get_aval
from didax._src.lax import lax
from didax._src.lax.elementwise import convert_element_type
from didax._src.lax.zeta import hurwitz_zeta, zeta_series
from didax._src.nn.functions import log_softmax as _nn_log_softmax
from didax._src.nn.functions import logsumexp
from didax._src.nn.functions import softmax as _nn_softmax
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import asarray, concrete_or_error, promote_args_inexact
from didax._src.primitives.custom_derivatives import custom_jvp

__all__ = [
    "bernoulli", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "digamma", "entr",
    "erf", "erfc", "erfinv", "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaln",
    "gammasgn", "kl_div",
    "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr",
    "ndtri", "poch", "polygamma", "rel_entr", "softmax", "xlog1py", "xlogy", "zeta",
]


def _const(x, value):
    """`value` in x's dtype, as JAX's lax._const: a Python scalar (so weakly typed) when x is
    a weakly typed scalar, otherwise a strongly typed NumPy scalar."""
    aval = get_aval(x)
    if aval.weak_type and aval.ndim == 0:
        return {"f": float, "c": complex, "b": bool}.get(dtypes.kind(aval.dtype), int)(value)
    return np.array(value, aval.dtype)


def _real_only(name, x):
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        raise ValueError(f"{name} does not support complex-valued inputs.")


# --------------------------------------------------------------------------------------
# Gamma and beta functions


def gammaln(x):
    x, = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


def gammasgn(x):
    """The sign of gamma(x): nan at the poles, -1 on the negative intervals (-2k-1, -2k)."""
    x, = promote_args_inexact("gammasgn", x)
    _real_only("gammasgn", x)
    typ = get_aval(x).dtype.type
    floor_x = lax.floor(x)
    x_negative = x < 0
    return jnp.select(
        [(x_negative & (x == floor_x)) | jnp.isnan(x),
         (x_negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))],
        [typ(np.nan), typ(-1.0)],
        typ(1.0))


def loggamma(x):
    x, = promote_args_inexact("loggamma", x)
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        raise NotImplementedError("didax.scipy.special.loggamma of complex input")
    return jnp.where(x > 0, lax.lgamma(x), np.nan)


def gamma(x):
    x, = promote_args_inexact("gamma", x)
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        raise NotImplementedError("didax.scipy.special.gamma of complex input")
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def _algdiv(a, b):
    """log(gamma(b) / gamma(a + b)) for b >= 8 and a <= b (SciPy's cdflib algdiv): the
    Stirling corrections cancel analytically instead of numerically. (JAX 0.10.2 takes
    x = h / (1 + h) where cdflib has 1 / (1 + h), which costs it up to 1e-6 relative error
    for small b; this is cdflib's.)"""
    c0 = 0.833333333333333e-01
    c1 = -0.277777777760991e-02
    c2 = 0.793650666825390e-03
    c3 = -0.595202931351870e-03
    c4 = 0.837308034031215e-03
    c5 = -0.165322962780713e-02
    h = a / b
    c = h / (1 + h)
    x = 1 / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """log|B(a, b)|, accurate for large arguments where lgamma differences cancel."""
    a, b = promote_args_inexact("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return jnp.where(b < 8, small_b, large_b)


def beta(a, b):
    a, b = promote_args_inexact("beta", a, b)
    _real_only("beta", a)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def gammainc(a, x):
    """P(a, x), the regularized lower incomplete gamma function (lax.igamma)."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """Q(a, x) = 1 - P(a, x), accurate where it is small (lax.igammac)."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def betainc(a, b, x):
    """I_x(a, b), the regularized incomplete beta function (lax.betainc); as in JAX it is
    differentiable in x only."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    _real_only("betainc", a)
    return lax.betainc(a, b, x)


def factorial(n, exact: bool = False):
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = promote_args_inexact("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition: bool = False):
    """N choose k through lgamma (a float, as SciPy's exact=False)."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k, repetition=False))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_N = jnp.where(ok, N, 0.0)
    safe_k = jnp.where(ok, k, 0.0)
    result = lax.exp(gammaln(safe_N + 1) - gammaln(safe_k + 1) - gammaln(safe_N + 1 - safe_k))
    return jnp.where(ok, result, 0.0)


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (an integer known now)."""
    d = int(concrete_or_error(d, "d argument of multigammaln"))
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = 0.25 * d_ * (d_ - 1) * lax.log(_const(a, np.pi))
    b = jnp.arange(d, dtype=get_aval(d_).dtype) / _const(a, 2)
    ndim = get_aval(a).ndim
    res = jnp.sum(gammaln(jnp.expand_dims(a, axis=-1) - jnp.expand_dims(b, tuple(range(ndim)))),
                  axis=-1)
    return res + constant


def digamma(x):
    x, = promote_args_inexact("digamma", x)
    return lax.digamma(x)


def polygamma(n, x):
    n_dtype = get_aval(asarray(n)).dtype
    if not dtypes.issubdtype(n_dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{n_dtype}.")
    n, x = promote_args_inexact("polygamma", n, x)
    _real_only("polygamma", x)
    return lax.polygamma(n, x)


@custom_jvp
def poch(z, m):
    """Rising factorial gamma(z + m) / gamma(z)."""
    z, m = promote_args_inexact("poch", z, m)
    _real_only("poch", z)
    return jnp.where(m == 0., jnp.array(1, dtype=get_aval(z).dtype), gamma(z + m) / gamma(z))


poch.defjvps(
    lambda z_dot, out, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
    lambda m_dot, out, z, m: digamma(z + m) * poch(z, m) * m_dot,
)


def zeta(x, q=None):
    """Hurwitz zeta sum_k (q + k)^-x, for x > 1 (nan for x < 1, inf at x = 1); q <= 0 is
    inf at the poles (non-positive integer q), nan elsewhere, as SciPy."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    x, q = promote_args_inexact("zeta", x, q)
    x, q = jnp.broadcast_arrays(x, q)
    out = hurwitz_zeta(x, q)
    aval = get_aval(x)
    return convert_element_type(out, aval.dtype, aval.weak_type)  # weak as lax.zeta's


# --------------------------------------------------------------------------------------
# Error function and the normal distribution


def erf(x):
    x, = promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x):
    x, = promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x):
    x, = promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


def _check_f32_f64(x):
    dtype = get_aval(x).dtype
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported types.")


def ndtr(x):
    """The standard normal CDF; erfc in the tails, so ndtr(-10) keeps its digits."""
    x = asarray(x)
    _check_f32_f64(x)
    return _ndtr(x)


def _ndtr(x):
    dtype = get_aval(x).dtype.type
    half_sqrt_2 = dtype(0.5) * np.sqrt(2., dtype=dtype)
    w = x * half_sqrt_2
    z = lax.abs(w)
    y = jnp.where(z < half_sqrt_2, dtype(1.) + lax.erf(w),
                  jnp.where(w > dtype(0.), dtype(2.) - lax.erfc(z), lax.erfc(z)))
    return dtype(0.5) * y


# Cephes' ndtri: rational approximations in w = p - 1/2 near the centre and in
# z = sqrt(-2 log p) in the tails (two fits, split at z = 8).
_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(p):
    """The inverse of ndtr."""
    p = asarray(p)
    _check_f32_f64(p)
    dtype = get_aval(p).dtype.type
    shape = get_aval(p).shape

    def poly(coefs, v):
        return jnp.polyval(np.array(coefs, dtype=dtype), v)

    maybe_complement_p = jnp.where(p > dtype(-np.expm1(-2.)), dtype(1.) - p, p)
    # p == 0 would give nans in the unused branches (and their derivatives).
    sanitized_mcp = jnp.where(maybe_complement_p == dtype(0.), jnp.full(shape, dtype(0.5)),
                              maybe_complement_p)
    w = sanitized_mcp - dtype(0.5)
    ww = lax.square(w)
    x_for_big_p = w + w * ww * (poly(_NDTRI_P0, ww) / poly(_NDTRI_Q0, ww))
    x_for_big_p *= -dtype(np.sqrt(2. * np.pi))
    z = lax.sqrt(dtype(-2.) * lax.log(sanitized_mcp))
    first_term = z - lax.log(z) / z
    x_for_small_p = first_term - poly(_NDTRI_P2, 1 / z) / poly(_NDTRI_Q2, 1 / z) / z
    x_otherwise = first_term - poly(_NDTRI_P1, 1 / z) / poly(_NDTRI_Q1, 1 / z) / z
    x = jnp.where(sanitized_mcp > dtype(np.exp(-2.)), x_for_big_p,
                  jnp.where(z >= dtype(8.0), x_for_small_p, x_otherwise))
    x = jnp.where(p > dtype(1. - np.exp(-2.)), x, -x)
    infinity = jnp.full(shape, dtype(np.inf))
    return jnp.where(p == dtype(0.0), -infinity, jnp.where(p == dtype(1.0), infinity, x))


# Where log(ndtr(x)) is still accurate (below: the asymptotic series takes over; above:
# log(1 - ndtr(-x)) ~ -ndtr(-x)).
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


def log_ndtr(x, series_order: int = 3):
    """log(ndtr(x)) without underflow: an asymptotic series far in the lower tail."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = asarray(x)
    dtype = get_aval(x).dtype
    if dtype not in _LOG_NDTR_SEGMENTS:
        raise TypeError(f"x.dtype={dtype} is not supported.")
    return _log_ndtr(x, series_order)


def _log_ndtr_impl(x, series_order):
    dtype = get_aval(x).dtype
    lower, upper = (np.array(v, dtype) for v in _LOG_NDTR_SEGMENTS[dtype])
    above = lax.gt(x, upper)
    # The max/min keep the unused branches finite, so their derivatives are not nan.
    ndtr_res = _ndtr(jnp.where(above, -x, lax.max(x, lower)))
    return jnp.where(above, -ndtr_res,
                     jnp.where(lax.gt(x, lower), lax.log(ndtr_res),
                               _log_ndtr_lower(lax.min(x, lower), series_order)))


_log_ndtr = custom_jvp(_log_ndtr_impl, nondiff_argnums=(1,))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


def _norm_logpdf(x):
    return lax.sub(lax.mul(_const(x, -0.5), lax.square(x)),
                   _const(x, np.log(np.sqrt(2 * np.pi))))


def _log_ndtr_lower(x, series_order):
    """log ndtr(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log(1 + sum_n (-1)^n (2n-1)!! / x^2n)."""
    dtype = get_aval(x).dtype.type
    x_2 = lax.square(x)
    log_scale = -dtype(0.5) * x_2 - lax.log(-x) - dtype(0.5 * np.log(2. * np.pi))
    if series_order <= 0:
        return log_scale + lax.log(np.array(1, dtype))
    even_sum = jnp.zeros_like(x)
    odd_sum = jnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), dtype) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return log_scale + lax.log(dtype(1.) + even_sum - odd_sum)


# --------------------------------------------------------------------------------------
# Logistic function and entropies


@custom_jvp
def logit(x):
    x, = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_const(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_const(x, 1), x))))


def expit(x):
    x, = promote_args_inexact("expit", x)
    return lax.logistic(x)


@custom_jvp
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (unless y is nan); its derivative is the formula's, so
    finite at x = 0 for y > 0."""
    x, y = promote_args_inexact("xlogy", x, y)
    return jnp.where((x != 0.) | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(y) + y_dot * x / y).astype(get_aval(result).dtype)


@custom_jvp
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (unless y is nan)."""
    x, y = promote_args_inexact("xlog1py", x, y)
    return jnp.where((x != 0.) | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(get_aval(result).dtype)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


def entr(x):
    """-x log x for x >= 0 (0 at 0), -inf for x < 0."""
    x, = promote_args_inexact("entr", x)
    _real_only("entr", x)
    return lax.select_n(lax.lt(x, _const(x, 0)), lax.neg(_xlogx(x)), lax.full_like(x, -np.inf))


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 where p == 0 and q >= 0; inf otherwise."""
    p, q = promote_args_inexact("rel_entr", p, q)
    _real_only("rel_entr", p)
    zero = _const(p, 0.0)
    both_gt_zero = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_gt_zero, p, 1)
    safe_q = jnp.where(both_gt_zero, q, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_gt_zero, log_val, jnp.where(one_zero, zero, np.inf))


def kl_div(p, q):
    p, q = promote_args_inexact("kl_div", p, q)
    _real_only("kl_div", p)
    return rel_entr(p, q) - p + q


def softmax(x, /, *, axis=None):
    return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    return _nn_log_softmax(x, axis=axis)


# --------------------------------------------------------------------------------------
# Transformations and numbers


def boxcox(x, lmbda):
    """(x^lmbda - 1) / lmbda, log(x) at lmbda = 0; expm1 keeps small lmbda accurate."""
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log_x = jnp.log(x)
    return jnp.where(lmbda_is_zero, log_x, jnp.expm1(safe_lmbda * log_x) / safe_lmbda)


def boxcox1p(x, lmbda):
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log1p_x = jnp.log1p(x)
    return jnp.where(lmbda_is_zero, log1p_x, jnp.expm1(safe_lmbda * log1p_x) / safe_lmbda)


def bernoulli(n: int):
    """The Bernoulli numbers B_0..B_n (B_1 = -1/2): B_m = 2 (-1)^(m/2 + 1) m! zeta(m) / (2 pi)^m
    for even m >= 4. (JAX sums zeta(m)'s series to 49 terms, 3e-6 short of B_4; the
    Euler-Maclaurin zeta here is accurate.)"""
    n = operator.index(concrete_or_error(n, "Argument n of bernoulli"))
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = jnp.zeros(n + 1).at[:3].set(b3)
    dtype = get_aval(bn).dtype
    m = jnp.arange(4, n + 1, 2, dtype=dtype)
    q1 = (1. / np.pi ** 2) * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    return bn.at[4::2].set(q1 * zeta_series(m, jnp.ones_like(m)))

