"""Searching: searchsorted and digitize (several algorithms, equal results), and the nonzero
family (nonzero, flatnonzero, argwhere, compress, extract), whose output size depends on the
values: the input must be concrete unless a static `size=` is given.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import indexing as lax_idx
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import (
    _asarray,
    _aval,
    _concrete_int,
    _const,
    _default_int,
    _filled,
    _int_sum,
    _iota,
    _range,
    _scatter1d,
    _slice_axis,
    _take,
)
from didax._src.numpy.joining import vstack
from didax._src.numpy.shape_ops import atleast_1d, moveaxis, ravel, transpose
from didax._src.numpy.sorting import argsort
from didax._src.numpy.util import asarray, check_arraylike, concrete_or_error, promote_dtypes

__all__ = ["searchsorted", "digitize", "nonzero", "flatnonzero", "argwhere", "compress", "extract",
           "where"]


# --------------------------------------------------------------------------------------
# Sorted search


def _order_keys(x):
    if dtypes.kind(_aval(x).dtype) == "c":
        return [lax.real(x), lax.imag(x)]
    return [x]


def _key_lt(x, y):
    if dtypes.kind(_aval(x).dtype) == "f":  # NaN is the largest value, as in sorting
        return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))
    return lax.lt(x, y)


def _key_eq(x, y):
    if dtypes.kind(_aval(x).dtype) == "f":
        return lax.bitwise_or(lax.eq(x, y), lax.bitwise_and(lax.ne(x, x), lax.ne(y, y)))
    return lax.eq(x, y)


def _total_order(x, y, or_equal):
    """x < y (or x <= y) in the order sort uses: lexicographic for complex, NaN last."""
    xs, ys = _order_keys(x), _order_keys(y)
    last = _key_lt(xs[-1], ys[-1])
    if or_equal:
        last = lax.bitwise_or(last, _key_eq(xs[-1], ys[-1]))
    for xk, yk in zip(xs[-2::-1], ys[-2::-1]):
        last = lax.bitwise_or(_key_lt(xk, yk), lax.bitwise_and(_key_eq(xk, yk), last))
    return last


def _search_compare_all(a, v, side, dtype):
    n, vnd = _aval(a).shape[0], _aval(v).ndim
    col = lax_shape.broadcast_in_dim(a, (n,) + _aval(v).shape, (0,))
    row = lax_shape.broadcast_in_dim(v, (n,) + _aval(v).shape, tuple(_range(1, vnd + 1)))
    hits = _total_order(col, row, or_equal=side == "right")
    return lax_red.reduce_sum(lax.convert_element_type(hits, dtype), (0,))


def _search_binary(a, v, side, dtype):
    """Binary search unrolled over the ceil(log2(n + 1)) levels; all queries at once."""
    n = _aval(a).shape[0]
    low = _filled(_aval(v).shape, 0, dtype)
    high = _filled(_aval(v).shape, n, dtype)
    for _ in _range(int(np.ceil(np.log2(n + 1)))):
        mid = lax.add(low, lax.div(lax.sub(high, low), np.asarray(2, dtype)))
        go_left = _total_order(v, _take(a, mid), or_equal=side == "left")
        low, high = lax.select_n(go_left, mid, low), lax.select_n(go_left, high, mid)
    return high


def _rank(x, dtype):
    """rank[i] = position of x[i] in a stable sort of x."""
    m = _aval(x).shape[0]
    iota = _iota(dtype, (m,))
    perm = lax_red.sort_key_val(x, iota, 0)[1]
    return _scatter1d(lax_idx.scatter, _filled((m,), 0, dtype), perm, iota)


def _search_sort(a, v, side, dtype):
    """Co-sorting: a query's rank among the sorted values and the queries, minus its rank
    among the queries alone."""
    n = _aval(a).shape[0]
    q = ravel(v)
    nq = _aval(q).shape[0]
    work = np.dtype(np.int32) if n + nq <= dtypes.iinfo(np.int32).max else np.dtype(np.int64)
    if side == "left":
        index = lax_shape.slice_in_dim(_rank(lax_shape.concatenate([q, a], 0), work), 0, nq)
    else:
        index = lax_shape.slice_in_dim(_rank(lax_shape.concatenate([a, q], 0), work), n, n + nq)
    out = lax.sub(index, _rank(q, work))
    return lax.convert_element_type(lax_shape.reshape(out, _aval(v).shape), dtype)


_SEARCH_METHODS = {"scan": _search_binary, "scan_unrolled": _search_binary,
                   "compare_all": _search_compare_all, "sort": _search_sort}


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion points of `v` in the sorted 1-D `a` that keep it sorted.

    `method` picks the algorithm ('scan' and 'scan_unrolled' are an unrolled binary
    search, 'compare_all' compares every pair, 'sort' co-sorts); all give equal results.
    """
    if sorter is None:
        check_arraylike("searchsorted", a, v)
    else:
        check_arraylike("searchsorted", a, v, sorter)
    a, v = asarray(a), asarray(v)
    if _aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if side not in ("left", "right"):
        raise ValueError(f"side={side!r} is not supported; expected 'left' or 'right'")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"invalid argument method={method!r}, expected one of "
                         f"{tuple(_SEARCH_METHODS)}")
    a, v = promote_dtypes(a, v)
    if sorter is not None:
        a = _take(a, sorter)
    n = _aval(a).shape[0]
    dtype = np.dtype(np.int32) if n <= dtypes.iinfo(np.int32).max else _default_int()
    if n == 0:
        return _filled(_aval(v).shape, 0, dtype)
    return _SEARCH_METHODS[method](a, v, side, dtype)


