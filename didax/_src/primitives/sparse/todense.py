"""`bcoo_todense` and `bcoo_extract`: a sparse array's dense form, and the values of a dense
array at a sparse array's positions.

Each is linear in its float operand and the transpose of the other: todense scatters (adding
duplicates, dropping positions out of bounds), so its transpose gathers every stored element's
cotangent; extract gathers, so its transpose scatters. The indices are integers, never
differentiated. The impls are NumPy (one gather, or one `np.add.at`); jit calls them.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import reduce_sum, reshape
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters.batching import matchaxis, moveaxis
from didax._src.interpreters.transpose import is_undefined
from didax._src.primitives.sparse.layout import (
    Layout,
    SparseInfo,
    broadcast_batch,
    layout_of,
    segment_sum,
    valid_and_flat,
)

bcoo_todense_p = core.primitive("bcoo_todense", linear=True)
bcoo_extract_p = core.primitive("bcoo_extract", linear=True)


def _layout(data_shape, indices_shape) -> Layout:
    nb = len(indices_shape) - 2
    return Layout(nb, indices_shape[-1], len(data_shape) - nb - 1, indices_shape[-2])


def sum_to_shape(x, shape):
    """`x` summed over the dimensions where `shape` has size 1 and `x` does not: the
    cotangent of an operand broadcast along its batch dimensions."""
    xs = get_aval(x).shape
    axes = tuple(k for k, (a, b) in enumerate(zip(xs, shape)) if a != b)
    if not axes:
        return x
    return reshape(reduce_sum(x, axes), tuple(shape))


def front(x, d, size=None):
    """`x` with its batch dimension first; an unbatched `x` gets a leading dimension of size
    1 (sparse layouts broadcast it) unless `size` asks for a broadcast copy."""
    if d is None:
        if size is not None:
            return matchaxis(x, None, 0, size)
        return reshape(x, (1,) + get_aval(x).shape)
    return moveaxis(x, d, 0)


# ------------------------------------------------------------------------------------------
# bcoo_todense


def _todense_impl(data, indices, *, spinfo):
    shape = tuple(spinfo.shape)
    lay = _layout(data.shape, indices.shape)
    batch, sparse, dense = lay.split(shape)
    data = broadcast_batch(data, batch)
    indices = broadcast_batch(indices, batch)
    valid, flat = valid_and_flat(indices, sparse)
    n_rows, n_cols = math.prod(batch) * math.prod(sparse), math.prod(dense)
    rows = np.arange(math.prod(batch), dtype=np.int64).reshape(batch + (1,)) * math.prod(sparse)
    rows = (rows + flat)[valid]
    values = data[valid].reshape(-1, n_cols)
    if n_cols == 1:
        values = values[:, 0]
    return segment_sum(rows, values, n_rows).reshape(shape)


def _todense_aval(data, indices, *, spinfo):
    layout_of("bcoo_todense", data, indices, spinfo.shape)
    return ShapedArray(tuple(spinfo.shape), data.dtype, data.weak_type)


def _todense_jvp(primals, tangents, *, spinfo):
    data, indices = primals
    out = bcoo_todense_p.bind(data, indices, spinfo=spinfo)
    if type(tangents[0]) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, bcoo_todense_p.bind(tangents[0], indices, spinfo=spinfo)


def _todense_transpose(ct, data, indices, *, spinfo):
    if is_undefined(indices) or not is_undefined(data):
        raise NotImplementedError("transpose of bcoo_todense: it is linear in its data only "
                                  "(the indices are integers)")
    if type(ct) is Zero:
        return [Zero(data.aval), None]
    data_ct = bcoo_extract_p.bind(indices, ct, assume_unique=True)
    return [sum_to_shape(data_ct, data.aval.shape), None]


def _todense_batch(size, vals, dims, *, spinfo):
    (data, indices), (dd, di) = vals, dims
    info = spinfo._replace(shape=(size,) + tuple(spinfo.shape))
    return bcoo_todense_p.bind(front(data, dd), front(indices, di), spinfo=info), 0


bcoo_todense_p.def_impl(_todense_impl)
bcoo_todense_p.def_abstract_eval(_todense_aval)
bcoo_todense_p.def_jvp(_todense_jvp)
bcoo_todense_p.def_transpose(_todense_transpose)
bcoo_todense_p.def_batch(_todense_batch)


def bcoo_todense(data, indices, *, spinfo: SparseInfo):
    """The dense array of shape `spinfo.shape` that (data, indices) stores."""
    return bcoo_todense_p.bind(data, indices, spinfo=spinfo)


# ------------------------------------------------------------------------------------------
# bcoo_extract


def _first_occurrences(indices, valid):
    """Which stored elements are the first at their position (per batch element)."""
    batch = indices.shape[:-2]
    rows = indices.reshape((-1,) + indices.shape[-2:])
    first = np.zeros(rows.shape[:2], bool)
    for b, r in enumerate(rows):
        _, where = np.unique(r, axis=0, return_index=True)
        first[b, where] = True
    return first.reshape(batch + indices.shape[-2:-1]) & valid


def _extract_impl(indices, mat, *, assume_unique=True):
    nb = indices.ndim - 2
    lay = Layout(nb, indices.shape[-1], mat.ndim - nb - indices.shape[-1], indices.shape[-2])
    batch, sparse, dense = lay.split(mat.shape)
    indices = broadcast_batch(indices, batch)
    valid, flat = valid_and_flat(indices, sparse)
    rows = np.arange(math.prod(batch), dtype=np.int64).reshape(batch + (1,)) * math.prod(sparse)
    table = mat.reshape((math.prod(batch) * math.prod(sparse),) + dense)
    if table.shape[0] == 0:  # (nothing to read: every position is out of bounds)
        return np.zeros(batch + (lay.nse,) + dense, mat.dtype)
    out = table[rows + flat]
    if not assume_unique:
        valid = _first_occurrences(indices, valid)
    if not valid.all():
        out[~valid] = 0
    return out


def _extract_aval(indices, mat, *, assume_unique=True):
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"bcoo_extract: indices must be integers, got {indices.dtype.name}")
    if indices.ndim < 2 or indices.ndim - 2 + indices.shape[-1] > mat.ndim:
        raise ValueError(f"bcoo_extract: indices of shape {indices.shape} (batch..., nse, "
                         f"n_sparse) do not fit an array of shape {mat.shape}")
    nb = indices.ndim - 2
    for k in range(nb):
        if indices.shape[k] not in (1, mat.shape[k]):
            raise ValueError(f"bcoo_extract: indices batch dimension {k} has size "
                             f"{indices.shape[k]}, but the array's is {mat.shape[k]} "
                             f"(indices shape {indices.shape}, array shape {mat.shape})")
    dense = mat.shape[nb + indices.shape[-1]:]
    return ShapedArray(mat.shape[:nb] + (indices.shape[-2],) + dense, mat.dtype,
                       mat.weak_type)


def _extract_jvp(primals, tangents, *, assume_unique=True):
    indices, mat = primals
    out = bcoo_extract_p.bind(indices, mat, assume_unique=assume_unique)
    if type(tangents[1]) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, bcoo_extract_p.bind(indices, tangents[1], assume_unique=assume_unique)


def _extract_transpose(ct, indices, mat, *, assume_unique=True):
    if is_undefined(indices) or not is_undefined(mat):
        raise NotImplementedError("transpose of bcoo_extract: it is linear in the dense array "
                                  "only (the indices are integers)")
    if not assume_unique:  # (as in JAX: didax.experimental.sparse.bcoo_extract marks the
        # repeated positions out of bounds and binds assume_unique=True instead)
        raise NotImplementedError("transpose of bcoo_extract with assume_unique=False")
    if type(ct) is Zero:
        return [None, Zero(mat.aval)]
    return [None, bcoo_todense_p.bind(ct, indices, spinfo=SparseInfo(mat.aval.shape))]


def _extract_batch(size, vals, dims, *, assume_unique=True):
    (indices, mat), (di, dm) = vals, dims
    return bcoo_extract_p.bind(front(indices, di), front(mat, dm, size),
                               assume_unique=assume_unique), 0


bcoo_extract_p.def_impl(_extract_impl)
bcoo_extract_p.def_abstract_eval(_extract_aval)
bcoo_extract_p.def_jvp(_extract_jvp)
bcoo_extract_p.def_transpose(_extract_transpose)
bcoo_extract_p.def_batch(_extract_batch)


def bcoo_extract(indices, mat, *, assume_unique=True):
    """The values of `mat` at the positions `indices` (zero where out of bounds, and, unless
    `assume_unique`, at every repeat of a position but the first), laid out as the data of a
    sparse array with those indices."""
    return bcoo_extract_p.bind(indices, mat, assume_unique=bool(assume_unique))
