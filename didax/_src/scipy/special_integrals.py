"""Error-function and exponential-integral relatives of `scipy.special`: erfcx, dawsn, exp1,
expi, expn, spence, sici and fresnel, composed from lax/jnp operations so they jit and vmap;
each carries its analytic derivative as a custom JVP (so derivatives of any order are the
formulas', not the algorithm's).

Every function evaluates all of its branches on arguments made safe for them and selects;
the algorithms (series, continued fractions evaluated from a fixed depth upwards, asymptotic
expansions, and the functional equations between them) are the classical ones of Abramowitz
& Stegun ch. 5, 7 and 27. Float64 agrees with SciPy to ~1e-14 relative except next to a
function's zeros (Ei at 0.3725, Ci at its roots), where the error is absolute (~1e-16).
"""
from __future__ import annotations

import math

import numpy as np

from didax._src.core import get_aval
from didax._src.lax import elementwise as lax
from didax._src.lax.elementwise import convert_element_type
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import promote_args_inexact
from didax._src.primitives.custom_derivatives import custom_jvp

__all__ = ["dawsn", "erfcx", "exp1", "expi", "expn", "fresnel", "sici", "spence"]

_EULER = 0.57721566490153286061
_SQRT_PI = math.sqrt(math.pi)
_PI2_6 = math.pi ** 2 / 6


def _real(name, x):
    """x promoted to a float; strongly typed, as JAX returns these functions' values."""
    x, = promote_args_inexact(name, x)
    aval = get_aval(x)
    if jnp.issubdtype(aval.dtype, jnp.complexfloating):
        raise NotImplementedError(f"didax.scipy.special.{name} of complex input")
    return convert_element_type(x, aval.dtype, False) if aval.weak_type else x


def _is64(x):
    return get_aval(x).dtype == np.float64


def _exp_square(x):
    """exp(x^2) without the rounding of x^2 magnified by the exponent: x = h + l with h a
    multiple of 1/16, so h^2 is exact and only (x - h)(x + h) is rounded."""
    h = jnp.round(x * 16) / 16
    return jnp.exp(h * h) * jnp.exp((x - h) * (x + h))


def _odd_double_factorial_series(t2, terms):
    """sum_{k<terms} (2k-1)!! t2^k, the asymptotic series of erfcx and dawsn (t2 = 1/(2x^2))."""
    acc = jnp.ones_like(t2)
    for k in range(terms - 1, 0, -1):
        acc = 1 + (2 * k - 1) * t2 * acc
    return acc


# --------------------------------------------------------------------------------------
# erfcx(x) = exp(x^2) erfc(x)


@custom_jvp
def erfcx(x):
    """exp(x^2) erfc(x): erfc times a split exp(x^2) up to 12 (6 in float32), the asymptotic
    series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k above, 2 exp(x^2) - erfcx(-x) below 0."""
    x = _real("erfcx", x)
    limit, terms = (12.0, 14) if _is64(x) else (6.0, 8)
    ax = jnp.abs(x)
    near = jnp.minimum(ax, limit)
    direct = _exp_square(near) * lax.erfc(near)
    far = jnp.maximum(ax, limit)
    t = 1 / far
    alternating = _odd_double_factorial_series(-(t * t) / 2, terms)
    positive = jnp.where(ax < limit, direct, t * alternating / _SQRT_PI)
    negative = 2 * _exp_square(jnp.maximum(x, -30.0)) - positive
    return jnp.where(x < 0, jnp.where(x < -27.0, np.inf, negative), positive)


erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - 2 / _SQRT_PI))


# --------------------------------------------------------------------------------------
# Dawson's integral D(x) = exp(-x^2) int_0^x exp(t^2) dt


def _dawsn_series(x):
    """sum_k (-2)^k x^(2k+1) / (2k+1)!!, for |x| <= 1/2."""
    x2 = x * x
    acc = jnp.ones_like(x)
    for k in range(24, 0, -1):
        acc = 1 - 2 * x2 * acc / (2 * k + 1)
    return x * acc


