"""Shape operations on sparse arrays that move stored elements, never densify: transposes
within each group of dimensions, sums over axes, reshapes of the sparse dimensions, unit
dimensions for `keepdims`, and sums of two sparse arrays (their elements side by side).

Written with didax.numpy on the data and the indices, so derivatives, batching and jit come
from those primitives.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src.core import get_aval
from didax._src.experimental.sparse.parts import (
    Parts,
    canonical_axes,
    full_batch,
    in_bounds,
    split,
)
from didax._src.numpy import namespace as jnp


def _groups(mat):
    nb, ns = mat.n_batch, mat.n_sparse
    return range(nb), range(nb, nb + ns), range(nb + ns, mat.ndim)


def _dense_axes(mat, axes):
    """Axes of the data for dense dimensions `axes` of the array."""
    nb, ns = mat.n_batch, mat.n_sparse
    return tuple(nb + 1 + (a - nb - ns) for a in axes)


def transpose(mat, permutation) -> Parts:
    """`mat` with its dimensions permuted; each of its batch, sparse and dense dimensions must
    stay among its kind (the data and indices are transposed, the index columns permuted)."""
    perm = tuple(operator.index(p) for p in permutation)
    if sorted(perm) != list(range(mat.ndim)):
        raise ValueError(f"bcoo_transpose: permutation {perm} is not a permutation of the "
                         f"{mat.ndim} dimensions of an array of shape {tuple(mat.shape)}")
    nb, ns = mat.n_batch, mat.n_sparse
    bperm, sperm, dperm = perm[:nb], perm[nb:nb + ns], perm[nb + ns:]
    if (sorted(bperm), sorted(sperm), sorted(dperm)) != tuple(map(list, _groups(mat))):
        raise NotImplementedError(
            f"bcoo_transpose: permutation {perm} moves dimensions between the batch, sparse and "
            f"dense groups (n_batch={nb}, n_sparse={ns}, n_dense={mat.n_dense}); each must stay "
            "within its group")
    data = jnp.transpose(mat.data, bperm + (nb,) + _dense_axes(mat, dperm))
    indices = jnp.transpose(mat.indices, bperm + (nb, nb + 1))
    columns = tuple(p - nb for p in sperm)
    moved = columns != tuple(range(ns))
    if moved:
        indices = indices[..., np.asarray(columns, np.int32)]
    shape = tuple(mat.shape[p] for p in perm)
    return Parts(data, indices, shape, mat.indices_sorted and not moved, mat.unique_indices)


def reduce_sum(mat, axes) -> Parts:
    """The sum over `axes`: dense dimensions are summed in the data; a sparse dimension's
    index column is dropped (its elements then add up where they meet); batch dimensions
    become more stored elements."""
    axes = canonical_axes("bcoo_reduce_sum", axes, mat.ndim)
    batch, sparse, dense = split(mat)
    nb, ns = len(batch), len(sparse)
    rb = [a for a in axes if a < nb]
    rs = [a for a in axes if nb <= a < nb + ns]
    rd = [a for a in axes if a >= nb + ns]
    data, indices = mat.data, mat.indices
    if rs:  # elements out of bounds hold no value: zero them before their position goes
        valid = in_bounds(mat)
        data = jnp.where(jnp.reshape(valid, get_aval(valid).shape + (1,) * len(dense)), data, 0)
        keep = [a - nb for a in range(nb, nb + ns) if a not in rs]
        indices = indices[..., np.asarray(keep, np.int32)]
    if rd:
        data = jnp.sum(data, axis=_dense_axes(mat, rd))
    if rb:
        data, indices = full_batch(Parts(data, indices, mat.shape))
        kept = [k for k in range(nb) if k not in rb]
        merged = math.prod(batch[k] for k in rb) * mat.nse
        d_rest = tuple(range(nb + 1, get_aval(data).ndim))
        data = jnp.transpose(data, tuple(kept) + tuple(rb) + (nb,) + d_rest)
        data = jnp.reshape(data, tuple(batch[k] for k in kept) + (merged,)
                           + get_aval(data).shape[len(kept) + len(rb) + 1:])
        indices = jnp.transpose(indices, tuple(kept) + tuple(rb) + (nb, nb + 1))
        indices = jnp.reshape(indices, tuple(batch[k] for k in kept)
                              + (merged, get_aval(indices).shape[-1]))
    shape = tuple(s for a, s in enumerate(mat.shape) if a not in axes)
    same = not rs and not rb
    return Parts(data, indices, shape, mat.indices_sorted and same, mat.unique_indices and same)


def expand_dims(mat, axes) -> Parts:
    """`mat` with unit dimensions inserted at `axes` (positions in the result), each among
    the batch dimensions if it is at or before their end, else a sparse dimension (index 0)
    if at or before the sparse ones' end, else a dense one."""
    out = Parts(mat.data, mat.indices, tuple(mat.shape), mat.indices_sorted,
                mat.unique_indices)
    for a in sorted(axes):
        nb, ns = out.n_batch, out.n_sparse
        shape = out.shape[:a] + (1,) + out.shape[a:]
        if a <= nb:
            out = Parts(jnp.expand_dims(out.data, a), jnp.expand_dims(out.indices, a), shape,
                        out.indices_sorted, out.unique_indices)
        elif a <= nb + ns:
            idx = out.indices
            zeros = jnp.zeros(get_aval(idx).shape[:-1] + (1,), get_aval(idx).dtype)
            col = a - nb
            idx = jnp.concatenate([idx[..., :col], zeros, idx[..., col:]], axis=-1)
            out = Parts(out.data, idx, shape, out.indices_sorted, out.unique_indices)
        else:
            out = Parts(jnp.expand_dims(out.data, nb + 1 + (a - nb - ns)), out.indices, shape,
                        out.indices_sorted, out.unique_indices)
    return out


