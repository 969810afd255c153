"""The Gauss hypergeometric function 2F1(a, b; c; x) of real arguments."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from didax._src.core import Tracer, concrete_value, get_aval
from didax._src.lax import elementwise as lax
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.numpy import namespace as jnp
from didax._src.primitives.custom_derivatives import SymbolicZero, custom_jvp
from didax._src.scipy.double_double import (
    _PI,
    _dd,
    _dd_add,
    _dd_add_double,
    _dd_constant,
    _dd_div,
    _dd_exp_parts,
    _dd_log,
    _dd_mul,
    _dd_neg,
    _dd_scale,
    _dd_sin_pi,
    _dd_where,
    _two_sum,
)
from didax._src.scipy.hypergeometric import (
    _eps,
    _is_nonpositive_integer,
    _off_poles,
    _real_args,
    _summed_terms,
    _with_derivatives,
)
from didax._src.scipy.special import gammasgn
from didax._src.transforms.api import jvp

__all__ = ["hyp2f1"]


_SERIES_TERMS_2F1 = 150  # |z| <= 1/2: 2^-150 leaves room for the parameters' growth k^(a+b-c)
_MAX_CANCELLATION = 1e13  # (leaves 1e-19 of double-double's precision)
_FINITE_TERMS_2F1 = 40  # the finite sum of the degenerate case: c - a - b up to 40


def _series_2f1(a, b, c, z):
    """sum_k (a)_k (b)_k / (c)_k z^k / k!, for |z| <= 1/2 or a terminating series; with
    where its tail is below the rounding, and the sum of the terms' magnitudes (over the
    sum's, the factor by which cancellation magnifies the rounding)."""
    def step(k, state):
        term, total, magnitude = state
        term = term * ((a + k) * (b + k) / ((c + k) * (k + 1))) * z
        return term, total + term, magnitude + jnp.abs(term)

    term = jnp.ones_like(z)
    term, total, magnitude = _summed_terms(step, (term, term, term), _SERIES_TERMS_2F1,
                                           get_aval(z).dtype)
    k = _SERIES_TERMS_2F1
    falling = jnp.abs((a + k) * (b + k) * z) < jnp.abs((c + k) * (k + 1))
    converged = falling & (jnp.abs(term) <= _eps(z) * jnp.abs(total))
    return total, converged, magnitude


def _series_2f1_exact(a, b, c, z):
    """`_series_2f1`'s sum carried in double-double (a, b and z doubles or double-doubles),
    for the form chosen where every form cancels."""
    a, b, z = [v if isinstance(v, tuple) else _dd(v) for v in (a, b, z)]
    return _series_2f1_dd_short(*a, *b, *_dd(c), *z)


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
_DD_NEAR_INTEGER = 1e-9  # (used below this only: the connection formula in double-double
# loses 1/|c - a - b - n| of its ~1e-26 precision)
_TANGENT_NEAR_INTEGER = 1 / 32  # (the form's derivatives below this: measured, forward mode
# through the connection formula in double-double is the more accurate beyond)


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
    def step(k, state):
        total, difference, value = state
        total = total + (difference + power_difference * value)
        alpha, beta, gamma, eta = a + n + k, b + n + k, 1.0 + n + k, 1.0 + k - e
        at_zero = alpha * beta / (gamma * eta)
        at_e = (alpha + e) * (beta + e) / ((gamma + e) * (k + 1))
        change = ((alpha * beta * (gamma + eta + e) - gamma * eta * (alpha + beta + e))
                  / (gamma * eta * (gamma + e) * (k + 1)))
        return total, (difference * at_zero + value * change) * s, value * at_e * s

    total, difference, value = _summed_terms(
        step, (jnp.zeros_like(s), difference, value), _SERIES_TERMS_2F1, get_aval(s).dtype)
    sign = jnp.cos(np.pi * n)  # (-1)^n
    pi_e = np.pi * e
    infinite = sign * pi_e / jnp.sin(pi_e) * _gamma_ratio([c], [a, b]) * s ** n * total
    return finite + infinite


def _near_one(a, b, c, s):
    """2F1(a, b; c; 1 - s) for 0 < s <= 1/2; where c - a - b is a negative integer,
    Euler's transformation 2F1(a, b; c; x) = s^(c-a-b) 2F1(c-a, c-b; c; x) makes it positive.
    Where c - a - b is an integer and a or b, or c - a or c - b, a non-positive integer (the
    limit's poles), the function is a polynomial (times s^(c-a-b)), summed as such in the
    form whose terms cancel least. Within 1/8 of an integer, the limit's uniform form
    (`_near_integer`); with where c - a - b is an integer or, for that form, within
    `_DD_NEAR_INTEGER` of one (where the connection formula in double-double loses)."""
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
    flip = m < 0
    a2 = jnp.where(flip, c - a, a)
    b2 = jnp.where(flip, c - b, b)
    n = jnp.where(integer, jnp.abs(m), 0.0)
    usable = integer & ~_is_nonpositive_integer(a2) & ~_is_nonpositive_integer(b2)
    degenerate = _near_one_degenerate(jnp.where(usable, a2, 0.5), jnp.where(usable, b2, 0.5),
                                      n, jnp.where(integer, s, 0.25))
    degenerate = jnp.where(flip, s ** m, 1.0) * degenerate
    near, *_, e = _near_integer_parameters(a, b, c)
    value = jnp.where(integer, jnp.where(usable, degenerate, polynomial), _near_integer(a, b, c, s))
    return value, integer | (near & (jnp.abs(e) < _DD_NEAR_INTEGER))


def _near_integer_parameters(a, b, c):
    """Where c - a - b is within 1/8 of an integer (not on it) and the limit's uniform form
    has no poles (where it has, the connection formula is exact), after Euler's
    transformation where that integer is negative; with the form's a, b, n and e there."""
    m = c - a - b
    nearest = jnp.round(m)
    flip = nearest < 0
    a3 = jnp.where(flip, c - a, a)
    b3 = jnp.where(flip, c - b, b)
    near = ((m != nearest) & (jnp.abs(m - nearest) < _NEAR_INTEGER)
            & ~_is_nonpositive_integer(a3) & ~_is_nonpositive_integer(b3)
            & ~_is_nonpositive_integer(c - a3) & ~_is_nonpositive_integer(c - b3))
    n = jnp.where(near, jnp.abs(nearest), 0.0)
    e = jnp.where(near, (c - a3 - b3) - n, _NEAR_INTEGER / 2)
    return near, jnp.where(near, a3, 0.5), jnp.where(near, b3, 0.5), n, e


