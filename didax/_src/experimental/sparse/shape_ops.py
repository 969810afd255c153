"""Shape operations on BCOO arrays that keep them sparse: slices (static and dynamic),
reversal, squeezing, broadcasting, concatenation and changes of layout.

Written with didax.numpy on the data and the indices, so derivatives (in the data), batching
and jit come from those primitives. A stored element that falls outside the result is moved
out of bounds (to the result's sparse shape) and its data zeroed: no entry, as JAX does.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from didax._src import base_prims
from didax._src.core import get_aval
from didax._src.experimental.sparse.errors import SparseEfficiencyError, SparseEfficiencyWarning
from didax._src.experimental.sparse.parts import Parts, full_batch, in_bounds, split
from didax._src.lax import indexing as lax_indexing
from didax._src.numpy import namespace as jnp


def _data_axis(mat, d):
    """The data axis of the array's dimension `d` (a batch or dense one)."""
    nb, ns = mat.n_batch, mat.n_sparse
    return d if d < nb else nb + 1 + (d - nb - ns)


def _mask(data, indices, keep, sparse_shape):
    """Elements where `keep` is false moved out of bounds, their data zeroed."""
    dtype = get_aval(indices).dtype
    bound = jnp.asarray(np.asarray(sparse_shape, np.int64), dtype)
    indices = jnp.where(keep[..., None], indices, bound)
    extra = get_aval(data).ndim - get_aval(keep).ndim
    data = jnp.where(jnp.reshape(keep, get_aval(keep).shape + (1,) * extra), data, 0)
    return data, indices


def _static_ints(name, values, n):
    values = tuple(operator.index(v) for v in values)
    if len(values) != n:
        raise ValueError(f"{name}: expected {n} values (one per dimension), got {values}")
    return values


