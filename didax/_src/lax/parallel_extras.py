"""The collectives JAX adds for shard_map's type system and for point-to-point transfers:
`pcast`, `ragged_all_to_all`, `psend` and `precv`. They act across the examples of a
`vmap(axis_name=...)` and the shards of `pmap` and `shard_map` alike: ragged_all_to_all is a
primitive (JAX's params) whose rules are here; the others need no primitive of their own.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import dtypes
from didax._src.base_prims import instantiate
from didax._src.core import Zero, get_aval, is_zero
from didax._src.interpreters.batching import bdim_at_front
from didax._src.interpreters.transpose import is_undefined
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
from didax._src.lax.indexing import GatherDimensionNumbers, gather
from didax._src.lax.parallel import (
    _as_names,
    _axis_sizes,
    _collective,
    _rule_name_in,
    all_to_all,
    axis_size,
)
from didax._src.lax.reduction import reduce_or
from didax._src.lax.shape import (
    broadcast_in_dim,
    broadcasted_iota,
    expand_dims,
    iota,
    reshape,
    transpose,
)
from didax._src.lax.shape import slice as lax_slice

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


def _check_ragged_args(op, out, offsets_and_sizes):
    """Checks the operand types of ragged_all_to_all (avals); the number of slots."""
    if op.dtype != out.dtype:
        raise TypeError("ragged_all_to_all: operand and output must have the same dtype, got "
                        f"{op.dtype} and {out.dtype}.")
    if len(op.shape) < 1 or op.shape[1:] != out.shape[1:]:
        raise TypeError("ragged_all_to_all: operand and output must have the same shape but "
                        f"for the leading dimension, got {op.shape} and {out.shape}.")
    lengths = set()
    for name, aval in offsets_and_sizes.items():
        if len(aval.shape) != 1 or not dtypes.issubdtype(aval.dtype, np.integer):
            raise TypeError(f"ragged_all_to_all: {name} must be a 1D integer array, got "
                            f"{aval.dtype.name}{list(aval.shape)}.")
        lengths.add(aval.shape[0])
    if len(lengths) != 1:
        raise TypeError("ragged_all_to_all: input_offsets, send_sizes, output_offsets and "
                        "recv_sizes must have the same length, got "
                        f"{[a.shape[0] for a in offsets_and_sizes.values()]}.")
    return lengths.pop()


# --------------------------------------------------------------------------------------
# ragged_all_to_all: one primitive, params (axis_name, a tuple of names; axis_index_groups),
# operands (operand, output, input_offsets, send_sizes, output_offsets, recv_sizes).
# Instance r receives, from each instance s and each of its slots j < K / n (n the size of
# the named axes, K the length of the offsets), the rows of s's operand starting at s's
# input_offsets[r * K/n + j], and writes recv_sizes[s * K/n + j] of them into its output
# from s's output_offsets[r * K/n + j] (later slots overwrite earlier ones; rows outside the
# output are dropped, rows read past the operand are clamped into it).


def _ragged_aval(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes, *,
                 axis_name, axis_index_groups):
    k = _check_ragged_args(operand, output, dict(
        input_offsets=input_offsets, send_sizes=send_sizes, output_offsets=output_offsets,
        recv_sizes=recv_sizes))
    n = math.prod(_axis_sizes(axis_name, "ragged_all_to_all"))
    if k % n:
        raise ValueError(f"ragged_all_to_all: the length {k} of the offsets and sizes must be "
                         f"divisible by the size {n} of axis {axis_name!r}.")
    return output


def _ragged_exchange(me: int, operands, input_offsets, output_offsets, recv_sizes, output):
    """What instance `me` ends with, given every instance's operand and offsets (NumPy)."""
    n, k = len(operands), len(recv_sizes)
    per = k // n
    result = np.array(output, copy=True)
    rows = result.shape[0]
    for s, operand in enumerate(operands):
        if operand.shape[0] == 0:
            continue
        for j in range(per):
            slot = me * per + j
            start_in, start_out = int(input_offsets[s][slot]), int(output_offsets[s][slot])
            size = int(recv_sizes[s * per + j])
            at = np.arange(max(start_out, 0), min(start_out + size, rows))
            if at.size:
                result[at] = operand[np.clip(start_in + at - start_out, 0, operand.shape[0] - 1)]
    return result


