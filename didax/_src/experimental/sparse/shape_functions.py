"""The public BCOO functions of shape operations, layouts and sparse-sparse products: each
checks its operands and returns a BCOO (or the dense array JAX returns)."""
from __future__ import annotations

import numpy as np

from didax._src.core import get_aval
from didax._src.experimental.sparse import shape_ops, sparse_sparse, spdot, structure
from didax._src.experimental.sparse.bcoo import BCOO
from didax._src.experimental.sparse.duplicates import per_batch
from didax._src.lax.indexing import GatherScatterMode
from didax._src.numpy import namespace as jnp


def _bcoo(name: str, mat) -> BCOO:
    if not isinstance(mat, BCOO):
        raise TypeError(f"{name} expects a BCOO sparse array, got {type(mat).__name__}; "
                        "convert a dense array with BCOO.fromdense")
    return mat


def bcoo_slice(mat, *, start_indices, limit_indices, strides=None) -> BCOO:
    """`lax.slice` of a BCOO (the same number of stored elements)."""
    return BCOO._new(shape_ops.slice_(_bcoo("bcoo_slice", mat), start_indices, limit_indices,
                                      strides))


def bcoo_dynamic_slice(mat, start_indices, slice_sizes) -> BCOO:
    """`lax.dynamic_slice` of a BCOO; the starts may be traced."""
    return BCOO._new(shape_ops.dynamic_slice(_bcoo("bcoo_dynamic_slice", mat),
                                             list(start_indices), slice_sizes))


def bcoo_rev(operand, dimensions) -> BCOO:
    """`lax.rev` of a BCOO."""
    return BCOO._new(shape_ops.rev(_bcoo("bcoo_rev", operand), dimensions))


def bcoo_squeeze(arr, *, dimensions) -> BCOO:
    """`lax.squeeze` of a BCOO."""
    return BCOO._new(shape_ops.squeeze(_bcoo("bcoo_squeeze", arr), dimensions))


def bcoo_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None) -> BCOO:
    """`lax.broadcast_in_dim` of a BCOO (new leading dimensions are batch dimensions)."""
    del sharding
    return BCOO._new(shape_ops.broadcast_in_dim(_bcoo("bcoo_broadcast_in_dim", mat), shape,
                                                broadcast_dimensions))


def bcoo_concatenate(operands, *, dimension) -> BCOO:
    """`lax.concatenate` of BCOO arrays of one layout."""
    ops = [_bcoo("bcoo_concatenate", x) for x in operands]
    return BCOO._new(shape_ops.concatenate(ops, dimension))


def bcoo_update_layout(mat, *, n_batch=None, n_dense=None, on_inefficient="error") -> BCOO:
    """The same array with `n_batch` batch and `n_dense` dense dimensions."""
    return BCOO._new(shape_ops.update_layout(_bcoo("bcoo_update_layout", mat), n_batch,
                                             n_dense, on_inefficient))


def bcoo_multiply_sparse(lhs, rhs) -> BCOO:
    """The elementwise product of two BCOO arrays of one shape, a BCOO."""
    return BCOO._new(sparse_sparse.multiply_sparse(_bcoo("bcoo_multiply_sparse", lhs),
                                                   _bcoo("bcoo_multiply_sparse", rhs)))


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """The data of dot_general(A, B) at `indices` (the indices of a BCOO of the product's
    shape), computing those entries only (see spdot.py)."""
    return spdot.dot_general_sampled(A, B, indices, dimension_numbers)


def bcoo_gather(operand, start_indices, dimension_numbers, slice_sizes, *,
                unique_indices=False, indices_are_sorted=False, mode=None,
                fill_value=None) -> BCOO:
    """`lax.gather` of a BCOO: one dynamic slice per index vector (mapped with vmap, so the
    index dimensions become leading batch dimensions), its collapsed dimensions squeezed.
    Windows partly out of bounds are clamped into bounds (modes 'clip' and
    'promise_in_bounds'); 'fill' is not implemented."""
    del unique_indices, indices_are_sorted, fill_value
    mat = _bcoo("bcoo_gather", operand)
    dn = dimension_numbers
    mode = GatherScatterMode.from_any(mode) if mode is not None else GatherScatterMode.CLIP
    if mode == GatherScatterMode.FILL_OR_DROP:
        raise NotImplementedError("bcoo_gather with mode='fill' is not implemented; use "
                                  "mode='clip' or index within bounds")
    if tuple(getattr(dn, "operand_batching_dims", ())):
        raise NotImplementedError("bcoo_gather with operand_batching_dims is not implemented")
    idx = jnp.asarray(start_indices)
    shape = get_aval(idx).shape
    n_batch = len(shape) - 1
    sizes = tuple(int(s) for s in slice_sizes)
    collapsed = tuple(dn.collapsed_slice_dims)

    def one(vector):
        starts = [jnp.zeros((), np.int32)] * mat.ndim
        for k, d in enumerate(dn.start_index_map):
            starts[d] = vector[k]
        window = BCOO._new(shape_ops.dynamic_slice(mat, starts, sizes))
        return BCOO._new(shape_ops.squeeze(window, collapsed)) if collapsed else window

    out = per_batch(one, n_batch)(idx)
    offsets = tuple(dn.offset_dims)
    rank = out.ndim
    batch_pos = [d for d in range(rank) if d not in offsets]
    perm = [0] * rank
    for k, d in enumerate(batch_pos):
        perm[d] = k
    for k, d in enumerate(offsets):
        perm[d] = n_batch + k
    if perm != list(range(rank)):
        out = BCOO._new(structure.transpose(out, perm))
    return out


def bcoo_conv_general_dilated(lhs, rhs, *args, **kwargs):
    """Not implemented in didax."""
    raise NotImplementedError(
        "bcoo_conv_general_dilated is not implemented in didax; convert the sparse operand "
        "with .todense() and use lax.conv_general_dilated")
