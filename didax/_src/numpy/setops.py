"""unique (and its array-API forms) and set operations on flattened arrays: isin, union1d,
intersect1d, setdiff1d, setxor1d (JAX's setops.py).

Output sizes depend on the values, so inputs must be concrete unless a static `size=` is
given; the result is then padded with `fill_value`.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from didax._src import dtypes
from didax._src.core import ArrayBase
from didax._src.lax import elementwise as lax
from didax._src.lax import indexing as lax_idx
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import (
    _all,
    _any,
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
    _zeros_like,
)
from didax._src.numpy.creation import full, full_like
from didax._src.numpy.differences import diff
from didax._src.numpy.joining import concatenate
from didax._src.numpy.searching import nonzero, searchsorted
from didax._src.numpy.shape_ops import moveaxis, ravel
from didax._src.numpy.sorting import lexsort
from didax._src.numpy.util import (
    asarray,
    canonical_axis,
    check_arraylike,
    concrete_or_error,
    promote_dtypes,
)

__all__ = [
    "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values", "isin",
    "union1d", "setdiff1d", "setxor1d", "intersect1d",
]


# --------------------------------------------------------------------------------------
# unique


_UNIQUE_SIZE_HINT = ("(pass a static `size=`, which fixes the output size, to use it under "
                     "transformations)")


def _unique_sorted_mask(ar, axis, equal_nan):
    """The slices of `ar` along `axis`, sorted; a mask of first-of-a-run; the permutation."""
    aux = moveaxis(ar, axis, 0)
    if dtypes.kind(_aval(aux).dtype) == "c":
        aux = ufuncs.where(ufuncs.isnan(aux), _const(aux, np.nan), aux)
    n, *rest = _aval(aux).shape
    width = math.prod(rest)
    if width == 0:  # as JAX: one (empty) slice, whatever the number of slices
        n, perm = 1, _filled((1,), 0, _default_int())
        aux = _zeros_like(aux, (1, *rest))
    else:
        cols = lax_shape.reshape(aux, (n, width))
        perm = lexsort([lax_shape.index_in_dim(cols, j, 1, False)
                        for j in _range(width)][::-1], axis=0)
        aux = _take(aux, perm, 0)
    if _aval(aux).size == 0:
        return aux, _filled((n,), False, np.bool_), perm
    later, earlier = _slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, n - 1, 0)
    if equal_nan and dtypes.kind(_aval(aux).dtype) in "fc":
        differ = lax.bitwise_and(lax.ne(later, earlier),
                                 lax.bitwise_not(lax.bitwise_and(ufuncs.isnan(later),
                                                                 ufuncs.isnan(earlier))))
    else:
        differ = lax.ne(later, earlier)
    differ = _any(differ, tuple(_range(1, _aval(aux).ndim)))
    mask = lax_shape.concatenate([_filled((1,), True, np.bool_), differ], 0)
    return aux, mask, perm


def _unique(ar, axis, return_index=False, return_inverse=False, return_counts=False,
            equal_nan=True, size=None, fill_value=None, return_true_size=False):
    axis = canonical_axis(axis, _aval(ar).ndim, "unique")
    if _aval(ar).shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan)
    count = _int_sum(mask)
    if size is None:
        n_out = int(concrete_or_error(count, "the number of unique values "
                                      + _UNIQUE_SIZE_HINT))
    else:
        n_out = size
    ind = nonzero(mask, size=n_out)[0]
    result = _take(aux, ind, 0) if _aval(aux).size else aux
    if size is not None and fill_value is not None:
        fill = lax.convert_element_type(asarray(fill_value), _aval(result).dtype)
        if _aval(result).shape[0]:
            valid = lax.lt(_iota(_default_int(), (size,)), count)
            valid = lax_shape.broadcast_in_dim(valid, _aval(result).shape, (0,))
            result = lax.select_n(valid, _filled(_aval(result).shape, fill, _aval(fill).dtype),
                                  result)
        else:
            result = full((size, *_aval(result).shape[1:]), fill)
    out = (moveaxis(result, 0, axis),)
    if return_index:
        out += (_take(perm, ind) if _aval(aux).size else perm,)
    if return_inverse:
        n = _aval(mask).shape[0]
        if _aval(aux).size:
            imask = lax.sub(lax_red.cumsum(lax.convert_element_type(mask, _default_int()), 0),
                            _const(count, 1))
            inv = _scatter1d(lax_idx.scatter, _filled((n,), 0, _default_int()), perm, imask)
        else:
            inv = _filled((_aval(ar).shape[axis],), 0, _default_int())
        out += (inv,)
    if return_counts:
        if _aval(aux).size:
            if size is None:
                idx = concatenate([ind, _filled((1,), _aval(mask).shape[0], _default_int())])
            else:
                idx = nonzero(mask, size=size + 1)[0]
                tail = _slice_axis(idx, 1, None, 0)
                tail = lax.select_n(lax.ne(tail, _const(tail, 0)),
                                    _filled(_aval(tail).shape, _aval(mask).shape[0],
                                            _aval(tail).dtype), tail)
                idx = lax_shape.concatenate([_slice_axis(idx, 0, 1, 0), tail], 0)
            out += (diff(idx),)
        elif _aval(ar).shape[axis]:
            out += (_filled((1,), _aval(ar).shape[axis], _default_int()),)
        else:
            out += (_filled((0,), 0, _default_int()),)
    if return_true_size:
        out += (count,)
    return out[0] if len(out) == 1 else out


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique elements (or slices along `axis`). Without a static `size` the
    input must be concrete; with it, the result is padded with `fill_value` (default: the
    smallest unique value)."""
    check_arraylike("unique", ar)
    arr = asarray(ar)
    if size is None:
        concrete_or_error(arr, "the argument of jnp.unique " + _UNIQUE_SIZE_HINT)
    else:
        size = _concrete_int(size, "the `size` argument of jnp.unique")
    arr_shape = _aval(arr).shape
    if axis is None:
        arr, axis_int = ravel(arr), 0
    else:
        axis_int = canonical_axis(axis, _aval(arr).ndim, "unique")
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts,
                     equal_nan=equal_nan, size=size, fill_value=fill_value)
    if return_inverse and axis is None:
        i = 2 if return_index else 1
        result = (*result[:i], lax_shape.reshape(result[i], arr_shape), *result[i + 1:])
    return result