def _ragged_run(axis, operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                *, axis_name, axis_index_groups):
    gather = axis.group.allgather
    operands = gather(axis.index, np.asarray(operand), "ragged_all_to_all")
    ins = gather(axis.index, np.asarray(input_offsets), "ragged_all_to_all")
    outs = gather(axis.index, np.asarray(output_offsets), "ragged_all_to_all")
    return _ragged_exchange(axis.index, operands, ins, outs, np.asarray(recv_sizes),
                            np.asarray(output))


ragged_all_to_all_p = _collective("ragged_all_to_all", "axis_name", _ragged_run)
ragged_all_to_all_p.def_abstract_eval(_ragged_aval)


def _ragged_jvp(primals, tangents, **params):
    """Linear in (operand, output) together: the tangents go the way of the values."""
    operand, output, *rest = primals
    t_operand, t_output = tangents[:2]
    out = ragged_all_to_all_p.bind(operand, output, *rest, **params)
    if type(t_operand) is Zero and type(t_output) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, ragged_all_to_all_p.bind(instantiate(t_operand), instantiate(t_output), *rest,
                                         **params)


ragged_all_to_all_p.def_jvp(_ragged_jvp)


def _ragged_transpose(ct, operand, output, input_offsets, send_sizes, output_offsets,
                      recv_sizes, *, axis_name, axis_index_groups):
    """The operand's cotangent comes back the reverse way (from where each slice landed to
    where it was read); the output's is the cotangent but where a slice overwrote it."""
    if any(is_undefined(a) for a in (input_offsets, send_sizes, output_offsets, recv_sizes)):
        raise NotImplementedError("transpose of 'ragged_all_to_all': it is not linear in its "
                                  "offsets and sizes")
    undefined = [is_undefined(operand), is_undefined(output)]
    if is_zero(ct):
        return [Zero(a.aval) if u else None for a, u in zip((operand, output), undefined)] + [
            None] * 4
    landed = all_to_all(output_offsets, axis_name, 0, 0, tiled=True)  # (as the receiver)
    cts = [None] * 6
    if undefined[0]:
        aval = operand.aval
        zeros = broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
        read_at = all_to_all(input_offsets, axis_name, 0, 0, tiled=True)
        cts[0] = ragged_all_to_all_p.bind(ct, zeros, landed, recv_sizes, read_at, send_sizes,
                                          axis_name=axis_name,
                                          axis_index_groups=axis_index_groups)
    if undefined[1]:
        aval = get_aval(ct)
        rows, k = aval.shape[0], get_aval(recv_sizes).shape[0]
        position = broadcasted_iota(np.int32, (rows, k), 0)
        start = broadcast_in_dim(convert_element_type(landed, np.int32), (rows, k), (1,))
        size = broadcast_in_dim(convert_element_type(recv_sizes, np.int32), (rows, k), (1,))
        written = reduce_or(bitwise_and(le(start, position), lt(position, add(start, size))),
                            (1,))
        zeros = broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
        cts[1] = select_n(broadcast_in_dim(written, aval.shape, (0,)), ct, zeros)
    return cts


ragged_all_to_all_p.def_transpose(_ragged_transpose)


def _ragged_batch(size, vals, dims, *, axis_name, axis_index_groups):
    vals = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups)
    name = _rule_name_in(axis_name)
    if name is None:  # another vmap's axis: each example exchanges on its own
        return _ragged_batch_examples(size, *vals, **params), 0
    if len(axis_name) > 1:
        raise NotImplementedError("ragged_all_to_all over several axis names under vmap")
    return _ragged_across_examples(size, *vals), 0


