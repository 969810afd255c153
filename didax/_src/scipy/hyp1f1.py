"""Kummer's confluent hypergeometric function 1F1(a; b; x) of real arguments."""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from didax._src import core
from didax._src.core import get_aval
from didax._src.lax import elementwise as lax
from didax._src.lax.control_flow import loops as lax_control
from didax._src.numpy import namespace as jnp
from didax._src.scipy.double_double import (
    _LN2,
    _dd,
    _dd_add,
    _dd_add_double,
    _dd_div,
    _dd_mul,
    _dd_neg,
    _fast_two_sum,
    _split,
    _two_sum,
)
from didax._src.scipy.hypergeometric import (
    _eps,
    _is_nonpositive_integer,
    _off_poles,
    _real_args,
    _signed_exp,
    _signed_inf,
    _summed_terms,
    _with_derivatives,
)
from didax._src.scipy.special import gammasgn

__all__ = ["hyp1f1"]


_SERIES_TERMS_1F1 = 200  # the series converges within these for t below ~50 + 2 (|a| + |b|)
_ASYMPTOTIC_TERMS_1F1 = 100
_ASYMPTOTIC_FROM = 25.0
_SERIES_REACH_1F1 = 1000.0  # (beyond, the asymptotic expansion: the recurrences run ~1.25 t)
_B_SPAN = 1.25  # the shifted point's b + m >= _B_SPAN t + 1
_RECURRENCE_STEPS_A = 1010  # (|alpha| up to ~1000)
_RECURRENCE_STEPS_B = 2000  # (b down to ~1999 - 1.25 t)


def _dd_plus(v, n):
    """v + n for v a double-double and n a float, exactly (an unnormalized double-double):
    the recurrences' coefficients, which cancel (b - a near b, b - 1 near 1) where rounding
    the parameters first would lose their low digits."""
    s, e = _two_sum(v[0], n)
    return s, e + v[1]


def _dd_where(condition, x, y):
    """(lax.select, the cheapest selection, for operands of one shape and dtype)"""
    return lax.select(condition, x[0], y[0]), lax.select(condition, x[1], y[1])


def _dd_times_small(x, n):
    """x n for x a double-double and n an integer of at most half the significand's bits
    (below 2^26, 2^12 in float32; a float array or a number), to double-double precision:
    x's halves times n are exact."""
    product = x[0] * n
    high, low = _split(x[0])
    return _fast_two_sum(product, ((high * n - product) + low * n) + x[1] * n)


def _dd_times_split(x, v, v_split):
    """x v for x a double-double and a float v given with its halves v_split."""
    product = x[0] * v
    high, low = _split(x[0])
    error = ((high * v_split[0] - product) + high * v_split[1] + low * v_split[0]) + (
        low * v_split[1])
    return _fast_two_sum(product, error + x[1] * v)


def _series_step(alpha, b, offset, t, t_split, k, term, total):
    """The series' term k + 1 from term k, added to the total (double-doubles; k a float
    array or a number; the series' b is b + offset, offset an integer)."""
    numerator = _dd_times_split(_dd_plus(alpha, k), t, t_split)
    den = _two_sum(b, offset + k)
    den = _dd_times_small((den[0] + (den[0] == 0), den[1]), k + 1)  # (0 only exactly)
    term = _dd_div(_dd_mul(term, numerator), den)
    return term, _dd_add(total, term)


def _series_converged(alpha, b, offset, t, k, term, total):
    """(Not while b + k < 0, unless a polynomial has ended: the terms rise again where
    b + k nears 0.)"""
    b_k = b + (offset + k)
    falling = (jnp.abs((alpha[0] + k) * t) < jnp.abs(b_k * (k + 1))) & (b_k > 0)
    return (term[0] == 0) | falling & (jnp.abs(term[0]) <= _eps(t) * jnp.abs(total[0]))


def _series_1f1(alpha, b, offset, t):
    """The state (T_k, sum_{1<=i<=k} T_i, sum_{j<k} sum_{1<=i<=j} T_i) of the series
    sum_k T_k, T_k = (alpha)_k / (b + offset)_k t^k / k!, in double-double (alpha given as a
    double-double), after _SERIES_TERMS_1F1 terms (see _series_results)."""
    zero = _dd(jnp.zeros_like(t))
    state = _dd(jnp.ones_like(t)), zero, zero
    t_split = _split(t)
    return _summed_terms(lambda k, state: _series_on(alpha, b, offset, t, t_split, k, *state),
                         state, _SERIES_TERMS_1F1, get_aval(t).dtype)