def _near_integer(a, b, c, s):
    """2F1(a, b; c; 1 - s) by the limit's uniform form (`_near_one_near_integer`) where
    `_near_integer_parameters` finds it serves."""
    near, a3, b3, n, e = _near_integer_parameters(a, b, c)
    m = c - a - b
    value = _near_one_near_integer(a3, b3, n, e, jnp.where(near, s, 0.25))
    return jnp.where(jnp.round(m) < 0, s ** m, 1.0) * value


def _least_cancelling(best, best_cancellation, chosen, cancellation):
    """Of the form kept so far (`best`, None at first) and `chosen`, elementwise, the one
    whose terms cancel less; with its cancellation."""
    if best is None:
        return chosen, cancellation
    better = cancellation < best_cancellation
    return (tuple(jnp.where(better, new, old) for new, old in zip(chosen, best)),
            jnp.where(better, cancellation, best_cancellation))


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
        best, best_cancellation = _least_cancelling(best, best_cancellation,
                                                    (*p, *q, *arg, factor, total), cancellation)
    p_hi, p_lo, q_hi, q_lo, arg_hi, arg_lo, factor, total = best
    # where the chosen form's terms cancel, its sum again in double-double
    cancels = (best_cancellation > 10) & jnp.isfinite(best_cancellation)
    (exact,) = _where_needed(lambda *args: (_series_2f1_dd_short(*args),), cancels, p_hi, p_lo,
                             q_hi, q_lo, *_dd(c), arg_hi, arg_lo, safe=_SAFE_SERIES)
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
    def step(k, state):
        term, total = state
        term = term * ((p + k) * (q + k) / ((c + k) * (k + 1))) * z
        return term, total + term

    term = jnp.ones_like(x)
    term, total = _summed_terms(step, (term, term), _LONG_TERMS, get_aval(x).dtype)
    converged = found & (term <= _eps(x) * total)
    converged = converged & ((p + _LONG_TERMS) * (q + _LONG_TERMS) * z
                             < (c + _LONG_TERMS) * (_LONG_TERMS + 1))
    # the forms' factors: 1, (1-x)^(c-a-b), (1-x)^-a, (1-x)^-b
    euler = (z == x) & ((p != a) | (q != b))
    exponent = jnp.where(z == x, jnp.where(euler, c - a - b, 0.0), -jnp.where(p == a, a, b))
    return (1 - x) ** exponent * total, converged


_DD_REACH = 0.95  # (arguments up to which a series summed in double-double serves, in
_DD_TERMS = 1000  # these terms, where it converges within them and cancels by less than
_DD_CANCELLATION = 0.2  # this over the dtype's eps: 1e15 in float64, double-double's
# rounding accumulated over the terms)


def _repeat(terms, step, carry, done):
    """carry = step(k, carry) for k < terms, stopping once done(k, carry) holds everywhere
    (the terms left below the rounding): on concrete arrays a loop of NumPy operations
    (fewer, cheaper dispatches), checked every 16 steps; on traced ones a `while_loop`
    (one traced step)."""
    if any(isinstance(v, Tracer) for v in carry):
        def going(state):
            k, carry = state
            return (k < terms) & ~jnp.all(done(k, carry))

        def next_state(state):
            k, carry = state
            return k + 1.0, step(k, carry)

        zero = jnp.zeros((), get_aval(carry[0]).dtype)
        return while_loop(going, next_state, (zero, tuple(carry)))[1]
    carry = tuple(np.asarray(concrete_value(v)) for v in carry)
    for k in range(terms):
        carry = step(float(k), carry)
        if k % 16 == 15 and np.all(done(k + 1.0, carry)):
            break
    return tuple(jnp.asarray(v) for v in carry)


def _tail_below(p, q, c, z, k, term, total, eps):
    """Whether the series' terms from k on fall and are below eps of its sum."""
    falling = abs((p + k) * (q + k) * z) < abs((c + k) * (k + 1))
    return falling & (abs(term) <= eps * abs(total))


def _series_2f1_estimate(p, q, c, z, terms):
    """`_series_2f1` over `terms` terms in a loop: its sum, whether it converged, and its
    terms' magnitudes summed."""
    def step(k, carry):
        p, q, c, z, term, total, magnitude = carry
        term = term * ((p + k) * (q + k) / ((c + k) * (k + 1))) * z
        return p, q, c, z, term, total + term, magnitude + abs(term)

    one = jnp.ones_like(z)
    *_, term, total, magnitude = _repeat(
        terms, step, (p, q, c, z, one, one, one),
        lambda k, v: _tail_below(*v[:4], k, v[4], v[5], 0.1 * _eps(z)))
    falling = jnp.abs((p + terms) * (q + terms) * z) < jnp.abs((c + terms) * (terms + 1))
    converged = falling & (jnp.abs(term) <= _eps(z) * jnp.abs(total))
    return total, converged, magnitude