def _dawsn_rybicki(x):
    """Rybicki's sum D(x) = (1/sqrt(pi)) sum_{n odd} exp(-(x - n h)^2) / n, exact up to
    exp(-(pi / 2h)^2) (7e-18 at h = 1/4), taken around the even multiple of h nearest x."""
    h = 0.25
    n0 = 2 * jnp.round(x / (2 * h))
    xp = x - n0 * h
    total = jnp.zeros_like(x)
    for k in range(1, 52, 2):
        total = total + (jnp.exp(-(xp - k * h) ** 2) / (n0 + k)
                         + jnp.exp(-(xp + k * h) ** 2) / (n0 - k))
    return total / _SQRT_PI


@custom_jvp
def dawsn(x):
    """Dawson's integral: a series for |x| < 1/2, Rybicki's sum up to 12 (float32: 6), the
    asymptotic series 1/(2x) sum (2k-1)!! / (2x^2)^k above; odd."""
    x = _real("dawsn", x)
    limit, terms = (12.0, 14) if _is64(x) else (6.0, 8)
    ax = jnp.abs(x)
    small = _dawsn_series(jnp.minimum(ax, 0.5))
    middle = _dawsn_rybicki(jnp.clip(ax, 0.5, limit))
    far = jnp.maximum(ax, limit)
    t = 1 / far
    large = t / 2 * _odd_double_factorial_series(t * t / 2, terms)
    value = jnp.where(ax < 0.5, small, jnp.where(ax < limit, middle, large))
    return jnp.where(x < 0, -value, value)


dawsn.defjvps(lambda g, ans, x: g * (1 - 2 * x * ans))


# --------------------------------------------------------------------------------------
# Exponential integrals


def _e1_series(x):
    """E1(x) = -gamma - log x - sum_{k>=1} (-x)^k / (k k!), for 0 < x <= 2."""
    power = jnp.ones_like(x)
    total = jnp.zeros_like(x)
    for k in range(1, 36):
        power = power * (-x) / k
        total = total - power / k
    return -_EULER - jnp.log(x) + total


def _en_fraction(n, x, depth):
    """exp(x) E_n(x) for x >= 2 or n >= 40 from the even continued fraction
    1 / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...)))."""
    t = x + n + 2 * depth
    for i in range(depth, 0, -1):
        t = x + n + 2 * (i - 1) - i * (n + i - 1) / t
    return 1 / t


def _series_limit(x):
    """Where the alternating series of E_n hands over to the continued fraction: its
    cancellation costs exp(x) ulps, which float32 affords only below 1/2."""
    return 2.0 if _is64(x) else 0.5


@custom_jvp
def exp1(x):
    """E1(x) = int_x^inf exp(-t) / t dt for x > 0 (inf at 0, nan below)."""
    x = _real("exp1", x)
    split = _series_limit(x)
    small = _e1_series(jnp.clip(x, 1e-300 if _is64(x) else 1e-37, split))
    safe = jnp.maximum(x, split)
    large = jnp.exp(-safe) * _en_fraction(1.0, safe, 60)
    value = jnp.where(x <= split, small, large)
    return jnp.where(x < 0, np.nan, jnp.where(x == 0, np.inf, value))


exp1.defjvps(lambda g, ans, x: -g * jnp.exp(-x) / x)


def _ei_series(x):
    """Ei(x) = gamma + log x + sum_{k>=1} x^k / (k k!), positive terms, for 0 < x <= 40."""
    term = jnp.ones_like(x)
    total = jnp.zeros_like(x)
    for k in range(1, 140):
        term = term * x / k
        total = total + term / k
    return _EULER + jnp.log(x) + total


def _ei_asymptotic(x):
    """Ei(x) ~ exp(x) / x sum_k k! / x^k, for x >= 40 (smallest term ~ exp(-x))."""
    acc = jnp.ones_like(x)
    for k in range(40, 0, -1):
        acc = 1 + k * acc / x
    return jnp.exp(x) / x * acc