def digitize(x, bins, right=False, *, method=None):
    """Index of the bin each `x` falls in; `bins` may be increasing or decreasing."""
    check_arraylike("digitize", x, bins)
    x, bins = asarray(x), asarray(bins)
    right = bool(concrete_or_error(right, "right argument of jnp.digitize()"))
    if _aval(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    n = _aval(bins).shape[0]
    if n == 0:
        return _filled(_aval(x).shape, 0, np.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = ufuncs.greater_equal(lax_shape.slice_in_dim(bins, n - 1, n),
                                      lax_shape.slice_in_dim(bins, 0, 1))
    up = searchsorted(bins, x, side=side, **kw)
    down = lax.sub(np.int32(n), searchsorted(lax_shape.rev(bins, (0,)), x, side=side, **kw))
    return lax.select_n(lax_shape.broadcast_in_dim(lax_shape.reshape(increasing, ()),
                                                   _aval(up).shape, ()), down, up)


# --------------------------------------------------------------------------------------
# Indices of nonzero elements


def _compact_indices(mask, size):
    """Positions of the True entries of the 1-D `mask`, in order, padded with 0 to `size`."""
    dt = _default_int()
    n = _aval(mask).shape[0]
    counts = lax_red.cumsum(lax.convert_element_type(mask, dt), 0)
    target = lax.select_n(mask, _filled((n,), size, dt), lax.sub(counts, _const(counts, 1)))
    return _scatter1d(lax_idx.scatter, _filled((size,), 0, dt), target, _iota(dt, (n,)))


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per axis. Without a static `size`, the
    input must be concrete (the output shape depends on its values)."""
    check_arraylike("nonzero", a)
    arr = asarray(a)
    s = _aval(arr).shape
    if not s:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    mask = ufuncs._to_bool(arr)
    if size is None:
        size = int(concrete_or_error(_int_sum(mask), "the number of nonzero elements, which is "
                                     "the output size of jnp.nonzero (pass a static `size=` to "
                                     "use it under transformations)", topic="shape"))
    else:
        size = _concrete_int(size, "size argument of jnp.nonzero")
    if math.prod(s) == 0 or size == 0:
        return tuple(_filled((size,), 0, _default_int()) for _ in s)
    flat = _compact_indices(ravel(mask), size)
    strides = np.cumprod(s[::-1])[::-1] // s
    out = tuple(lax.rem(lax.div(flat, _const(flat, st)), _const(flat, d))
                for st, d in zip(strides, s))
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(s)
        if len(fills) != len(s) or any(np.shape(f) != () for f in fills):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {len(s)}; got "
                             f"{fill_value}")
        fill_mask = ufuncs.greater_equal(_iota(_default_int(), (size,)), _int_sum(mask))
        out = tuple(ufuncs.where(fill_mask, f, o) for f, o in zip(fills, out))
    return out


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Chooses elementwise from `x` where `condition` holds, else from `y`; with `condition`
    alone, `nonzero(condition)`."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         "to jnp.where.")
    return ufuncs.where(condition, x, y)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements as rows of a (count, ndim) array."""
    check_arraylike("argwhere", a)
    a = asarray(a)
    result = transpose(vstack(nonzero(atleast_1d(a), size=size, fill_value=fill_value)))
    count = _aval(result).shape[0]
    if _aval(a).ndim == 0:
        return lax_shape.reshape(lax_shape.slice_in_dim(result, 0, 0), (count, 0))
    return lax_shape.reshape(result, (count, _aval(a).ndim))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` where the 1-D `condition` holds."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    check_arraylike("compress", condition, a, fill_value)
    cond = ufuncs._to_bool(asarray(condition))
    if _aval(cond).ndim != 1:
        raise ValueError("condition must be a 1D array")
    arr = asarray(a)
    if axis is None:
        axis, arr = 0, ravel(arr)
    else:
        arr = moveaxis(arr, axis, 0)
    n, nc = _aval(arr).shape[0], _aval(cond).shape[0]
    extra = _slice_axis(cond, n, None, 0)
    cond = _slice_axis(cond, 0, n, 0)
    arr = _slice_axis(arr, 0, nc, 0)
    m = _aval(arr).shape[0]
    if size is None:
        if _aval(extra).size and np.any(concrete_or_error(
                extra, "the `condition` argument of jnp.compress")):
            raise ValueError("condition contains entries that are out of bounds")
        result = _take(arr, nonzero(cond)[0], 0)
    else:
        size = _concrete_int(size, "size argument of jnp.compress")
        if not 0 <= size <= m:
            raise ValueError("size must be positive and not greater than the size of the "
                             f"array axis; got size={size} for a.shape[axis]={m}")
        keep = lax_shape.broadcast_in_dim(cond, _aval(arr).shape, (0,))
        arr = ufuncs.where(keep, arr, _asarray(fill_value, _aval(arr).dtype))
        order = argsort(cond, stable=True, descending=True)
        result = _take(arr, lax_shape.slice_in_dim(order, 0, size), 0)
    return moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    check_arraylike("extract", condition, arr, fill_value)
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)
