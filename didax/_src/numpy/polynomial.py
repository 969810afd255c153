"""Polynomials: polyval (Horner's rule) and the Vandermonde matrix (vander).
"""
from __future__ import annotations

import numpy as np

from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _aval, _concrete_int, _const, _filled, _iota, _range
from didax._src.numpy.util import asarray, broadcast_arrays, check_arraylike, promote_dtypes

__all__ = ["polyval", "vander"]


def polyval(p, x, *, unroll=16):
    """p[0] * x**(n-1) + ... + p[n-1] by Horner's rule."""
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(asarray(p), asarray(x))
    shape = np.broadcast_shapes(_aval(p).shape[1:], _aval(x).shape)
    y = _filled(shape, 0, _aval(x).dtype, _aval(x).weak_type)
    for i in _range(_aval(p).shape[0]):
        y = ufuncs.add(ufuncs.multiply(y, x), lax_shape.index_in_dim(p, i, 0, False))
    return y


def vander(x, N=None, increasing=False):
    """Columns are powers of the 1-D `x` (decreasing powers unless `increasing`)."""
    check_arraylike("vander", x)
    x = asarray(x)
    if _aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = _aval(x).shape[0] if N is None else _concrete_int(N, "'N' argument of jnp.vander()")
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = _iota(_aval(x).dtype, (n,))
    if not increasing:
        powers = lax.sub(_const(powers, n - 1), powers)
    base, exponent = broadcast_arrays(lax_shape.expand_dims(x, (1,)),
                                      lax_shape.expand_dims(powers, (0,)))
    return ufuncs.power(base, exponent)
