"""The batched-COO layout, shared by the sparse primitives: what a `(data, indices, shape)`
triple means, its validation, and the NumPy index arithmetic the impls use.

A BCOO array of shape `batch + sparse + dense` stores, per batch element, `nse` entries:
`data` has shape `batch + (nse,) + dense` and `indices` (integers) `batch + (nse, n_sparse)`;
entry n of batch element b is the dense block `data[b, n]` at sparse position `indices[b, n]`.
Duplicate positions add up. A position out of bounds (JAX pads with `sparse_shape` itself)
is no entry at all: it reads as zero and receives nothing. Either array may have size 1 in a
batch dimension (vmap of a sparse array whose indices are shared makes them so): it is
broadcast, as JAX allows, so no copy is made.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from didax._src import dtypes
from didax._src.core import ShapedArray


class SparseInfo(NamedTuple):
    """What the primitives know of a sparse operand besides its arrays (a static param)."""

    shape: tuple
    indices_sorted: bool = False
    unique_indices: bool = False


class Layout(NamedTuple):
    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int

    def split(self, shape) -> tuple:
        """(batch, sparse, dense) parts of `shape`."""
        nb, ns = self.n_batch, self.n_sparse
        shape = tuple(shape)
        return shape[:nb], shape[nb:nb + ns], shape[nb + ns:]


def layout_of(name: str, data: ShapedArray, indices: ShapedArray, shape) -> Layout:
    """The layout of a (data, indices) pair describing an array of `shape`, or a TypeError or
    ValueError naming the shapes that do not fit."""
    shape = tuple(shape)
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"{name}: indices must be integers, got dtype {indices.dtype.name}")
    if indices.ndim < 2:
        raise ValueError(f"{name}: indices must have at least 2 dimensions (batch..., nse, "
                         f"n_sparse), got shape {indices.shape}")
    nb = indices.ndim - 2
    nse, ns = indices.shape[-2], indices.shape[-1]
    nd = data.ndim - nb - 1
    where = (f"data.shape={data.shape}, indices.shape={indices.shape}, shape={shape} "
             f"(n_batch={nb}, n_sparse={ns}, nse={nse})")
    if nd < 0 or nb + ns + nd != len(shape):
        raise ValueError(f"{name}: inconsistent layout: {where}; data must have shape "
                         "batch + (nse,) + dense and indices batch + (nse, n_sparse), with "
                         "len(batch) + n_sparse + len(dense) == len(shape)")
    if data.shape[nb] != nse:
        raise ValueError(f"{name}: data has {data.shape[nb]} stored elements along axis {nb} "
                         f"but indices have {nse}: {where}")
    if tuple(data.shape[nb + 1:]) != shape[nb + ns:]:
        raise ValueError(f"{name}: data's dense dimensions {data.shape[nb + 1:]} differ from "
                         f"the shape's trailing {nd}: {where}")
    for k in range(nb):
        for arr, what in ((data, "data"), (indices, "indices")):
            if arr.shape[k] not in (1, shape[k]):
                raise ValueError(f"{name}: {what} batch dimension {k} has size {arr.shape[k]}, "
                                 f"expected {shape[k]} (or 1, broadcast): {where}")
    return Layout(nb, ns, nd, nse)


def check_dimension_numbers(name: str, dimension_numbers, lhs_shape, rhs_shape, n_batch):
    """Contracting and batch dimensions of a product with a sparse lhs: distinct, in range,
    of equal sizes, and the lhs's batch dimensions among its sparse layout's batch ones."""
    (lc, rc), (lb, rb) = dimension_numbers
    for dims, shape, side in ((lc + lb, lhs_shape, "lhs"), (rc + rb, rhs_shape, "rhs")):
        if len(set(dims)) != len(dims) or any(not 0 <= d < len(shape) for d in dims):
            raise ValueError(f"{name}: dimension_numbers {dimension_numbers} name the {side} "
                             f"dimensions {dims}, which must be distinct and within its rank "
                             f"{len(shape)}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(f"{name}: dimension_numbers {dimension_numbers} pair lists of "
                         "different lengths")
    for a, b, what in [*((a, b, "contracting") for a, b in zip(lc, rc)),
                       *((a, b, "batch") for a, b in zip(lb, rb))]:
        if lhs_shape[a] != rhs_shape[b]:
            raise TypeError(f"{name}: {what} dimensions must have the same sizes, got lhs "
                            f"dimension {a} of size {lhs_shape[a]} (shape {lhs_shape}) and rhs "
                            f"dimension {b} of size {rhs_shape[b]} (shape {rhs_shape})")
    if any(d >= n_batch for d in lb):
        raise NotImplementedError(
            f"{name}: the batch dimensions {lb} of a product must be batch dimensions of the "
            f"sparse operand's layout (it has n_batch={n_batch}); convert it with "
            "BCOO.fromdense(..., n_batch=...) first")


def product_shape(dimension_numbers, lhs_shape, rhs_shape) -> tuple:
    """dot_general's result shape: batch dimensions, lhs free ones, rhs free ones."""
    (lc, rc), (lb, rb) = dimension_numbers
    return (tuple(lhs_shape[d] for d in lb)
            + tuple(s for d, s in enumerate(lhs_shape) if d not in lc and d not in lb)
            + tuple(s for d, s in enumerate(rhs_shape) if d not in rc and d not in rb))


# ----------------------------------------------------------------------------------------
# NumPy helpers for the impls


def broadcast_batch(x: np.ndarray, batch: tuple) -> np.ndarray:
    """`x` (data or indices) with its leading batch dimensions broadcast to `batch`."""
    return np.broadcast_to(x, batch + x.shape[len(batch):])


def valid_and_flat(indices: np.ndarray, sparse: tuple):
    """(in bounds, row-major position in `sparse`) of each stored element: the position is 0
    where out of bounds (masked by the caller), and int64 whatever the index dtype."""
    valid = np.ones(indices.shape[:-1], bool)
    flat = np.zeros(indices.shape[:-1], np.int64)
    for k, size in enumerate(sparse):
        column = indices[..., k].astype(np.int64)
        valid &= (column >= 0) & (column < size)
        flat *= size
        flat += column
    return valid, np.where(valid, flat, 0)


def segment_sum(rows: np.ndarray, values: np.ndarray, n_rows: int) -> np.ndarray:
    """out[r] = the sum of values[i] over the i with rows[i] == r (duplicates added in
    order), `out` of shape (n_rows,) + values.shape[1:] and values' dtype.

    NumPy's `np.add.at` is slow on rows of several values (tens of ns per element), so rows
    are grouped by a stable sort (skipped when already in order: sorted indices) and each
    group summed by `np.add.reduceat`; a column of real floats is one `np.bincount`.
    """
    dtype = values.dtype
    out = np.zeros((n_rows,) + values.shape[1:], dtype)
    if rows.size == 0:
        return out
    if values.ndim == 1 and dtypes.kind(dtype) == "f":
        return np.bincount(rows, values, minlength=n_rows).astype(dtype)
    if np.any(rows[1:] < rows[:-1]):
        order = np.argsort(rows, kind="stable")
        rows, values = rows[order], values[order]
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    out[rows[starts]] = np.add.reduceat(values, starts, axis=0)
    return out
