"""The Gauss hypergeometric function 2F1(a, b; c; x) of real arguments."""
from __future__ import annotations

import numpy as np

from didax._src.core import get_aval
from didax._src.lax import elementwise as lax
from didax._src.numpy import namespace as jnp
from didax._src.scipy.double_double import (
    _dd,
    _dd_add,
    _dd_add_double,
    _dd_div,
    _dd_mul,
    _two_sum,
)
from didax._src.scipy.hypergeometric import (
    _eps,
    _is_nonpositive_integer,
    _off_poles,
    _real_args,
    _with_derivatives,
)
from didax._src.scipy.special import gammasgn

__all__ = ["hyp2f1"]


_SERIES_TERMS_2F1 = 150  # |z| <= 1/2: 2^-150 leaves room for the parameters' growth k^(a+b-c)
_MAX_CANCELLATION = 1e13  # (leaves 1e-19 of double-double's precision)
_FINITE_TERMS_2F1 = 40  # the finite sum of the degenerate case: c - a - b up to 40


def _series_2f1(a, b, c, z):
    """sum_k (a)_k (b)_k / (c)_k z^k / k!, for |z| <= 1/2 or a terminating series; with
    where its tail is below the rounding, and the sum of the terms' magnitudes (over the
    sum's, the factor by which cancellation magnifies the rounding)."""
    term = jnp.ones_like(z)
    total = term
    magnitude = term
    for k in range(_SERIES_TERMS_2F1):
        term = term * ((a + k) * (b + k) / ((c + k) * (k + 1))) * z
        total = total + term
        magnitude = magnitude + jnp.abs(term)
    k = _SERIES_TERMS_2F1
    falling = jnp.abs((a + k) * (b + k) * z) < jnp.abs((c + k) * (k + 1))
    converged = falling & (jnp.abs(term) <= _eps(z) * jnp.abs(total))
    return total, converged, magnitude


def _series_2f1_exact(a, b, c, z):
    """`_series_2f1`'s sum carried in double-double (a, b and z doubles or double-doubles),
    for the form chosen where every form cancels."""
    a, b, z = [v if isinstance(v, tuple) else _dd(v) for v in (a, b, z)]
    term = _dd(jnp.ones_like(z[0]))
    total = term
    for k in range(_SERIES_TERMS_2F1):
        kk = jnp.full_like(z[0], k)
        numerator = _dd_mul(_dd_mul(_dd_add_double(a, k), _dd_add_double(b, k)), z)
        den = _dd_mul(_two_sum(c, kk), _dd(kk + 1))
        term = _dd_div(_dd_mul(term, numerator), den)
        total = _dd_add(total, term)
    return total[0] + total[1]


def _cancellation(total, magnitude):
    return magnitude / jnp.maximum(jnp.abs(total), np.finfo(get_aval(total).dtype).tiny)


def _gamma_ratio(num, den):
    """prod Gamma(num) / prod Gamma(den), through lgamma with the signs; 0 where a
    denominator's Gamma has a pole."""
    den_pole = False
    for v in den:
        den_pole = den_pole | _is_nonpositive_integer(v)
    num, den = [_off_poles(v) for v in num], [_off_poles(v) for v in den]
    log_ratio = sum(lax.lgamma(v) for v in num) - sum(lax.lgamma(v) for v in den)
    sign = 1.0
    for v in num + den:
        sign = sign * gammasgn(v)
    return jnp.where(den_pole, 0.0, sign * jnp.exp(log_ratio))


def _near_one_generic(a, b, c, s):
    """2F1(a, b; c; 1 - s) for 0 < s <= 1/2 and m = c - a - b not an integer, by the
    connection formula Gamma(c) Gamma(m) / (Gamma(c-a) Gamma(c-b)) 2F1(a, b; 1-m; s) +
    s^m Gamma(c) Gamma(-m) / (Gamma(a) Gamma(b)) 2F1(c-a, c-b; 1+m; s)."""
    m = c - a - b
    first = _gamma_ratio([c, m], [c - a, c - b]) * _series_2f1(a, b, 1 - m, s)[0]
    second = (_gamma_ratio([c, -m], [a, b]) * s ** m
              * _series_2f1(c - a, c - b, 1 + m, s)[0])
    return first + second


