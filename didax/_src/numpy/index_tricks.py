"""Index helpers: ix_, ravel_multi_index, unravel_index and NumPy's index-trick objects
mgrid, ogrid, r_, c_, s_ and index_exp (JAX's index_tricks.py).
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import dtypes
from didax._src.core import ArrayBase
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import (
    _asarray,
    _aval,
    _concrete_int,
    _default_int,
    _filled,
    _range,
    _slice,
    _user_dtype,
)
from didax._src.numpy.creation import arange, linspace, meshgrid
from didax._src.numpy.joining import concatenate, stack
from didax._src.numpy.shape_ops import expand_dims, transpose
from didax._src.numpy.util import array, asarray, check_arraylike, concrete_or_error, promote_dtypes

__all__ = [
    "ix_", "ravel_multi_index", "unravel_index", "mgrid", "ogrid", "r_", "c_", "s_",
    "index_exp",
]


# --------------------------------------------------------------------------------------
# Index arrays


def ix_(*args):
    """Open mesh from 1-D index arrays: the i-th output varies along axis i only."""
    check_arraylike("ix", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if _aval(a).ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{_aval(a).shape}")
        if _aval(a).dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = _aval(a).shape[0]
        if _aval(a).shape[0] == 0:
            out.append(_filled(shape, 0, _default_int()))
        else:
            out.append(lax_shape.broadcast_in_dim(a, shape, (i,)))
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices of the coordinate arrays `multi_index` in an array of shape `dims`."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(_concrete_int(d, "in `dims` argument of ravel_multi_index().") for d in dims)
    check_arraylike("ravel_multi_index", *multi_index)
    idx = [asarray(i) for i in multi_index]
    if dtype is None:
        dtype = dtypes.result_type(int, *idx)
    else:
        dtype = _user_dtype(dtype, "ravel_multi_index")
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if math.prod(dims) - 1 > dtypes.iinfo(dtype).max:
        raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold "
                         f"flattened index for dims={dims}. Use the dtype argument to pass a "
                         "suitable dtype.")
    for i in idx:
        if not dtypes.issubdtype(_aval(i).dtype, np.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for i, d in zip(idx, dims):
            v = np.asarray(concrete_or_error(
                i, "the indices checked by ravel_multi_index(mode='raise') (use mode='wrap' "
                   "or mode='clip' under transformations)"))
            if np.any((v < 0) | (v >= d)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        idx = [ufuncs.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [ufuncs.remainder(i, d) for i, d in zip(idx, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or "
                         "'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = _asarray(0, dtype)
    for i, s in zip(idx, strides):
        result = ufuncs.add(result, ufuncs.multiply(lax.convert_element_type(i, dtype), int(s)))
    return result


def unravel_index(indices, shape):
    """Coordinates of flat `indices` in an array of `shape`; out-of-range ones are clipped."""
    check_arraylike("unravel_index", indices)
    idx = asarray(indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        idx, out[i] = ufuncs.divmod(idx, s)
    oob_pos = ufuncs.greater(idx, 0)
    if dtypes.kind(_aval(idx).dtype) == "u":
        oob_neg = asarray(False)
    else:
        oob_neg = ufuncs.less(idx, -1)
    return tuple(ufuncs.where(oob_pos, s - 1, ufuncs.where(oob_neg, 0, i))
                 for s, i in zip(shape, out))


# --------------------------------------------------------------------------------------
# Index-trick objects: mgrid, ogrid, r_, c_


def _grid_from_slice(s, op_name):
    start = concrete_or_error(s.start, f"slice start of jnp.{op_name}") if isinstance(
        s.start, ArrayBase) else s.start
    stop = concrete_or_error(s.stop, f"slice stop of jnp.{op_name}") if isinstance(
        s.stop, ArrayBase) else s.stop
    step = s.step
    start = start or 0
    step = step or 1
    if np.iscomplex(step):
        return linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


class _Mgrid:
    """`mgrid[0:3, 0:2]`: dense coordinate grids built from slices (a complex step is a
    number of points, as in NumPy)."""

    def __getitem__(self, key):
        if isinstance(key, _slice):
            return _grid_from_slice(key, "mgrid")
        grids = promote_dtypes(*(_grid_from_slice(k, "mgrid") for k in key))
        out = meshgrid(*grids, indexing="ij", sparse=False)
        return stack(out, 0) if out else arange(0)


class _Ogrid:
    """`ogrid[0:3, 0:2]`: like mgrid, but open (broadcastable) grids."""

    def __getitem__(self, key):
        if isinstance(key, _slice):
            return _grid_from_slice(key, "ogrid")
        grids = promote_dtypes(*(_grid_from_slice(k, "ogrid") for k in key))
        return meshgrid(*grids, indexing="ij", sparse=True)


class _AxisConcat:
    """NumPy's r_/c_: concatenation of arrays, scalars and slices (grids), with an optional
    leading directive string 'axis,ndmin,trans1d' or 'r'/'c'."""

    axis = 0
    ndmin = 1
    trans1d = -1
    op_name = "r_"

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if isinstance(key[0], str):
            directive, key = key[0], key[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = list(map(int, vec))
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, nmin, trans1d, matrix = params
        out = []
        for item in key:
            if isinstance(item, _slice):
                obj, item_ndim = _grid_from_slice(item, self.op_name), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                obj = asarray(item)
                item_ndim = _aval(obj).ndim
            obj = array(obj, copy=False, ndmin=nmin)
            if trans1d != -1 and nmin - item_ndim > 0:
                order = tuple(_range(nmin))
                shift = nmin - abs(nmin + trans1d + 1) % nmin
                obj = transpose(obj, order[shift:] + order[:shift])
            out.append(obj)
        res = concatenate(tuple(out), axis=axis)
        if matrix != -1 and _aval(res).ndim == 1:
            res = expand_dims(res, matrix)
        return res

    def __len__(self):
        return 0


class _RClass(_AxisConcat):
    pass


class _CClass(_AxisConcat):
    axis = -1
    ndmin = 2
    trans1d = 0
    op_name = "c_"


mgrid = _Mgrid()
ogrid = _Ogrid()
r_ = _RClass()
c_ = _CClass()
s_ = np.s_
index_exp = np.index_exp
