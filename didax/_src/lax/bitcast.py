"""`bitcast_convert_type`: the same bits read as another dtype.

Between dtypes of one width the shape stays; to a narrower dtype a trailing axis of
(wide bits / narrow bits) elements appears, and from a narrower one that trailing axis goes.
The result does not vary smoothly with the input, so its tangent is zero (as in JAX).
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ShapedArray
from didax._src.interpreters.batching import bdim_at_front
from didax._src.interpreters.jvp import defjvp_zero

bitcast_convert_type_p = core.primitive("bitcast_convert_type")


def _bits(dtype) -> int:
    return np.dtype(dtype).itemsize * 8


def _bitcast_shape(shape, old, new):
    a, b = _bits(old), _bits(new)
    if a == b:
        return tuple(shape)
    if a > b:
        return tuple(shape) + (a // b,)
    if not shape or shape[-1] * a != b:
        last = shape[-1] if shape else "()"
        raise ValueError(f"bitcast_convert_type: converting an array of shape {tuple(shape)} "
                         f"from {np.dtype(old).name} ({a} bits) to {np.dtype(new).name} ({b} "
                         f"bits) needs a last axis of {b // a} elements, got {last}")
    return tuple(shape[:-1])


def _bitcast_impl(x, *, new_dtype):
    x = np.array(x, order="C")
    shape = _bitcast_shape(x.shape, x.dtype, new_dtype)
    wide = x[..., None] if _bits(x.dtype) >= _bits(new_dtype) else x  # a last axis to rescale
    return wide.view(new_dtype).reshape(shape)


def _bitcast_aval(x, *, new_dtype):
    if x.dtype != new_dtype and any(d == dtypes.float0 or dtypes.kind(d) in "bc"
                                    for d in (x.dtype, np.dtype(new_dtype))):
        raise TypeError(f"bitcast_convert_type does not convert {x.dtype.name} to "
                        f"{np.dtype(new_dtype).name}: bool and complex values are bitcast only "
                        "to their own dtype (use .view() on a NumPy array for their bytes)")
    return ShapedArray(_bitcast_shape(x.shape, x.dtype, new_dtype), new_dtype)


bitcast_convert_type_p.def_impl(_bitcast_impl)
bitcast_convert_type_p.def_abstract_eval(_bitcast_aval)
defjvp_zero(bitcast_convert_type_p)


@bitcast_convert_type_p.def_batch
def _bitcast_batch(size, vals, dims, *, new_dtype):
    (x,), (d,) = vals, dims
    return bitcast_convert_type_p.bind(bdim_at_front(x, d, size), new_dtype=new_dtype), 0


def bitcast_convert_type(operand, new_dtype):
    """`operand`'s bits as `new_dtype` (lax.bitcast_convert_type)."""
    new_dtype = dtypes.canonicalize_dtype(np.dtype(new_dtype))
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


__all__ = ["bitcast_convert_type"]