def _near_one_degenerate(a, b, n, s):
    """2F1(a, b; a + b + n; 1 - s) for an integer n >= 0 and 0 < s <= 1/2, the limit of the
    connection formula (Abramowitz & Stegun 15.3.10-11): a finite sum of n terms and a
    series with logarithms and digammas."""
    c = a + b + n
    finite = jnp.zeros_like(s)
    term = jnp.ones_like(s)
    for k in range(_FINITE_TERMS_2F1):
        finite = finite + jnp.where(k < n, term, 0.0)
        den = 1 - n + k  # (zero at k = n - 1, past the terms kept)
        term = term * ((a + k) * (b + k) / ((k + 1) * jnp.where(den == 0, 1.0, den))) * s
    safe_n = jnp.maximum(n, 1.0)
    finite = _gamma_ratio([safe_n, c], [a + n, b + n]) * finite
    finite = jnp.where(n == 0, 0.0, finite)
    # sum_k (a+n)_k (b+n)_k / (k! (k+n)!) s^k [log s - psi(k+1) - psi(k+n+1) + psi(a+n+k)
    # + psi(b+n+k)], with the digammas carried by their recurrence psi(v + 1) = psi(v) + 1/v
    log_s = jnp.log(s)
    psi_k1 = lax.digamma(jnp.ones_like(s))
    psi_kn1 = lax.digamma(n + 1)
    psi_a = lax.digamma(a + n)
    psi_b = lax.digamma(b + n)
    weight = jnp.exp(-lax.lgamma(n + 1))  # 1 / n!
    total = jnp.zeros_like(s)
    for k in range(_SERIES_TERMS_2F1):
        total = total + weight * (log_s - psi_k1 - psi_kn1 + psi_a + psi_b)
        weight = weight * ((a + n + k) * (b + n + k) / ((k + 1) * (k + n + 1))) * s
        psi_k1 = psi_k1 + 1.0 / (k + 1)
        psi_kn1 = psi_kn1 + 1 / (k + n + 1)
        psi_a = psi_a + 1 / (a + n + k)
        psi_b = psi_b + 1 / (b + n + k)
    sign = jnp.cos(np.pi * n)  # (-1)^n
    infinite = -sign * _gamma_ratio([c], [a, b]) * s ** n * total
    return finite + infinite


# (Bernoulli numbers B_2n / (2n (2n - 1)): the coefficients of Stirling's series for lgamma)
_STIRLING_COEFFICIENTS = [1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360,
                          1 / 156, -3617 / 122400]
_STIRLING_FROM = 10  # (where the series' eighth term is below double's rounding)
_NEAR_INTEGER = 0.125  # |c - a - b - n| below this: the uniform form of the limit


def _log_gamma_step(y, e):
    """log(Gamma(y + e) / Gamma(y)) for y > 0 and y + e > 0, with the accuracy relative
    to e that the difference of two lgammas lacks: Stirling's series differenced term by
    term, after the recurrence has moved y past 10."""
    shifted = jnp.zeros_like(y)
    z = y
    for _ in range(_STIRLING_FROM):
        low = z < _STIRLING_FROM
        shifted = shifted + jnp.where(low, jnp.log1p(e / z), 0.0)
        z = jnp.where(low, z + 1, z)
    log_ratio = jnp.log1p(e / z)
    step = (z - 0.5) * log_ratio + e * jnp.log(z + e) - e
    power = 1 / z
    for n, coefficient in enumerate(_STIRLING_COEFFICIENTS, 1):
        step = step + coefficient * power * jnp.expm1((1 - 2 * n) * log_ratio)
        power = power / (z * z)
    return step - shifted


def _gamma_step_ratio(x, e):
    """(Gamma(x) / Gamma(x + e) - 1) / e, accurate however small e (0 < |e| <= 1/4; x and
    x + e not poles). Below x = 1/2 through the reflection formula: Gamma(x + e) / Gamma(x)
    = Gamma(1 - x) / Gamma(1 - x - e) * sin(pi x) / sin(pi (x + e))."""
    reflect = x < 0.5
    step = _log_gamma_step(jnp.where(reflect, 1 - x - e, x), e)
    offset = x - jnp.round(x)  # (exact: the sines' period without its rounding)
    offset = jnp.where(offset == 0, 0.5, offset)
    # sin(pi (x + e)) / sin(pi x) - 1
    t = (jnp.sin(np.pi * e) * jnp.cos(np.pi * offset) / jnp.sin(np.pi * offset)
         - 2 * jnp.sin(0.5 * np.pi * e) ** 2)
    t = jnp.where(reflect, t, 0.0)
    near = t > -0.5
    log_sine_ratio = jnp.where(near, jnp.log1p(jnp.where(near, t, 0.0)),
                               jnp.log(jnp.abs(jnp.where(near, 1.0, 1 + t))))
    log_ratio = step - log_sine_ratio  # log |Gamma(x + e) / Gamma(x)|
    ratio_minus_one = jnp.where(1 + t > 0, jnp.expm1(-log_ratio), -jnp.exp(-log_ratio) - 1)
    return ratio_minus_one / e