def _series_on(alpha, b, offset, t, t_split, k, term, tail, partial_tails):
    partial_tails = _dd_add(partial_tails, tail)
    return (*_series_step(alpha, b, offset, t, t_split, k, term, tail), partial_tails)


def _series_results(alpha, b, offset, t, k, term, tail, partial_tails):
    """The series' total after k terms, whether its terms have fallen below the rounding,
    and sum_i i T_i (for 1F1(alpha + 1) = sum_i (1 + i / alpha) T_i), as
    k sum_{i<=k} T_i - sum_{j<k} sum_{i<=j} T_i, the sums from i = 1 on (so that a small
    alpha, which they are proportional to, loses nothing)."""
    total = _dd_add_double(tail, 1.0)
    converged = _series_converged(alpha, b, offset, t, k, term, total)
    weighted = _dd_add(_dd_times_small(tail, k), _dd_neg(partial_tails))
    return total, converged, weighted


# Below b = -t the series' terms peak where b + k nears 0 and fall only some 2t terms later,
# and the series at a shifted point with a large alpha0 may also need more: up to this many
# terms more, in runs of _MORE_TERMS_AT_ONCE.
_MORE_TERMS_AT_ONCE = 16
_SERIES_MORE_TERMS_1F1 = 63 * _MORE_TERMS_AT_ONCE


def _summed_on(step, unfinished, state, needed, dtype):
    """`state = step(k, state)` for k = _SERIES_TERMS_1F1, ... in runs of
    _MORE_TERMS_AT_ONCE until `unfinished(k, state)` (k the terms summed) holds nowhere, or
    up to _SERIES_MORE_TERMS_1F1 more: (k, state), or None where nothing is `needed`
    (evaluated eagerly). Eagerly unrolled, else a while loop, to the same k."""
    flags = core.concrete_value(needed)
    if flags is not None and not np.any(flags):
        return None
    k, end = _SERIES_TERMS_1F1, _SERIES_TERMS_1F1 + _SERIES_MORE_TERMS_1F1
    if flags is not None:
        while k < end:
            for j in range(_MORE_TERMS_AT_ONCE):
                state = step(k + j, state)
            k += _MORE_TERMS_AT_ONCE
            going = core.concrete_value(unfinished(k, state))
            if going is not None and not np.any(going):
                break
        return k, state

    def body(counted):
        k, state = counted
        for j in range(_MORE_TERMS_AT_ONCE):
            state = step(k + j, state)
        return k + _MORE_TERMS_AT_ONCE, state

    start = jnp.asarray(k, dtype=dtype)
    return lax_control.while_loop(
        lambda counted: (counted[0] < end) & jnp.any(unfinished(*counted)), body,
        (start, state))


def _series_1f1_more(alpha, b, offset, t, state, needed):
    """The series summed on past _SERIES_TERMS_1F1 terms, until it has converged where
    `needed`: (k, state) or None."""
    t_split = _split(t)

    def step(k, state):
        return _series_on(alpha, b, offset, t, t_split, k, *state)

    def unfinished(k, state):
        total = _dd_add_double(state[1], 1.0)
        return needed & ~_series_converged(alpha, b, offset, t, k, state[0], total)

    return _summed_on(step, unfinished, state, needed, get_aval(t).dtype)


def _cancellation_step(alpha, b, t, k, term, total, magnitude):
    den = (b + k) * (k + 1)
    term = term * ((alpha + k) * t) / jnp.where(den == 0, 1.0, den)
    return term, total + term, magnitude + jnp.abs(term)


def _cancellation_converged(alpha, b, t, k, term, total):
    falling = (jnp.abs((alpha + k) * t) < jnp.abs((b + k) * (k + 1))) & (b + k > 0)
    return (term == 0) | falling & (jnp.abs(term) <= _eps(t) * jnp.abs(total))


