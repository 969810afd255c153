"""Finite differences and integrals along an axis: diff, ediff1d, gradient, trapezoid,
unwrap.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import reductions, ufuncs
from didax._src.numpy._helpers import (
    _asarray,
    _aval,
    _axis_tuple,
    _concrete_int,
    _range,
    _slice_axis,
)
from didax._src.numpy.joining import concatenate
from didax._src.numpy.shape_ops import moveaxis, ravel
from didax._src.numpy.util import (
    asarray,
    broadcast_to,
    canonical_axis,
    check_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
)

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "unwrap"]


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """n-th discrete difference along `axis` (`!=` for booleans)."""
    check_arraylike("diff", a)
    arr = asarray(a)
    n = _concrete_int(n, "'n' argument of jnp.diff")
    axis = _concrete_int(axis, "'axis' argument of jnp.diff")
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if _aval(arr).ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = canonical_axis(axis, _aval(arr).ndim, "diff")

    def edge(extra):
        extra = asarray(extra)
        if _aval(extra).ndim == 0:
            s = list(_aval(arr).shape)
            s[axis] = 1
            extra = broadcast_to(extra, s)
        return extra

    parts = [edge(prepend)] if prepend is not None else []
    parts += [arr] + ([edge(append)] if append is not None else [])
    if len(parts) > 1:
        arr = concatenate(parts, axis)
    op = ufuncs.not_equal if _aval(arr).dtype == np.bool_ else ufuncs.subtract
    for _ in _range(n):
        arr = op(_slice_axis(arr, 1, None, axis), _slice_axis(arr, 0, -1, axis))
    return arr


def ediff1d(ary, to_end=None, to_begin=None):
    check_arraylike("ediff1d", ary)
    arr = ravel(ary)
    result = lax.sub(_slice_axis(arr, 1, None, 0), _slice_axis(arr, 0, -1, 0))
    dt = _aval(arr).dtype
    if to_begin is not None:
        check_arraylike("ediff1d", to_begin)
        result = concatenate((ravel(_asarray(to_begin, dt)), result))
    if to_end is not None:
        check_arraylike("ediff1d", to_end)
        result = concatenate((result, ravel(_asarray(to_end, dt))))
    return result


def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided at the edges; `varargs` are spacings (scalars
    or coordinate arrays)."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = promote_dtypes_inexact(*(asarray(v) for v in (f, *varargs)))
    nd = _aval(a).ndim

    def along(a, h, ax):
        def sl(x, lo, hi):
            return _slice_axis(x, lo, hi, ax)

        upper = ufuncs.subtract(sl(a, 1, 2), sl(a, 0, 1))
        lower = ufuncs.subtract(sl(a, -1, None), sl(a, -2, -1))
        if _aval(h).ndim == 0:
            inner = ufuncs.true_divide(ufuncs.multiply(ufuncs.subtract(sl(a, 2, None),
                                                                       sl(a, None, -2)), 0.5), h)
            return concatenate((ufuncs.true_divide(upper, h), inner,
                                ufuncs.true_divide(lower, h)), axis=ax)
        if _aval(h).ndim != 1:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        if _aval(h).shape[0] != _aval(a).shape[ax]:
            raise ValueError("Spacing arrays must have the same length as the dimension along "
                             "which the gradient is calculated.")
        shape = [1] * nd
        shape[ax] = _aval(h).shape[0]
        h = lax_shape.reshape(h, shape)
        upper = ufuncs.true_divide(upper, ufuncs.subtract(sl(h, 1, 2), sl(h, 0, 1)))
        lower = ufuncs.true_divide(lower, ufuncs.subtract(sl(h, -1, None), sl(h, -2, -1)))
        dx1 = ufuncs.subtract(sl(h, 1, -1), sl(h, 0, -2))
        dx2 = ufuncs.subtract(sl(h, 2, None), sl(h, 1, -1))
        total = ufuncs.add(dx1, dx2)
        ca = ufuncs.true_divide(ufuncs.negative(dx2), ufuncs.multiply(dx1, total))
        cb = ufuncs.true_divide(ufuncs.subtract(dx2, dx1), ufuncs.multiply(dx1, dx2))
        cc = ufuncs.true_divide(dx1, ufuncs.multiply(dx2, total))
        inner = ufuncs.add(ufuncs.add(ufuncs.multiply(ca, sl(a, 0, -2)),
                                      ufuncs.multiply(cb, sl(a, 1, -1))),
                           ufuncs.multiply(cc, sl(a, 2, None)))
        return concatenate((upper, inner, lower), axis=ax)

    axes = tuple(_range(nd)) if axis is None else tuple(
        canonical_axis(i, nd, "gradient") for i in _axis_tuple(axis))
    if not axes:
        return []
    if min(_aval(a).shape[i] for i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "2 elements are required.")
    if not spacing:
        spacing = [_asarray(1.0, _aval(a).dtype)] * len(axes)
    elif len(spacing) == 1:
        spacing = spacing * len(axes)
    elif len(spacing) != len(axes):
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    out = [along(a, h, ax) for ax, h in zip(axes, spacing)]
    return out[0] if len(axes) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of `y` along `axis` by the trapezoidal rule."""
    if x is None:
        check_arraylike("trapezoid", y)
        (y,) = promote_dtypes_inexact(asarray(y))
        dx = asarray(dx)
        if _aval(dx).ndim > 0:
            dx = moveaxis(lax_shape.broadcast_to_rank(dx, _aval(y).ndim), axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        y, x = promote_dtypes_inexact(asarray(y), asarray(x))
        dx = diff(x) if _aval(x).ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    n = _aval(y).shape[-1]
    if _aval(dx).ndim == 0 or _aval(dx).shape[-1] == 1:
        d = dx if _aval(dx).ndim == 0 else lax_shape.squeeze(dx, (_aval(dx).ndim - 1,))
        ends = ufuncs.add(_slice_axis(y, 0, 1, -1 % _aval(y).ndim),
                          _slice_axis(y, n - 1, n, -1 % _aval(y).ndim))
        ends = lax_shape.squeeze(ends, (_aval(y).ndim - 1,))
        return ufuncs.multiply(d, ufuncs.subtract(reductions.sum(y, -1),
                                                  ufuncs.multiply(0.5, ends)))
    nd = _aval(y).ndim
    pairs = ufuncs.add(_slice_axis(y, 1, None, nd - 1), _slice_axis(y, 0, -1, nd - 1))
    return ufuncs.multiply(0.5, reductions.sum(ufuncs.multiply(dx, pairs), -1))


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """`p` with jumps larger than `discont` replaced by their `period` complement."""
    check_arraylike("unwrap", p)
    p, period = promote_dtypes(asarray(p), asarray(period))
    if dtypes.kind(_aval(p).dtype) == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    axis = canonical_axis(axis, _aval(p).ndim, "unwrap")
    if _aval(p).shape[axis] == 0:
        return p
    if discont is None:
        discont = ufuncs.true_divide(period, 2)
    if dtypes.kind(_aval(p).dtype) in "iu":
        interval = ufuncs.floor_divide(period, 2)
    else:
        interval = ufuncs.true_divide(period, 2)
    dd = diff(p, axis=axis)
    ddmod = ufuncs.subtract(ufuncs.mod(ufuncs.add(dd, interval), period), interval)
    ddmod = ufuncs.where(ufuncs.logical_and(ufuncs.equal(ddmod, ufuncs.negative(interval)),
                                            ufuncs.greater(dd, 0)), interval, ddmod)
    correct = ufuncs.where(ufuncs.less(ufuncs.abs(dd), discont), 0,
                           ufuncs.subtract(ddmod, dd))
    rest = ufuncs.add(_slice_axis(p, 1, None, axis), reductions.cumsum(correct, axis=axis))
    return concatenate((_slice_axis(p, 0, 1, axis), rest), axis=axis)
