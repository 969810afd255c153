"""Settings that only steer XLA's code generation: dot algorithms and the accuracy of unary
functions. didax accepts them so that programs written for JAX run, and says here what it does
with each.

A `DotAlgorithm` or `DotAlgorithmPreset` (or a preset's name) is accepted wherever a dot product
takes `precision`; it is kept in the equation's `precision` parameter and printed as JAX prints
it. The product is computed as with the default precision: NumPy multiplies in the operands'
own dtype, at full precision, and accumulates 16-bit floats in float32 (so `F16_F16_F32` and
`BF16_BF16_F32` are honoured as they stand, and `F16_F16_F16`/`BF16_BF16_BF16` accumulate more
precisely than they ask). The operands are never rounded to a preset's narrower input types: the
`BF16_BF16_F32*` and `TF32_TF32_F32*` presets give float32 products, as JAX gives on CPU. The
result dtype is the one `preferred_element_type` (or the operands) give, as in JAX. Unlike JAX
on CPU, which rejects most presets when it compiles, didax accepts every one.
"""
from __future__ import annotations

import enum
from typing import NamedTuple

import ml_dtypes
import numpy as np

from didax._src import dtypes


class DotAlgorithm(NamedTuple):
    """The input, accumulation and decomposition types of a dot product (see module doc)."""

    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


_F8 = (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz,
       ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e4m3b11fnuz)
_BF16, _F16, _F32, _F64 = ml_dtypes.bfloat16, np.float16, np.float32, np.float64


class DotAlgorithmPreset(enum.Enum):
    """The named dot algorithms, `LHS_RHS_ACCUMULATION` (see module doc for what didax does)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    def __str__(self):
        return self.name

    @property
    def accumulation_type(self):
        """The accumulator's scalar type, or None where the operands decide it."""
        if self.name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        return {"F16": _F16, "BF16": _BF16, "F32": _F32, "F64": _F64}[_accumulation_word(self)]

    @property
    def supported_lhs_types(self):
        """The operand types the algorithm is defined for (None: any)."""
        return _OPERAND_TYPES.get(self.name)

    @property
    def supported_rhs_types(self):
        return self.supported_lhs_types

    def supported_output_types(self, lhs_dtype, rhs_dtype):
        """The result types the algorithm can produce for these operand types (None: any)."""
        if self.name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        if self.name.startswith("ANY_F8_ANY_F8_F32"):
            return (_F32, _F16, _BF16) + _F8
        if self.name == "F16_F16_F32":
            return (_F32, _F16) if _promoted(lhs_dtype, rhs_dtype) == _F16 else (_F32,)
        if self.name == "BF16_BF16_F32":
            return (_F32, _BF16) if _promoted(lhs_dtype, rhs_dtype) == _BF16 else (_F32,)
        return (self.accumulation_type,)


def _promoted(lhs_dtype, rhs_dtype) -> np.dtype:
    return dtypes.promote_types(lhs_dtype, rhs_dtype)


def _accumulation_word(preset) -> str:
    """The ACCUMULATION of LHS_RHS_ACCUMULATION, past suffixes like _X3 and _FAST_ACCUM."""
    name = preset.name.removesuffix("_FAST_ACCUM")
    words = name.split("_")
    return words[-2] if words[-1].startswith("X") else words[-1]


_OPERAND_TYPES = {
    "F16_F16_F16": (_F16,), "F16_F16_F32": (_F16,),
    "BF16_BF16_BF16": (_BF16, _F32), "BF16_BF16_F32": (_BF16, _F32),
    "BF16_BF16_F32_X3": (_F32,), "BF16_BF16_F32_X6": (_F32,), "BF16_BF16_F32_X9": (_F32,),
    "TF32_TF32_F32": (_F32,), "TF32_TF32_F32_X3": (_F32,),
    "F32_F32_F32": (_F32,), "F64_F64_F64": (_F64,),
}


def as_dot_algorithm(precision):
    """A DotAlgorithm or preset given as `precision` (a preset may be named), else None."""
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    return None


class AccuracyMode(enum.Enum):
    """The accuracy asked of a unary function on accelerators. NumPy computes the same values
    whichever is asked for, so didax has no use for it beyond accepting it."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """Error bounds asked of a unary function on accelerators: at most two of an absolute and
    a relative tolerance and a number of ulps. didax computes the same values whatever they
    are (NumPy's functions are accurate to a few ulps), so it only checks and keeps them."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __eq__(self, other):
        return (isinstance(other, Tolerance)
                and (self.atol, self.rtol, self.ulps) == (other.atol, other.rtol, other.ulps))

    def __hash__(self):
        return hash((Tolerance, self.atol, self.rtol, self.ulps))

    def __repr__(self):
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"
