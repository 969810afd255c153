"""`lax.reduce_precision`: each float rounded to the nearest value of a narrower format
(`exponent_bits`, `mantissa_bits`), kept in its own dtype, as XLA's ReducePrecision:
the mantissa is rounded to nearest, ties to even (a carry may raise the exponent); then,
if the format has fewer exponent bits, values above its largest finite magnitude become
inf of their sign and values at or below its smallest normal exponent (its subnormals
included) become zero of their sign. NaN stays NaN (in bfloat16, mostly the quiet NaN of
its sign: see the impl). Linear: the tangent is rounded alike.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src import core, dtypes
from didax._src.interpreters.batching import defvectorized
from didax._src.interpreters.jvp import deflinear
from didax._src.interpreters.transpose import deflinear_transpose
from didax._src.typecheck import check_dtype, float_

reduce_precision_p = core.primitive("reduce_precision")


def _format(dtype) -> tuple[int, int]:
    """(exponent bits, mantissa bits) of a float dtype."""
    info = dtypes.finfo(dtype)
    return int(info.nexp), int(info.nmant)


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
    x = np.asarray(x)
    exp_bits, mant_bits = _format(x.dtype)
    # (bfloat16 goes through float32, as on XLA's CPU: a NaN comes back as the quiet NaN of
    # its sign unless the format holds float32's)
    as_wide = _format(np.float32) if x.dtype == dtypes.bfloat16 else (exp_bits, mant_bits)
    if exponent_bits >= as_wide[0] and mantissa_bits >= as_wide[1]:
        return x  # (every value is in the format already)
    uint = np.dtype(f"uint{x.dtype.itemsize * 8}")
    bits = np.array(x, ndmin=1).view(uint)  # (an array: NumPy wraps arrays silently)
    one = uint.type(1)
    if mantissa_bits < mant_bits:
        drop = uint.type(mant_bits - mantissa_bits)
        last_kept = one << drop
        bias = ((bits & last_kept) >> drop) + ((last_kept >> one) - one)  # ties to even
        bits = (bits + bias) & ~(last_kept - one)
    if exponent_bits < exp_bits:
        sign = bits & (one << uint.type(8 * uint.itemsize - 1))
        exp_mask = uint.type(((1 << exp_bits) - 1) << mant_bits)
        bias, reduced_bias = (1 << (exp_bits - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = bits & exp_mask
        overflows = exponent > uint.type((bias + reduced_bias) << mant_bits)
        underflows = exponent <= uint.type((bias - reduced_bias) << mant_bits)
        bits = np.where(overflows, sign | exp_mask, np.where(underflows, sign, bits))
    out = bits.astype(uint, copy=False).view(x.dtype).reshape(x.shape)
    nan = x
    if x.dtype == dtypes.bfloat16:
        nan = np.copysign(np.float32(np.nan), x.astype(np.float32)).astype(x.dtype)
    return np.where(np.isnan(x), nan, out)


def _reduce_precision_aval(x, *, exponent_bits, mantissa_bits):
    check_dtype("reduce_precision", x, float_)
    return x


reduce_precision_p.def_impl(_reduce_precision_impl)
reduce_precision_p.def_abstract_eval(_reduce_precision_aval)
deflinear(reduce_precision_p)
deflinear_transpose(reduce_precision_p, lambda ct, aval, **params: reduce_precision_p.bind(
    ct, **params))
defvectorized(reduce_precision_p)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """`operand` rounded to a float format of `exponent_bits` and `mantissa_bits` (XLA's
    ReducePrecision), in its own dtype."""
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError("reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


__all__ = ["reduce_precision"]
