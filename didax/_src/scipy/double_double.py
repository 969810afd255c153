"""Double-double arithmetic: a value carried as an unevaluated sum hi + lo of two floats
(Dekker's error-free transformations), for the sums whose terms cancel. A sum whose terms'
magnitudes add up to C times its value loses a factor C of its precision; carried in
double-double, C up to ~1e18 still leaves float64's rounding in the result. Written with
jnp operations, so it traces, batches and differentiates."""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from didax._src.core import get_aval
from didax._src.numpy import namespace as jnp


def _split(v):
    """hi + lo = v, each with half the significand's bits (Veltkamp's splitting)."""
    bits = np.finfo(get_aval(v).dtype).nmant + 1
    scaled = float(2 ** ((bits + 1) // 2) + 1) * v
    hi = scaled - (scaled - v)
    return hi, v - hi


def _two_sum(p, q):
    s = p + q
    q_part = s - p
    return s, (p - (s - q_part)) + (q - q_part)


def _fast_two_sum(p, q):
    """For |p| >= |q| (or p = 0)."""
    s = p + q
    return s, q - (s - p)


def _two_prod(p, q):
    product = p * q
    p_hi, p_lo = _split(p)
    q_hi, q_lo = _split(q)
    return product, ((p_hi * q_hi - product) + p_hi * q_lo + p_lo * q_hi) + p_lo * q_lo


def _dd(v):
    return v, jnp.zeros_like(v)


def _dd_add(x, y):
    """(Bailey's sloppy addition: its error is double-double's rounding of |x| + |y|, which
    is what a sum whose terms cancel can use.)"""
    s, e = _two_sum(x[0], y[0])
    return _fast_two_sum(s, e + (x[1] + y[1]))


def _dd_add_double(x, v):
    s, e = _two_sum(x[0], v)
    return _fast_two_sum(s, e + x[1])


def _dd_mul(x, y):
    p, e = _two_prod(x[0], y[0])
    return _fast_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))


def _dd_div(x, y):
    q = x[0] / y[0]
    p, e = _two_prod(q, y[0])
    remainder = ((x[0] - p) - e + x[1]) - q * y[1]
    return _fast_two_sum(q, remainder / y[0])


@functools.lru_cache(maxsize=None)
def _constant_parts(value, dtype):
    hi = dtype.type(float(value))
    return hi, dtype.type(float(value - Fraction(float(hi))))


def _dd_constant(value, like):
    """The constant `value` (a Fraction, or a decimal string of more digits than
    double-double's) as a double-double of like's dtype: its rounding and the rest's (NumPy
    scalars of that dtype: a Python float would be split as a float64)."""
    return _constant_parts(Fraction(value), np.dtype(get_aval(like).dtype))


_LN2 = "0.693147180559945309417232121458176568075500134360255254"
_PI = "3.14159265358979323846264338327950288419716939937510582097"

_EXP_HALVINGS = 8  # exp(r) = exp(r / 2^8)^(2^8), for |r| <= ln2 / 2: r / 2^8 below 1.4e-3,
_EXP_TERMS = 10  # whose Taylor series past these terms is below 1e-32 of it
_SIN_TERMS = 17  # (sin t for |t| <= pi/2: t^35 / 35! below 1e-33)


def _dd_neg(x):
    return -x[0], -x[1]


def _dd_where(condition, x, y):
    return jnp.where(condition, x[0], y[0]), jnp.where(condition, x[1], y[1])


def _dd_exp_parts(x):
    """exp of a double-double, to double-double's precision, as m 2^k (m a double-double
    within [1/2, 2], k an integer as a float: m 2^k may overflow where m does not): r = x -
    k ln2, exp(r) - 1 by its Taylor series at r / 2^8 and then squared up ((1 + e)^2 - 1 =
    2e + e^2: carried as exp - 1, it keeps its relative precision)."""
    hi = jnp.clip(x[0], -4000.0, 4000.0)  # (beyond: 0 or inf all the same)
    x = (hi, jnp.where(hi == x[0], x[1], 0.0))
    ln2 = _dd_constant(_LN2, hi)
    k = jnp.round(hi / ln2[0])
    r = _dd_add(x, _dd_mul((-k, k * 0), ln2))
    r = (r[0] * 2.0 ** -_EXP_HALVINGS, r[1] * 2.0 ** -_EXP_HALVINGS)  # (exact)
    series = _dd_constant(Fraction(1, math.factorial(_EXP_TERMS)), hi)
    for n in range(_EXP_TERMS - 1, 0, -1):  # 1 + r/2 + r^2/6 + ..., by Horner's rule
        series = _dd_add(_dd_mul(series, r), _dd_constant(Fraction(1, math.factorial(n)), hi))
    e = _dd_mul(series, r)
    for _ in range(_EXP_HALVINGS):
        e = _dd_add(_dd_mul(e, e), (2 * e[0], 2 * e[1]))
    return _dd_add_double(e, 1.0), k


def _dd_scale(x, k):
    """x 2^k (k an integer as a float), exactly unless it overflows or is subnormal: in two
    factors (one alone may overflow where the product does not)."""
    half = jnp.floor(k / 2)
    for power in (half, k - half):
        scale = jnp.exp2(power)
        x = (x[0] * scale, x[1] * scale)
    return x


def _dd_exp(x):
    """exp of a double-double, to double-double's precision (`_dd_exp_parts`)."""
    return _dd_scale(*_dd_exp_parts(x))


def _dd_log(x):
    """log of a positive double-double, to double-double's precision: y = log(hi) and
    log(x) = y + log(1 + u), u = x exp(-y) - 1 (tiny: log(1 + u) = u - u^2/2)."""
    y = jnp.log(x[0])
    u = _dd_add_double(_dd_mul(x, _dd_exp((-y, y * 0))), -1.0)
    return _dd_add_double(_dd_add_double(u, -0.5 * u[0] * u[0]), y)


def _dd_sin_pi(r):
    """sin(pi r) of a double-double |r| <= 1/2, to double-double's precision: t = pi r and
    sin t = t (1 - t^2/3! + t^4/5! - ...), by Horner's rule in t^2."""
    t = _dd_mul(r, _dd_constant(_PI, r[0]))
    t2 = _dd_mul(t, t)
    series = _dd_constant(Fraction((-1) ** (_SIN_TERMS - 1), math.factorial(2 * _SIN_TERMS - 1)),
                          r[0])
    for n in range(_SIN_TERMS - 2, -1, -1):
        series = _dd_add(_dd_mul(series, t2),
                         _dd_constant(Fraction((-1) ** n, math.factorial(2 * n + 1)), r[0]))
    return _dd_mul(series, t)
