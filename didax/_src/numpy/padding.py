"""jnp.pad with every NumPy string mode, each built one axis at a time from lax pad, slices,
rev and concatenate.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src import dtypes
from didax._src.core import ArrayBase
from didax._src.lax import elementwise as lax
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _any, _aval, _const, _filled, _range
from didax._src.numpy.creation import linspace
from didax._src.numpy.tiling import repeat
from didax._src.numpy.util import (
    asarray,
    broadcast_to,
    check_arraylike,
    concrete_or_error,
    promote_dtypes_inexact,
)

__all__ = ["pad"]


def _pad_pairs(values, nd, name):
    """NumPy's accepted forms ((nd, 2), (1, 2), (2,), (1,), scalar) as nd (before, after) pairs."""
    if isinstance(values, ArrayBase):
        values = concrete_or_error(values, f"{name} argument of jnp.pad")
    try:
        arr = np.asarray(values)
    except ValueError as e:
        raise TypeError(f"`{name}` entries must be the same shape: {values}") from e
    if arr.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if arr.shape == (nd, 2):
        return tuple((arr[i, 0], arr[i, 1]) for i in _range(nd))
    if arr.shape == (1, 2):
        return ((arr[0, 0], arr[0, 1]),) * nd
    if arr.shape == (2,):
        return ((arr[0], arr[1]),) * nd
    if arr.shape in ((1,), ()):
        v = arr.reshape(())[()]
        return ((v, v),) * nd
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {arr.shape}. Valid "
                     f"shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _check_no_padding(pads, mode):
    if pads[0] > 0 or pads[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_constant(x, pad_width, constant_values):
    aval = _aval(x)
    values = lax.convert_element_type(asarray(constant_values), aval.dtype, aval.weak_type)
    nd = aval.ndim
    vshape = _aval(values).shape
    if vshape == () or vshape == (1,):
        return lax_shape.pad(x, lax_shape.reshape(values, ()),
                             [(lo, hi, 0) for lo, hi in pad_width])
    if len(vshape) == 1 and vshape[0] != 2:
        raise ValueError(f"jnp.pad: constant_values has unsupported shape {vshape}. If the "
                         "shape is 1D or 2D, the last dimension must be of size 1 or 2.")
    values = broadcast_to(values, (nd, 2))
    for i, (lo, hi) in enumerate(pad_width):
        for side, width in ((0, lo), (1, hi)):
            if width:
                config = [(0, 0, 0)] * nd
                config[i] = (width, 0, 0) if side == 0 else (0, width, 0)
                v = lax_shape.reshape(lax_shape.slice(values, (i, side), (i + 1, side + 1)), ())
                x = lax_shape.pad(x, v, config)
    return x


def _pad_wrap(x, pad_width):
    for i, (lo, hi) in enumerate(pad_width):
        n = _aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), "wrap")
            continue
        left_reps, left_rem = divmod(lo, n)
        right_reps, right_rem = divmod(hi, n)
        parts = [lax_shape.slice_in_dim(x, n - left_rem, n, 1, i)] if left_rem else []
        parts += [x] * (left_reps + right_reps + 1)
        parts += [lax_shape.slice_in_dim(x, 0, right_rem, 1, i)] if right_rem else []
        x = lax_shape.concatenate(parts, i)
    return x


def _pad_symmetric_or_reflect(x, pad_width, mode, reflect_type):
    for i, (lo, hi) in enumerate(pad_width):
        n = _aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), mode)
            continue
        offset = 1 if mode == "reflect" and n > 1 else 0
        for before, padding in ((True, lo), (False, hi)):
            edge = lax_shape.slice_in_dim(x, *((0, 1) if before else (_aval(x).shape[i] - 1,
                                                                     _aval(x).shape[i])), 1, i)
            while padding > 0:
                cur = min(padding, n - offset)
                padding -= cur
                size_i = _aval(x).shape[i]
                if before:
                    part = lax_shape.slice_in_dim(x, offset, offset + cur, 1, i)
                else:
                    stop = size_i if mode == "symmetric" or n == 1 else size_i - 1
                    part = lax_shape.slice_in_dim(x, stop - cur, stop, 1, i)
                part = lax_shape.rev(part, (i,))
                if reflect_type == "odd":
                    part = ufuncs.subtract(ufuncs.multiply(2, edge), part)
                    if n > 1:
                        k = _aval(part).shape[i]
                        edge = lax_shape.slice_in_dim(part, *((0, 1) if before else (k - 1, k)),
                                                      1, i)
                x = lax_shape.concatenate([part, x] if before else [x, part], i)
    return x


def _pad_edge(x, pad_width):
    for i, (lo, hi) in enumerate(pad_width):
        n = _aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), "edge")
            continue
        before = repeat(lax_shape.slice_in_dim(x, 0, 1, 1, i), lo, axis=i)
        after = repeat(lax_shape.slice_in_dim(x, n - 1, n, 1, i), hi, axis=i)
        x = lax_shape.concatenate([before, x, after], i)
    return x