def slice_(mat, start_indices, limit_indices, strides=None) -> Parts:
    """`lax.slice` of a sparse array."""
    shape = tuple(mat.shape)
    n = len(shape)
    start = _static_ints("bcoo_slice", start_indices, n)
    limit = _static_ints("bcoo_slice", limit_indices, n)
    strides = (1,) * n if strides is None else _static_ints("bcoo_slice", strides, n)
    for d in range(n):
        if not (0 <= start[d] <= limit[d] <= shape[d]) or strides[d] < 1:
            raise ValueError(f"bcoo_slice: invalid slice start_indices={start}, limit_indices="
                             f"{limit}, strides={strides} for an array of shape {shape}")
    nb, ns = mat.n_batch, mat.n_sparse
    out_shape = tuple(-(-(hi - lo) // st) for lo, hi, st in zip(start, limit, strides))
    data, indices = full_batch(mat)
    dslice = [slice(None)] * get_aval(data).ndim
    islice = [slice(None)] * get_aval(indices).ndim
    for d in range(nb):
        dslice[d] = islice[d] = slice(start[d], limit[d], strides[d])
    for d in range(nb + ns, n):
        dslice[_data_axis(mat, d)] = slice(start[d], limit[d], strides[d])
    data, indices = data[tuple(dslice)], indices[tuple(islice)]
    keep = in_bounds(mat, indices)
    columns = []
    for k in range(ns):
        d = nb + k
        i = indices[..., k]
        shifted = i - start[d]
        keep = keep & (i >= start[d]) & (i < limit[d])
        if strides[d] != 1:
            keep = keep & (shifted % strides[d] == 0)
            shifted = shifted // strides[d]
        columns.append(shifted)
    if ns:
        indices = jnp.stack(columns, axis=-1).astype(get_aval(indices).dtype)
    data, indices = _mask(data, indices, keep, out_shape[nb:nb + ns])
    return Parts(data, indices, out_shape, False, mat.unique_indices)


def _clamped_starts(start_indices, shape, sizes):
    return [jnp.clip(jnp.asarray(s).astype(np.int32), 0, n - k)
            for s, n, k in zip(start_indices, shape, sizes)]


def dynamic_slice(mat, start_indices, slice_sizes) -> Parts:
    """`lax.dynamic_slice` of a sparse array: starts may be traced (clamped into bounds as
    lax clamps them); at most as many elements are kept as the sliced sparse positions."""
    shape = tuple(mat.shape)
    n = len(shape)
    sizes = _static_ints("bcoo_dynamic_slice", slice_sizes, n)
    if len(start_indices) != n:
        raise ValueError(f"bcoo_dynamic_slice: expected {n} start indices for an array of "
                         f"shape {shape}, got {len(start_indices)}")
    if any(not 0 <= k <= s for k, s in zip(sizes, shape)):
        raise TypeError(f"bcoo_dynamic_slice: slice_sizes {sizes} must be within the shape "
                        f"{shape}")
    starts = _clamped_starts(start_indices, shape, sizes)
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = full_batch(mat)
    zero = jnp.zeros((), np.int32)
    d_starts = [zero] * get_aval(data).ndim
    d_sizes = list(get_aval(data).shape)
    i_starts = [zero] * get_aval(indices).ndim
    i_sizes = list(get_aval(indices).shape)
    for d in range(nb):
        d_starts[d] = i_starts[d] = starts[d]
        d_sizes[d] = i_sizes[d] = sizes[d]
    for d in range(nb + ns, n):
        d_starts[_data_axis(mat, d)] = starts[d]
        d_sizes[_data_axis(mat, d)] = sizes[d]
    data = lax_indexing.dynamic_slice(data, d_starts, d_sizes)
    indices = lax_indexing.dynamic_slice(indices, i_starts, i_sizes)
    keep = in_bounds(mat, indices)
    columns = []
    for k in range(ns):
        i = indices[..., k]
        s = starts[nb + k].astype(get_aval(indices).dtype)
        keep = keep & (i >= s) & (i < s + sizes[nb + k])
        columns.append(i - s)
    if ns:
        indices = jnp.stack(columns, axis=-1)
    sparse_sizes = sizes[nb:nb + ns]
    nse = min(mat.nse, math.prod(sparse_sizes))
    if nse < mat.nse:  # the elements kept first, in their order
        order = jnp.argsort(~keep, axis=nb, stable=True)
        order = jnp.take(order, jnp.arange(nse), axis=nb)
        keep = jnp.take_along_axis(keep, order, axis=nb)
        indices = jnp.take_along_axis(indices, order[..., None], axis=nb)
        extra = get_aval(data).ndim - nb - 1
        data = jnp.take_along_axis(data, jnp.reshape(order, get_aval(order).shape
                                                      + (1,) * extra), axis=nb)
    data, indices = _mask(data, indices, keep, sparse_sizes)
    return Parts(data, indices, sizes, False, mat.unique_indices)


def rev(mat, dimensions) -> Parts:
    """`lax.rev` of a sparse array."""
    n = mat.ndim
    dims = tuple(operator.index(d) for d in dimensions)
    if any(not 0 <= d < n for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"bcoo_rev: dimensions {dims} must be distinct dimensions of an array "
                         f"of rank {n}")
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = mat.data, mat.indices
    if any(d < nb for d in dims):
        data, indices = full_batch(mat)
    flip_data = tuple(_data_axis(mat, d) for d in dims if d < nb or d >= nb + ns)
    flip_idx = tuple(d for d in dims if d < nb)
    if flip_data:
        data = jnp.flip(data, flip_data)
    if flip_idx:
        indices = jnp.flip(indices, flip_idx)
    cols = [d - nb for d in dims if nb <= d < nb + ns]
    if cols:
        valid = in_bounds(mat, indices)
        sizes = np.asarray(split(mat)[1], np.int64)
        flipped = np.zeros(ns, bool)
        flipped[cols] = True
        dtype = get_aval(indices).dtype
        new = jnp.where(jnp.asarray(flipped), jnp.asarray(sizes - 1, dtype) - indices, indices)
        indices = jnp.where(valid[..., None], new, indices)
    return Parts(data, indices, tuple(mat.shape), False, mat.unique_indices)


def squeeze(mat, dimensions) -> Parts:
    """`lax.squeeze` of a sparse array: each squeezed dimension has size 1."""
    shape = tuple(mat.shape)
    n = len(shape)
    dims = sorted({operator.index(d) % n if n else operator.index(d) for d in dimensions})
    for d in dims:
        if not 0 <= d < n or shape[d] != 1:
            raise ValueError(f"bcoo_squeeze: cannot squeeze dimension {d} of an array of shape "
                             f"{shape}: only dimensions of size 1 can be")
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = full_batch(mat)
    valid = in_bounds(mat)
    keep_cols = [k for k in range(ns) if nb + k not in dims]
    new_sparse = tuple(shape[nb + k] for k in keep_cols)
    indices = indices[..., np.asarray(keep_cols, np.int32)]
    data, indices = _mask(data, indices, valid, new_sparse)
    data = jnp.squeeze(data, tuple(_data_axis(mat, d) for d in dims
                                   if d < nb or d >= nb + ns))
    indices = jnp.squeeze(indices, tuple(d for d in dims if d < nb))
    out_shape = tuple(s for d, s in enumerate(shape) if d not in dims)
    return Parts(data, indices, out_shape, mat.indices_sorted, mat.unique_indices)


def broadcast_in_dim(mat, shape, broadcast_dimensions) -> Parts:
    """`lax.broadcast_in_dim` of a sparse array. New dimensions before its sparse ones are
    batch dimensions, new ones after its first dense one dense; others must have length 1
    (sparse); an existing sparse dimension cannot grow."""
    shape = tuple(operator.index(s) for s in shape)
    bd = tuple(operator.index(d) for d in broadcast_dimensions)
    old = tuple(mat.shape)
    if len(bd) != len(old) or any(b >= len(shape) for b in bd) or list(bd) != sorted(set(bd)):
        raise ValueError(f"bcoo_broadcast_in_dim: broadcast_dimensions {bd} must be increasing "
                         f"dimensions of the result shape {shape}, one per operand dimension "
                         f"(operand shape {old})")
    for k, b in enumerate(bd):
        if old[k] not in (1, shape[b]):
            raise ValueError(f"bcoo_broadcast_in_dim: operand dimension {k} of size {old[k]} "
                             f"cannot broadcast to size {shape[b]} (shape {shape})")
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    first_dense = bd[nb + ns] if nd else len(shape)
    new_nb = bd[nb] if ns or nd else len(shape)
    sparse_out = [d for d in range(new_nb, first_dense)]
    for d in sparse_out:
        if d not in bd and shape[d] != 1:
            raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    for k in range(ns):
        if old[nb + k] != shape[bd[nb + k]]:
            raise NotImplementedError(
                f"bcoo_broadcast_in_dim: sparse dimension {nb + k} of size {old[nb + k]} cannot "
                f"broadcast to size {shape[bd[nb + k]]}; convert it with .todense() first")
    data_shape = shape[:new_nb] + (mat.nse,) + shape[first_dense:]
    data_dims = bd[:nb] + (new_nb,) + tuple(new_nb + 1 + (b - first_dense)
                                             for b in bd[nb + ns:])
    data = base_prims.broadcast_in_dim(mat.data, data_shape, data_dims)
    dtype = get_aval(mat.indices).dtype
    old_cols = {bd[nb + k]: k for k in range(ns)}
    cols = [mat.indices[..., old_cols[d]] if d in old_cols
            else jnp.zeros(get_aval(mat.indices).shape[:-1], dtype) for d in sparse_out]
    indices = (jnp.stack(cols, axis=-1) if cols
               else jnp.zeros(get_aval(mat.indices).shape[:-1] + (0,), dtype))
    # elements out of bounds stay so in the new columns
    valid = in_bounds(mat)
    indices = jnp.where(valid[..., None], indices,
                        jnp.asarray(np.asarray([shape[d] for d in sparse_out], np.int64), dtype))
    idx_shape = shape[:new_nb] + (mat.nse, len(sparse_out))
    indices = base_prims.broadcast_in_dim(indices, idx_shape, bd[:nb] + (new_nb, new_nb + 1))
    return Parts(data, indices, shape, mat.indices_sorted, mat.unique_indices)


def concatenate(operands, dimension) -> Parts:
    """`lax.concatenate` of sparse arrays of one layout: along a batch dimension the batches
    are joined; along a sparse or dense one the stored elements are (shifted into place)."""
    ops = list(operands)
    if not ops:
        raise ValueError("bcoo_concatenate: need at least one operand")
    first = ops[0]
    n = first.ndim
    dim = operator.index(dimension)
    if not 0 <= dim < n:
        raise ValueError(f"bcoo_concatenate: dimension {dim} is out of range for arrays of "
                         f"rank {n}")
    for op in ops:
        if op.ndim != n or any(a != b for d, (a, b) in enumerate(zip(op.shape, first.shape))
                               if d != dim):
            raise TypeError("bcoo_concatenate: operands must have equal shapes except along "
                            f"dimension {dim}, got {[tuple(o.shape) for o in ops]}")
        if (op.n_batch, op.n_dense) != (first.n_batch, first.n_dense):
            raise ValueError("bcoo_concatenate: operands must have the same layout, got "
                             f"n_batch={[o.n_batch for o in ops]}, "
                             f"n_dense={[o.n_dense for o in ops]}")
    nb, ns = first.n_batch, first.n_sparse
    dtype = jnp.result_type(*[o.data for o in ops])
    idx_dtype = jnp.result_type(*[o.indices for o in ops])
    out_shape = list(first.shape)
    out_shape[dim] = sum(o.shape[dim] for o in ops)
    out_shape = tuple(out_shape)
    parts = [full_batch(o) for o in ops]
    datas = [jnp.asarray(d, dtype) for d, _ in parts]
    idxs = [jnp.asarray(i, idx_dtype) for _, i in parts]
    if dim < nb:
        nse = max(o.nse for o in ops)
        padded_d, padded_i = [], []
        for o, d, i in zip(ops, datas, idxs):
            extra = nse - o.nse
            if extra:
                pad = [(0, 0)] * get_aval(d).ndim
                pad[nb] = (0, extra)
                d = jnp.pad(d, pad)
                bound = np.asarray(split(o)[1], np.int64)
                fill = jnp.broadcast_to(jnp.asarray(bound, idx_dtype),
                                        get_aval(i).shape[:nb] + (extra, ns))
                i = jnp.concatenate([i, fill], axis=nb)
            padded_d.append(d)
            padded_i.append(i)
        data = jnp.concatenate(padded_d, axis=dim)
        indices = jnp.concatenate(padded_i, axis=dim)
        return Parts(data, indices, out_shape)
    offset = 0
    new_d, new_i = [], []
    out_sparse = np.asarray(out_shape[nb:nb + ns], np.int64)
    for o, d, i in zip(ops, datas, idxs):
        valid = in_bounds(o, i)
        if dim < nb + ns:
            shift = np.zeros(ns, np.int64)
            shift[dim - nb] = offset
            i = i + jnp.asarray(shift, idx_dtype)
        else:
            axis = _data_axis(first, dim)
            pad = [(0, 0)] * get_aval(d).ndim
            pad[axis] = (offset, out_shape[dim] - offset - o.shape[dim])
            d = jnp.pad(d, pad)
        i = jnp.where(valid[..., None], i, jnp.asarray(out_sparse, idx_dtype))
        new_d.append(d)
        new_i.append(i)
        offset += o.shape[dim]
    data = jnp.concatenate(new_d, axis=nb)
    indices = jnp.concatenate(new_i, axis=nb)
    return Parts(data, indices, out_shape)


# ------------------------------------------------------------------------------------------
# Layout changes


def _batch_to_sparse(mat) -> Parts:
    """The last batch dimension turned into the first sparse one."""
    nb = mat.n_batch
    data, indices = full_batch(mat)
    n = mat.shape[nb - 1]
    dtype = get_aval(indices).dtype
    coord = jnp.broadcast_to(jnp.reshape(jnp.arange(n, dtype=dtype), (n, 1, 1)),
                             get_aval(indices).shape[nb - 1:-1] + (1,))
    coord = jnp.broadcast_to(coord, get_aval(indices).shape[:-1] + (1,))
    valid = in_bounds(mat, indices)
    bound = np.asarray((n,) + split(mat)[1], np.int64)
    indices = jnp.concatenate([coord, indices], axis=-1)
    indices = jnp.where(valid[..., None], indices, jnp.asarray(bound, dtype))
    batch = tuple(mat.shape[:nb - 1])
    nse = n * mat.nse
    data = jnp.reshape(data, batch + (nse,) + get_aval(data).shape[nb + 1:])
    indices = jnp.reshape(indices, batch + (nse, mat.n_sparse + 1))
    return Parts(data, indices, tuple(mat.shape), mat.indices_sorted, mat.unique_indices)


def _dense_to_sparse(mat) -> Parts:
    """The first dense dimension turned into the last sparse one."""
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = full_batch(mat)
    n = mat.shape[nb + ns]
    dtype = get_aval(indices).dtype
    rest = get_aval(data).shape[nb + 2:]
    batch = tuple(mat.shape[:nb])
    valid = in_bounds(mat, indices)
    idx = jnp.broadcast_to(indices[..., None, :], batch + (mat.nse, n, ns))
    coord = jnp.broadcast_to(jnp.reshape(jnp.arange(n, dtype=dtype), (n, 1)),
                             batch + (mat.nse, n, 1))
    bound = np.asarray(split(mat)[1] + (n,), np.int64)
    idx = jnp.concatenate([idx, coord], axis=-1)
    idx = jnp.where(valid[..., None, None], idx, jnp.asarray(bound, dtype))
    nse = mat.nse * n
    return Parts(jnp.reshape(data, batch + (nse,) + rest),
                 jnp.reshape(idx, batch + (nse, ns + 1)), tuple(mat.shape),
                 mat.indices_sorted, mat.unique_indices)


def _sparse_to_batch(mat) -> Parts:
    """The first sparse dimension turned into the last batch one (each batch element keeps
    every stored element; those of other rows moved out of bounds)."""
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = full_batch(mat)
    n = mat.shape[nb]
    batch = tuple(mat.shape[:nb])
    dtype = get_aval(indices).dtype
    valid = in_bounds(mat, indices)
    rows = jnp.reshape(jnp.arange(n, dtype=dtype), (n, 1))
    keep = valid[..., None, :] & (indices[..., None, :, 0] == rows)
    idx = jnp.broadcast_to(indices[..., None, :, 1:], batch + (n, mat.nse, ns - 1))
    d = jnp.broadcast_to(jnp.expand_dims(data, nb), batch + (n,) + get_aval(data).shape[nb:])
    d, idx = _mask(d, idx, keep, split(mat)[1][1:])
    return Parts(d, idx, tuple(mat.shape), mat.indices_sorted, mat.unique_indices)


def _sparse_to_dense(mat) -> Parts:
    """The last sparse dimension turned into the first dense one (each element a block with
    its value at its coordinate)."""
    nb, ns = mat.n_batch, mat.n_sparse
    n = mat.shape[nb + ns - 1]
    valid = in_bounds(mat)
    col = mat.indices[..., -1]
    one_hot = (col[..., None] == jnp.arange(n, dtype=get_aval(col).dtype)) & valid[..., None]
    extra = get_aval(mat.data).ndim - nb - 1
    data = jnp.expand_dims(mat.data, nb + 1) * jnp.reshape(
        one_hot, get_aval(one_hot).shape + (1,) * extra).astype(mat.dtype)
    bound = jnp.asarray(np.asarray(split(mat)[1][:-1], np.int64), get_aval(mat.indices).dtype)
    indices = jnp.where(valid[..., None], mat.indices[..., :-1], bound)
    return Parts(data, indices, tuple(mat.shape), mat.indices_sorted, False)


def update_layout(mat, n_batch=None, n_dense=None, on_inefficient="error") -> Parts:
    """`mat` with `n_batch` batch and `n_dense` dense dimensions. Moving sparse dimensions
    into the batch or dense ones stores zeros; `on_inefficient` says whether that is an
    error ('error'), a warning ('warn') or silent (None), as in JAX."""
    nb0, nd0 = mat.n_batch, mat.n_dense
    n_batch = nb0 if n_batch is None else operator.index(n_batch)
    n_dense = nd0 if n_dense is None else operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > mat.ndim:
        raise ValueError(f"bcoo_update_layout: invalid n_batch={n_batch}, n_dense={n_dense} "
                         f"for an array of rank {mat.ndim}")
    if on_inefficient not in ("error", "warn", None):
        raise ValueError("bcoo_update_layout: on_inefficient must be 'error', 'warn' or None, "
                         f"got {on_inefficient!r}")
    for what, new, old in (("n_batch", n_batch, nb0), ("n_dense", n_dense, nd0)):
        if new > old and on_inefficient is not None:
            msg = (f"For matrix of shape {tuple(mat.shape)}, increasing {what} from {old} to "
                   f"{new} results in inefficient storage. To disable this error, set the "
                   "on_inefficient argument of bcoo_update_layout to 'warn' or None.")
            if on_inefficient == "error":
                raise SparseEfficiencyError(msg)
            warnings.warn(msg, SparseEfficiencyWarning, stacklevel=3)
    out = Parts(mat.data, mat.indices, tuple(mat.shape), mat.indices_sorted,
                mat.unique_indices)
    while out.n_batch > n_batch:
        out = _batch_to_sparse(out)
    while out.n_dense > n_dense:
        out = _dense_to_sparse(out)
    while out.n_batch < n_batch:
        out = _sparse_to_batch(out)
    while out.n_dense < n_dense:
        out = _sparse_to_dense(out)
    return out