def _series_2f1_dd_sums(p, q, c, z, terms, wanted=(), tail=0.1):
    """The series summed in double-double in a loop (p, q, c and z double-doubles): a
    rounding 1e-32 of the terms' magnitudes, its tail left once below `tail` eps of the sum
    (eps^2 with `tail` None); with the terms' magnitudes summed, and the last term. With
    `wanted` (some of "p", "q", "c", "z"), also its derivatives in those, summed alike
    (forward mode through the double-double operations would carry them in double, with the
    sum's cancellation magnifying their rounding): sum_k t_k H_k(p), sum_k t_k H_k(q),
    -sum_k t_k H_k(c) and sum_k k t_k / z, where H_k(v) = sum_{j<k} 1/(v + j). Past a zero
    factor p + j (p a non-positive integer) the terms vanish but not their derivatives in p:
    those are the terms with that factor taken as 1."""
    base = 19  # (the carry's entries before the derivatives')
    # per derivative: its entries' count (H_k; the sum; in p and q the terms with the zero
    # factor taken as 1 and whether it has passed)
    widths = {"p": 7, "q": 7, "c": 4, "z": 2}
    starts, at = {}, base
    for name in wanted:
        starts[name], at = at, at + widths[name]

    def step(k, carry):
        p, q, c, z, term, total = carry[:2], carry[2:4], carry[4:6], carry[6:8], carry[8:10], \
            carry[10:12]
        # (p+k)(q+k) and (c+k)(k+1), by their differences p + q + 2k + 1 and c + 2k + 2
        pq, pq_step, ck = carry[12:14], carry[14:16], carry[16:18]
        new_term = _dd_div(_dd_mul(term, _dd_mul(pq, z)), ck)
        out = [*p, *q, *c, *z, *new_term, *_dd_add(total, new_term),
               *_dd_add_double(_dd_add(pq, pq_step), 2 * k + 1), *pq_step,
               *_dd_add_double(_dd_add(ck, c), 2 * k + 2), carry[18] + abs(new_term[0])]
        kk = c[0] * 0 + k
        factors = {"p": _dd_add_double(p, kk), "q": _dd_add_double(q, kk),
                   "c": _dd_add_double(c, kk)}
        for name in wanted:
            i = starts[name]
            if name == "z":
                out += _dd_add(carry[i:i + 2], _dd_mul(new_term, (kk + 1, kk * 0)))
                continue
            v = factors[name]
            zero = v[0] == 0
            harmonic = _dd_add(carry[i:i + 2], _dd_div(
                (jnp.where(zero, 0.0, 1.0), kk * 0), (jnp.where(zero, 1.0, v[0]), v[1])))
            weighted = _dd_mul(new_term, harmonic)
            extra = []
            if name in "pq":
                # (the terms with the factor v + j = 0 taken as 1; from there on `passed`)
                other = factors["q" if name == "p" else "p"]
                rest = _dd_div(_dd_mul(_dd_mul((jnp.where(zero, 1.0, v[0]), v[1]), other), z),
                               _dd_mul(factors["c"], (kk + 1, kk * 0)))
                zeroed = _dd_mul(carry[i + 4:i + 6], rest)
                passed = carry[i + 6] + zero
                weighted = tuple(jnp.where(passed > 0, u, w) for u, w in zip(zeroed, weighted))
                extra = [*zeroed, passed]
            out += [*harmonic, *_dd_add(carry[i + 2:i + 4], weighted), *extra]
        return tuple(out)

    one, zero = jnp.ones_like(c[0]), jnp.zeros_like(c[0])
    carry = [*p, *q, *c, *z, one, zero, one, zero, *_dd_mul(p, q), *_dd_add(p, q), *c, one]
    for name in wanted:
        carry += [zero] * widths[name]
        if name in "pq":
            carry[starts[name] + 4] = one

    tolerance = _eps(c[0]) ** 2 if tail is None else tail * _eps(c[0])

    def done(k, v):
        below = _tail_below(v[0], v[2], v[4], v[6], k, v[8], v[10], tolerance)
        for name in wanted:  # (and the terms with a zero factor taken as 1)
            if name in "pq":
                i = starts[name]
                below = below & (abs(v[i + 4]) <= tolerance * abs(v[i + 2]))
        return below

    carry = _repeat(terms, step, tuple(carry), done)
    total, sizes = (carry[10], carry[11]), (carry[18], abs(carry[8]))
    if not wanted:
        return total, sizes
    sums = {name: carry[starts[name] + (0 if name == "z" else 2)]
            + carry[starts[name] + (1 if name == "z" else 3)] for name in wanted}
    if "c" in sums:
        sums["c"] = -sums["c"]
    if "z" in sums:
        sums["z"] = sums["z"] / jnp.where(z[0] == 0, 1.0, z[0])
    return total, sizes, sums


def _series_2f1_dd_fn(terms, tail=0.1, pair=False):
    """`_series_2f1_dd_sums` over up to `terms` terms, with its derivatives (in p, q, c, z;
    each given as its double-double pair) by its own sums, those only whose tangents are
    not zero; its sum rounded, or with `pair` as its double-double pair followed by the
    terms' magnitudes summed and the last term's."""
    @custom_jvp
    def series(p_hi, p_lo, q_hi, q_lo, c_hi, c_lo, z_hi, z_lo):
        total, sizes = _series_2f1_dd_sums((p_hi, p_lo), (q_hi, q_lo), (c_hi, c_lo),
                                           (z_hi, z_lo), terms, tail=tail)
        return (*total, *sizes) if pair else total[0] + total[1]

    def series_jvp(primals, tangents):
        p_hi, p_lo, q_hi, q_lo, c_hi, c_lo, z_hi, z_lo = primals
        moving = {name: [t for t in ts if not isinstance(t, SymbolicZero)] for name, ts in
                  [("p", tangents[0:2]), ("q", tangents[2:4]), ("c", tangents[4:6]),
                   ("z", tangents[6:8])]}
        wanted = tuple(name for name, ts in moving.items() if ts)
        total, sizes, sums = _series_2f1_dd_sums((p_hi, p_lo), (q_hi, q_lo), (c_hi, c_lo),
                                                 (z_hi, z_lo), terms, wanted, tail)
        tangent = jnp.zeros_like(total[0])
        for name in wanted:
            tangent = tangent + sums[name] * sum(moving[name])
        if pair:
            zero = jnp.zeros_like(tangent)
            return (*total, *sizes), (tangent, zero, zero, zero)
        return total[0] + total[1], tangent

    series.defjvp(series_jvp, symbolic_zeros=True)
    return series


_series_2f1_dd = _series_2f1_dd_fn(_DD_TERMS)
_series_2f1_dd_short = _series_2f1_dd_fn(2 * _SERIES_TERMS_2F1)  # (arguments to 3/4)