def _pad_linear_ramp(x, pad_width, end_values):
    aval = _aval(x)
    for i, ((lo, hi), (end_lo, end_hi)) in enumerate(zip(pad_width, end_values)):
        n = _aval(x).shape[i]
        first = lax_shape.squeeze(lax_shape.slice_in_dim(x, 0, 1, 1, i), (i,))
        last = lax_shape.squeeze(lax_shape.slice_in_dim(x, n - 1, n, 1, i), (i,))
        ramp_lo = linspace(end_lo, first, lo, endpoint=False, dtype=aval.dtype, axis=i)
        ramp_hi = linspace(end_hi, last, hi, endpoint=False, dtype=aval.dtype, axis=i)
        ramp_lo = lax.convert_element_type(ramp_lo, aval.dtype, aval.weak_type)
        ramp_hi = lax.convert_element_type(lax_shape.rev(ramp_hi, (i,)), aval.dtype,
                                           aval.weak_type)
        x = lax_shape.concatenate([ramp_lo, x, ramp_hi], i)
    return x


def _pad_stats(x, pad_width, stat_length, stat_func):
    aval = _aval(x)
    for i, (lo, hi) in enumerate(pad_width):
        n = _aval(x).shape[i]
        if stat_length is None:
            stat_lo = stat_hi = stat_func(x, i)
        else:
            len_lo, len_hi = stat_length[i]
            if len_lo == 0 or len_hi == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            stat_lo = stat_func(lax_shape.slice_in_dim(x, 0, min(len_lo, n), 1, i), i)
            stat_hi = stat_func(lax_shape.slice_in_dim(x, n - min(len_hi, n), n, 1, i), i)
        stats = []
        for stat in (stat_lo, stat_hi):
            if dtypes.issubdtype(aval.dtype, np.integer):
                stat = ufuncs.round(stat)
            stats.append(lax.convert_element_type(stat, aval.dtype, aval.weak_type))
        x = lax_shape.concatenate([repeat(stats[0], lo, axis=i), x,
                                   repeat(stats[1], hi, axis=i)], i)
    return x


def _stat_max(x, axis):
    return lax_shape.expand_dims(lax_red.reduce_max(x, (axis,)), (axis,))


def _stat_min(x, axis):
    return lax_shape.expand_dims(lax_red.reduce_min(x, (axis,)), (axis,))


def _stat_mean(x, axis):
    (x,) = promote_dtypes_inexact(x)
    n = _aval(x).shape[axis]
    total = lax_shape.expand_dims(lax_red.reduce_sum(x, (axis,)), (axis,))
    return lax.div(total, _const(total, n))


def _stat_median(x, axis):
    """Mean of the middle one or two sorted values; NaN if the slice holds a NaN."""
    (x,) = promote_dtypes_inexact(x)
    n = _aval(x).shape[axis]
    s = lax_red.sort(x, axis)
    mid = lax.div(lax.add(lax_shape.slice_in_dim(s, (n - 1) // 2, (n - 1) // 2 + 1, 1, axis),
                          lax_shape.slice_in_dim(s, n // 2, n // 2 + 1, 1, axis)),
                  _const(x, 2))
    has_nan = lax_shape.expand_dims(_any(ufuncs.isnan(x), (axis,)), (axis,))
    return lax.select_n(has_nan, mid, _filled(_aval(mid).shape, np.nan, _aval(mid).dtype))


_STAT_FUNCS = {"maximum": _stat_max, "minimum": _stat_min, "mean": _stat_mean,
               "median": _stat_median}
_PAD_KWARGS = {"empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
               "linear_ramp": ["end_values"], "maximum": ["stat_length"],
               "mean": ["stat_length"], "median": ["stat_length"], "minimum": ["stat_length"],
               "reflect": ["reflect_type"], "symmetric": ["reflect_type"]}


def pad(array, pad_width, mode="constant", **kwargs):
    """NumPy's `pad` for every string mode (callable modes are not supported)."""
    check_arraylike("pad", array)
    x = asarray(array)
    nd = _aval(x).ndim
    if callable(mode):
        raise NotImplementedError("jnp.pad with a callable mode needs vmap, which didax does not "
                                  "provide yet; use one of the string modes.")
    if mode not in _PAD_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if nd == 0:
        return x
    pairs = _pad_pairs(pad_width, nd, "pad_width")
    try:
        pad_width = tuple((operator.index(lo), operator.index(hi)) for lo, hi in pairs)
    except TypeError:
        raise TypeError("`pad_width` must be of integral type.") from None
    if any(lo < 0 or hi < 0 for lo, hi in pad_width):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(x, pad_width, kwargs.get("constant_values", 0))
    if mode == "wrap":
        return _pad_wrap(x, pad_width)
    if mode in ("symmetric", "reflect"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
        return _pad_symmetric_or_reflect(x, pad_width, mode, reflect_type)
    if mode == "edge":
        return _pad_edge(x, pad_width)
    if mode == "linear_ramp":
        end_values = _pad_pairs(kwargs.get("end_values", 0), nd, "end_values")
        return _pad_linear_ramp(x, pad_width, end_values)
    if mode == "empty":
        return _pad_constant(x, pad_width, 0)
    stat_length = kwargs.get("stat_length")
    if stat_length is not None:
        stat_length = tuple((operator.index(lo), operator.index(hi))
                            for lo, hi in _pad_pairs(stat_length, nd, "stat_length"))
    return _pad_stats(x, pad_width, stat_length, _STAT_FUNCS[mode])
