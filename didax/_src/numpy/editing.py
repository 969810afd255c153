"""delete, insert and trim_zeros: entries removed or added at positions that must be concrete,
because they set the output shape (the values themselves may be traced).
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.core import ArrayBase
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy._helpers import _aval, _axis_tuple, _concrete_int, _range, _slice, _take
from didax._src.numpy.shape_ops import moveaxis, ravel
from didax._src.numpy.util import (
    array,
    asarray,
    broadcast_to,
    canonical_axis,
    check_arraylike,
    concrete_or_error,
)

__all__ = ["delete", "insert", "trim_zeros"]


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """`arr` without the entries at `obj` (an int, a slice, ints or a bool mask) along `axis`."""
    check_arraylike("delete", arr)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, _aval(a).ndim, "delete")
    n = _aval(a).shape[axis]
    if isinstance(obj, _slice):
        keep = np.ones(n, bool)
        keep[obj] = False
    else:
        check_arraylike("delete", a, obj)
        idx = np.asarray(concrete_or_error(obj, "'obj' array argument of jnp.delete()"))
        if idx.dtype == np.bool_:
            if idx.shape != (n,):
                raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                                 "one-dimensional with length matching specified axis.")
            keep = ~idx
        elif dtypes.issubdtype(idx.dtype, np.integer) or idx.size == 0:
            if np.any((idx < -n) | (idx >= n)):
                raise IndexError(f"index out of bounds for axis {axis} with size {n}: {idx}")
            keep = np.ones(n, bool)
            keep[idx.astype(np.int64)] = False
        else:
            raise ValueError(f"np.delete(arr, obj): got obj.dtype={idx.dtype}; must be integer "
                             "or bool.")
    return _take(a, np.flatnonzero(keep).astype(np.int32), axis)


def insert(arr, obj, values, axis=None):
    """`arr` with `values` inserted before the positions `obj` (concrete) along `axis`."""
    check_arraylike("insert", arr, 0 if isinstance(obj, _slice) else obj, values)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(_concrete_int(axis, "axis argument of jnp.insert()"), _aval(a).ndim,
                          "insert")
    n = _aval(a).shape[axis]
    if isinstance(obj, _slice):
        idx = np.arange(*obj.indices(n))
    else:
        idx = np.asarray(concrete_or_error(obj, "'obj' argument of jnp.insert()"))
    if idx.ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not dtypes.issubdtype(idx.dtype, np.integer):
        if idx.size == 0 and not isinstance(obj, ArrayBase):
            idx = idx.astype(int)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    vals = array(values, ndmin=_aval(a).ndim)
    vals = lax.convert_element_type(vals, _aval(a).dtype, _aval(a).weak_type)
    if idx.size == 1:
        if idx.ndim == 0:
            vals = moveaxis(vals, 0, axis)
        idx = np.full(_aval(vals).shape[axis], idx.reshape(()))
    n_insert = np.broadcast_shapes(idx.shape, (_aval(vals).shape[axis],))[0]
    idx = np.broadcast_to(idx, (n_insert,))
    out_shape = list(_aval(a).shape)
    out_shape[axis] = n_insert
    vals = broadcast_to(vals, out_shape)
    idx = np.clip(np.where(idx < 0, idx + n, idx), 0, n)
    # NumPy's rule: values for equal positions keep their order (a stable sort).
    values_pos = idx.copy()
    values_pos[np.argsort(idx, kind="stable")] += np.arange(n_insert)
    source = np.empty(n + n_insert, np.int64)
    keep = np.ones(n + n_insert, bool)
    keep[values_pos] = False
    source[keep] = np.arange(n)
    source[values_pos] = n + np.arange(n_insert)
    both = lax_shape.concatenate([a, vals], axis)
    return _take(both, source.astype(np.int32), axis)


def trim_zeros(filt, trim="fb", axis=None):
    """`filt` without its leading ('f') and/or trailing ('b') zeros; `filt` must be concrete."""
    check_arraylike("trim_zeros", filt)
    filt = asarray(filt)
    value = np.asarray(concrete_or_error(filt, "the `filt` argument of jnp.trim_zeros"))
    nd = value.ndim
    axes = set(_range(nd)) if axis is None else {canonical_axis(a, nd, "trim_zeros")
                                                   for a in _axis_tuple(axis)}
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt
    for ax in sorted(axes):
        mask = np.any(value != 0, axis=tuple(i for i in _range(nd) if i != ax))
        if not mask.any():
            start, stop = 0, 0
        else:
            start = int(mask.argmax()) if "f" in trim else 0
            stop = value.shape[ax] - int(mask[::-1].argmax()) if "b" in trim else value.shape[ax]
        filt = lax_shape.slice_in_dim(filt, start, stop, 1, ax)
    return filt