def _double_double_beyond(a, b, c, x):
    """2F1 for x in (1/2, 19/20] (as it is, or Euler's form) or x in [-19, -1) (Pfaff's two
    forms in w = x/(x-1)), in the form whose terms cancel least, summed in double-double
    with its parameters and argument unrounded; with where that converged and cancels by
    less than `_DD_CANCELLATION` / eps."""
    inside = (x > 0.5) & (x <= _DD_REACH)
    w_raw = x / (x - 1)
    outside = (x < -1) & (w_raw <= _DD_REACH)
    z = _dd(jnp.where(inside, x, 0.0))
    w = _dd_div(_dd(x), _two_sum(x, -jnp.ones_like(x)))
    w = tuple(jnp.where(outside, v, 0.0) for v in w)
    c_a, c_b = _two_sum(c, -a), _two_sum(c, -b)
    forms = [(_dd(a), _dd(b), z, inside, jnp.zeros_like(x)), (c_a, c_b, z, inside, c - a - b),
             (_dd(a), c_b, w, outside, -a), (_dd(b), c_a, w, outside, -b)]
    # (the four forms' estimates in one loop)
    totals, converged, sizes = _series_2f1_estimate(
        *[jnp.stack([form[i][0] for form in forms]) for i in range(2)],
        jnp.broadcast_to(c, (4,) + jnp.shape(c)), jnp.stack([form[2][0] for form in forms]),
        _DD_TERMS)
    best = best_cancellation = None
    for i, (p, q, arg, valid, exponent) in enumerate(forms):
        cancellation = jnp.where(valid & converged[i], _cancellation(totals[i], sizes[i]),
                                 np.inf)
        best, best_cancellation = _least_cancelling(best, best_cancellation,
                                                    (*p, *q, *arg, exponent), cancellation)
    p_hi, p_lo, q_hi, q_lo, arg_hi, arg_lo, exponent = best
    ok = best_cancellation < _DD_CANCELLATION / _eps(x)
    (total,) = _where_needed(lambda *args: (_series_2f1_dd(*args),), ok, p_hi, p_lo, q_hi,
                             q_lo, *_dd(c), arg_hi, arg_lo, safe=_SAFE_SERIES)
    return (1 - x) ** exponent * total, ok


_C_ABOVE = 24  # (steps beyond those needed: the further up, the more the other solution
_C_STEPS = 72  # has decayed; c - b up to 47)
_C_CHECK = 8  # (a second recurrence from that many steps higher: where the seeds' errors
_C_AGREEMENT = 450  # are magnified, or the steps cancel beyond double-double's reach,
# the two disagree by more than this many eps: 1e-13 in float64)
_RAISED_REACH = 0.98  # (Pfaff's argument up to which its series of positive terms serves,
_RAISED_TERMS = 2500  # in these terms)


def _raised_c(a, b, c, x):
    """2F1 for x in [-49, -1) where a or b is positive (say a, b the other; where neither
    is, after Euler's transformation, in c - a and c - b) by Gauss's contiguous relation in
    c, c(c-1)(x-1) F(c-1) + c(c-1-(2c-a-b-1)x) F(c) + (c-a)(c-b) x F(c+1) = 0, down from
    c' = c + n past b and 0 (and `_C_ABOVE` more), where Pfaff's form
    (1-x)^-a 2F1(a, c'-b; c'; x/(x-1)) has positive terms. For x < 1/2, 2F1 is the
    recurrence's minimal solution as c grows, so going down the seeds' errors shrink; where
    they do not (near a zero in c of 2F1, or within the first steps) the run from
    `_C_CHECK` steps higher disagrees. With where the seeds converged and the two runs
    agree (and c - b, c within the steps' reach)."""
    euler = jnp.maximum(a, b) <= 0  # (then Euler's parameters c - a, c - b, where one is
    exponent = jnp.where(euler, c - a - b, 0.0)  # positive)
    a, b = jnp.where(euler, c - a, a), jnp.where(euler, c - b, b)
    first_a = a >= b
    p, other = jnp.where(first_a, a, b), jnp.where(first_a, b, a)
    steps = jnp.maximum(jnp.floor(jnp.maximum(other, 0.0) - c) + 1, 0.0) + _C_ABOVE
    top = c + steps
    w = x / (x - 1)
    # (the seeds of the two recurrences, from c + steps and c + steps + _C_CHECK, in one loop)
    tops = [top, top + 1, top + _C_CHECK, top + _C_CHECK + 1]
    seeds, converged, _ = _series_2f1_estimate(
        jnp.stack([p] * 4), jnp.stack([t - other for t in tops]), jnp.stack(tops),
        jnp.stack([w] * 4), _RAISED_TERMS)
    values = _down_in_c(*[jnp.stack([v, v]) for v in (a, b, c, x)],
                        jnp.stack([steps, steps + _C_CHECK]), seeds[0::2], seeds[1::2])
    value = values[0]
    agree = jnp.abs(values[1] - value) <= _C_AGREEMENT * _eps(x) * jnp.abs(value)
    ok = jnp.all(converged, axis=0) & (p > 0) & (steps < _C_STEPS) & agree
    return (1 - x) ** (exponent - p) * value, ok


def _raised_c_either(a, b, c, x):
    """`_raised_c` below -1, and for x in (1/2, 49/50] after Pfaff's transformation
    (1-x)^-a 2F1(a, c-b; c; x/(x-1)) (its argument below -1), in a or in b."""
    pfaff = x > 0.5
    in_a = (jnp.maximum(a, c - b) > 0) | (c > jnp.minimum(a, c - b))
    p = jnp.where(pfaff & ~in_a, b, a)
    q = jnp.where(pfaff, jnp.where(in_a, c - b, c - a), b)
    value, ok = _raised_c(p, q, c, jnp.where(pfaff, x / (x - 1), x))
    return jnp.where(pfaff, (1 - x) ** -p, 1.0) * value, ok


def _neg(v):
    return -v[0], -v[1]