def _ragged_batch_examples(b, operand, output, input_offsets, send_sizes, output_offsets,
                           recv_sizes, **params):
    """b independent exchanges as one: the examples' rows laid one after another (so their
    offsets shift by b * rows), and their slots interleaved, slot-major (so each instance's
    K/n slots per destination become b * K/n, still contiguous)."""
    in_rows, out_rows = get_aval(operand).shape[1], get_aval(output).shape[1]

    def rows(x):
        shape = get_aval(x).shape
        return reshape(x, (shape[0] * shape[1],) + shape[2:])

    def slots(x, shift=None):
        if shift is not None:
            dtype = get_aval(x).dtype
            x = add(x, broadcast_in_dim(mul(iota(dtype, b), np.asarray(shift, dtype)),
                                        get_aval(x).shape, (0,)))
        k = get_aval(x).shape[1]
        return reshape(transpose(x, (1, 0)), (k * b,))

    out = ragged_all_to_all_p.bind(
        rows(operand), rows(output), slots(input_offsets, in_rows), slots(send_sizes),
        slots(output_offsets, out_rows), slots(recv_sizes), **params)
    return reshape(out, get_aval(output).shape)


def _ragged_across_examples(n, operand, output, input_offsets, send_sizes, output_offsets,
                            recv_sizes):
    """The exchange among the n examples of this vmap (each operand's leading dimension),
    every receiver at once."""
    k = get_aval(input_offsets).shape[1]
    if k % n:
        raise ValueError(f"ragged_all_to_all: the length {k} of the offsets and sizes must be "
                         f"divisible by the size {n} of the named axis.")
    per = k // n
    index = np.int32

    def column(x, start, stop, stride=None):  # x[start:stop:stride], one row or a column
        return reshape(convert_element_type(lax_slice(x, start, stop, stride), index), (n,))

    out_aval = get_aval(output)
    rows, rest = out_aval.shape[1], out_aval.shape[2:]
    position = broadcasted_iota(index, (n, rows), 1)
    result = output
    for s in range(n):
        shape = get_aval(operand).shape
        sender = reshape(lax_slice(operand, (s,) + (0,) * (len(shape) - 1), (s + 1,) + shape[1:]),
                         shape[1:])
        for j in range(per):
            # for each receiver r: slot r * per + j of sender s; r's recv size s * per + j
            start_in = column(input_offsets, (s, j), (s + 1, k), (1, per))
            start_out = column(output_offsets, (s, j), (s + 1, k), (1, per))
            size = column(recv_sizes, (0, s * per + j), (n, s * per + j + 1))
            start_in, start_out, size = (broadcast_in_dim(v, (n, rows), (0,))
                                         for v in (start_in, start_out, size))
            inside = bitwise_and(le(start_out, position), lt(position, add(start_out, size)))
            source = add(start_in, sub(position, start_out))
            chunk = reshape(_rows(sender, reshape(source, (n * rows,))), (n, rows) + rest)
            result = select_n(broadcast_in_dim(inside, out_aval.shape, (0, 1)), result, chunk)
    return result


ragged_all_to_all_p.def_batch(_ragged_batch)


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    """Sends `operand[input_offsets[i]:][:send_sizes[i]]` to instance `i // (K / axis size)`,
    which writes it into its `output` at `output_offsets[i]` (see `jax.lax.ragged_all_to_all`).
    Stages one `ragged_all_to_all` equation (its rules above)."""
    if axis_index_groups is not None:
        raise NotImplementedError("ragged_all_to_all: axis_index_groups are not supported by "
                                  "didax; map over a smaller axis instead")
    args = (operand, output, input_offsets, send_sizes, output_offsets, recv_sizes)
    params = dict(axis_name=_as_names(axis_name), axis_index_groups=None)
    _ragged_aval(*map(get_aval, args), **params)
    return ragged_all_to_all_p.bind(*args, **params)


def _rows(x, rows):
    """x[rows] along the leading dimension (indices clamped into range)."""
    shape = get_aval(x).shape
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape))),
                                   collapsed_slice_dims=(0,), start_index_map=(0,))
    return gather(x, expand_dims(rows, (1,)), dnums, (1, *shape[1:]), mode="clip")

