"""Functions without a family of their own: nan_to_num, interp, apply_over_axes and NumPy's
print options.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import reduction as lax_red
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _asarray, _aval, _slice_axis, _take
from didax._src.numpy.joining import concatenate
from didax._src.numpy.searching import searchsorted
from didax._src.numpy.shape_ops import expand_dims
from didax._src.numpy.util import asarray, check_arraylike, promote_dtypes_inexact

__all__ = [
    "nan_to_num", "interp", "apply_over_axes", "get_printoptions", "printoptions",
    "set_printoptions", "array_repr", "array_str",
]

array_repr = np.array_repr  # NumPy's own, as in JAX (they read arrays through __array__)
array_str = np.array_str


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN and infinities replaced by finite numbers (the dtype's extremes by default)."""
    check_arraylike("nan_to_num", x)
    x = asarray(x)
    dtype = _aval(x).dtype
    if dtypes.kind(dtype) not in "fc":
        return x
    if dtypes.kind(dtype) == "c":
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = ufuncs.where(ufuncs.isnan(x), _asarray(nan, dtype), x)
    out = ufuncs.where(ufuncs.isposinf(out), _asarray(posinf, dtype), out)
    return ufuncs.where(ufuncs.isneginf(out), _asarray(neginf, dtype), out)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x; `xp` must be increasing."""
    check_arraylike("interp", x, xp, fp)
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if _aval(xp).shape != _aval(fp).shape or _aval(xp).ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promote_dtypes_inexact(x, xp)
    (fp,) = promote_dtypes_inexact(fp)
    extrapolate = []
    for name, side in (("left", left), ("right", right)):
        if isinstance(side, str) and side != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but "
                             f"got: {side!r}")
        extrapolate.append(isinstance(side, str))
    if dtypes.kind(_aval(x).dtype) == "c":
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = ufuncs.abs(period)
        x, xp = ufuncs.remainder(x, period), ufuncs.remainder(xp, period)
        xp, fp = lax_red.sort_key_val(xp, fp, 0)
        xp = concatenate([ufuncs.subtract(_slice_axis(xp, -1, None, 0), period), xp,
                          ufuncs.add(_slice_axis(xp, 0, 1, 0), period)])
        fp = concatenate([_slice_axis(fp, -1, None, 0), fp, _slice_axis(fp, 0, 1, 0)])
    n = _aval(xp).shape[0]
    i = ufuncs.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    im1 = ufuncs.subtract(i, 1)
    df = ufuncs.subtract(_take(fp, i), _take(fp, im1))
    dx = ufuncs.subtract(_take(xp, i), _take(xp, im1))
    delta = ufuncs.subtract(x, _take(xp, im1))
    eps = np.spacing(dtypes.finfo(_aval(xp).dtype).eps)
    dx0 = ufuncs.less_equal(ufuncs.abs(dx), eps)
    f = ufuncs.where(dx0, _take(fp, im1), ufuncs.add(
        _take(fp, im1), ufuncs.multiply(ufuncs.true_divide(delta, ufuncs.where(dx0, 1, dx)), df)))
    if period is None:
        if not extrapolate[0]:
            value = _take(fp, 0) if left is None else left
            f = ufuncs.where(ufuncs.less(x, _take(xp, 0)), value, f)
        if not extrapolate[1]:
            value = _take(fp, n - 1) if right is None else right
            f = ufuncs.where(ufuncs.greater(x, _take(xp, n - 1)), value, f)
    return f


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping the rank."""
    check_arraylike("apply_over_axes", a)
    a = asarray(a)
    for axis in axes:
        b = func(a, axis)
        if _aval(b).ndim == _aval(a).ndim:
            a = b
        elif _aval(b).ndim == _aval(a).ndim - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def get_printoptions():
    return np.get_printoptions()


def printoptions(*args, **kwargs):
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args, **kwargs):
    return np.set_printoptions(*args, **kwargs)