def _c_step_coefficients(v, a, b, x, derivatives):
    """The contiguous relation's coefficients at v (a double-double), in double-double:
    F(v-1) = (L F(v) + U F(v+1)) / D, with L = -v(v-1-(2v-a-b-1)x), U = -(v-a)(v-b)x,
    D = v(v-1)(x-1); with `derivatives`, also theirs in a, b, x and v (each a list in that
    order)."""
    x_dd, zero = (x, x * 0), x * 0
    v_1 = _dd_add_double(v, -1.0)
    inner = _dd_add_double(_dd_add_double(_dd_add_double((2 * v[0], 2 * v[1]), -a), -b), -1.0)
    bracket = _dd_add(v_1, _neg(_dd_mul(inner, x_dd)))  # v - 1 - (2v-a-b-1)x
    v_a, v_b = _dd_add_double(v, -a), _dd_add_double(v, -b)
    x_1 = _two_sum(x, -1.0)
    lower = _neg(_dd_mul(v, bracket))
    upper = _neg(_dd_mul(_dd_mul(v_a, v_b), x_dd))
    den = _dd_mul(_dd_mul(v, v_1), x_1)
    if not derivatives:
        return lower, upper, den
    v_x = _neg(_dd_mul(v, x_dd))
    one_2x = _two_sum(1.0 + zero, -2 * x)  # (2x exact)
    d_lower = [v_x, v_x, _dd_mul(v, inner), _neg(_dd_add(bracket, _dd_mul(v, one_2x)))]
    d_upper = [_dd_mul(v_b, x_dd), _dd_mul(v_a, x_dd), _neg(_dd_mul(v_a, v_b)),
               _neg(_dd_mul(_dd_add(v_a, v_b), x_dd))]
    d_den = [(zero, zero), (zero, zero), _dd_mul(v, v_1),
             _dd_mul(_dd_add_double((2 * v[0], 2 * v[1]), -1.0), x_1)]
    return lower, upper, den, d_lower, d_upper, d_den


def _down_in_c_sums(a, b, c, x, steps, lower, upper, derivatives):
    """F(c) from F(c + steps) = lower and F(c + steps + 1) = upper by the contiguous
    relation, in double-double (with its coefficients unrounded: a step's terms may
    cancel). With `derivatives`, also its derivatives in the seeds (the solutions from the
    unit seeds) and in a, b, x and c at fixed seeds, each carried by its own recurrence
    (forward mode through the double-double operations would carry them in double)."""
    def step(i, carry):
        a, b, c, x, steps = carry[:5]
        moving = i < steps
        v = _two_sum(c, steps - i)  # F(v - 1) from F(v) and F(v + 1)
        lower_w, upper_w, den, *d_coefficients = _c_step_coefficients(v, a, b, x, derivatives)
        den = (jnp.where(moving, den[0], 1.0), jnp.where(moving, den[1], 0.0))
        pairs = [(carry[j:j + 2], carry[j + 2:j + 4]) for j in range(5, len(carry), 4)]
        new = [_dd_div(_dd_add(_dd_mul(lower_w, lo), _dd_mul(upper_w, up)), den)
               for lo, up in pairs[:3]]  # (F, and the unit seeds' solutions)
        (f_lo, f_up), f_new = pairs[0], new[0]
        d_lower, d_upper, d_den = d_coefficients if derivatives else (None,) * 3
        for k, (g_lo, g_up) in enumerate(pairs[3:]):
            # d/dt F(v-1) = (L' F(v) + L G(v) + U' F(v+1) + U G(v+1) - D' F(v-1)) / D
            terms = [_dd_mul(d_lower[k], f_lo), _dd_mul(lower_w, g_lo), _dd_mul(d_upper[k], f_up),
                     _dd_mul(upper_w, g_up), _neg(_dd_mul(d_den[k], f_new))]
            total = terms[0]
            for t in terms[1:]:
                total = _dd_add(total, t)
            new.append(_dd_div(total, den))
        out = []
        for (lo, up), n in zip(pairs, new):
            out += [jnp.where(moving, n[0], lo[0]), jnp.where(moving, n[1], lo[1]),
                    jnp.where(moving, lo[0], up[0]), jnp.where(moving, lo[1], up[1])]
        return (a, b, c, x, steps, *out)

    one, zero = jnp.ones_like(x), jnp.zeros_like(x)
    sequences = [(lower, upper)] + ([(one, zero), (zero, one)] + [(zero, zero)] * 4
                                    if derivatives else [])
    carry = (a, b, c, x, steps) + tuple(v for lo, up in sequences for v in (lo, zero, up, zero))
    carry = _repeat(_C_STEPS + _C_CHECK, step, carry, lambda i, v: i >= v[4])
    if not derivatives:
        return carry[5] + carry[6]
    return [carry[5 + 4 * j] + carry[6 + 4 * j] for j in range(7)]


@custom_jvp
def _down_in_c(a, b, c, x, steps, lower, upper):
    return _down_in_c_sums(a, b, c, x, steps, lower, upper, False)


@_down_in_c.defjvp
def _down_in_c_jvp(primals, tangents):
    value, from_lower, from_upper, d_a, d_b, d_x, d_c = _down_in_c_sums(*primals, True)
    t_a, t_b, t_c, t_x, _, t_lower, t_upper = tangents
    return value, (d_a * t_a + d_b * t_b + d_c * t_c + d_x * t_x + from_lower * t_lower
                   + from_upper * t_upper)


_SAFE_POINT = (0.5, 0.25, 1.5, -2.0)  # (a, b, c, x where every method's steps are finite)
_SAFE_SERIES = (0.5, 0.0, 0.25, 0.0, 1.5, 0.0, 0.0, 0.0)  # (p, q, c, z of a series, each
# in double-double)


def _where_needed(fn, needed, *args, safe=_SAFE_POINT):
    """fn(*args) (elementwise, returning a tuple of arrays) where `needed`, zeros elsewhere.
    Where `needed` is known (eagerly, and in forward mode on known values), fn sees only
    the elements needed; where it is not (under jit or vmap), all of them, with the
    arguments replaced by `safe` where not needed (so that their derivatives, which reverse
    mode multiplies by zero, are finite)."""
    mask = needed.to_concrete_value() if isinstance(needed, Tracer) else concrete_value(needed)
    if mask is None:
        return fn(*[jnp.where(needed, v, s) for v, s in zip(args, safe)])
    mask = np.asarray(mask)
    shape = mask.shape
    index = np.flatnonzero(mask)
    if not any(isinstance(v, Tracer) for v in args):  # (NumPy's indexing: no dispatches)
        args = [np.asarray(concrete_value(v)).ravel() for v in args]
    else:
        args = [jnp.ravel(v) for v in args]
    outs = fn(*[v[index] for v in args])
    full = []
    for out in outs:
        filled = jnp.zeros(mask.size, get_aval(out).dtype).at[index].set(out)
        full.append(jnp.reshape(filled, shape))
    return tuple(full)