def _cancellation_1f1(alpha, b, t):
    """sum_k |(alpha)_k / (b)_k t^k / k!| over |1F1|, roughly (the sum in plain floats,
    itself cancelling: past 1 / eps it stays near 1 / eps): the factor by which the
    series loses precision; and whether its terms have fallen below the rounding. Below
    b = -t, where the terms peak near k = -b and fall only some 2t terms later (the sign
    changes past k = -b, the cancellation with them), summed on until they have."""
    term = jnp.ones_like(t)
    state = _summed_terms(lambda k, state: _cancellation_step(alpha, b, t, k, *state),
                          (term, term, term), _SERIES_TERMS_1F1, get_aval(t).dtype)
    k = _SERIES_TERMS_1F1
    converged = _cancellation_converged(alpha, b, t, k, *state[:2])
    needed = (b < -t) & ~converged
    summed = _summed_on(lambda k, state: _cancellation_step(alpha, b, t, k, *state),
                        lambda k, state: needed & ~_cancellation_converged(
                            alpha, b, t, k, *state[:2]), state, needed, get_aval(t).dtype)
    cancellation = state[2] / jnp.abs(state[1])
    if summed is not None:
        k, state = summed
        cancellation = jnp.where(needed, state[2] / jnp.abs(state[1]), cancellation)
        converged = converged | needed & _cancellation_converged(alpha, b, t, k, *state[:2])
    return cancellation, converged


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


_TIDY_EVERY = 8


def _loop(steps, step, carry):
    """`step(i, carry, tidy)` for i = 0, 1, ... until the longest of `steps` (each element
    moving for its own steps), `tidy` every _TIDY_EVERY-th step: unrolled where the steps
    are known (eager evaluation), else a while loop over runs of _TIDY_EVERY unrolled steps,
    so that neither the trace nor a jitted call grows with the longest the recurrences allow
    but only with the longest a call needs."""
    longest = core.concrete_value(steps)
    if longest is not None:
        for i in range(int(np.max(longest, initial=0))):
            carry = step(i, carry, i % _TIDY_EVERY == _TIDY_EVERY - 1)
        return carry
    longest = jnp.max(steps)

    def body(counted):
        i, carry = counted
        for r in range(_TIDY_EVERY):
            carry = step(i + r, carry, r == _TIDY_EVERY - 1)
        return i + _TIDY_EVERY, carry

    start = jnp.zeros((), get_aval(steps).dtype)
    return lax_control.while_loop(lambda counted: counted[0] < longest, body,
                                  (start, carry))[1]


def _in_a(alpha, beta, gamma, steps_b, at_alpha0, at_alpha0_plus_1, steps, up):
    """(1F1(alpha - 1; b1; t), 1F1(alpha; b1; t)) from the values at alpha0 and alpha0 + 1,
    alpha0 = alpha - steps - 1 (where `up`) or alpha + steps - 1, by the relation
    (b - a) M(a - 1) + (2a - b + t) M(a) - a M(a + 1) = 0, for b1 = b + steps_b, given the
    double-doubles alpha, beta = b - alpha and gamma = 2 alpha - b + t; and the exponent of
    the power of two they are to be multiplied by (they are rescaled as they go). Going
    down, t lies between the turning points (b1 >= 1.25 t + 1 puts it there) or 1F1
    dominates; going up, 1F1 dominates from a = (b1 - t) / 2 on, where it starts: either
    way the errors do not grow. In double-double all the same: going down 1F1 passes near
    its zeros, where float64's rounding would be a large part of it, and the recurrence in
    b may amplify what is left."""
    # at the first step a = alpha + n (M(a) the nearer value): going up
    # M(a + 1) = ((b - a) M(a - 1) + (2a - b + t) M(a)) / a, going down
    # M(a - 1) = (a M(a + 1) - (2a - b + t) M(a)) / (b - a): either way the outer
    # coefficient falls by 1 a step, the divisor rises by 1 and the middle one by 2
    n = jnp.where(up, -steps, steps - 1)
    a, b_minus_a = _dd_plus(alpha, n), _dd_plus(beta, steps_b - n)
    middle = _dd_plus(gamma, 2 * n - steps_b)
    coefficients = (_dd_where(up, b_minus_a, a), _dd_where(up, a, b_minus_a),
                    _dd_where(up, middle, _dd_neg(middle)))

    def step(i, carry, tidy):
        near, far, (outer, divisor, middle), exponent = carry
        new = _dd_div(_dd_add(_dd_mul(outer, far), _dd_mul(middle, near)), divisor)
        moving = i < steps
        near, far = _dd_where(moving, new, near), _dd_where(moving, near, far)
        coefficients = _dd_plus(outer, -1.0), _dd_plus(divisor, 1.0), _dd_plus(middle, 2.0)
        if tidy:
            coefficients = tuple(_fast_two_sum(*c) for c in coefficients)
            (near, far), shift = _rescaled(near, far)
            exponent = exponent + shift
        return near, far, coefficients, exponent

    near, far, _, exponent = _loop(steps, step, (
        _dd_where(up, at_alpha0_plus_1, at_alpha0), _dd_where(up, at_alpha0, at_alpha0_plus_1),
        coefficients, jnp.zeros_like(steps)))
    return _dd_where(up, far, near), _dd_where(up, near, far), exponent