@custom_jvp
def expi(x):
    """Ei(x), the principal value of int_-inf^x exp(t) / t dt; Ei(x) = -E1(-x) for x < 0."""
    x = _real("expi", x)
    tiny = 1e-300 if _is64(x) else 1e-37
    series = _ei_series(jnp.clip(x, tiny, 40.0))
    asymptotic = _ei_asymptotic(jnp.maximum(x, 40.0))
    negative = -exp1(jnp.maximum(-x, tiny))
    value = jnp.where(x < 0, negative, jnp.where(x <= 40, series, asymptotic))
    return jnp.where(x == 0, -np.inf, jnp.where(x == np.inf, np.inf, value))


expi.defjvps(lambda g, ans, x: g * jnp.exp(x) / x)


def _en_series(n, x):
    """E_n(x) for 0 < x < 2, integer 1 <= n < 40 (A&S 5.1.12):
    (-x)^(n-1) / (n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)."""
    total = jnp.zeros_like(x)
    power = jnp.ones_like(x)  # (-x)^k / k!
    lead = jnp.zeros_like(x)  # (-x)^(n-1) / (n-1)!
    for k in range(48):
        if k:
            power = power * (-x) / k
        is_lead = n == k + 1
        lead = jnp.where(is_lead, power, lead)
        total = total - jnp.where(is_lead, 0.0, power / jnp.where(is_lead, 1.0, k - n + 1))
    return lead * (lax.digamma(n) - jnp.log(x)) + total


def _expn(n, x):
    tiny = 1e-300 if _is64(x) else 1e-37
    safe_n = jnp.where(jnp.isfinite(n), jnp.maximum(n, 1.0), 1.0)
    split = _series_limit(x)
    by_series = (x < split) & (n < 40)
    series = _en_series(jnp.minimum(safe_n, 39.0), jnp.clip(x, tiny, split))
    safe_x = jnp.where(by_series, split, jnp.maximum(x, tiny))
    fraction = jnp.exp(-safe_x) * _en_fraction(safe_n, safe_x, 60)
    value = jnp.where(by_series, series, fraction)
    e0 = jnp.exp(-x) / jnp.where(x == 0, 1.0, x)
    at_zero = jnp.where(n > 1, 1 / jnp.maximum(n - 1, 1.0), np.inf)
    value = jnp.where(n == 0, e0, value)
    value = jnp.where(x == 0, at_zero, value)
    return jnp.where((x < 0) | (n < 0) | (n != jnp.floor(n)), np.nan, value)


_expn_x = custom_jvp(_expn)
_expn_x.defjvps(None, lambda g, ans, n, x: -g * _expn_x(n - 1, x))


def expn(n, x):
    """E_n(x) = int_1^inf exp(-x t) / t^n dt for integer n >= 0 and x >= 0: the series of
    A&S 5.1.12 for x < 1, a continued fraction for x >= 1; d/dx E_n = -E_(n-1) (not
    differentiable in n, which is an integer)."""
    x = _real("expn", x)
    n_dtype = jnp.asarray(n).dtype
    n, x = jnp.broadcast_arrays(jnp.asarray(n).astype(get_aval(x).dtype), x)
    if not jnp.issubdtype(n_dtype, jnp.integer):
        n = jnp.where(n == jnp.floor(n), n, np.nan)
    return _expn_x(lax.stop_gradient(n), x)


# --------------------------------------------------------------------------------------
# Spence's function (the dilogarithm)

# B_n / (n + 1)! for n = 0, 1, 2, 4, ..., 24: Li2(1 - exp(-u)) = sum_n B_n u^(n+1) / (n+1)!
_DILOG_COEFS = [1.0, -0.25] + [
    float(b) / math.factorial(n + 1) for n, b in [
        (2, 1 / 6), (4, -1 / 30), (6, 1 / 42), (8, -1 / 30), (10, 5 / 66), (12, -691 / 2730),
        (14, 7 / 6), (16, -3617 / 510), (18, 43867 / 798), (20, -174611 / 330),
        (22, 854513 / 138), (24, -236364091 / 2730)]]