class _UniqueAllResult(NamedTuple):
    values: ArrayBase
    indices: ArrayBase
    inverse_indices: ArrayBase
    counts: ArrayBase


class _UniqueCountsResult(NamedTuple):
    values: ArrayBase
    counts: ArrayBase


class _UniqueInverseResult(NamedTuple):
    values: ArrayBase
    inverse_indices: ArrayBase


def unique_all(x, /, *, size=None, fill_value=None):
    check_arraylike("unique_all", x)
    return _UniqueAllResult(*unique(x, True, True, True, equal_nan=False, size=size,
                                    fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    check_arraylike("unique_counts", x)
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    check_arraylike("unique_inverse", x)
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                        fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
    check_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# --------------------------------------------------------------------------------------
# Set operations


def _in1d(ar1, ar2, invert, method="auto", assume_unique=False):
    arr1, arr2 = promote_dtypes(asarray(ar1), asarray(ar2))
    arr1, arr2 = ravel(arr1), ravel(arr2)
    n1, n2 = _aval(arr1).shape[0], _aval(arr2).shape[0]
    if n1 == 0 or n2 == 0:
        return _filled((n1,), invert, np.bool_)
    if method in ("auto", "compare_all"):
        col = lax_shape.broadcast_in_dim(arr1, (n1, n2), (0,))
        row = lax_shape.broadcast_in_dim(arr2, (n1, n2), (1,))
        if invert:
            return _all(lax.ne(col, row), (1,))
        return _any(lax.eq(col, row), (1,))
    if method == "binary_search":
        arr2 = lax_red.sort(arr2, 0)
        found = lax.eq(arr1, _take(arr2, searchsorted(arr2, arr1)))
        return lax.bitwise_not(found) if invert else found
    if method == "sort":
        if assume_unique:
            inverse = None
        else:
            arr1, inverse = unique(arr1, size=n1, return_inverse=True,
                                   fill_value=lax_red.reduce_max(arr2, (0,)))
        both = lax_shape.concatenate([arr1, arr2], 0)
        aux, order = lax_red.sort_key_val(both, _iota(_default_int(), (n1 + n2,)), 0)
        later, earlier = _slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0)
        flags = lax.ne(later, earlier) if invert else lax.eq(later, earlier)
        found = _scatter1d(lax_idx.scatter, _filled((n1,), invert, np.bool_),
                           _slice_axis(order, 0, -1, 0), flags)
        return found if inverse is None else _take(found, inverse)
    raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', "
                     "'binary_search', 'sort', and 'auto'")


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Elementwise: is each element of `element` in `test_elements`?"""
    check_arraylike("isin", element, test_elements)
    result = _in1d(element, test_elements, invert, method, assume_unique)
    return lax_shape.reshape(result, np.shape(element))


def union1d(ar1, ar2, *, size=None, fill_value=None):
    check_arraylike("union1d", ar1, ar2)
    if size is None:
        concrete_or_error(asarray(ar1), "the arguments of jnp.union1d " + _UNIQUE_SIZE_HINT)
        concrete_or_error(asarray(ar2), "the arguments of jnp.union1d " + _UNIQUE_SIZE_HINT)
    else:
        size = _concrete_int(size, "the `size` argument of jnp.union1d")
    both = concatenate((asarray(ar1), asarray(ar2)), axis=None)
    return unique(both, size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of `ar1` that are not in `ar2`."""
    check_arraylike("setdiff1d", ar1, ar2)
    arr1, arr2 = ravel(ar1), ravel(ar2)
    if size is None:
        concrete_or_error(arr1, "the first argument of jnp.setdiff1d " + _UNIQUE_SIZE_HINT)
    else:
        size = _concrete_int(size, "the `size` argument of jnp.setdiff1d")
    fill = full_like(arr1, 0 if fill_value is None else fill_value, shape=())
    n1 = _aval(arr1).shape[0]
    if n1 == 0:
        return full_like(arr1, fill, shape=(size or 0,))
    if not assume_unique:
        arr1 = unique(arr1, size=size and n1)
    mask = _in1d(arr1, arr2, invert=True)
    if size is None:
        return _take(arr1, nonzero(mask)[0])
    n = _aval(arr1).shape[0]
    if not assume_unique:
        first = lax_shape.broadcast_in_dim(lax_shape.slice_in_dim(arr1, 0, 1), (n,), (0,))
        n_unique = lax.sub(np.asarray(n + 1, _default_int()), _int_sum(lax.eq(arr1, first)))
        mask = lax.bitwise_and(mask, lax.lt(_iota(_default_int(), (n,)), n_unique))
    vals = _take(arr1, nonzero(mask, size=size)[0])
    return ufuncs.where(lax.lt(_iota(_default_int(), (size,)), _int_sum(mask)), vals, fill)