def _down_in_b(b, beta, b_plus_t, t, at_b1, difference, steps):
    """1F1(alpha; b; t) from its value at b1 = b + steps and the difference
    1F1(alpha; b1; t) - 1F1(alpha - 1; b1; t) = t / b1 1F1(alpha; b1 + 1; t) by the relation
    b (b - 1) M(b - 1) = b (b + t - 1) M(b) - t (b - alpha) M(b + 1), given the
    double-doubles beta = b - alpha and b + t; and the exponent of the power of two it is
    to be multiplied by. In double-double, since the recurrence may amplify the rounding
    (for alpha < 0, 1F1 oscillates in b below b1 ~ t; near alpha's poles it is a small
    part). Carried as X_j = M(b_j) (b_j)_j for b_j = b1 - j, whose recurrence
    X_{j+1} = (b_j + t - 1) X_j - t (b_j - alpha) X_{j-1} has no divisions, with the
    Pochhammer symbol (b_j)_j beside it, each rescaled by powers of two as they go."""
    # b_j + t - 1 falls by 1 a step, -t (b_j - alpha) rises by t
    coefficients = (_dd_plus(b_plus_t, steps - 1),
                    _dd_neg(_dd_mul(_dd_plus(beta, steps), _dd(t))))

    def step(j, carry, tidy):
        current, above, pochhammer, (inner, outer), exponent = carry
        m = steps - j  # b_j = b + m, moving to b + m - 1
        moving = m > 0
        below = _dd_add(_dd_mul(inner, current), _dd_mul(outer, above))
        pochhammer = _dd_where(moving, _dd_mul(pochhammer, _two_sum(b, m - 1)), pochhammer)
        current, above = _dd_where(moving, below, current), _dd_where(moving, current, above)
        coefficients = _dd_plus(inner, -1.0), _dd_plus(outer, t)
        if tidy:
            coefficients = tuple(_fast_two_sum(*c) for c in coefficients)
            (current, above), shift = _rescaled(current, above)
            (pochhammer,), shift_down = _rescaled(pochhammer)
            exponent = exponent + shift - shift_down
        return current, above, pochhammer, coefficients, exponent

    current, _, pochhammer, _, exponent = _loop(steps, step, (
        at_b1, _dd_div(difference, _dd(jnp.where(steps > 0, t, 1.0))), _dd(jnp.ones_like(t)),
        coefficients, jnp.zeros_like(t)))
    value = _dd_div(current, pochhammer)
    return value[0] + value[1], exponent


def _rescaled(*values):
    """Values (double-doubles, or 1-tuples of plain floats) scaled together by a power of
    two, exactly, their largest towards 1, and the exponent that undoes it: the recurrences
    carry these, so that neither they nor the Pochhammer symbol leave the float range (the
    value at the end may lie far beyond it before e^-t after Kummer's transformation)."""
    magnitude = functools.reduce(jnp.maximum, [jnp.abs(v[0]) for v in values])
    shift = jnp.floor(jnp.log2(jnp.where(magnitude > 0, magnitude, 1.0)))
    scale = jnp.exp2(-shift)
    return tuple(tuple(part * scale for part in v) for v in values), shift


def _times_exp_and_power_of_two(value, x, exponent):
    """value e^x 2^exponent, for x <= 0 and an integer exponent, without leaving the float
    range before the product does: e^x = 2^n e^r with r = x - n ln 2 (ln 2 in two parts,
    n times the first exact), the powers of two applied in two halves."""
    dtype = get_aval(value).dtype
    bits = np.finfo(dtype).nmant + 1 - 11  # (n below 2^11 in magnitude)
    ln2 = Fraction(_LN2)
    ln2_high = math.floor(ln2 * 2 ** bits) / 2 ** bits
    ln2_low = float(ln2 - Fraction(ln2_high))
    n = jnp.round(x / ln2_high)
    value = value * jnp.exp((x - n * ln2_high) - n * ln2_low)
    exponent = exponent + n
    half = jnp.floor(exponent / 2)
    return value * jnp.exp2(half) * jnp.exp2(exponent - half)


