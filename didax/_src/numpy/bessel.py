"""`jnp.i0`, the modified Bessel function of order 0, as exp(|x|) times `lax.bessel_i0e`.

Its derivative is I1(x) = exp(|x|) i1e(x) with the tangent zeroed where x == 0, as JAX
defines it (so its second derivative at 0 is 0, not I0''(0) = 1/2).
"""
from __future__ import annotations

import numpy as np

from didax._src.core import get_aval
from didax._src.lax import elementwise as lax
from didax._src.lax.bessel import bessel_i0e, bessel_i1e
from didax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from didax._src.primitives.custom_derivatives import custom_jvp

__all__ = ["i0"]


def i0(x):
    check_arraylike("i0", x)
    x, = promote_dtypes_inexact(x)
    if not np.issubdtype(get_aval(x).dtype, np.floating):
        raise ValueError(f"Unsupported input type to didax.numpy.i0: {get_aval(x).dtype}; "
                         "it takes real floating-point (or integer) values")
    return _i0(x)


@custom_jvp
def _i0(x):
    ax = lax.abs(x)
    return lax.mul(lax.exp(ax), bessel_i0e(ax))


@_i0.defjvp
def _i0_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    zero = lax.full_like(x, 0)
    t = lax.select_n(lax.eq(x, zero), t, zero)
    return _i0(x), lax.mul(t, lax.mul(lax.exp(lax.abs(x)), bessel_i1e(x)))