def _hyp2f1(a, b, c, x):
    """2F1 for x < 1 and c not a pole: a series form (`_small_argument`) where one is valid,
    else the first of these that serves: a longer series of positive terms
    (`_positive_series_beyond`), a series that alternates summed in double-double
    (`_double_double_beyond`), the connection formula in double-double where within its
    precision (`_connection_dd`), Gauss's recurrence in c from a form of positive terms
    (`_raised_c_either`), the connection formula's limits (`_connection_limits`) or the
    connection formula all the same; a terminating series is summed as it is (in
    double-double where its terms cancel).
    Each method runs only on the elements it is tried on, where that is known."""
    terminating = ((_is_nonpositive_integer(a) & (a > -_SERIES_TERMS_2F1))
                   | (_is_nonpositive_integer(b) & (b > -_SERIES_TERMS_2F1)))
    direct, _, direct_size = _series_2f1(a, b, c, jnp.where(terminating, x, 0.0))
    small, small_cancellation = _small_argument(a, b, c, x)
    value, done = small, jnp.isfinite(small_cancellation)
    connection = None
    for method, where in [
            # a longer series of positive terms
            (_positive_series_beyond, True),
            # a series that alternates, summed in double-double
            (_double_double_beyond, ((x > 0.5) & (x <= _DD_REACH))
             | ((x < -1) & (x / (x - 1) <= _DD_REACH))),
            # the connection formula in double-double, where within its precision
            (_connection_dd, True),
            # Gauss's recurrence in c from a form of positive terms (below -1; above 1/2
            # after Pfaff's transformation)
            (_raised_c_either, ((x < -1) & (x / (x - 1) <= _RAISED_REACH))
             | ((x > 0.5) & (x <= _RAISED_REACH)))]:
        needed = ~done & where
        found, ok = _where_needed(method, needed, a, b, c, x)
        value = jnp.where(needed & ok, found, value)
        done = done | (needed & ok)
        if method is _connection_dd:
            connection = found
    # the rest: the connection formula's limits where c - a - b is (nearly) an integer, else
    # the connection formula all the same
    limit, special = _where_needed(_connection_limits, ~done, a, b, c, x)
    value = jnp.where(done, value, jnp.where(special, limit, connection))
    # a terminating series is summed as it is, in double-double where its terms cancel
    # (unless beyond double-double's reach: then the other methods' value)
    cancellation = _cancellation(direct, direct_size)
    exact_direct = terminating & (cancellation > 10) & (cancellation < _MAX_CANCELLATION)
    (exact,) = _where_needed(lambda *args: (_series_2f1_dd_short(*args),), exact_direct,
                             *_dd(a), *_dd(b), *_dd(c), *_dd(x), safe=_SAFE_SERIES)
    direct = jnp.where(exact_direct, exact, direct)
    return jnp.where(terminating & (cancellation < _MAX_CANCELLATION), direct, value)


_STIRLING_DD_FROM = 20  # (from there Stirling's series to B_20 / (20 19 z^19) is within 1e-26
_STIRLING_DD = [Fraction(1, 12), Fraction(-1, 360), Fraction(1, 1260),  # of log Gamma)
                Fraction(-1, 1680), Fraction(1, 1188), Fraction(-691, 360360), Fraction(1, 156),
                Fraction(-3617, 122400), Fraction(43867, 244188), Fraction(-174611, 125400)]
_HALF_LOG_TWO_PI = "0.91893853320467274178032973640561763986139747363778341281715"


def _log_gamma_dd(v):
    """log |Gamma(v)| of double-doubles v (not poles), in double-double, and Gamma's sign:
    below 1/2 by the reflection formula Gamma(v) = pi / (sin(pi v) Gamma(1 - v)), up to 20 by
    the recurrence (its product in double-double), and there Stirling's series."""
    one, zero = jnp.ones_like(v[0]), jnp.zeros_like(v[0])
    reflect = v[0] < 0.5
    w = _dd_where(reflect, _dd_add_double(_dd_neg(v), 1.0), v)
    product, z = (one, zero), w  # Gamma(w) = Gamma(z) / product
    for _ in range(_STIRLING_DD_FROM):
        low = z[0] < _STIRLING_DD_FROM
        product = _dd_where(low, _dd_mul(product, z), product)
        z = _dd_where(low, _dd_add_double(z, 1.0), z)
    n = jnp.round(v[0])
    sine = _dd_sin_pi(_dd_add_double(v, -n))  # sin(pi v) (-1)^n, its argument exact
    sine_sign = jnp.where(sine[0] < 0, -1.0, 1.0)
    sign = jnp.where(reflect, sine_sign * (1 - 2 * (n - 2 * jnp.floor(n / 2))), 1.0)
    # log |Gamma(v)| = log Gamma(z) - log q, or after the reflection -log Gamma(z) - log q
    pi = _dd_constant(_PI, zero)
    q = _dd_where(reflect, _dd_div((sine_sign * sine[0], sine_sign * sine[1]),
                                   _dd_mul(product, pi)), product)
    logs = _dd_log((jnp.stack([z[0], q[0]]), jnp.stack([z[1], q[1]])))
    log_z, log_q = (logs[0][0], logs[1][0]), (logs[0][1], logs[1][1])
    y = _dd_div((one, zero), z)
    y2 = _dd_mul(y, y)
    series = _dd_constant(_STIRLING_DD[-1], zero)
    for coefficient in _STIRLING_DD[-2::-1]:
        series = _dd_add(_dd_mul(series, y2), _dd_constant(coefficient, zero))
    log_gamma = _dd_add(_dd_add(_dd_mul(_dd_add_double(z, -0.5), log_z), _dd_neg(z)),
                        _dd_add(_dd_mul(series, y), _dd_constant(_HALF_LOG_TWO_PI, zero)))
    return _dd_add(_dd_where(reflect, _dd_neg(log_gamma), log_gamma), _dd_neg(log_q)), sign