def _near_one_near_integer(a, b, n, e, s):
    """2F1(a, b; a + b + n + e; 1 - s) for an integer n >= 0, 0 < |e| <= 1/8 and
    0 < s <= 1/2: the connection formula with its two terms' poles in e cancelled
    analytically (as Buhring's and Forrey's forms of the limit), so that it tends to the
    limit of integer c - a - b without the loss of 1/e. With g_k(d) = Gamma(a+n+k+d)
    Gamma(b+n+k+d) / (Gamma(1+n+k+d) Gamma(1+k-e+d)), the infinite part is (-1)^n
    pi e / sin(pi e) Gamma(c) / (Gamma(a) Gamma(b) Gamma(a+n+e) Gamma(b+n+e)) s^n
    sum_k s^k [(g_k(0) - g_k(e)) / e + (1 - s^e) / e g_k(e)], the differences carried
    by their own recurrence from Gamma ratios differenced without cancellation."""
    c = a + b + n + e
    finite = jnp.zeros_like(s)
    term = jnp.ones_like(s)
    for k in range(_FINITE_TERMS_2F1):
        finite = finite + jnp.where(k < n, term, 0.0)
        den = jnp.where(k + 1 < n, 1 - n - e + k, 1.0)  # (only the terms before n are kept)
        term = term * ((a + k) * (b + k) / ((k + 1) * den)) * s
    finite = _gamma_ratio([c, jnp.where(n == 0, 1.0, n + e)], [c - a, c - b]) * finite
    finite = jnp.where(n == 0, 0.0, finite)
    inverse_factorial = jnp.exp(-lax.lgamma(n + 1))
    step_a = _gamma_step_ratio(a + n, e)
    step_b = _gamma_step_ratio(b + n, e)
    step_one = -_gamma_step_ratio(jnp.ones_like(e), -e)
    step_n = _gamma_step_ratio(n + 1, e)
    # (g_0(0) - g_0(e)) / e and g_0(e), over Gamma(a+n+e) Gamma(b+n+e)
    difference = inverse_factorial * (
        step_a + step_b + step_one - step_n
        + e * (step_a * step_b + (step_a + step_b) * step_one)
        + e * e * step_a * step_b * step_one)
    value = inverse_factorial * (1 + e * step_n)
    log_s = jnp.log(s)
    power_difference = -jnp.expm1(e * log_s) / e  # (1 - s^e) / e
    total = jnp.zeros_like(s)
    for k in range(_SERIES_TERMS_2F1):
        total = total + (difference + power_difference * value)
        alpha, beta, gamma, eta = a + n + k, b + n + k, 1.0 + n + k, 1.0 + k - e
        at_zero = alpha * beta / (gamma * eta)
        at_e = (alpha + e) * (beta + e) / ((gamma + e) * (k + 1))
        change = ((alpha * beta * (gamma + eta + e) - gamma * eta * (alpha + beta + e))
                  / (gamma * eta * (gamma + e) * (k + 1)))
        difference = (difference * at_zero + value * change) * s
        value = value * at_e * s
    sign = jnp.cos(np.pi * n)  # (-1)^n
    pi_e = np.pi * e
    infinite = sign * pi_e / jnp.sin(pi_e) * _gamma_ratio([c], [a, b]) * s ** n * total
    return finite + infinite


