"""Kummer's confluent hypergeometric function 1F1(a; b; x) of real arguments."""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.lax import elementwise as lax
from didax._src.lax.control_flow import loops as lax_control
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
_B_SPAN = 1.25  # the shifted point's b + m >= _B_SPAN t + 1
_RECURRENCE_STEPS_A = 210  # (|alpha| up to ~209)
_RECURRENCE_STEPS_B = 480  # (b down to ~479 - 1.25 t)


def _series_step(alpha, b, t, k, term, total):
    """The series' term k + 1 from term k, added to the total (double-doubles; k a float
    array or a number)."""
    numerator = _dd_mul(_dd_add_double(alpha, k), _dd(t))
    den = _two_sum(b, jnp.zeros_like(t) + k)
    safe = den[0] == 0
    den = (jnp.where(safe, 1.0, den[0]), jnp.where(safe, 0.0, den[1]))
    den = _dd_mul(den, _dd(jnp.zeros_like(t) + (k + 1)))
    term = _dd_div(_dd_mul(term, numerator), den)
    return term, _dd_add(total, term)


def _series_converged(alpha, b, t, k, term, total):
    falling = jnp.abs((alpha[0] + k) * t) < jnp.abs((b + k) * (k + 1))
    return falling & (jnp.abs(term[0]) <= _eps(t) * jnp.abs(total[0]))


def _series_1f1(alpha, b, t):
    """sum_k (alpha)_k / (b)_k t^k / k! in double-double, alpha given as a double-double,
    whether its tail is below the rounding, and its last term and total (to go on). (A pole
    b + k = 0 met after a polynomial's end multiplies a zero term, and is stepped over.)"""
    term = _dd(jnp.ones_like(t))
    total = term
    for k in range(_SERIES_TERMS_1F1):
        term, total = _series_step(alpha, b, t, k, term, total)
    converged = _series_converged(alpha, b, t, _SERIES_TERMS_1F1, term, total)
    return total[0] + total[1], converged, (term, total)


# Below b = -t the series' terms peak where b + k nears 0 and fall only some 2t terms later:
# up to this many terms more (|b| to ~100 with t to 200).
_SERIES_MORE_TERMS_1F1 = 450


def _series_1f1_more(alpha, b, t, state, needed):
    """The series summed on past _SERIES_TERMS_1F1 terms, until it has converged where
    `needed` (a loop; where nothing needs it, when evaluated eagerly, not at all):
    (value, converged) or None."""
    flags = core.concrete_value(needed)
    if flags is not None and not np.any(flags):
        return None
    end = _SERIES_TERMS_1F1 + _SERIES_MORE_TERMS_1F1

    def going(carry):
        k, term, total = carry
        return (k < end) & jnp.any(needed & ~_series_converged(alpha, b, t, k, term, total))

    def body(carry):
        k, term, total = carry
        term, total = _series_step(alpha, b, t, k, term, total)
        return k + 1, term, total

    start = jnp.asarray(_SERIES_TERMS_1F1, dtype=t.dtype)
    k, term, total = lax_control.while_loop(going, body, (start, *state))
    return total[0] + total[1], _series_converged(alpha, b, t, k, term, total)


def _cancellation_1f1(alpha, b, t):
    """sum_k |(alpha)_k / (b)_k t^k / k!| over |1F1|, roughly (the sum in plain floats,
    itself cancelling: past 1 / eps it stays near 1 / eps): the factor by which the
    series loses precision; and whether its terms have fallen below the rounding."""
    term = jnp.ones_like(t)
    total = term
    magnitude = term
    for k in range(_SERIES_TERMS_1F1):
        den = (b + k) * (k + 1)
        term = term * ((alpha + k) * t) / jnp.where(den == 0, 1.0, den)
        total = total + term
        magnitude = magnitude + jnp.abs(term)
    k = _SERIES_TERMS_1F1
    falling = jnp.abs((alpha + k) * t) < jnp.abs((b + k) * (k + 1))
    converged = (term == 0) | falling & (jnp.abs(term) <= _eps(t) * jnp.abs(total))
    return magnitude / jnp.abs(total), converged


def _positive_series_1f1(alpha0, b1, t):
    """(1F1(alpha0; b1; t), 1F1(alpha0 + 1; b1; t)) for alpha0 >= 0, b1 > t >= 0: sums of
    positive terms, so plain floats suffice; and whether they have converged."""
    term, term_next = jnp.ones_like(t), jnp.ones_like(t)
    total, total_next = term, term_next
    for k in range(_SERIES_TERMS_1F1):
        ratio = t / ((b1 + k) * (k + 1))
        term = term * ((alpha0 + k) * ratio)
        term_next = term_next * ((alpha0 + k + 1) * ratio)
        total, total_next = total + term, total_next + term_next
    return total, total_next, term_next <= _eps(t) * total_next


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