def _is_nonpositive_integer_dd(v):
    return _is_nonpositive_integer(v[0]) & (v[1] == 0)


# (its tail past eps^2 of the sum: the two terms' cancellation may use that precision)
_series_2f1_connection = _series_2f1_dd_fn(2 * _SERIES_TERMS_2F1, tail=None, pair=True)


def _connection_dd_sized(a, b, c, x):
    """2F1(a, b; c; 1 - s) = Gamma(c) Gamma(m) / (Gamma(c-a) Gamma(c-b)) 2F1(a, b; 1-m; s) +
    s^m Gamma(c) Gamma(-m) / (Gamma(a) Gamma(b)) 2F1(c-a, c-b; 1+m; s) (the connection
    formula, for m = c - a - b not an integer) in s = 1 - x above 1/2, and below -1 after
    Pfaff's transformation (in s = 1/(1-x), with b' = c - b and m = b - a), all in
    double-double: where its two terms cancel (near a zero of 2F1, or near an integer m,
    whose poles the terms share) their rounding in double would be magnified, and that of
    their Gamma functions (lgamma's rounding is relative to its value, up to 1e-14 of Gamma)
    even where they do not. Its parameters and s are unrounded; each term is exp(the log of
    its Gamma functions and powers) times its series. With its error, estimated from its
    terms' sizes and its series', relative to its value (inf within `_DD_NEAR_INTEGER` of
    an integer m)."""
    dtype_eps = _eps(x)
    zero = jnp.zeros_like(x)
    pfaff = x < 0
    m_double = jnp.where(pfaff, b - a, c - a - b)
    near_integer = jnp.abs(m_double - jnp.round(m_double)) < _DD_NEAR_INTEGER
    a, b, c, x = [jnp.where(near_integer, safe, v) for v, safe in zip((a, b, c, x), _SAFE_POINT)]
    pfaff = x < 0
    one_minus_x = _two_sum(1.0 + zero, -x)  # (exact)
    s = _dd_where(pfaff, _dd_div((1.0 + zero, zero), one_minus_x), one_minus_x)
    c_a, c_b = _two_sum(c, -a), _two_sum(c, -b)
    b2 = _dd_where(pfaff, c_b, _dd(b))
    c_b2 = _dd_where(pfaff, _dd(b), c_b)
    m = _dd_where(pfaff, _two_sum(b, -a), _dd_add_double(c_a, -b))
    # Gamma of c, m, c - a, c - b', -m, a and b' (a denominator's pole: its term is 0)
    args = [_dd(c), m, c_a, c_b2, _dd_neg(m), _dd(a), b2]
    poles = [_is_nonpositive_integer_dd(v) for v in args]
    args = [_dd_where(pole, (0.5 + zero, zero), v) for v, pole in zip(args, poles)]
    logs, signs = _log_gamma_dd(tuple(jnp.stack([v[i] for v in args]) for i in range(2)))
    log_gamma = [(logs[0][i], logs[1][i]) for i in range(len(args))]
    log_s = _dd_log(s)
    first = _dd_add(_dd_add(log_gamma[0], log_gamma[1]),
                    _dd_neg(_dd_add(log_gamma[2], log_gamma[3])))
    second = _dd_add(_dd_add(_dd_add(log_gamma[0], log_gamma[4]),
                             _dd_neg(_dd_add(log_gamma[5], log_gamma[6]))), _dd_mul(m, log_s))
    # Pfaff's factor (1 - x)^-a = s^a
    power = _dd_mul(_dd(jnp.where(pfaff, a, 0.0)), log_s)
    first, second = _dd_add(first, power), _dd_add(second, power)
    # the factors as m 2^k, scaled by the larger 2^k (the terms may overflow where their sum
    # does not, and double-double's products overflow already at 1/2^27 of the largest double)
    factors, powers = _dd_exp_parts((jnp.stack([first[0], second[0]]),
                                     jnp.stack([first[1], second[1]])))
    top = jnp.max(powers, axis=0)
    factors = _dd_scale(factors, powers - top)
    one_m = _dd_add_double(_dd_neg(m), 1.0)
    one_p = _dd_add_double(m, 1.0)
    *series, magnitude, last = _series_2f1_connection(
        *[jnp.stack([u[i], v[i]]) for u, v in [(_dd(a), c_a), (b2, c_b2), (one_m, one_p), (s, s)]
          for i in range(2)])
    sign = jnp.stack([signs[0] * signs[1] * signs[2] * signs[3] * ~(poles[2] | poles[3]),
                      signs[0] * signs[4] * signs[5] * signs[6] * ~(poles[5] | poles[6])])
    terms = _dd_mul(factors, series)
    terms = (terms[0] * sign, terms[1] * sign)
    value = _dd_add((terms[0][0], terms[1][0]), (terms[0][1], terms[1][1]))
    # the error: the Gamma functions' and powers' (Stirling's series' 1e-26 and the
    # rounding), the series' rounding over their terms and their tails
    scale = jnp.abs(factors[0] * sign)
    error = jnp.sum((1e-25 + 100 * dtype_eps ** 2) * jnp.abs(terms[0])
                    + scale * (1000 * dtype_eps ** 2 * magnitude + 2 * last), axis=0)
    relative = error / jnp.abs(jnp.where(value[0] == 0, 1.0, value[0]))
    relative = jnp.where(near_integer | (value[0] == 0), np.inf, relative)
    value = _dd_scale(value, top)
    return value[0] + value[1], relative


@custom_jvp
def _connection_dd_values(a, b, c, x):
    return _connection_dd_sized(a, b, c, x)


@_connection_dd_values.defjvp
def _connection_dd_jvp(primals, tangents):
    """Within `_TANGENT_NEAR_INTEGER` of an integer m, the derivatives of the limit's
    uniform form: forward mode through the connection formula carries its two terms'
    derivatives in double, and their poles in m (of second order in the derivatives in c)
    cancel."""
    (value, error), (tangent, _) = jvp(_connection_dd_sized, primals, tangents)
    a, b, c, x = primals
    near, *_, e = _near_integer_parameters(a, jnp.where(x < 0, c - b, b), c)
    near = near & (jnp.abs(e) < _TANGENT_NEAR_INTEGER)
    _, near_tangent = jvp(_connection_near_integer, primals, tangents)
    return (value, error), (jnp.where(near, near_tangent, tangent), jnp.zeros_like(error))


