"""Modified Bessel functions of order 0 and 1 (`scipy.special.i0, i0e, i1, i1e`) from the
scaled lax primitives; I_n(x) = exp(|x|) i_ne(x), so they overflow only where I_n does."""
from __future__ import annotations

from didax._src.lax import elementwise as lax
from didax._src.lax.bessel import bessel_i0e, bessel_i1e
from didax._src.numpy.util import promote_args_inexact

__all__ = ["i0", "i0e", "i1", "i1e"]


def i0e(x):
    x, = promote_args_inexact("i0e", x)
    return bessel_i0e(x)


def i0(x):
    x, = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), bessel_i0e(x))


def i1e(x):
    x, = promote_args_inexact("i1e", x)
    return bessel_i1e(x)


def i1(x):
    x, = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), bessel_i1e(x))