def _near_one(a, b, c, s):
    """2F1(a, b; c; 1 - s) for 0 < s <= 1/2; where c - a - b is a negative integer,
    Euler's transformation 2F1(a, b; c; x) = s^(c-a-b) 2F1(c-a, c-b; c; x) makes it positive.
    Where c - a - b is an integer and a or b, or c - a or c - b, a non-positive integer (the
    limit's poles), the function is a polynomial (times s^(c-a-b)), summed as such in the
    form whose terms cancel least."""
    m = c - a - b
    own = _is_nonpositive_integer(a) | _is_nonpositive_integer(b)
    euler = _is_nonpositive_integer(c - a) | _is_nonpositive_integer(c - b)
    own_value, _, own_size = _series_2f1(a, b, c, jnp.where(own, 1 - s, 0.0))
    euler_value, _, euler_size = _series_2f1(c - a, c - b, c, jnp.where(euler, 1 - s, 0.0))
    use_euler = euler & (~own | (_cancellation(euler_value, euler_size)
                                 < _cancellation(own_value, own_size)))
    polynomial = _series_2f1_exact(jnp.where(use_euler, c - a, a), jnp.where(use_euler, c - b, b),
                                   c, jnp.where(own | euler, 1 - s, 0.0))
    polynomial = jnp.where(use_euler, s ** m, 1.0) * polynomial
    integer = m == jnp.round(m)
    generic = _near_one_generic(a, b, jnp.where(integer, c + 0.5, c),
                                jnp.where(integer, 0.25, s))
    flip = m < 0
    a2 = jnp.where(flip, c - a, a)
    b2 = jnp.where(flip, c - b, b)
    n = jnp.where(integer, jnp.abs(m), 0.0)
    usable = integer & ~_is_nonpositive_integer(a2) & ~_is_nonpositive_integer(b2)
    degenerate = _near_one_degenerate(jnp.where(usable, a2, 0.5), jnp.where(usable, b2, 0.5),
                                      n, jnp.where(integer, s, 0.25))
    degenerate = jnp.where(flip, s ** m, 1.0) * degenerate
    # c - a - b within 1/8 of an integer (not on it): the limit's uniform form, where its
    # Gamma functions have no poles (where they have, the generic formula is exact)
    nearest = jnp.round(m)
    flip_near = nearest < 0
    a3 = jnp.where(flip_near, c - a, a)
    b3 = jnp.where(flip_near, c - b, b)
    near = (~integer & (jnp.abs(m - nearest) < _NEAR_INTEGER) & ~_is_nonpositive_integer(a3)
            & ~_is_nonpositive_integer(b3) & ~_is_nonpositive_integer(c - a3)
            & ~_is_nonpositive_integer(c - b3))
    n3 = jnp.where(near, jnp.abs(nearest), 0.0)
    e3 = jnp.where(near, (c - a3 - b3) - n3, _NEAR_INTEGER / 2)
    near_integer = _near_one_near_integer(jnp.where(near, a3, 0.5), jnp.where(near, b3, 0.5),
                                          n3, e3, jnp.where(near, s, 0.25))
    near_integer = jnp.where(flip_near, s ** m, 1.0) * near_integer
    generic = jnp.where(near, near_integer, generic)
    return jnp.where(integer, jnp.where(usable, degenerate, polynomial), generic)


def _small_argument(a, b, c, x):
    """2F1 by the series, in whichever of its forms valid at x cancels least (inf where
    none is): as it is and Euler's (1-x)^(c-a-b) 2F1(c-a, c-b; c; x) for |x| <= 1/2,
    Pfaff's (1-x)^-a 2F1(a, c-b; c; w) and (1-x)^-b 2F1(b, c-a; c; w), w = x/(x-1), for
    -1 <= x < 0; each also up to an argument of 3/4 where its terms are positive and it
    converges within them."""
    reach = 0.75
    w_raw = x / (x - 1)
    z = jnp.clip(x, -reach, reach)
    w = jnp.clip(w_raw, 0.0, reach)
    # the double-double sum takes its parameters and argument without their rounding
    w_exact = _dd_div(_dd(x), _two_sum(x, -jnp.ones_like(x)))
    w_exact = (jnp.where(w == w_raw, w_exact[0], w), jnp.where(w == w_raw, w_exact[1], 0.0))
    c_a, c_b = _two_sum(c, -a), _two_sum(c, -b)
    forms = [(_dd(a), _dd(b), x, _dd(z), 1.0),
             (c_a, c_b, x, _dd(z), (1 - z) ** (c - a - b)),
             (_dd(a), c_b, jnp.where(x < 0, w_raw, np.inf), w_exact, (1 - x) ** -a),
             (_dd(b), c_a, jnp.where(x < 0, w_raw, np.inf), w_exact, (1 - x) ** -b)]
    best = best_cancellation = None
    for p, q, raw, arg, factor in forms:
        total, converged, size = _series_2f1(p[0], q[0], c, arg[0])
        cancellation = _cancellation(total, size)
        positive = (p[0] > 0) & (q[0] > 0) & (c > 0)
        # beyond 1/2: converged within the terms, and cancelling less than double-double's
        # precision can take
        beyond = (converged & (jnp.abs(raw) <= reach)
                  & (positive | (cancellation < _MAX_CANCELLATION)))
        valid = (jnp.abs(raw) <= 0.5) | beyond
        cancellation = jnp.where(valid, cancellation, np.inf)
        chosen = (*p, *q, *arg, factor, total)
        if best is None:
            best, best_cancellation = chosen, cancellation
        else:
            better = cancellation < best_cancellation
            best = tuple(jnp.where(better, new, old) for new, old in zip(chosen, best))
            best_cancellation = jnp.where(better, cancellation, best_cancellation)
    p_hi, p_lo, q_hi, q_lo, arg_hi, arg_lo, factor, total = best
    # where the chosen form's terms cancel, its sum again in double-double
    cancels = best_cancellation > 10
    exact = _series_2f1_exact((p_hi, p_lo), (q_hi, q_lo), c,
                              (jnp.where(cancels, arg_hi, 0.0), jnp.where(cancels, arg_lo, 0.0)))
    return factor * jnp.where(cancels, exact, total), best_cancellation


