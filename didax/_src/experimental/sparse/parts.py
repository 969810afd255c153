"""`Parts`: the arrays and static facts of a BCOO array, as the functions on sparse arrays
take and return them.

Those functions read `.data`, `.indices`, `.shape`, `.indices_sorted`, `.unique_indices`
(and the layout properties below), which a `BCOO` has too, so they accept either; they
return `Parts`, which the `BCOO` class turns into a new array. This keeps the class (which
calls them for its methods) and them from importing each other.
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from didax._src.core import get_aval
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse.layout import SparseInfo


class Parts(NamedTuple):
    data: Any
    indices: Any
    shape: tuple
    indices_sorted: bool = False
    unique_indices: bool = False

    _is_bcoo = True
    n_batch = property(lambda self: get_aval(self.indices).ndim - 2)
    n_sparse = property(lambda self: get_aval(self.indices).shape[-1])
    n_dense = property(lambda self: get_aval(self.data).ndim - 1 - self.n_batch)
    nse = property(lambda self: get_aval(self.indices).shape[-2])
    ndim = property(lambda self: len(self.shape))
    dtype = property(lambda self: get_aval(self.data).dtype)


def info(mat) -> SparseInfo:
    """The static parameter the primitives take for `mat`."""
    return SparseInfo(tuple(mat.shape), bool(mat.indices_sorted), bool(mat.unique_indices))


def split(mat) -> tuple:
    """(batch, sparse, dense) parts of `mat`'s shape."""
    nb, ns = mat.n_batch, mat.n_sparse
    shape = tuple(mat.shape)
    return shape[:nb], shape[nb:nb + ns], shape[nb + ns:]


def full_batch(mat) -> tuple:
    """(data, indices) with their batch dimensions broadcast to the shape's (a size-1 batch
    dimension is shared by every batch element; some operations need them spelled out)."""
    batch = split(mat)[0]
    data, indices = mat.data, mat.indices
    nb = len(batch)
    if get_aval(data).shape[:nb] != batch:
        data = jnp.broadcast_to(data, batch + get_aval(data).shape[nb:])
    if get_aval(indices).shape[:nb] != batch:
        indices = jnp.broadcast_to(indices, batch + get_aval(indices).shape[nb:])
    return data, indices


def bounds(mat):
    """The sparse shape as an array of the index dtype (the out-of-bounds position)."""
    return jnp.asarray(np.asarray(split(mat)[1], np.int64), get_aval(mat.indices).dtype)


def in_bounds(mat, indices=None):
    """Which stored elements are at a position in bounds (batch + (nse,))."""
    indices = mat.indices if indices is None else indices
    return jnp.all((indices >= 0) & (indices < bounds(mat)), axis=-1)


def canonical_axes(name: str, axes, ndim: int) -> tuple:
    """Axes as non-negative ints, checked."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for an array of rank {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {tuple(axes)}")
    return tuple(out)


def is_sparse(x) -> bool:
    """Whether `x` is a BCOO array (or its Parts)."""
    return getattr(x, "_is_bcoo", False)
