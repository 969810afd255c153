"""Sorting: sort, argsort, lexsort, partition, argpartition and sort_complex, each a lax sort,
sort_key_val or top_k (JAX's sorting.py).
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy._helpers import (
    _any,
    _aval,
    _const,
    _default_int,
    _filled,
    _iota,
    _to_inexact,
    _user_dtype,
)
from didax._src.numpy.joining import _as_array_list
from didax._src.numpy.shape_ops import ravel, swapaxes
from didax._src.numpy.util import asarray, canonical_axis, check_arraylike

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "sort_complex"]


def _check_sort_args(name, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy of `a` along `axis` (NaNs last, like NumPy); `axis=None` flattens."""
    _check_sort_args("sort", kind, order)
    check_arraylike("sort", a)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    dim = canonical_axis(axis, _aval(a).ndim, "sort")
    out = lax_red.sort(a, dim, is_stable=stable)
    return lax_shape.rev(out, (dim,)) if descending else out


def _index_dtype(user_dtype, name):
    return _default_int() if user_dtype is None else _user_dtype(user_dtype, name)


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """Indices that sort `a`; with stable=True equal elements keep their order (also when
    descending)."""
    _check_sort_args("argsort", kind, order)
    check_arraylike("argsort", a)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    dim = canonical_axis(axis, _aval(a).ndim, "argsort")
    iota = _iota(_index_dtype(dtype, "argsort"), _aval(a).shape, dim)
    if descending and stable:
        a, iota = lax_shape.rev(a, (dim,)), lax_shape.rev(iota, (dim,))
    _, idx = lax_red.sort_key_val(a, iota, dim, is_stable=stable)
    return lax_shape.rev(idx, (dim,)) if descending else idx


def lexsort(keys, axis=-1):
    """Indices sorting by several keys; the last key is the primary one."""
    keys = _as_array_list("lexsort", keys) if not isinstance(keys, (tuple, list)) else [
        asarray(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({_aval(k).shape for k in keys}) > 1:
        raise ValueError("all keys need to be the same shape")
    s = _aval(keys[0]).shape
    if not s:
        return _filled((), 0, _default_int())
    axis = canonical_axis(axis, len(s), "lexsort")
    iota = _iota(_default_int(), s, axis)
    return lax_red.sort((*keys[::-1], iota), axis, num_keys=len(keys))[-1]


def _partition_setup(name, a, kth, axis):
    check_arraylike(name, a)
    arr = asarray(a)
    if dtypes.kind(_aval(arr).dtype) == "c":
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = canonical_axis(axis, _aval(arr).ndim, name)
    kth = canonical_axis(kth, _aval(arr).shape[axis], name)
    arr = swapaxes(arr, axis, -1)
    if dtypes.kind(_aval(arr).dtype) == "u":
        neg = lax.neg(lax.add(arr, _const(arr, 1)))
    else:
        neg = lax.neg(arr)
    return arr, axis, kth, neg


def partition(a, kth, axis=-1):
    """The kth+1 smallest values in ascending order, then the rest (largest first), as JAX's
    top_k-based partition orders them."""
    arr, axis, kth, neg = _partition_setup("partition", a, kth, axis)
    bottom = lax.neg(lax_red.top_k(neg, kth + 1)[0])
    if dtypes.kind(_aval(arr).dtype) == "u":
        bottom = lax.sub(bottom, _const(bottom, 1))
    top = lax_red.top_k(arr, _aval(arr).shape[-1] - kth - 1)[0]
    out = lax_shape.concatenate([bottom, top], _aval(arr).ndim - 1)
    return swapaxes(out, -1, axis)


def argpartition(a, kth, axis=-1):
    arr, axis, kth, neg = _partition_setup("argpartition", a, kth, axis)
    nd, n = _aval(arr).ndim, _aval(arr).shape[-1]
    bottom = lax_red.top_k(neg, kth + 1)[1]
    positions = _iota(_aval(bottom).dtype, _aval(bottom).shape + (n,), nd)
    chosen = _any(lax.eq(lax_shape.expand_dims(bottom, (nd,)), positions), (nd - 1,))
    proxy = lax.convert_element_type(lax.bitwise_not(chosen), np.float32)
    top = lax_red.top_k(proxy, n - kth - 1)[1]
    out = lax_shape.concatenate([bottom, top], nd - 1)
    return swapaxes(out, -1, axis)


def sort_complex(a):
    check_arraylike("sort_complex", a)
    a = lax_red.sort(asarray(a), -1)
    dt = _aval(a).dtype
    cdt = np.complex128 if _to_inexact(dt) in (np.float64, np.complex128) else np.complex64
    return lax.convert_element_type(a, dtypes.canonicalize_dtype(cdt))
