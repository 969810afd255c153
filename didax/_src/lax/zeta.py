"""The Hurwitz zeta function, by the Euler-Maclaurin formula
zeta(s, a) = sum_{k<N} (a + k)^-s + (a + N)^(1-s) / (s - 1)
             + (a + N)^-s (1/2 + sum_{j<M} B_2j / (2j)! (s)_{2j-1} / (a + N)^(2j-1)).

`lax.zeta` stages the `zeta` primitive (`zeta_p`), as JAX's does: an elementwise binary
primitive without params, on floats of one dtype, broadcasting as lax's binary primitives do
(batched the same way). Its impl evaluates the formula above, composed from lax primitives,
on the concrete operands. Like JAX's, it has no derivative rule (JAX raises for either
argument): `scipy.special.zeta` calls the composition itself (`hurwitz_zeta`), which
differentiates in both arguments, as JAX's `jax.scipy.special.zeta` (composed too) does.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.core import get_aval
from didax._src.lax.base import naryop
from didax._src.lax.elementwise import (
    _SCALAR_TYPES,
    _lift_scalars,
    add,
    bitwise_and,
    bitwise_or,
    div,
    eq,
    floor,
    full_like,
    gt,
    le,
    min,
    mul,
    neg,
    pow,
    select,
    sub,
)
from didax._src.lax.reduction import cumprod, reduce_sum
from didax._src.lax.shape import expand_dims, slice
from didax._src.typecheck import float_

# (2j)! / B_2j for j = 1..16
_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600,
    -10670622842880000 / 3617, 5109094217170944000 / 43867,
    -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147,
    759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217,
])


def _zeta_impl(x, q):
    """zeta_p's impl: the composition `hurwitz_zeta` evaluated on NumPy operands (broadcast
    to one shape), whatever interpreter is current."""
    x, q = np.broadcast_arrays(x, q)
    with core.interpreter_context(core.eval_interpreter):
        out = hurwitz_zeta(core.Array(x), core.Array(q))
    return np.asarray(out)


zeta_p = naryop("zeta", float_, _zeta_impl)
_NO_DERIVATIVE = ("the zeta primitive has no derivative rule, as in JAX (whose zeta_p has none "
                  "in either argument); jax.scipy.special.zeta is composed from differentiable "
                  "primitives and differentiates in both")
zeta_p.mark_absent("jvp", _NO_DERIVATIVE)
zeta_p.mark_absent("transpose", "zeta is not linear in either argument")


def zeta(x, q):
    """`lax.zeta`: the Hurwitz zeta function sum_k (q + k) ** -x, elementwise on floats of one
    dtype (the `zeta` primitive; not differentiable, as in JAX: see the module's notes)."""
    if type(x) in _SCALAR_TYPES or type(q) in _SCALAR_TYPES:
        x, q = _lift_scalars(x, q)
    return zeta_p.bind(x, q)


def hurwitz_zeta(x, q):
    """zeta(x, q) for floating x and q of one dtype and shape: for x > 1 and q > 0; inf at
    x = 1 and at the poles (q a non-positive integer), nan elsewhere, as SciPy."""
    one = full_like(x, 1)
    domain = bitwise_and(gt(x, one), gt(q, full_like(q, 0)))
    value = zeta_series(select(domain, x, full_like(x, 2)), select(domain, q, full_like(q, 1)))
    at_pole = bitwise_and(le(q, full_like(q, 0)), eq(q, floor(q)))  # q = 0, -1, -2, ...
    pole = bitwise_or(eq(x, one), bitwise_and(at_pole, gt(x, one)))
    return select(domain, value, select(pole, full_like(x, np.inf), full_like(x, np.nan)))


def zeta_series(s, a):
    """The series alone, for s > 1 and a > 0 (of one dtype and shape)."""
    aval = get_aval(a)
    dtype, nd = aval.dtype.type, aval.ndim
    terms = 8 if aval.dtype == np.float32 else 16
    last = (1,) * nd  # constants along a new last axis, broadcast against (..., 1)

    def along_last(values):
        return np.asarray(values, dtype).reshape(last + (len(values),))

    s_, a_ = expand_dims(s, (nd,)), expand_dims(a, (nd,))
    a_n = add(a, dtype(terms))
    head = reduce_sum(pow(add(a_, along_last(np.arange(terms))), neg(s_)), (nd,))
    integral = div(pow(a_n, sub(dtype(1), s)), sub(s, dtype(1)))
    t0 = pow(a_n, neg(s))
    ratios = cumprod(div(add(s_, along_last(np.arange(2 * terms))), add(a_, dtype(terms))), nd)
    ratios = slice(ratios, (0,) * (nd + 1), aval.shape + (2 * terms,), (1,) * nd + (2,))
    ratios = min(ratios, dtype(dtypes.finfo(dtype).max))
    tail = mul(t0, add(dtype(0.5), reduce_sum(div(ratios, along_last(_BERNOULLI_COEFS[:terms])),
                                              (nd,))))
    return add(add(head, integral), tail)
