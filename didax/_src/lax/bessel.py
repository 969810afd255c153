"""The exponentially scaled modified Bessel functions of order 0 and 1 as elementwise
primitives (`lax.bessel_i0e`, `lax.bessel_i1e`); their NumPy impls are in
`bessel_algorithms`, and each one's derivative is written with the other:
  d/dx i0e(x) = i1e(x) - sign(x) i0e(x),
  d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x),  1/2 at x = 0 (i1e(x) ~ x/2 there).
"""
from __future__ import annotations

import numpy as np

from didax._src.core import get_aval
from didax._src.interpreters.jvp import defjvp2
from didax._src.lax.base import unop
from didax._src.lax.elementwise import (
    _bind1,
    abs,
    add,
    div,
    full_like,
    gt,
    mul,
    select_n,
    sign,
    sub,
)
from didax._src.numerics import bessel as bessel_algorithms
from didax._src.typecheck import const_like, float_

bessel_i0e_p = unop("bessel_i0e", float_, bessel_algorithms.i0e)
bessel_i0e = _bind1(bessel_i0e_p)
bessel_i0e.__doc__ = "Elementwise exponentially scaled modified Bessel function exp(-|x|) I0(x)."

bessel_i1e_p = unop("bessel_i1e", float_, bessel_algorithms.i1e)
bessel_i1e = _bind1(bessel_i1e_p)
bessel_i1e.__doc__ = "Elementwise exponentially scaled modified Bessel function exp(-|x|) I1(x)."

defjvp2(bessel_i0e_p, lambda g, ans, x: mul(g, sub(bessel_i1e(x), mul(sign(x), ans))))


def _i1e_slope(g, ans, x):
    # Below eps, 1/x would overflow where the slope is 1/2 to working precision.
    eps = float(np.finfo(get_aval(x).dtype).eps)
    away = gt(abs(x), full_like(x, eps))
    safe_x = select_n(away, full_like(x, eps), x)
    slope = sub(bessel_i0e(safe_x), mul(bessel_i1e(safe_x), add(sign(safe_x),
                                                                div(const_like(x, 1), safe_x))))
    return mul(g, select_n(away, full_like(x, 0.5), slope))


defjvp2(bessel_i1e_p, _i1e_slope)