def _dilog_of_log(u):
    """Li2(1 - exp(-u)) for |u| <= 1, by its Bernoulli series."""
    u2 = u * u
    acc = jnp.zeros_like(u)
    for c in _DILOG_COEFS[:1:-1]:
        acc = acc * u2 + c
    return u + _DILOG_COEFS[1] * u2 + u * u2 * acc


def _spence_unit(x):
    """spence(x) = Li2(1 - x) for 0 < x <= 1."""
    near_one = _dilog_of_log(-jnp.log(jnp.maximum(x, math.exp(-1))))
    small = jnp.minimum(x, math.exp(-1))
    reflected = (_PI2_6 - jnp.log1p(-small) * jnp.log(small)
                 - _dilog_of_log(-jnp.log1p(-small)))
    return jnp.where(x >= math.exp(-1), near_one, reflected)


@custom_jvp
def spence(x):
    """int_1^x log t / (1 - t) dt = Li2(1 - x) for x >= 0 (nan below and at inf): the
    Bernoulli series of Li2 in log x near 1, the reflection Li2(w) + Li2(1 - w) =
    pi^2/6 - log w log(1 - w) below 1/e, and spence(x) = -log(x)^2 / 2 - spence(1/x) above 1."""
    x = _real("spence", x)
    tiny = 1e-300 if _is64(x) else 1e-37
    inner = _spence_unit(jnp.clip(x, tiny, 1.0))
    big = jnp.maximum(x, 1.0)
    outer = -0.5 * jnp.log(big) ** 2 - _spence_unit(1 / big)
    value = jnp.where(x <= 1, inner, outer)
    value = jnp.where(x == 0, _PI2_6, value)
    return jnp.where((x < 0) | jnp.isinf(x), np.nan, value)


# -1 at x = 1, the limit (JAX 0.10.2 answers 0 there)
spence.defjvps(lambda g, ans, x: g * jnp.where(x == 1, -1.0, jnp.log(x) / jnp.where(x == 1, 1.0,
                                                                                     1 - x)))


# --------------------------------------------------------------------------------------
# Sine and cosine integrals, Fresnel integrals


def _sici_small(x):
    """(Si(x), Ci(x) - gamma - log x) for 0 <= x <= 4, by their power series."""
    x2 = x * x
    si = jnp.zeros_like(x)
    ci = jnp.zeros_like(x)
    for k in range(22, 0, -1):
        si = (-1) ** k / ((2 * k + 1) * math.factorial(2 * k + 1)) + x2 * si
        ci = (-1) ** k / (2 * k * math.factorial(2 * k)) + x2 * ci
    return x * (1 + x2 * si), x2 * ci


def _sici_large(x):
    """(Si(x), Ci(x)) for x >= 4 (2 in float32) from E1(ix) = -Ci(x) + i (Si(x) - pi/2), E1
    by its even continued fraction in complex arithmetic."""
    z = lax.complex(jnp.zeros_like(x), x)
    t = z + 2 * 80 + 1
    for i in range(80, 0, -1):
        t = z + (2 * i - 1) - i * i / t
    e1 = jnp.exp(-z) / t
    return jnp.imag(e1) + math.pi / 2, -jnp.real(e1)


def _sici(x):
    ax = jnp.abs(x)
    tiny = 1e-300 if _is64(x) else 1e-37
    split = 4.0 if _is64(x) else 2.0  # the series cancels ~exp(x) ulps
    near = jnp.minimum(ax, split)
    si_s, ci_s = _sici_small(near)
    ci_s = ci_s + _EULER + jnp.log(jnp.maximum(near, tiny))
    si_l, ci_l = _sici_large(jnp.maximum(ax, split))
    si = jnp.where(ax <= split, si_s, si_l)
    ci = jnp.where(ax <= split, ci_s, ci_l)
    si = jnp.where(jnp.isinf(ax), math.pi / 2, si)
    ci = jnp.where(jnp.isinf(ax), jnp.where(x > 0, 0.0, np.nan), jnp.where(ax == 0, -np.inf, ci))
    return jnp.where(x < 0, -si, si), ci


_sici_jvp = custom_jvp(_sici)