def _connection_near_integer(a, b, c, x):
    """`_near_integer` in 1 - x above 1/2, and after Pfaff's transformation (in 1/(1-x))
    below -1."""
    pfaff = x < 0
    s = jnp.clip(jnp.where(pfaff, 1 / (1 - x), 1 - x), np.finfo(get_aval(x).dtype).tiny, 0.5)
    return (jnp.where(pfaff, (1 - x) ** -a, 1.0)
            * _near_integer(a, jnp.where(pfaff, c - b, b), c, s))


def _connection_dd(a, b, c, x):
    """`_connection_dd_sized`'s value, and where its error is below the dtype's rounding."""
    value, error = _connection_dd_values(a, b, c, x)
    return value, error <= _eps(x)


def _connection_limits(a, b, c, x):
    """The connection formula's limits (`_near_one`), in 1 - x above 1/2 and after Pfaff's
    transformation (in 1/(1-x)) below -1; with where c - a - b (after Pfaff's, b - a) is an
    integer or within `_DD_NEAR_INTEGER` of one, where they serve."""
    pfaff = x < 0
    s = jnp.where(pfaff, 1 / (1 - x), 1 - x)
    near, special = _near_one(a, jnp.where(pfaff, c - b, b), c,
                              jnp.clip(s, np.finfo(get_aval(x).dtype).tiny, 0.5))
    return jnp.where(pfaff, (1 - x) ** -a, 1.0) * near, special


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

    For -1 <= x <= 1/2 the series is summed in whichever valid form cancels least: as it
    is or by Euler's transformation (1-x)^(c-a-b) 2F1(c-a, c-b; c; x) for |x| <= 1/2, by
    Pfaff's (1-x)^-a 2F1(a, c-b; c; x/(x-1)) or its twin in b for x < 0 (and any of them up
    to an argument of 3/4 where its terms are positive, or where they alternate and
    converge). Beyond, the first of these that serves:
    - a form whose terms are all positive, up to an argument of 9/10 (500 terms);
    - the form whose terms cancel least, up to an argument of 19/20 (x in (1/2, 19/20] or
      [-19, -1)), where it converges within 1000 terms and cancels by less than 1e15;
    - the connection formula in 1 - x above 1/2, and Pfaff's transformation then that
      formula in 1/(1-x) below -1, all in double-double: its Gamma functions (by Stirling's
      series past 20, the recurrence and the reflection formula), its powers and its series,
      with their parameters unrounded, so that its two terms' cancellation (near a zero of
      2F1, or where c - a - b, after Pfaff's b - a, is near an integer) leaves the rounding
      of double; where its error, estimated from its terms' and series' sizes, is below
      that rounding, and c - a - b is not within 1e-9 of an integer;
    - for x in [-49, -1), Gauss's contiguous relation in c, c(c-1)(x-1) F(c-1) +
      c(c-1-(2c-a-b-1)x) F(c) + (c-a)(c-b) x F(c+1) = 0, down from c' = c + n (n past
      b - c and -c, and 24 more) where Pfaff's form has positive terms (after Euler's
      transformation where a and b are both negative). For x < 1/2 2F1 is the relation's
      minimal solution as c grows, so going down the seeds' errors shrink; it is run twice
      (from c' and c' + 8) and serves where the two agree to 1e-13. For x in (1/2, 49/50]
      the same after Pfaff's transformation (its argument below -1);
    - where c - a - b (after Pfaff's, b - a) is an integer, the connection formula's limit
      (Abramowitz & Stegun 15.3.10-12, with logarithms and digammas), for integers up to
      40; within 1e-9 of an integer, that limit's uniform form in the distance e (Buhring's,
      Forrey's: the two terms' poles in e cancelled analytically, with Gamma ratios
      differenced by Stirling's series), which has no loss of 1/e; else the connection
      formula all the same.
    A terminating series (a or b a non-positive integer) is summed as it is, in
    double-double where its terms cancel. x = 1 gives Gauss's sum where c - a - b > 0.

    Where a form's terms cancel, its sum is carried in double-double arithmetic (with its
    parameters and argument unrounded), and so are the recurrence's steps (whose terms may
    cancel too); their derivatives in the parameters are carried by sums and recurrences of
    their own in double-double (forward mode through the double-double operations would
    carry them in double, the cancellation magnifying their rounding). Those of the
    connection formula within 1/32 of an integer c - a - b are the limit's uniform form's.

    Accuracy in float64 against mpmath (50 digits), for a, b, c in [-20, 20]: 1e-13
    relative at any x < 1, near zeros of 2F1 and near the poles in c too (measured at
    random points: at most 2.5e-14 at 40000 in [-19, 99/100); below -19, at 10000 to -1e6
    and 20000 in [-49, -19), and in [19/20, 1), at 30000, every value correctly rounded;
    over 9500 points of grids of quarter-integer and of integer parameters, polynomials
    included, at most 6.5e-14 but at one point 1.5e-13, where the polynomial is 3e-17).
    Within 1e-9 of an integer c - a - b (after Pfaff's b - a), the limit's uniform form:
    up to 6e-12 (at 1% of 1200 random points there beyond 1e-13).
    Parameters beyond 20 may fall short (the recurrence reaches c' - c up to 72).
    Derivatives in the parameters are nearly as accurate as the values (measured in a at
    1500 random points: within 1e-13 at 99.6%, at worst 9e-13), but where c - a - b is
    within 1e-3 of an integer (the limit's form's derivatives), up to 1e-8. float32
    computes in float32: a few ulps where float64 is at 1e-14.

    As JAX: inf for x > 1 (where the function is complex), at x = 1 where it diverges, and
    where c is a non-positive integer. Unlike JAX (whose series is inaccurate below x = -1
    and near x = 1), the values here are accurate there, and nan propagates.
    """
    a, b, c, x = _real_args("hyp2f1", a, b, c, x)
    return _hyp2f1_jvp(a, b, c, x)
