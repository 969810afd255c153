"""Whole-array comparisons: isclose, allclose, array_equal, array_equiv.
"""
from __future__ import annotations

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _all, _aval
from didax._src.numpy.util import (
    asarray,
    broadcast_arrays,
    check_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
)

__all__ = ["isclose", "allclose", "array_equal", "array_equiv"]


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise; infinities are close only to themselves."""
    check_arraylike("isclose", a, b)
    a, b = promote_dtypes(asarray(a), asarray(b))
    a, b = promote_dtypes_inexact(a, b)
    a, b = broadcast_arrays(a, b)
    dtype = _aval(a).dtype
    real = dtypes.finfo(dtype).dtype if dtypes.kind(dtype) == "c" else dtype
    rtol = lax.convert_element_type(rtol, real)
    atol = lax.convert_element_type(atol, real)
    both_nan = lax.bitwise_and(ufuncs.isnan(a), ufuncs.isnan(b))
    finite = ufuncs.isfinite(b)
    in_range = ufuncs.less_equal(lax.abs(lax.sub(a, b)),
                                 ufuncs.add(atol, ufuncs.multiply(rtol, lax.abs(b))))
    out = lax.bitwise_or(lax.eq(a, b), lax.bitwise_and(finite, in_range))
    return lax.bitwise_or(out, both_nan) if equal_nan else out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_arraylike("allclose", a, b)
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """True if the shapes match and every element is equal (NaNs too if `equal_nan`)."""
    a1, a2 = asarray(a1), asarray(a2)
    if _aval(a1).shape != _aval(a2).shape:
        return asarray(False, bool)
    eq = ufuncs.equal(a1, a2)
    if equal_nan:
        eq = lax.bitwise_or(eq, lax.bitwise_and(ufuncs.isnan(a1), ufuncs.isnan(a2)))
    return _all(eq)


def array_equiv(a1, a2):
    """True if the arrays broadcast together and are equal everywhere."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        eq = ufuncs.equal(a1, a2)
    except (ValueError, TypeError):
        return asarray(False)
    return _all(eq)
