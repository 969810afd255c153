"""`lax.scaled_dot`: a dot product of block-scaled operands (microscaling formats).

Each scale covers a block of consecutive elements along the contracting dimension (its size
divides the operand's). As XLA computes it on CPU, the operands and the scales are rounded to
bfloat16, multiplied in bfloat16, and the products summed in float32 before the result is cast
to `preferred_element_type`. It is a composition of didax's primitives, so unlike JAX's (which
has no derivative rules) it can be differentiated.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from didax._src import dtypes
from didax._src.core import get_aval
from didax._src.lax.dot import dot_general
from didax._src.lax.elementwise import convert_element_type, mul
from didax._src.lax.shape import broadcast_in_dim, reshape

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _default_dimension_numbers(ndim: int):
    if ndim == 2:
        return ((1,), (0,)), ((), ())
    if ndim == 3:
        return ((2,), (1,)), ((0,), (0,))
    raise TypeError(f"scaled_dot: dimension_numbers are needed for operands of rank {ndim} "
                    "(the defaults cover matrices and batches of matrices).")


def _scaled(side: str, x, scale, contracting: int):
    """x times its scale repeated over blocks of the contracting dimension, in bfloat16."""
    x = convert_element_type(x, _BF16)
    if scale is None:
        return x
    shape, scale_shape = get_aval(x).shape, get_aval(scale).shape
    if len(scale_shape) != len(shape):
        raise TypeError(f"scaled_dot: {side} scale of shape {scale_shape} must have the rank "
                        f"of {side} of shape {shape}.")
    for d, (n, m) in enumerate(zip(shape, scale_shape)):
        if d == contracting:
            if m == 0 or n % m:
                raise TypeError(f"{side.upper()} contracting dim {d} of size {n} must be "
                                f"divisible by its scale's dim size {m}.")
        elif n != m:
            raise TypeError(f"scaled_dot: {side} scale of shape {scale_shape} must match {side} "
                            f"of shape {shape} in every dimension but the contracting one "
                            f"({d}).")
    block = shape[contracting] // scale_shape[contracting]
    blocked = scale_shape[:contracting + 1] + (block,) + scale_shape[contracting + 1:]
    where = tuple(d + (d > contracting) for d in range(len(shape)))
    repeated = reshape(broadcast_in_dim(convert_element_type(scale, _BF16), blocked, where),
                       shape)
    return mul(x, repeated)


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """(lhs * lhs_scale) @ (rhs * rhs_scale) under `dimension_numbers` (see module doc);
    the result is bfloat16 unless `preferred_element_type` says otherwise."""
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    if dimension_numbers is None:
        if len(lhs_aval.shape) != len(rhs_aval.shape):
            raise TypeError(f"scaled_dot: operands of ranks {len(lhs_aval.shape)} and "
                            f"{len(rhs_aval.shape)} need dimension_numbers.")
        dimension_numbers = _default_dimension_numbers(len(lhs_aval.shape))
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lc) != 1 or len(rc) != 1:
        raise TypeError("scaled_dot: exactly one contracting dimension per operand is "
                        f"supported, got {dimension_numbers}.")
    out_dtype = (_BF16 if preferred_element_type is None else
                 dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "scaled_dot"))
    a = _scaled("lhs", lhs, lhs_scale, lc[0])
    b = _scaled("rhs", rhs, rhs_scale, rc[0])
    out = dot_general(a, b, dimension_numbers, preferred_element_type=np.float32)
    return convert_element_type(out, out_dtype)
