"""Integer-only functions: packbits/unpackbits, and gcd/lcm (Euclid's algorithm, unrolled
for the dtype's worst case).
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _aval, _filled, _iota, _range, _slice_axis, _zeros_like
from didax._src.numpy.shape_ops import ravel, swapaxes
from didax._src.numpy.util import asarray, broadcast_arrays, check_arraylike, promote_dtypes

__all__ = ["packbits", "unpackbits", "gcd", "lcm"]


# --------------------------------------------------------------------------------------
# Bit packing


def packbits(a, axis=None, bitorder="big"):
    """Booleans (nonzero entries) packed 8 to a uint8, along `axis` (flattened if None)."""
    check_arraylike("packbits", a)
    arr = asarray(a)
    if dtypes.kind(_aval(arr).dtype) not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = lax.convert_element_type(ufuncs._to_bool(arr), np.uint8)
    shifts = _iota(np.uint8, (8,))
    if bitorder == "big":
        shifts = lax_shape.rev(shifts, (0,))
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    nd, n = _aval(arr).ndim, _aval(arr).shape[-1]
    if n % 8:
        arr = lax_shape.pad(arr, np.uint8(0), [(0, 0, 0)] * (nd - 1) + [(0, 8 - n % 8, 0)])
    arr = lax_shape.reshape(arr, _aval(arr).shape[:-1] + (_aval(arr).shape[-1] // 8, 8))
    bits = lax.shift_left(arr, lax_shape.broadcast_in_dim(shifts, _aval(arr).shape, (nd,)))
    return swapaxes(lax_red.reduce_or(bits, (nd,)), axis, -1)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    check_arraylike("unpackbits", a)
    arr = asarray(a)
    if _aval(arr).dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    masks = lax.shift_left(np.ones(8, np.uint8), _iota(np.uint8, (8,)))
    if bitorder == "big":
        masks = lax_shape.rev(masks, (0,))
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    nd = _aval(arr).ndim
    full_shape = _aval(arr).shape + (8,)
    spread = lax_shape.broadcast_in_dim(arr, full_shape, tuple(_range(nd)))
    bits = lax.bitwise_and(spread, lax_shape.broadcast_in_dim(masks, full_shape, (nd,)))
    out = lax.convert_element_type(lax.ne(bits, np.uint8(0)), np.uint8)
    out = lax_shape.reshape(out, _aval(arr).shape[:-1] + (_aval(arr).shape[-1] * 8,))
    if count is not None:
        n = _aval(out).shape[-1]
        if count > n:
            out = lax_shape.pad(out, np.uint8(0), [(0, 0, 0)] * (nd - 1) + [(0, count - n, 0)])
        else:
            out = _slice_axis(out, 0, count, nd - 1)
    return swapaxes(out, axis, -1)


# --------------------------------------------------------------------------------------
# Greatest common divisor and least common multiple


def gcd(x1, x2):
    """Greatest common divisor, by Euclid's algorithm unrolled for the worst case of the
    dtype (consecutive Fibonacci numbers need about 1.44 * bits steps)."""
    check_arraylike("gcd", x1, x2)
    x1, x2 = promote_dtypes(asarray(x1), asarray(x2))
    if dtypes.kind(_aval(x1).dtype) not in "iu":
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = broadcast_arrays(ufuncs.abs(x1), ufuncs.abs(x2))
    x1, x2 = lax.max(x1, x2), lax.min(x1, x2)
    zero, one = _zeros_like(x1), _filled(_aval(x1).shape, 1, _aval(x1).dtype)
    for _ in _range(int(1.45 * 8 * _aval(x1).dtype.itemsize) + 2):
        nonzero = lax.ne(x2, zero)
        r = lax.rem(x1, lax.select_n(nonzero, one, x2))
        x1, x2 = lax.select_n(nonzero, x1, x2), lax.select_n(nonzero, zero, r)
    return x1


def lcm(x1, x2):
    check_arraylike("lcm", x1, x2)
    x1, x2 = promote_dtypes(asarray(x1), asarray(x2))
    if dtypes.kind(_aval(x1).dtype) not in "iu":
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    x1, x2 = ufuncs.abs(x1), ufuncs.abs(x2)
    d = gcd(x1, x2)
    safe = ufuncs.where(ufuncs.equal(d, 0), 1, d)
    return ufuncs.where(ufuncs.equal(d, 0), 0,
                        ufuncs.multiply(x1, ufuncs.floor_divide(x2, safe)))