_LONG_REACH = 0.9  # (an argument up to which a series of positive terms converges within
_LONG_TERMS = 500  # these, for parameters to ~10)


def _positive_series_beyond(a, b, c, x):
    """2F1 by a longer series where the connection formulas' two terms cancel (arguments
    between 3/4 and 9/10: x itself, or Pfaff's x/(x-1) for x down to -9), in a form whose
    terms are all positive (no rounding magnified); with where one is and converges."""
    w = x / (x - 1)
    forms = [(a, b, x), (c - a, c - b, x), (a, c - b, w), (b, c - a, w)]
    found = jnp.zeros(jnp.shape(x), bool)
    p = q = z = jnp.zeros_like(x)
    for p_form, q_form, z_form in forms:
        usable = ~found & (p_form > 0) & (q_form > 0) & (c > 0) & (z_form > 0.5)
        usable = usable & (z_form <= _LONG_REACH)
        p, q, z = [jnp.where(usable, new, old) for new, old in
                   zip((p_form, q_form, z_form), (p, q, z))]
        found = found | usable
    term = jnp.ones_like(x)
    total = term
    for k in range(_LONG_TERMS):
        term = term * ((p + k) * (q + k) / ((c + k) * (k + 1))) * z
        total = total + term
    converged = found & (term <= _eps(x) * total)
    converged = converged & ((p + _LONG_TERMS) * (q + _LONG_TERMS) * z
                             < (c + _LONG_TERMS) * (_LONG_TERMS + 1))
    # the forms' factors: 1, (1-x)^(c-a-b), (1-x)^-a, (1-x)^-b
    euler = (z == x) & ((p != a) | (q != b))
    exponent = jnp.where(z == x, jnp.where(euler, c - a - b, 0.0), -jnp.where(p == a, a, b))
    return (1 - x) ** exponent * total, converged


def _hyp2f1(a, b, c, x):
    """2F1 for x < 1 and c not a pole: a series form (`_small_argument`) where one is valid,
    else a longer series of positive terms where one converges (`_positive_series_beyond`),
    else the connection formula in 1 - x above 1/2, and Pfaff's transformation followed by
    it (in 1/(1-x)) below -1; a terminating series is summed as it is where its terms do
    not cancel."""
    terminating = ((_is_nonpositive_integer(a) & (a > -_SERIES_TERMS_2F1))
                   | (_is_nonpositive_integer(b) & (b > -_SERIES_TERMS_2F1)))
    direct, _, direct_size = _series_2f1(a, b, c, jnp.where(terminating, x, 0.0))
    pfaff = x < 0
    b_small = jnp.where(pfaff, c - b, b)
    small, small_cancellation = _small_argument(a, b, c, x)
    s = jnp.where(pfaff, 1 / (1 - x), 1 - x)
    near = _near_one(a, b_small, c, jnp.clip(s, np.finfo(get_aval(x).dtype).tiny, 0.5))
    near = jnp.where(pfaff, (1 - x) ** -a, 1.0) * near
    transformed = jnp.where(jnp.isfinite(small_cancellation), small, near)
    positive, positive_ok = _positive_series_beyond(a, b, c, x)
    transformed = jnp.where(~jnp.isfinite(small_cancellation) & positive_ok, positive,
                            transformed)
    # a terminating series is summed as it is unless its terms cancel
    use_direct = terminating & ((jnp.abs(x) <= 0.5) | (_cancellation(direct, direct_size) < 100))
    return jnp.where(use_direct, direct, transformed)


