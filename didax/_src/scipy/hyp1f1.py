"""Kummer's confluent hypergeometric function 1F1(a; b; x) of real arguments."""
from __future__ import annotations

import numpy as np

from didax._src.lax import elementwise as lax
from didax._src.numpy import namespace as jnp
from didax._src.scipy.double_double import _dd, _dd_add, _dd_add_double, _dd_div, _dd_mul, _two_sum
from didax._src.scipy.hypergeometric import (
    _eps,
    _is_nonpositive_integer,
    _off_poles,
    _real_args,
    _signed_exp,
    _signed_inf,
    _with_derivatives,
)
from didax._src.scipy.special import gammasgn

__all__ = ["hyp1f1"]


_SERIES_TERMS_1F1 = 200  # the series converges within these for t below ~50 + 2 (|a| + |b|)
_ASYMPTOTIC_TERMS_1F1 = 100
_ASYMPTOTIC_FROM = 25.0
_SERIES_REACH_1F1 = 300.0  # (beyond, its terms could overflow)


def _series_1f1(alpha, b, t):
    """sum_k (alpha)_k / (b)_k t^k / k! in double-double, alpha given as a double-double,
    and whether its tail is below the rounding. (A pole b + k = 0 met after a polynomial's
    end multiplies a zero term, and is stepped over.)"""
    term = _dd(jnp.ones_like(t))
    total = term
    for k in range(_SERIES_TERMS_1F1):
        numerator = _dd_mul(_dd_add_double(alpha, k), _dd(t))
        den = _two_sum(b, jnp.full_like(t, k))
        safe = den[0] == 0
        den = (jnp.where(safe, 1.0, den[0]), jnp.where(safe, 0.0, den[1]))
        den = _dd_mul(den, _dd(jnp.full_like(t, k + 1)))
        term = _dd_div(_dd_mul(term, numerator), den)
        total = _dd_add(total, term)
    k = _SERIES_TERMS_1F1
    falling = jnp.abs((alpha[0] + k) * t) < jnp.abs((b + k) * (k + 1))
    converged = falling & (jnp.abs(term[0]) <= _eps(t) * jnp.abs(total[0]))
    return total[0] + total[1], converged


def _asymptotic_1f1_sum(a, b, t):
    """sum_k (b - a)_k (1 - a)_k / k! t^-k, the large-t expansion of 1F1(a; b; t) divided
    by Gamma(b) / Gamma(a) e^t t^(a - b); usable where its terms fall below the rounding
    before they turn to grow."""
    term = jnp.ones_like(t)
    total = term
    for k in range(_ASYMPTOTIC_TERMS_1F1):
        term = term * ((b - a + k) * (1 - a + k)) / ((k + 1) * t)
        total = total + term
    k = _ASYMPTOTIC_TERMS_1F1
    still_falling = jnp.abs((b - a + k) * (1 - a + k)) < (k + 1) * t
    converged = (jnp.abs(term) <= _eps(t) * jnp.abs(total)) & still_falling
    return total, converged & (t >= _ASYMPTOTIC_FROM)


def _hyp1f1(a, b, x):
    """1F1 for finite arguments, b not a non-positive integer. x < 0 goes through Kummer's
    transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x) (unless a is a non-positive integer:
    then the series is a polynomial whose terms all have one sign), so that the series'
    argument t is nonnegative; large t uses the asymptotic expansion."""
    polynomial = _is_nonpositive_integer(a)
    kummer = (x < 0) & ~polynomial
    alpha_dd = _two_sum(b, -a)
    alpha_dd = (jnp.where(kummer, alpha_dd[0], a), jnp.where(kummer, alpha_dd[1], 0.0))
    alpha = alpha_dd[0]
    t = jnp.where(kummer, -x, x)
    series, series_ok = _series_1f1(alpha_dd, b, jnp.minimum(t, _SERIES_REACH_1F1))
    series_ok = series_ok & (t <= _SERIES_REACH_1F1)
    series = jnp.where(kummer, jnp.exp(jnp.minimum(x, 0.0)) * series, series)
    t_far = jnp.maximum(jnp.abs(t), 1.0)
    sum_far, far_ok = _asymptotic_1f1_sum(alpha, b, t_far)
    # Gamma(b) / Gamma(alpha) e^t t^(alpha - b), times e^x = e^-t after Kummer's transformation
    alpha_safe = _off_poles(alpha)
    b_safe = _off_poles(b)
    log_far = (lax.lgamma(b_safe) - lax.lgamma(alpha_safe) + (alpha - b) * jnp.log(t_far)
               + jnp.where(kummer, 0.0, t_far))
    sign_far = gammasgn(b_safe) * gammasgn(alpha_safe)
    far = _signed_exp(log_far, sign_far) * sum_far
    # the expansion's second, algebraic part Gamma(b) / Gamma(b - alpha) t^-alpha (times
    # e^-t after Kummer's) is left out: only where it is below the rounding
    log_second = (lax.lgamma(alpha_safe) - lax.lgamma(_off_poles(b - alpha))
                  + (b - 2 * alpha) * jnp.log(t_far) - t_far)
    second_negligible = ((log_second < np.log(_eps(t)) - 3)
                         | _is_nonpositive_integer(b - alpha))
    use_far = (far_ok & second_negligible & ~_is_nonpositive_integer(alpha)
               & (~series_ok | (t >= 50)))
    return jnp.where(use_far, far, series)


