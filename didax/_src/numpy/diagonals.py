"""Diagonals and triangles of matrices: tril/triu, diagonal, trace, diag, diagflat,
fill_diagonal, and the index helpers diag_indices, tril_indices, triu_indices, mask_indices.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import reductions
from didax._src.numpy._helpers import (
    _all,
    _aval,
    _concrete_int,
    _const,
    _default_int,
    _iota,
    _range,
    _slice_axis,
    _zeros_like,
)
from didax._src.numpy.creation import eye, ones, tri
from didax._src.numpy.joining import stack
from didax._src.numpy.searching import nonzero
from didax._src.numpy.shape_ops import moveaxis, ndim, ravel, shape
from didax._src.numpy.tiling import tile
from didax._src.numpy.util import asarray, canonical_axis, check_arraylike

__all__ = [
    "tril", "triu", "diagonal", "trace", "diag", "diagflat", "diag_indices",
    "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "mask_indices", "fill_diagonal",
]


# --------------------------------------------------------------------------------------
# Triangles


def _tri_select(name, m, k, lower):
    check_arraylike(name, m)
    m = asarray(m)
    shape = _aval(m).shape
    if len(shape) < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    mask = tri(shape[-2], shape[-1], k=k if lower else k - 1, dtype=bool)
    which = lax_shape.broadcast_in_dim(mask, shape, (len(shape) - 2, len(shape) - 1))
    zero = _zeros_like(m)
    return lax.select_n(which, zero, m) if lower else lax.select_n(which, m, zero)


def tril(m, k=0):
    """Zeros above the k-th diagonal of the last two axes."""
    return _tri_select("tril", m, k, True)


def triu(m, k=0):
    return _tri_select("triu", m, k, False)


# --------------------------------------------------------------------------------------
# Diagonals


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The `offset` diagonal of the (axis1, axis2) planes, as the last axis of the result.

    Read with a strided slice of the flattened planes (element (i, i) of a row-major
    (d, m) matrix sits at i * (m + 1)), so it is linear and needs no gather.
    """
    check_arraylike("diagonal", a)
    a = asarray(a)
    nd = _aval(a).ndim
    if nd < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = _concrete_int(offset, "'offset' argument of jnp.diagonal()")
    ax1, ax2 = canonical_axis(axis1, nd, "diagonal"), canonical_axis(axis2, nd, "diagonal")
    if ax1 == ax2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    if offset >= 0:
        a = _slice_axis(a, offset, None, nd - 1)
    else:
        a = _slice_axis(a, -offset, None, nd - 2)
    *batch, n, m = _aval(a).shape
    d = min(n, m)
    a = lax_shape.slice_in_dim(a, 0, d, 1, nd - 2)
    flat = lax_shape.reshape(a, (*batch, d * m))
    return lax_shape.slice_in_dim(flat, 0, d * m, m + 1, nd - 2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal; integer inputs are summed as `jnp.sum` would sum them."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    check_arraylike("trace", a)
    nd = ndim(a)
    if nd >= 2 and canonical_axis(axis1, nd) == canonical_axis(axis2, nd):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    return reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with the 1-D `v` on its k-th diagonal."""
    check_arraylike("diag", v)
    v = asarray(v)
    k = operator.index(k)
    nd = _aval(v).ndim
    if nd == 2:
        return diagonal(v, offset=k)
    if nd != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = _aval(v).shape[0] + abs(k)
    v = lax_shape.pad(v, _const(v, 0), [(max(0, -k), max(0, k), 0)])
    rows = lax_shape.broadcast_in_dim(v, (n, n), (0,))
    return lax.select_n(eye(n, k=k, dtype=bool), _zeros_like(rows), rows)


def diagflat(v, k=0):
    check_arraylike("diagflat", v)
    return diag(ravel(v), k)


# --------------------------------------------------------------------------------------
# Index helpers for diagonals and triangles


def _index_tuple(arrays):
    return tuple(asarray(np.asarray(x, _default_int())) for x in arrays)


def diag_indices(n, ndim=2):
    n = _concrete_int(n, "'n' argument of jnp.diag_indices()")
    ndim = _concrete_int(ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (_iota(_default_int(), (n,)),) * ndim


def diag_indices_from(arr):
    check_arraylike("diag_indices_from", arr)
    s = shape(arr)
    if len(s) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], len(s))


def _tri_indices(fn, name, n, k, m):
    n = _concrete_int(n, f"n argument of jnp.{name}")
    k = _concrete_int(k, f"k argument of jnp.{name}")
    m = n if m is None else _concrete_int(m, f"m argument of jnp.{name}")
    return _index_tuple(fn(n, k, m))


def tril_indices(n, k=0, m=None):
    return _tri_indices(np.tril_indices, "tril_indices", n, k, m)


def triu_indices(n, k=0, m=None):
    return _tri_indices(np.triu_indices, "triu_indices", n, k, m)


def _shape2d(arr):
    s = arr.shape if hasattr(arr, "shape") else shape(arr)
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return s


def tril_indices_from(arr, k=0):
    n, m = _shape2d(arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    n, m = _shape2d(arr)
    return triu_indices(n, k, m)


def mask_indices(n, mask_func, k=0, *, size=None):
    i, j = nonzero(mask_func(ones((n, n)), k), size=size)
    return i, j


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of `a` with its main diagonal set to `val` (repeated cyclically if an array)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a, val = asarray(a), asarray(val)
    s = _aval(a).shape
    if len(s) < 2:
        raise ValueError("array must be at least 2-d")
    if len(s) > 2 and len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(s)
    val = lax.convert_element_type(val, _aval(a).dtype, _aval(a).weak_type)
    if _aval(val).ndim:
        flat = ravel(val)
        val = lax_shape.slice_in_dim(tile(flat, -(-n // _aval(flat).size)), 0, n)
        rows = lax_shape.pad(val, _const(val, 0), [(0, s[0] - n, 0)])
        val = lax_shape.broadcast_in_dim(rows, s, (0,))
    else:
        val = lax_shape.broadcast_in_dim(val, s, ())
    iotas = [_iota(np.int32, s, d) for d in _range(len(s))]
    on_diag = _all(stack([lax.eq(iotas[0], i) for i in iotas[1:]]), (0,))
    return lax.select_n(on_diag, a, val)