def reshape(mat, new_sizes) -> Parts:
    """`mat` reshaped where only its sparse dimensions change (their positions are
    linearized and unraveled); other reshapes are not implemented."""
    shape = tuple(mat.shape)
    new = _sizes(new_sizes, math.prod(shape), shape)
    batch, sparse, dense = split(mat)
    nb, nd = len(batch), len(dense)
    if new[:nb] != batch or (nd and new[len(new) - nd:] != dense) or len(new) < nb + nd:
        raise NotImplementedError(
            f"BCOO.reshape from {shape} to {new}: only reshapes of the sparse dimensions are "
            f"implemented (the batch dimensions {batch} and dense dimensions {dense} must "
            "stay as they are)")
    new_sparse = new[nb:len(new) - nd]
    size = math.prod(sparse)
    dtype = get_aval(mat.indices).dtype
    if size > np.iinfo(dtype).max:
        raise NotImplementedError(f"BCOO.reshape: {size} sparse positions overflow the "
                                  f"{dtype.name} indices")
    valid = in_bounds(mat)
    flat = jnp.zeros(get_aval(valid).shape, dtype)
    for k, n in enumerate(sparse):
        flat = flat * n + mat.indices[..., k]
    columns = []
    for n in reversed(new_sparse):
        columns.append(flat % n if n else flat)
        flat = flat // n if n else flat
    columns = columns[::-1]
    out_bounds = jnp.asarray(np.asarray(new_sparse, np.int64), dtype)
    if columns:
        indices = jnp.stack(columns, axis=-1)
    else:
        indices = jnp.zeros(get_aval(valid).shape + (0,), dtype)
    indices = jnp.where(valid[..., None], indices, out_bounds)
    return Parts(mat.data, indices, new, mat.indices_sorted, mat.unique_indices)


def _sizes(new_sizes, total, shape) -> tuple:
    if isinstance(new_sizes, (int, np.integer)):
        new_sizes = (new_sizes,)
    new = [operator.index(s) for s in new_sizes]
    if new.count(-1) > 1:
        raise ValueError(f"BCOO.reshape: at most one dimension may be -1, got {tuple(new)}")
    if -1 in new:
        known = math.prod(s for s in new if s != -1)
        if known == 0 or total % known:
            raise ValueError(f"BCOO.reshape: cannot reshape an array of shape {shape} into "
                             f"{tuple(new)}")
        new[new.index(-1)] = total // known
    if math.prod(new) != total:
        raise ValueError(f"BCOO.reshape: cannot reshape an array of shape {shape} (size "
                         f"{total}) into {tuple(new)}")
    return tuple(new)


def add(x, y) -> Parts:
    """x + y for two sparse arrays of one shape and layout: their elements side by side
    (duplicates are summed whenever the result is read)."""
    if tuple(x.shape) != tuple(y.shape):
        raise NotImplementedError(f"addition of sparse arrays of shapes {tuple(x.shape)} and "
                                  f"{tuple(y.shape)}: broadcasting them is not implemented")
    if (x.n_batch, x.n_dense) != (y.n_batch, y.n_dense):
        raise NotImplementedError(
            f"addition of sparse arrays of different layouts (n_batch={x.n_batch}, "
            f"n_dense={x.n_dense} and n_batch={y.n_batch}, n_dense={y.n_dense}) is not "
            "implemented")
    dtype = jnp.result_type(x.data, y.data)
    (xd, xi), (yd, yi) = full_batch(x), full_batch(y)
    nb = x.n_batch
    index_dtype = jnp.promote_types(get_aval(xi).dtype, get_aval(yi).dtype)
    data = jnp.concatenate([jnp.asarray(xd, dtype), jnp.asarray(yd, dtype)], axis=nb)
    indices = jnp.concatenate([jnp.asarray(xi, index_dtype), jnp.asarray(yi, index_dtype)],
                              axis=nb)
    return Parts(data, indices, tuple(x.shape))