def _hyp1f1_values(a, b, x):
    finite = jnp.isfinite(x)
    # JAX's conventions: 1 for a = 0 (also where b = 0), e^x for a = b, inf at the poles
    # b = 0, -1, ... unless a is a non-positive integer above b (a polynomial)
    pole = _is_nonpositive_integer(b) & ~(_is_nonpositive_integer(a) & (a > b))
    b_safe = jnp.where(pole, 0.5, b)
    value = _hyp1f1(a, b_safe, jnp.where(finite, x, 0.0))
    # the limits at x = +-inf
    alternating = jnp.cos(np.pi * jnp.where(_is_nonpositive_integer(a), a, 0.0))
    at_plus_inf = _signed_inf(gammasgn(_off_poles(b)) * jnp.where(
        _is_nonpositive_integer(a), alternating * gammasgn(_off_poles(b - a)),
        gammasgn(_off_poles(a))))
    at_minus_inf = jnp.where((a > 0) | _is_nonpositive_integer(b - a), 0.0,
                             _signed_inf(gammasgn(_off_poles(b)) * gammasgn(_off_poles(b - a))))
    value = jnp.where(finite, value, jnp.where(x > 0, at_plus_inf, at_minus_inf))
    value = jnp.where(pole, np.inf, value)
    value = jnp.where(a == b, jnp.exp(x), value)
    value = jnp.where(a == 0, 1.0, value)
    return jnp.where(jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(x), np.nan, value)


_hyp1f1_jvp = _with_derivatives(
    _hyp1f1_values, lambda a, b, x: a / b * _hyp1f1_jvp(a + 1, b + 1, x))


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!,
    elementwise with broadcasting, for real arguments (as JAX: 1 where a = 0, e^x where
    a = b, inf where b is a pole, i.e. a non-positive integer not preceded by a
    non-positive integer a > b whose polynomial ends the series first).

    x < 0 goes through Kummer's transformation e^x 1F1(b - a; b; -x), so that the series
    (200 terms, summed in double-double arithmetic so that the cancellation of alternating
    terms costs no accuracy) runs on a nonnegative argument t with first parameter alpha
    (a, or b - a, taken without rounding); t >= 25 uses the asymptotic expansion
    Gamma(b) / Gamma(alpha) e^t t^(alpha - b) sum_k (b - alpha)_k (1 - alpha)_k / k! t^-k
    where it converges to the rounding and its algebraic companion term is below it.

    Accuracy in float64 against mpmath, for |a|, |b| <= 20 and |x| <= 200: 1e-13 relative,
    b of either sign, alpha of either sign (the Laguerre polynomials of a non-positive
    integer a included); likewise with |a| or |b| up to ~30 for |x| <= 40 (b < 0 < x
    with a < b not checked). Beyond, where
    -alpha is large (~40 and more) at moderate t, the terms cancel by more than
    double-double's 1e-32 can absorb, and the values lose accuracy (1e-5 at alpha = -95,
    t = 150); near a zero of 1F1 the error is absolute. float32 computes in float32 (with
    float32 pairs for the double-double sums): a few ulps where float64 is at 1e-14, with
    e^t's t ulps on top (~1e-6 at t = 20).

    Unlike JAX (which is inaccurate for negative x of large magnitude and for large
    parameters, and returns 1 for a nan a), the values here are accurate there and nan
    propagates; at x = +-inf the limits are returned (JAX: nan and 0), and the poles in b
    are +inf (JAX's sign there follows its series).
    """
    a, b, x = _real_args("hyp1f1", a, b, x)
    return _hyp1f1_jvp(a, b, x)