def _fixed_loop(capacity, steps, step, carry):
    """`step` applied `capacity` times (each element moving for its own `steps` of them),
    unrolled, so that it traces into plain operations; where the steps are known (eager
    evaluation) only as many as the longest needs."""
    longest = core.concrete_value(steps)
    if longest is not None:
        capacity = min(capacity, int(np.max(longest, initial=0)))
    for i in range(capacity):
        carry = step(i, carry)
    return carry


def _in_a(alpha0, b, t, at_alpha0, at_alpha0_plus_1, steps, up):
    """(1F1(alpha - 1; b; t), 1F1(alpha; b; t)) for alpha = alpha0 - steps + 1 (or, where
    `up`, alpha = alpha0 + steps + 1) from the values at alpha0 and alpha0 + 1 by the
    relation (b - a) M(a - 1) + (2a - b + t) M(a) - a M(a + 1) = 0. Going down, t lies
    between the turning points (b >= 1.25 t + 1 puts it there), where the solutions
    oscillate in a, neither dominating; going up, 1F1 dominates: either way the errors
    do not grow."""
    direction = jnp.where(up, 1.0, -1.0)
    start = jnp.where(up, alpha0 + 1, alpha0)
    shift = t - b

    def step(i, carry):
        # M(a) and M(a + 1) going down, M(a) and M(a - 1) going up, to M(a -+ 1) and M(a)
        near, far = carry
        a = start + direction * i
        moving = i < steps
        numerator = jnp.where(up, b - a, a) * far + direction * (2 * a + shift) * near
        new = numerator / jnp.where(moving, jnp.where(up, a, b - a), 1.0)
        return jnp.where(moving, new, near), jnp.where(moving, near, far)

    near, far = _fixed_loop(_RECURRENCE_STEPS_A, steps, step, (
        jnp.where(up, at_alpha0_plus_1, at_alpha0), jnp.where(up, at_alpha0, at_alpha0_plus_1)))
    return jnp.where(up, far, near), jnp.where(up, near, far)


def _down_in_b(alpha, b1, t, at_b1, at_b1_plus_1, steps):
    """1F1(alpha; b1 - steps; t) from the values at b1 and b1 + 1 by the relation
    b (b - 1) M(b - 1) = b (b + t - 1) M(b) - t (b - alpha) M(b + 1). 1F1 is its minimal
    solution as b grows, so going down it dominates and the errors fade (down to about
    b = -t, below which the other solution takes over)."""
    def step(j, carry):
        current, above = carry
        b_j = b1 - j
        moving = j < steps
        below = (b_j * (b_j + t - 1) * current - t * (b_j - alpha) * above) / (
            jnp.where(moving, b_j * (b_j - 1), 1.0))
        return jnp.where(moving, below, current), jnp.where(moving, current, above)

    return _fixed_loop(_RECURRENCE_STEPS_B, steps, step, (at_b1, at_b1_plus_1))[0]


