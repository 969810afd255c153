"""Double-double arithmetic: a value carried as an unevaluated sum hi + lo of two floats
(Dekker's error-free transformations), for the sums whose terms cancel. A sum whose terms'
magnitudes add up to C times its value loses a factor C of its precision; carried in
double-double, C up to ~1e18 still leaves float64's rounding in the result. Written with
jnp operations, so it traces, batches and differentiates."""
from __future__ import annotations

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
