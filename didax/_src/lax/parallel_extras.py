"""The collectives JAX adds for shard_map's type system and for point-to-point transfers:
`pcast`, `ragged_all_to_all`, `psend` and `precv`, written with didax's collectives, so they
act across the examples of a `vmap(axis_name=...)` and the shards of `pmap` and `shard_map`
alike.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.core import get_aval
from didax._src.lax.elementwise import (
    add,
    bitwise_and,
    convert_element_type,
    le,
    lt,
    mul,
    select_n,
    sub,
)
from didax._src.lax.indexing import GatherDimensionNumbers, dynamic_index_in_dim, gather
from didax._src.lax.parallel import _as_names, all_gather, axis_index, axis_size
from didax._src.lax.shape import broadcast_in_dim, broadcasted_iota, expand_dims

_PCAST_TO = ("varying", "reduced", "unreduced")


def pcast(x, axis_name, *, to: str):
    """Casts the sharding type of `x` over the named axes. JAX tracks which values vary over
    shard_map's manual axes and casts invariant ones to varying (`to="varying"`); didax
    does not track that, so this cast returns `x` (after checking the axes are bound). The
    reduced/unreduced types of JAX's explicit sharding have no counterpart in didax."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    names = _as_names(axis_name)
    if not axis_name:
        return x
    if to not in _PCAST_TO:
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         f"{set(_PCAST_TO)}")
    if to != "varying":
        raise NotImplementedError(f"pcast(..., to={to!r}): didax has no reduced/unreduced "
                                  "sharding types; use psum to combine partial values")
    axis_size(names)  # NameError for an unbound name
    return x


def psend(x, axis_name, perm):
    """Not supported: a send paired with a `precv` through a token."""
    raise NotImplementedError("lax.psend is not supported by didax (it has no tokens to pair "
                              "a send with its receive); use lax.ppermute(x, axis_name, perm), "
                              "which sends and receives in one step")


def precv(token, out_shape, axis_name, perm):
    """Not supported: the receive paired with a `psend` through a token."""
    raise NotImplementedError("lax.precv is not supported by didax (it has no tokens to pair "
                              "a receive with its send); use lax.ppermute(x, axis_name, perm), "
                              "which sends and receives in one step")


def _check_ragged_args(operand, output, offsets_and_sizes):
    op, out = get_aval(operand), get_aval(output)
    if op.dtype != out.dtype:
        raise TypeError("ragged_all_to_all: operand and output must have the same dtype, got "
                        f"{op.dtype} and {out.dtype}.")
    if len(op.shape) < 1 or op.shape[1:] != out.shape[1:]:
        raise TypeError("ragged_all_to_all: operand and output must have the same shape but "
                        f"for the leading dimension, got {op.shape} and {out.shape}.")
    lengths = set()
    for name, a in offsets_and_sizes.items():
        aval = get_aval(a)
        if len(aval.shape) != 1 or not dtypes.issubdtype(aval.dtype, np.integer):
            raise TypeError(f"ragged_all_to_all: {name} must be a 1D integer array, got "
                            f"{aval.dtype.name}{list(aval.shape)}.")
        lengths.add(aval.shape[0])
    if len(lengths) != 1:
        raise TypeError("ragged_all_to_all: input_offsets, send_sizes, output_offsets and "
                        "recv_sizes must have the same length, got "
                        f"{[get_aval(a).shape[0] for a in offsets_and_sizes.values()]}.")
    return lengths.pop()


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    """Sends `operand[input_offsets[i]:][:send_sizes[i]]` to instance `i // (K / axis size)`,
    which writes it into its `output` at `output_offsets[i]` (see `jax.lax.ragged_all_to_all`).
    Each instance gathers every instance's operand and offsets and copies out what is its own."""
    if axis_index_groups is not None:
        raise NotImplementedError("ragged_all_to_all: axis_index_groups are not supported by "
                                  "didax; map over a smaller axis instead")
    k = _check_ragged_args(operand, output, dict(
        input_offsets=input_offsets, send_sizes=send_sizes, output_offsets=output_offsets,
        recv_sizes=recv_sizes))
    n = axis_size(axis_name)
    per_device, leftover = divmod(k, n)
    if leftover:
        raise ValueError(f"ragged_all_to_all: the length {k} of the offsets and sizes must be "
                         f"divisible by the size {n} of axis {axis_name!r}.")
    index_dtype = np.int32
    offsets = [convert_element_type(a, index_dtype) for a in (input_offsets, output_offsets)]
    operands, in_offsets, out_offsets = all_gather((operand, *offsets), axis_name)
    recv = convert_element_type(recv_sizes, index_dtype)
    me = convert_element_type(axis_index(axis_name), index_dtype)
    out_aval = get_aval(output)
    rows = out_aval.shape[0]
    position = broadcasted_iota(index_dtype, (rows,), 0)
    first_slot = mul(me, np.int32(per_device))  # this instance's slots in each sender's
    result = output
    for sender in range(n):
        for j in range(per_device):
            slot = add(first_slot, np.int32(j))
            start_in = dynamic_index_in_dim(in_offsets[sender], slot, 0, keepdims=False)
            start_out = dynamic_index_in_dim(out_offsets[sender], slot, 0, keepdims=False)
            size = recv[sender * per_device + j]
            inside = bitwise_and(le(start_out, position), lt(position, add(start_out, size)))
            source = add(start_in, sub(position, start_out))
            chunk = _rows(operands[sender], source)
            mask = broadcast_in_dim(inside, out_aval.shape, (0,))
            result = select_n(mask, result, chunk)
    return result


def _rows(x, rows):
    """x[rows] along the leading dimension (indices clamped into range)."""
    shape = get_aval(x).shape
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape))),
                                   collapsed_slice_dims=(0,), start_index_map=(0,))
    return gather(x, expand_dims(rows, (1,)), dnums, (1, *shape[1:]), mode="clip")