def _hyp2f1_values(a, b, c, x):
    below_one = x < 1
    value = _hyp2f1(a, b, _off_poles(c), jnp.where(below_one, x, 0.0))
    # Gauss's sum at x = 1 where it converges (c - a - b > 0), inf otherwise and beyond
    gauss = _gamma_ratio([c, c - a - b], [c - a, c - b])
    at_one = jnp.where(c - a - b > 0, gauss, np.inf)
    value = jnp.where(below_one, value, jnp.where(x == 1, at_one, np.inf))
    value = jnp.where(_is_nonpositive_integer(c), np.inf, value)
    return jnp.where(jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(c) | jnp.isnan(x), np.nan, value)


_hyp2f1_jvp = _with_derivatives(
    _hyp2f1_values, lambda a, b, c, x: a * b / c * _hyp2f1_jvp(a + 1, b + 1, c + 1, x))


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k!,
    elementwise with broadcasting, for real arguments and x <= 1.

    For -1 <= x <= 1/2 the series (150 terms) is summed in whichever valid form cancels
    least: as it is or by Euler's transformation (1-x)^(c-a-b) 2F1(c-a, c-b; c; x) for
    |x| <= 1/2, by Pfaff's (1-x)^-a 2F1(a, c-b; c; x/(x-1)) or its twin in b for x < 0
    (and any of them up to an argument of 3/4 where its terms are positive). 1/2 < x < 1
    uses the connection formula in 1 - x, x < -1 Pfaff's transformation then that formula
    in 1/(1-x). Where the formula's c - a - b (after Pfaff's, b - a) is an integer its
    limit is used (Abramowitz & Stegun 15.3.10-12, with logarithms and digammas), for
    integers up to 40; within 1/8 of an integer, that limit's uniform form in the distance
    e (Buhring's, Forrey's: the two terms' poles in e cancelled analytically, with Gamma
    ratios differenced by Stirling's series), which has no loss of 1/e. Where the formula's
    two terms cancel (arguments 3/4 to 9/10 of x or x/(x-1), i.e. x in (3/4, 9/10] or
    [-9, -3)), a form whose terms are all positive, if one is, is summed instead (500
    terms). x = 1 gives Gauss's sum where c - a - b > 0.

    Where the chosen form's terms cancel, its sum is carried in double-double arithmetic
    (with its parameters and argument unrounded), and that lets forms whose terms alternate
    serve up to an argument of 3/4 too where they converge.

    Accuracy in float64 against mpmath: 1e-13 relative for parameters in [-10, 10.5] and
    x in [-1.5, 1) (a and b both near -10 included; measured ~2e-14), for parameters in
    [-8, 5] at any x <= 1 (c - a - b at or near an integer included, however near; but
    ~2e-13 for a and b both negative at x in [-9, -3)), and for positive parameters up to
    10.5 at any x <= 9/10. Short of it: x in [-9, -3) or
    (9/10, 1) with parameters near 10 where no form has positive terms (e.g. a and b near
    -10, or c well below a and b) or beyond it (x near 1, or c ~ 20 with x below -9), where
    the connection formula's terms cancel by 1e3 to 1e6: up to ~1e-12, and ~1e-10 at c ~ 20
    (its Gamma functions' rounding, magnified); polynomial cases (a non-positive integer
    parameter) whose every form alternates, ~1e-12; c very near a pole; near zeros of
    2F1 the error is absolute. float32 computes in float32: a few ulps where float64 is at
    1e-14.

    As JAX: inf for x > 1 (where the function is complex), at x = 1 where it diverges, and
    where c is a non-positive integer. Unlike JAX (whose series is inaccurate below x = -1
    and near x = 1), the values here are accurate there, and nan propagates.
    """
    a, b, c, x = _real_args("hyp2f1", a, b, c, x)
    return _hyp2f1_jvp(a, b, c, x)