def _hyp1f1(a, b, x):
    """1F1 for finite arguments, b not a non-positive integer unless a polynomial (a a
    non-positive integer) ends before it. x < 0 goes through Kummer's transformation
    1F1(a; b; x) = e^x 1F1(b - a; b; -x) (unless the series is a polynomial whose terms all
    have one sign, b > 0), so that the series' argument t is nonnegative. Where the series'
    terms cancel beyond what double-double absorbs (alpha far below 0, or b < 0), or it
    would need more terms, the value comes from a shifted point instead: recurrences in
    alpha, then in b, lead back from 1F1(alpha0; b + m; t) with b + m >= 1.25 t + 1, a sum
    of positive terms; t beyond 1000 uses the asymptotic expansion."""
    # (summed as it is, a polynomial's terms have one sign for x < 0 < b; below b = 0 they
    # alternate with b's Pochhammer symbol: Kummer's transformation there, but at b's poles)
    polynomial = _is_nonpositive_integer(a) & ((b > 0) | _is_nonpositive_integer(b))
    kummer = (x < 0) & ~polynomial
    b_minus_a = _two_sum(b, -a)
    alpha_dd = (jnp.where(kummer, b_minus_a[0], a), jnp.where(kummer, b_minus_a[1], 0.0))
    beta = (jnp.where(kummer, a, b_minus_a[0]), jnp.where(kummer, 0.0, b_minus_a[1]))  # b - alpha
    alpha = alpha_dd[0]
    t = jnp.where(kummer, -x, x)
    t_near = jnp.minimum(t, _SERIES_REACH_1F1)
    cancellation, converges = _cancellation_1f1(alpha, b, t_near)
    precise = (cancellation <= _eps(t) ** -0.875) & converges  # (5e13 in float64)
    # elsewhere the shifted point alpha0 = alpha mod 1, b1 = b + steps_b >= 1.25 t + 1,
    # whose series has positive terms, and recurrences back (alpha0 in (0, 1], not 0, so
    # that 1F1(alpha0 + 1) follows from 1F1(alpha0)'s terms)
    up = alpha > 1
    steps_a = jnp.where(up, jnp.ceil(alpha) - 2, jnp.floor(-alpha) + 2)
    steps_b = jnp.maximum(jnp.ceil(_B_SPAN * t_near + 1 - b), 0.0)
    shifted = ((t > 0) & (t <= _SERIES_REACH_1F1) & ~precise & ~_is_nonpositive_integer(b)
               & (steps_a < _RECURRENCE_STEPS_A) & (steps_b < _RECURRENCE_STEPS_B))
    # (going up, from (b1 - t) / 2 on at least: below it the other solution grows the
    # faster, so much, for b1 far above t, that even double-double loses what 1F1 comes
    # back to; the series there sums on as long as it needs)
    skipped = jnp.where(up, jnp.clip(jnp.ceil((b + steps_b - t_near) / 2) - 1, 0.0, steps_a),
                        0.0)
    steps_a = steps_a - skipped
    alpha0 = _dd_add_double(alpha_dd, jnp.where(up, -steps_a - 1, steps_a - 1))
    steps_b = jnp.where(shifted, steps_b, 0.0)
    # one series in double-double: at alpha, b, or at the shifted point alpha0, b1
    series_alpha = _dd_where(shifted, alpha0, alpha_dd)
    state = _series_1f1(series_alpha, b, steps_b, t_near)
    k = _SERIES_TERMS_1F1
    series_ok = _series_results(series_alpha, b, steps_b, t_near, k, *state)[1]
    more_needed = ~series_ok & (shifted | precise & (b < -t_near))
    more = _series_1f1_more(series_alpha, b, steps_b, t_near, state, more_needed)
    if more is not None:
        k, state = more
    total, series_ok, weighted = _series_results(series_alpha, b, steps_b, t_near, k, *state)
    series = total[0] + total[1]
    shifted = shifted & series_ok
    alpha0 = _dd_where(shifted, alpha0, _dd(jnp.ones_like(t)))
    at_alpha0 = total
    at_alpha0_plus_1 = _dd_add(total, _dd_div(weighted, alpha0))
    # the recurrences' coefficients from these double-doubles (where not shifted,
    # harmless ones, alpha = 1/2 and b1 = 1)
    steps_a = jnp.where(shifted, steps_a, 0.0)
    steps_b = jnp.where(shifted, steps_b, 0.0)
    b_shifted = jnp.where(shifted, b, 1.0)
    t_shifted = jnp.where(shifted, t_near, 0.0)
    half = _dd(jnp.full_like(t, 0.5))
    alpha_shifted, beta = _dd_where(shifted, alpha_dd, half), _dd_where(shifted, beta, half)
    gamma = _dd_add_double(_dd_add(alpha_shifted, _dd_neg(beta)), t_shifted)
    below_alpha, at_alpha, exponent = _in_a(alpha_shifted, beta, gamma, steps_b, at_alpha0,
                                            at_alpha0_plus_1, steps_a, up)
    recurred, exponent_b = _down_in_b(b_shifted, beta, _two_sum(b_shifted, t_shifted),
                                      t_shifted, at_alpha,
                                      _dd_add(at_alpha, _dd_neg(below_alpha)), steps_b)
    # Kummer's factor e^x = e^-t (as 2^n e^r: e^x alone may underflow where the product
    # does not)
    kummer_x = jnp.where(kummer, jnp.minimum(x, 0.0), 0.0)
    recurred = _times_exp_and_power_of_two(recurred, kummer_x, exponent + exponent_b)
    series_ok = (series_ok & precise | shifted) & (t <= _SERIES_REACH_1F1)
    series = _times_exp_and_power_of_two(series, kummer_x, 0.0)
    series = jnp.where(shifted, recurred, series)
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

    x < 0 goes through Kummer's transformation e^x 1F1(b - a; b; -x) (a polynomial, a a
    non-positive integer, only where b < 0), so that the series (200 terms, summed in
    double-double arithmetic so that the cancellation of alternating terms costs no
    accuracy) runs on a nonnegative argument t with first parameter alpha (a, or b - a,
    taken without rounding). Below b = -t its terms peak where b + k nears 0 and fall only
    ~2t terms later: it is summed on there, up to ~1200 terms. Where its terms cancel by
    more than ~5e13 (alpha far below 0, or b < 0) or it needs more terms, the value comes
    from a shifted point 1F1(alpha0; b + m; t) with b + m >= 1.25 t + 1, a sum of positive
    terms, by the three-term recurrences in alpha (down, or up from where 1F1 dominates)
    and then in b (down), in double-double too: 1F1 passes near its zeros in alpha, where
    float64's rounding would be a large part of it, and the recurrence in b can amplify the
    rounding (by 1e4 near alpha's poles). They carry exponents of their own, so that
    neither 1F1(alpha; b; t) nor e^x leaves the float range where their product does not.
    The loops run as far as the longest element needs (unrolled when evaluated eagerly,
    else while loops). Beyond t = 1000, the asymptotic expansion
    Gamma(b) / Gamma(alpha) e^t t^(alpha - b) sum_k (b - alpha)_k (1 - alpha)_k / k! t^-k
    where it converges to the rounding and its algebraic companion term is below it.

    Accuracy in float64, relative, against mpmath (below b = -|x|, where mpmath's sum can
    stop early, against the series summed at high precision), values beyond float64's
    range left out: at most 3.2e-16 on random points, 17,000 with |a|, |b| <= 100 and
    |x| <= 200, 15,000 with |a|, |b| <= 200 or 300 and |x| <= 500 to 1000, 2,000 below
    b = -|x| with |a|, |b| <= 200, polynomials and the ranges' edges too. Where it is
    not: below b = -|x| with alpha large (a for x > 0, b - a for x < 0; seen from alpha
    ~350 at b ~ -120, ~120 at b ~ -150, ~60 at b ~ -300, never with |a|, |b| <= 200),
    where the series cancels beyond double-double and the recurrence in b amplifies
    beyond it as well, values can be far off (nan near float64's overflow); beyond
    |x| = 1000, the asymptotic expansion gives ~3e-13 (with |a|, |b| <= 100,
    |x| <= 2000), and nothing accurate where it does not apply (x below ~-2800 with
    b - a < 0, for one). float32 computes in float32 (with float32 pairs for the
    double-double sums): a few ulps (2e-7 on random points with |a|, |b| <= 100 and
    |x| <= 200), values whose intermediate magnitudes leave float32's range (~1e35 for
    the double-double products) lost.

    Unlike JAX (which is inaccurate for negative x of large magnitude and for large
    parameters, and returns 1 for a nan a), the values here are accurate there and nan
    propagates; at x = +-inf the limits are returned (JAX: nan and 0), and the poles in b
    are +inf (JAX's sign there follows its series).
    """
    a, b, x = _real_args("hyp1f1", a, b, x)
    return _hyp1f1_jvp(a, b, x)