def _hyp1f1(a, b, x):
    """1F1 for finite arguments, b not a non-positive integer. x < 0 goes through Kummer's
    transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x) (unless a is a non-positive integer:
    then the series is a polynomial whose terms all have one sign), so that the series'
    argument t is nonnegative. Where the series' terms cancel beyond what double-double
    absorbs (alpha far below 0, or b < 0), or it would need more terms, the value comes
    from a shifted point instead: recurrences in alpha, then in b, lead back from
    1F1(alpha mod 1; b + m; t) with b + m >= 1.25 t + 1, a sum of positive terms; large t
    uses the asymptotic expansion."""
    polynomial = _is_nonpositive_integer(a)
    kummer = (x < 0) & ~polynomial
    alpha_dd = _two_sum(b, -a)
    alpha_dd = (jnp.where(kummer, alpha_dd[0], a), jnp.where(kummer, alpha_dd[1], 0.0))
    alpha = alpha_dd[0]
    t = jnp.where(kummer, -x, x)
    t_near = jnp.minimum(t, _SERIES_REACH_1F1)
    cancellation, converges = _cancellation_1f1(alpha, b, t_near)
    # (below b = -t b's recurrence grows errors: there the series' value even unconverged)
    precise = ((cancellation <= _eps(t) ** -0.875)  # (5e13 in float64)
               & (converges | (b < -t)))
    # elsewhere the shifted point alpha0 = alpha mod 1, b1 = b + steps_b >= 1.25 t + 1,
    # whose series has positive terms, and recurrences back
    up = alpha >= 1
    steps_a = jnp.where(up, jnp.floor(alpha) - 1, jnp.ceil(-alpha) + 1)
    steps_b = jnp.maximum(jnp.ceil(_B_SPAN * t_near + 1 - b), 0.0)
    shifted = ((t > 0) & (t <= _SERIES_REACH_1F1) & ~precise & ~_is_nonpositive_integer(b)
               & (steps_a < _RECURRENCE_STEPS_A) & (steps_b < _RECURRENCE_STEPS_B))
    alpha0 = _dd_add_double(alpha_dd, jnp.where(up, -steps_a - 1, steps_a - 1))[0]
    alpha0 = jnp.where(shifted, alpha0, 0.0)
    b1 = jnp.where(shifted, b + steps_b, 1.0)
    t_shifted = jnp.where(shifted, t_near, 0.0)
    at_alpha0, at_alpha0_plus_1, positive_ok = _positive_series_1f1(alpha0, b1, t_shifted)
    shifted = shifted & positive_ok
    steps_a = jnp.where(shifted, steps_a, 0.0)
    steps_b = jnp.where(shifted, steps_b, 0.0)
    # (Kummer's factor e^x = e^-t, half of it carried through the recurrences, so that
    # neither they nor it leave the float range where their product does not)
    half_factor = jnp.where(kummer, jnp.exp(jnp.minimum(x, 0.0) / 2), 1.0)
    below_alpha, at_alpha = _in_a(alpha0, b1, t_shifted, half_factor * at_alpha0,
                                  half_factor * at_alpha0_plus_1, steps_a, up)
    # M(alpha; b1 + 1) = b1 (M(alpha; b1) - M(alpha - 1; b1)) / t
    next_in_b = b1 * (at_alpha - below_alpha) / jnp.where(shifted, t_near, 1.0)
    recurred = _down_in_b(alpha, b1, t_shifted, at_alpha, next_in_b, steps_b)
    series, series_ok, state = _series_1f1(alpha_dd, b, t_near)
    more_needed = (b < -t_near) & ~series_ok & precise & ~shifted
    more = _series_1f1_more(alpha_dd, b, t_near, state, more_needed)
    if more is not None:
        longer = more_needed & more[1]
        series, series_ok = jnp.where(longer, more[0], series), series_ok | longer
    series_ok = (series_ok & precise | shifted) & (t <= _SERIES_REACH_1F1)
    series = jnp.where(kummer, jnp.exp(jnp.minimum(x, 0.0)) * series, series)
    series = jnp.where(shifted, half_factor * recurred, series)
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
               & ~series_ok)
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
    (a, or b - a, taken without rounding). Where its terms cancel by more than ~5e13
    (alpha far below 0, or b < 0) or it needs more terms, the value comes from the shifted
    point 1F1(alpha mod 1; b + m; t) with b + m >= 1.25 t + 1, a sum of positive terms, by
    the three-term recurrences in alpha (up or down: both stable there) and then in b
    (down: 1F1 dominates), loops of fixed length (trimmed to the longest needed when
    evaluated eagerly). Where neither applies, t >= 25 uses the asymptotic expansion
    Gamma(b) / Gamma(alpha) e^t t^(alpha - b) sum_k (b - alpha)_k (1 - alpha)_k / k! t^-k
    where it converges to the rounding and its algebraic companion term is below it.

    Accuracy in float64 against mpmath, measured on grids and random points with
    |a|, |b| <= 100 and |x| <= 200 (b of either sign, alpha of either sign, Laguerre
    polynomials included): 1e-13 relative, or, near the zeros of 1F1 (which the
    oscillating values for alpha far below 0 pass through often), within what rounding
    the arguments by an ulp changes, eps (|a d/da| + |b d/db| + |x d/dx|) 1F1. Below
    b = -|x| the series' terms peak where b + k nears 0 and fall only ~2|x| terms later: it
    is summed on there, up to 650 terms (a loop that stops once converged). Beyond the
    measured range (b below -100 with |alpha| near 200), values can still be far off. float32
    computes in float32 (with float32 pairs for the double-double sums): a few ulps where
    float64 is at 1e-14, with e^t's t ulps on top (~1e-6 at t = 20), ~1e-6 through the
    recurrences, and values whose intermediate magnitudes leave float32's range lost.

    Unlike JAX (which is inaccurate for negative x of large magnitude and for large
    parameters, and returns 1 for a nan a), the values here are accurate there and nan
    propagates; at x = +-inf the limits are returned (JAX: nan and 0), and the poles in b
    are +inf (JAX's sign there follows its series).
    """
    a, b, x = _real_args("hyp1f1", a, b, x)
    return _hyp1f1_jvp(a, b, x)