@_sici_jvp.defjvp
def _sici_rule(primals, tangents):
    (x,), (g,) = primals, tangents
    si, ci = _sici_jvp(x)
    return (si, ci), (g * jnp.where(x == 0, 1.0, jnp.sin(x) / jnp.where(x == 0, 1.0, x)),
                      g * jnp.cos(x) / x)


def sici(x):
    """(Si(x), Ci(x)): power series for |x| <= 4, the continued fraction of E1(ix) above;
    Si is odd and Ci even (SciPy's real part for x < 0)."""
    x = _real("sici", x)
    return _sici_jvp(x)


def _fresnel_small(x):
    """(S(x), C(x)) for |x| <= 2 by their power series in (pi/2 x^2)^2."""
    t = math.pi / 2 * x * x
    t2 = t * t
    s = jnp.zeros_like(x)
    c = jnp.zeros_like(x)
    for k in range(24, 0, -1):
        c = (-1) ** k / (math.factorial(2 * k) * (4 * k + 1)) + t2 * c
        s = (-1) ** k / (math.factorial(2 * k + 1) * (4 * k + 3)) + t2 * s
    return x * t * (1 / 3 + t2 * s), x * (1 + t2 * c)


def _square_mod_4(x):
    """x^2 mod 4, exact for large x (the phase pi x^2 / 2 mod 2 pi): x is split in two halves
    of its bits (Dekker), whose products are exact and are reduced separately."""
    split = 134217729.0 if _is64(x) else 4097.0
    c = split * x
    hi = c - (c - x)
    lo = x - hi
    total = jnp.remainder(hi * hi, 4.0) + jnp.remainder(2 * hi * lo, 4.0) + lo * lo
    return jnp.remainder(total, 4.0)


def _fresnel_large(x):
    """(S(x), C(x)) for x >= 2 (1 in float32):
    C + iS = (1 + i)/2 (1 - (1 - i) x exp(i pi x^2 / 2) h), with h
    the continued fraction 1 / (b + a1 / (b + 4 + a2 / (b + 8 + ...))), b = 1 - i pi x^2,
    a_k = -(2k - 1) 2k."""
    depth = 60
    b = lax.complex(jnp.ones_like(x), -math.pi * x * x)
    t = b + 4 * depth
    for k in range(depth, 0, -1):
        t = b + 4 * (k - 1) - (2 * k - 1) * (2 * k) / t
    h = lax.complex(x, -x) / t
    phase = math.pi / 2 * _square_mod_4(x)
    rot = lax.complex(jnp.cos(phase), jnp.sin(phase))
    cs = lax.complex(jnp.full_like(x, 0.5), jnp.full_like(x, 0.5)) * (1 - rot * h)
    return jnp.imag(cs), jnp.real(cs)


def _fresnel(x):
    ax = jnp.abs(x)
    split = 2.0 if _is64(x) else 1.0  # the series cancels exp(pi x^2 / 2) ulps
    s_s, c_s = _fresnel_small(jnp.minimum(ax, split))
    limit = 1e150 if _is64(x) else 1e18  # beyond, 1/(pi x) is below the precision
    s_l, c_l = _fresnel_large(jnp.clip(ax, split, limit))
    s = jnp.where(ax <= split, s_s, jnp.where(ax > limit, 0.5, s_l))
    c = jnp.where(ax <= split, c_s, jnp.where(ax > limit, 0.5, c_l))
    return jnp.where(x < 0, -s, s), jnp.where(x < 0, -c, c)


_fresnel_jvp = custom_jvp(_fresnel)


@_fresnel_jvp.defjvp
def _fresnel_rule(primals, tangents):
    (x,), (g,) = primals, tangents
    phase = math.pi / 2 * x * x
    return _fresnel_jvp(x), (g * jnp.sin(phase), g * jnp.cos(phase))


def fresnel(x):
    """(S(x), C(x)), the Fresnel integrals of sin and cos(pi t^2 / 2): power series for
    |x| <= 2, a continued fraction above; both odd."""
    x = _real("fresnel", x)
    return _fresnel_jvp(x)