def _pad_result(vals, num, fill_value):
    """vals[i] for i < num, else fill_value (default: the smallest valid value, as JAX)."""
    n = _aval(vals).shape[0]
    valid = lax.lt(_iota(_default_int(), (n,)), num)
    if fill_value is None:
        vals = ufuncs.where(valid, vals, lax_red.reduce_max(vals, (0,)))
        return ufuncs.where(valid, vals, lax_red.reduce_min(vals, (0,)))
    return ufuncs.where(valid, vals, fill_value)


def _concat_unique(arr1, arr2):
    """The unique values of each array, packed one after the other, and their total count."""
    arr1, num1 = _unique(ravel(arr1), 0, size=_aval(arr1).size, return_true_size=True)
    arr2, num2 = _unique(ravel(arr2), 0, size=_aval(arr2).size, return_true_size=True)
    dt = dtypes.result_type(arr1, arr2)
    out = _filled((_aval(arr1).size + _aval(arr2).size,), 0, dt)
    out = lax_idx.dynamic_update_slice(out, lax.convert_element_type(arr1, dt), (0,))
    out = lax_idx.dynamic_update_slice(out, lax.convert_element_type(arr2, dt), (num1,))
    return out, lax.add(num1, num2)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values that are in exactly one of the inputs."""
    check_arraylike("setxor1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ravel(ar1), ravel(ar2))
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value, assume_unique,
                              _concrete_int(size, "size argument of jnp.setxor1d"))
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = lax_shape.concatenate([arr1, arr2], 0)
    if _aval(aux).size == 0:
        return aux
    aux = lax_red.sort(aux, 0)
    differ = lax.ne(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
    true = _filled((1,), True, np.bool_)
    flag = lax_shape.concatenate([true, differ, true], 0)
    keep = lax.bitwise_and(_slice_axis(flag, 1, None, 0), _slice_axis(flag, 0, -1, 0))
    return _take(aux, nonzero(keep)[0])


def _setxor1d_size(arr1, arr2, fill_value, assume_unique, size):
    if assume_unique:
        aux = lax_red.sort(lax_shape.concatenate([arr1, arr2], 0), 0)
        n = _aval(aux).size
        differ = lax.ne(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
        flag = lax_shape.concatenate([_filled((1,), bool(n), np.bool_), differ,
                                      _filled((1,), True, np.bool_)], 0)
    else:
        arr, num = _concat_unique(arr1, arr2)
        n = _aval(arr).size
        mask = lax.lt(_iota(_default_int(), (n + 1,)), lax.add(num, _const(num, 1)))
        _, aux = lax_red.sort([lax.bitwise_not(_slice_axis(mask, 1, None, 0)), arr], 0,
                              num_keys=2)
        differ = lax.ne(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
        flag = lax_shape.concatenate([_filled((1,), bool(n), np.bool_), differ,
                                      _filled((1,), False, np.bool_)], 0)
        at_num = lax.eq(_iota(_default_int(), _aval(flag).shape), num)
        flag = lax.bitwise_and(mask, lax.bitwise_or(flag, at_num))
    keep = lax.bitwise_and(_slice_axis(flag, 1, None, 0), _slice_axis(flag, 0, -1, 0))
    num_results = _int_sum(keep)
    if n:
        where_idx = nonzero(keep, size=size, fill_value=n)[0]
        vals = _take(aux, where_idx, mode="fill", fill_value=0)
    else:
        vals = _filled((size,), 0, _aval(aux).dtype)
    return _pad_result(vals, num_results, fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """Sorted values common to both inputs (and optionally where each first occurs)."""
    check_arraylike("intersect1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ravel(ar1), ravel(ar2))
    if size is not None:
        return _intersect1d_size(arr1, arr2, fill_value, assume_unique,
                                 _concrete_int(size, "size argument of jnp.intersect1d"),
                                 return_indices)
    ind1 = ind2 = None
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    both = lax_shape.concatenate([arr1, arr2], 0)
    n = _aval(both).shape[0]
    aux, order = lax_red.sort_key_val(both, _iota(np.int32, (n,)), 0)
    mask = lax.eq(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
    hits = nonzero(mask)[0] if n > 1 else _filled((0,), 0, _default_int())
    values = _take(aux, hits)
    if not return_indices:
        return values
    idx1 = _take(order, hits)
    idx2 = lax.sub(_take(order, lax.add(hits, _const(hits, 1))),
                   _const(order, _aval(arr1).shape[0]))
    if ind1 is not None:
        idx1, idx2 = _take(ind1, idx1), _take(ind2, idx2)
    return values, idx1, idx2


def _intersect1d_size(arr1, arr2, fill_value, assume_unique, size, return_indices):
    dt = _default_int()
    n1, n2 = _aval(arr1).size, _aval(arr2).size
    if assume_unique:
        ind1, num1 = _iota(dt, (n1,)), np.asarray(n1, dt)
        ind2 = _iota(dt, (n2,))
        arr = lax_shape.concatenate([arr1, arr2], 0)
        aux, aux_order = lax_red.sort([arr, _iota(dt, (n1 + n2,))], 0, num_keys=1)
        mask = _filled((n1 + n2,), True, np.bool_)
    else:
        arr1, ind1, num1 = _unique(arr1, 0, size=n1, return_index=True,
                                   return_true_size=True, fill_value=0)
        arr2, ind2, num2 = _unique(arr2, 0, size=n2, return_index=True,
                                   return_true_size=True, fill_value=0)
        arr = _filled((n1 + n2,), 0, _aval(arr1).dtype)
        arr = lax_idx.dynamic_update_slice(arr, arr1, (0,))
        arr = lax_idx.dynamic_update_slice(arr, arr2, (num1,))
        mask = lax.lt(_iota(dt, (n1 + n2,)), lax.add(num1, num2))
        _, aux, aux_order = lax_red.sort([lax.bitwise_not(mask), arr, _iota(dt, (n1 + n2,))],
                                         0, num_keys=2)
    same = lax.eq(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
    aux_mask = lax.bitwise_and(same, _slice_axis(mask, 1, None, 0))
    num_results = _int_sum(aux_mask)
    if _aval(aux).size:
        hits = nonzero(aux_mask, size=size, fill_value=_aval(aux).size)[0]
        vals = _take(aux, hits, mode="fill", fill_value=0)
    else:
        hits = _filled((0,), 0, dt)
        vals = _filled((size,), 0, _aval(aux).dtype)
    vals = _pad_result(vals, num_results, fill_value)
    if not return_indices:
        return vals
    valid = lax.lt(_iota(dt, (_aval(hits).shape[0],)), num_results)
    idx1 = _take(aux_order, hits, mode="fill", fill_value=n1)
    idx1 = ufuncs.where(valid, idx1, n1)
    idx2 = ufuncs.subtract(_take(aux_order, lax.add(hits, _const(hits, 1)), mode="fill",
                                 fill_value=n2), num1)
    idx2 = ufuncs.where(valid, idx2, n2)
    if not assume_unique:
        idx1 = _take(ind1, idx1, mode="fill", fill_value=_aval(ind1).size)
        idx2 = _take(ind2, idx2, mode="fill", fill_value=_aval(ind2).size)
    return vals, idx1, idx2
