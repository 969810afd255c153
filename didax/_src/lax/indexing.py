"""Indexing primitives: dynamic slices, gather, and the scatter family.

Start indices are data, not parameters, so one staged program serves every index
value; like XLA, out-of-range starts are clamped so a slice always fits. `gather` and
`scatter` follow XLA's general semantics (dimension numbers with batching dimensions),
with the out-of-bounds policy chosen by `GatherScatterMode`. The NumPy impls build
whole index arrays and use fancy indexing (`ufunc.at` for combining scatters): no
Python loop runs over the indices.

All of them are linear in their array operands except scatter-mul/min/max; indices
never carry a tangent.
"""
from __future__ import annotations

import enum
import functools
import math
from typing import NamedTuple

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import instantiate, zeros_like_aval
from didax._src.compiler.native.loops import contiguous
from didax._src.compiler.native.rules import (
    C_TYPES,
    FLOATS,
    INTS,
    c_constant,
    native_rule,
    wrapped,
)
from didax._src.core import ShapedArray, Zero, get_aval, is_zero
from didax._src.interpreters import batching
from didax._src.interpreters.jvp import defjvp
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined
from didax._src.ir import Literal
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.lax.elementwise import (
    add,
    div,
    eq,
    full_like,
    lt,
    mul,
    neg,
    rem,
    select_n,
    sub,
    zeros_like,
)
from didax._src.lax.elementwise import max as max_
from didax._src.lax.elementwise import min as min_
from didax._src.lax.reduction import reduce_max
from didax._src.lax.shape import (
    broadcast_in_dim,
    concatenate,
    expand_dims,
    full,
    index_in_dim,
    iota,
    reshape,
    squeeze,
)
from didax._src.typecheck import canonical_axes, static_int, static_shape

# --------------------------------------------------------------------------------------
# Dimension numbers and out-of-bounds modes (the same classes as JAX's)


class GatherDimensionNumbers(NamedTuple):
    """How the dimensions of operand, indices and output of a gather relate (XLA's
    dimension numbers; the index vector is always the last dimension of the indices)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the dimensions of operand, indices and updates of a scatter relate (XLA's
    dimension numbers; the index vector is always the last dimension of the indices)."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What gather and scatter do with out-of-bounds indices.

    CLIP clamps each start so the whole window is in bounds. FILL_OR_DROP fills a
    gathered window that is not entirely in bounds with `fill_value`, and drops such a
    scattered window. PROMISE_IN_BOUNDS leaves it to the implementation: here, as on
    XLA, gathers clamp and scatters drop. ONE_HOT is a strategy of `jnp` indexing that
    the primitives themselves do not accept.
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


def _canonical_dnums(cls, dnums):
    """Dimension numbers as tuples of ints, so they are hashable primitive params."""
    if not isinstance(dnums, cls):
        raise TypeError(f"dimension_numbers must be a lax.{cls.__name__}, got {dnums!r}")
    return cls(*(tuple(int(d) for d in field) for field in dnums))


def _check_mode(name, mode):
    if not isinstance(mode, GatherScatterMode):
        raise TypeError(f"{name}: mode must be a GatherScatterMode, got {mode!r}")
    if mode is GatherScatterMode.ONE_HOT:
        raise ValueError(f"{name}: mode ONE_HOT is an indexing strategy of jnp, not a mode "
                         "of the primitive; use CLIP, FILL_OR_DROP or PROMISE_IN_BOUNDS")


# --------------------------------------------------------------------------------------
# Helpers shared by the impls


def _as_int64(idx: np.ndarray) -> np.ndarray:
    """Indices as int64, saturating uint64 values that int64 cannot hold."""
    if idx.dtype == np.uint64:
        idx = np.minimum(idx, np.uint64(dtypes.iinfo(np.int64).max))
    return idx.astype(np.int64)


def _iota_along(size: int, axis: int, ndim: int) -> np.ndarray:
    """arange(size) shaped to vary along `axis` of an `ndim`-dimensional broadcast."""
    shape = [1] * ndim
    shape[axis] = size
    return np.arange(size, dtype=np.int64).reshape(shape)


def _check_scalar_int_indices(name, indices):
    if any(i.ndim != 0 for i in indices):
        raise TypeError(f"{name}: start indices must be scalars, got shapes "
                        f"{[i.shape for i in indices]}")
    if indices and any(i.dtype != indices[0].dtype or not dtypes.issubdtype(i.dtype, np.integer)
                       for i in indices):
        raise TypeError(f"{name}: index arguments must be integers of the same type, got: "
                        f"{', '.join(i.dtype.name for i in indices)}")


def _check_same_dtype(name, operand, other, what):
    if operand.dtype != other.dtype:
        raise TypeError(f"{name}: operand and {what} must have the same dtype, got "
                        f"{operand.dtype.name} and {other.dtype.name}")


def _clamped_starts(indices, shape, sizes):
    """XLA's dynamic-slice rule: each start is clamped into [0, dim - size]."""
    return [int(np.clip(int(i), 0, n - s)) for i, n, s in zip(indices, shape, sizes)]


# --------------------------------------------------------------------------------------
# dynamic_slice

dynamic_slice_p = core.primitive("dynamic_slice", linear=True)


def _dynamic_slice_impl(x, *start_indices, slice_sizes):
    starts = _clamped_starts(start_indices, x.shape, slice_sizes)
    return x[tuple(slice(st, st + s) for st, s in zip(starts, slice_sizes))]


def _dynamic_slice_aval(x, *start_indices, slice_sizes):
    if len(start_indices) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError(f"dynamic_slice: an operand of shape {x.shape} needs {x.ndim} start "
                        f"indices and slice sizes, got {len(start_indices)} start indices "
                        f"and slice_sizes {slice_sizes}")
    if any(s < 0 or s > n for s, n in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice: slice_sizes {slice_sizes} must be between zero and "
                        f"the operand shape {x.shape}")
    _check_scalar_int_indices("dynamic_slice", start_indices)
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    operand, *start_indices = primals
    out = dynamic_slice_p.bind(operand, *start_indices, slice_sizes=slice_sizes)
    g = tangents[0]
    if is_zero(g):
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, dynamic_slice_p.bind(g, *start_indices, slice_sizes=slice_sizes)


dynamic_slice_p.def_impl(_dynamic_slice_impl)
dynamic_slice_p.def_abstract_eval(_dynamic_slice_aval)
dynamic_slice_p.def_jvp(_dynamic_slice_jvp)


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """`operand[s0:s0+k0, s1:s1+k1, ...]` with traced starts, clamped to fit in bounds."""
    starts = _dynamic_slice_indices("dynamic_slice", operand, start_indices,
                                    allow_negative_indices)
    return dynamic_slice_p.bind(operand, *starts,
                                slice_sizes=static_shape("lax.dynamic_slice (slice_sizes)",
                                                         slice_sizes))


def _dynamic_slice_transpose(ct, operand, *start_indices, slice_sizes):
    # The primitives, not the wrappers: the indices are already normalised.
    zeros = zeros_like_aval(operand.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *start_indices)] + [None] * len(
        start_indices)


dynamic_slice_p.def_transpose(_dynamic_slice_transpose)


def _dynamic_slice_batch(size, vals, dims, *, slice_sizes):
    """Unbatched starts: still a dynamic slice, starting at 0 along the whole batch
    dimension. Batched starts: a clamping gather, as JAX does."""
    operand, *indices = vals
    operand_bdim, *index_bdims = dims
    if all(d is None for d in index_bdims):
        indices.insert(operand_bdim, _zero_index(indices))
        sizes = list(slice_sizes)
        sizes.insert(operand_bdim, size)
        return dynamic_slice_p.bind(operand, *indices, slice_sizes=tuple(sizes)), operand_bdim
    ndim = len(slice_sizes)
    dn = GatherDimensionNumbers(offset_dims=tuple(range(ndim)), collapsed_slice_dims=(),
                                start_index_map=tuple(range(ndim)))
    index = _batch_dynamic_slice_indices(size, indices, index_bdims)
    return _gather_batch(size, [operand, index], [operand_bdim, 0], dimension_numbers=dn,
                         slice_sizes=slice_sizes, unique_indices=True,
                         indices_are_sorted=True, mode=GatherScatterMode.CLIP,
                         fill_value=None)


dynamic_slice_p.def_batch(_dynamic_slice_batch)

dynamic_update_slice_p = core.primitive("dynamic_update_slice", linear=True)


def _dynamic_update_slice_impl(x, update, *start_indices):
    starts = _clamped_starts(start_indices, x.shape, update.shape)
    out = x.copy()
    out[tuple(slice(st, st + s) for st, s in zip(starts, update.shape))] = update
    return out


def _dynamic_update_slice_aval(x, update, *start_indices):
    if update.ndim != x.ndim or len(start_indices) != x.ndim:
        raise TypeError(f"dynamic_update_slice: an operand of shape {x.shape} needs an update "
                        f"of the same rank and {x.ndim} start indices, got update shape "
                        f"{update.shape} and {len(start_indices)} start indices")
    if any(u > n for u, n in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice: update shape {update.shape} must not exceed "
                        f"the operand shape {x.shape}")
    _check_same_dtype("dynamic_update_slice", x, update, "update")
    _check_scalar_int_indices("dynamic_update_slice", start_indices)
    weak = x.weak_type and update.weak_type and all(i.weak_type for i in start_indices)
    return ShapedArray(x.shape, x.dtype, weak)


def _dynamic_update_slice_jvp(primals, tangents):
    operand, update, *start_indices = primals
    out = dynamic_update_slice_p.bind(operand, update, *start_indices)
    g_operand, g_update = tangents[:2]
    if is_zero(g_operand) and is_zero(g_update):
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, dynamic_update_slice_p.bind(instantiate(g_operand), instantiate(g_update),
                                            *start_indices)


dynamic_update_slice_p.def_impl(_dynamic_update_slice_impl)
dynamic_update_slice_p.def_abstract_eval(_dynamic_update_slice_aval)
dynamic_update_slice_p.def_jvp(_dynamic_update_slice_jvp)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """`operand` with the block at the (clamped) starts replaced by `update`."""
    starts = _dynamic_slice_indices("dynamic_update_slice", operand, start_indices,
                                    allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)


def _dynamic_update_slice_transpose(ct, operand, update, *start_indices):
    update_aval = _aval_of(update)
    operand_t = update_t = None
    if is_undefined(operand):
        operand_t = dynamic_update_slice_p.bind(ct, zeros_like_aval(update_aval),
                                                *start_indices)
    if is_undefined(update):
        update_t = dynamic_slice_p.bind(ct, *start_indices, slice_sizes=update_aval.shape)
    return [operand_t, update_t] + [None] * len(start_indices)


dynamic_update_slice_p.def_transpose(_dynamic_update_slice_transpose)


def _dynamic_update_slice_batch(size, vals, dims):
    """Unbatched starts: still a dynamic update slice, covering the whole batch dimension.
    Batched starts: a clamping scatter, as JAX does."""
    operand, update, *indices = vals
    operand_bdim, update_bdim, *index_bdims = dims
    if all(d is None for d in index_bdims):
        bdim = operand_bdim if operand_bdim is not None else update_bdim
        operand = batching.matchaxis(operand, operand_bdim, bdim, size)
        update = batching.matchaxis(update, update_bdim, bdim, size)
        indices.insert(bdim, _zero_index(indices))
        return dynamic_update_slice_p.bind(operand, update, *indices), bdim
    ndim = len(indices)
    dn = ScatterDimensionNumbers(update_window_dims=tuple(range(ndim)),
                                 inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=tuple(range(ndim)))
    index = _batch_dynamic_slice_indices(size, indices, index_bdims)
    return _scatter_batch(scatter_p, size, [operand, index, update],
                          [operand_bdim, 0, update_bdim], update_jaxpr=None, update_consts=(),
                          dimension_numbers=dn, indices_are_sorted=True, unique_indices=True,
                          mode=GatherScatterMode.CLIP)


dynamic_update_slice_p.def_batch(_dynamic_update_slice_batch)


def _index_dtype(indices):
    for i in indices:
        if type(i) is not int:
            return get_aval(i).dtype
    return dtypes.default_int_dtype()


def _static_index(value, dtype):
    if dtypes.issubdtype(dtype, np.integer):  # saturating is harmless: starts get clamped
        info = dtypes.iinfo(dtype)
        value = min(max(value, info.min), info.max)
    return np.asarray(value, dtype)


def _normalize_index(i, size, dtype, allow_negative):
    """One start index as a scalar of `dtype`; negative ones wrapped once if allowed."""
    if isinstance(i, np.ndarray) and i.ndim == 0:
        i = i[()]
    if type(i) is int or isinstance(i, np.integer):
        dtype = dtype if type(i) is int else get_aval(i).dtype
        value = int(i)
        if value < 0 and not allow_negative:
            raise ValueError(f"Index {value} is out of bounds for dimension {size} if "
                             "allow_negative_indices=False")
        return _static_index(value + size if value < 0 else value, dtype)
    aval = get_aval(i)
    if not allow_negative or not dtypes.issubdtype(aval.dtype, np.signedinteger) or aval.ndim:
        return i
    size = min(size, int(dtypes.iinfo(aval.dtype).max))
    zero, n = np.asarray(0, aval.dtype), np.asarray(size, aval.dtype)
    return select_n(lt(i, zero), i, add(i, n))


def _dynamic_slice_indices(name, operand, start_indices, allow_negative_indices):
    shape = get_aval(operand).shape
    if isinstance(start_indices, (np.ndarray, core.ArrayBase)):
        if start_indices.ndim != 1:
            raise ValueError(f"{name}: start indices must be a 1D sequence, got an array of "
                             f"shape {start_indices.shape}")
        if isinstance(start_indices, core.ArrayBase):  # split as JAX does: slice + squeeze
            start_indices = [index_in_dim(start_indices, k, keepdims=False)
                             for k in range(start_indices.shape[0])]
    start_indices = list(start_indices)
    if len(start_indices) != len(shape):
        raise ValueError(f"{name}: got {len(start_indices)} start indices for an operand of "
                         f"shape {shape}; pass one index per dimension")
    allow = allow_negative_indices
    allow = [allow] * len(shape) if isinstance(allow, bool) else list(allow)
    dtype = _index_dtype(start_indices)
    return [_normalize_index(i, n, dtype, a) for i, n, a in zip(start_indices, shape, allow)]


def _in_dim_indices(name, operand, index, axis, allow_negative_indices):
    ndim = get_aval(operand).ndim
    axis = canonical_axes(name, (axis,), ndim)[0]
    starts = [0] * ndim
    starts[axis] = index
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    return axis, starts, allow


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    axis, starts, allow = _in_dim_indices("dynamic_slice_in_dim", operand, start_index, axis,
                                          allow_negative_indices)
    sizes = list(get_aval(operand).shape)
    sizes[axis] = static_int(slice_size, "the slice_size of lax.dynamic_slice_in_dim")
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    axis = canonical_axes("dynamic_index_in_dim", (axis,), get_aval(operand).ndim)[0]
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    _, starts, allow = _in_dim_indices("dynamic_update_slice_in_dim", operand, start_index,
                                       axis, allow_negative_indices)
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    ndim = get_aval(operand).ndim
    axis = canonical_axes("dynamic_update_index_in_dim", (axis,), ndim)[0]
    if get_aval(update).ndim + 1 == ndim:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# --------------------------------------------------------------------------------------
# Checks shared by the gather and scatter type rules (XLA's shape inference)


def _check_sorted(dims, op, name):
    if list(dims) != sorted(dims):
        raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _check_unique(dims, op, name):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _check_in_range(dims, rank, op, name):
    bad = [d for d in dims if not 0 <= d < rank]
    if bad:
        raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: "
                        f"{bad[0]}.")


def _check_disjoint(dims1, dims2, op, name1, name2):
    if set(dims1) & set(dims2):
        raise TypeError(f"{name1} and {name2} in {op} op must be disjoint; got: {dims1} and "
                        f"{dims2}.")


def _check_dims_set(dims, rank, op, name):
    _check_sorted(dims, op, name)
    _check_unique(dims, op, name)
    _check_in_range(dims, rank, op, name)


def _check_index_avals(op, operand, indices, dn):
    """Checks common to gather and scatter about the indices and the batching dims."""
    index_map, operand_batching, indices_batching = dn[2:]
    map_name, indices_batching_name = dn._fields[2], dn._fields[4]
    if indices.ndim < 1:
        raise TypeError(f"{op}: indices must have rank >= 1 (the last dimension holds the "
                        f"index vectors), got shape {indices.shape}")
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise ValueError(f"{op}: indices must have an integer type, got {indices.dtype.name}")
    last = indices.ndim - 1
    if len(index_map) != indices.shape[last]:
        raise TypeError(f"{op}: {map_name} {index_map} has {len(index_map)} entries but "
                        f"the index vectors (last dimension of indices of shape "
                        f"{indices.shape}) have {indices.shape[last]}; they must be equal")
    _check_in_range(index_map, operand.ndim, op, map_name)
    _check_unique(index_map, op, map_name)
    _check_dims_set(operand_batching, operand.ndim, op, "operand_batching_dims")
    _check_disjoint(index_map, operand_batching, op, map_name, "operand_batching_dims")
    _check_unique(indices_batching, op, indices_batching_name)
    _check_in_range(indices_batching, indices.ndim, op, indices_batching_name)
    if last in indices_batching:
        raise TypeError(f"{op} op cannot have the index vector dimension as a batching "
                        f"dimension; got {indices_batching}.")
    if len(operand_batching) != len(indices_batching):
        raise TypeError(f"{op} op requires equal numbers of operand and indices batching "
                        f"dims, got {operand_batching} and {indices_batching}.")
    op_batch = tuple(operand.shape[d] for d in operand_batching)
    idx_batch = tuple(indices.shape[d] for d in indices_batching)
    if op_batch != idx_batch:
        raise TypeError(f"{op} op requires operand batching dimensions and indices batching "
                        f"dimensions to have the same shape, got {op_batch} and {idx_batch}.")


# --------------------------------------------------------------------------------------
# gather

gather_p = core.primitive("gather", linear=True)


def _gather_window_index(operand_shape, starts, dnums, slice_sizes):
    """For every output element of layout (*batch, *window), its operand index (one
    broadcastable int array per operand dim, starts clamped), and the mask of the
    windows that were in bounds before clamping."""
    batch_shape = starts.shape[:-1]
    nb = len(batch_shape)
    ndim = nb + len(slice_sizes)
    pad = (1,) * len(slice_sizes)
    in_bounds = np.ones(batch_shape, bool)
    index = []
    for d, (n, s) in enumerate(zip(operand_shape, slice_sizes)):
        offsets = _iota_along(s, nb + d, ndim)
        if d in dnums.start_index_map:
            start = starts[..., dnums.start_index_map.index(d)]
            in_bounds &= (start >= 0) & (start <= n - s)
            start = np.clip(start, 0, n - s)  # FILL_OR_DROP masks out-of-bounds windows later
            index.append(start.reshape(batch_shape + pad) + offsets)
        elif d in dnums.operand_batching_dims:
            b = dnums.start_indices_batching_dims[dnums.operand_batching_dims.index(d)]
            index.append(_iota_along(batch_shape[b], b, ndim) + offsets)
        else:
            index.append(offsets)
    return index, in_bounds


def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                 indices_are_sorted, mode, fill_value):
    dn = dimension_numbers
    out_shape = _gather_shape(indices.shape, dn, slice_sizes)
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    if math.prod(out_shape) == 0 or any(slice_sizes[d] == 0 for d in dropped):
        return np.zeros(out_shape, operand.dtype)
    starts = _as_int64(indices)
    if _takes_rows(operand.shape, dn, slice_sizes, len(out_shape)):
        return _gather_rows(operand, starts[..., 0], mode, fill_value)
    index, in_bounds = _gather_window_index(operand.shape, starts, dn, slice_sizes)
    batch_shape = starts.shape[:-1]
    window = np.broadcast_to(operand[tuple(index)], batch_shape + tuple(slice_sizes))
    if mode is GatherScatterMode.FILL_OR_DROP:
        mask = in_bounds.reshape(batch_shape + (1,) * len(slice_sizes))
        window = np.where(mask, window, np.asarray(fill_value).astype(operand.dtype))
    nb = len(batch_shape)
    window = window.reshape(batch_shape + tuple(
        s for d, s in enumerate(slice_sizes) if d not in dropped))
    batch_axes = iter(range(nb))
    perm = [nb + dn.offset_dims.index(p) if p in dn.offset_dims else next(batch_axes)
            for p in range(len(out_shape))]
    return np.transpose(window, perm)


def _takes_rows(operand_shape, dn, slice_sizes, out_rank) -> bool:
    """Whether the gather takes whole rows (operand[i, ...]) at scalar indices into the
    leading dimension, the rows' dimensions trailing in the result (an embedding lookup)."""
    rest = len(operand_shape) - 1
    return (tuple(dn.start_index_map) == (0,) == tuple(dn.collapsed_slice_dims)
            and not dn.operand_batching_dims and operand_shape[0] > 0
            and tuple(slice_sizes) == (1,) + tuple(operand_shape[1:])
            and tuple(dn.offset_dims) == tuple(range(out_rank - rest, out_rank)))


def _gather_rows(operand, rows, mode, fill_value):
    """operand[rows] (rows clamped into range; FILL_OR_DROP fills those that were not)."""
    n = operand.shape[0]
    out = np.asarray(np.take(operand, np.clip(rows, 0, n - 1), axis=0))
    if mode is GatherScatterMode.FILL_OR_DROP:
        dropped = (rows < 0) | (rows >= n)
        if dropped.any():
            out = np.where(dropped.reshape(dropped.shape + (1,) * (out.ndim - rows.ndim)),
                           np.asarray(fill_value).astype(operand.dtype), out)
    return out


def _gather_shape(indices_shape, dn, slice_sizes):
    batch = iter(indices_shape[:-1])
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = iter(s for d, s in enumerate(slice_sizes) if d not in dropped)
    rank = len(dn.offset_dims) + len(indices_shape) - 1
    return tuple(next(window) if p in dn.offset_dims else next(batch) for p in range(rank))


def _gather_aval(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                 indices_are_sorted, mode, fill_value):
    dn = dimension_numbers
    _check_mode("gather", mode)
    _check_index_avals("gather", operand, indices, dn)
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    _check_dims_set(dn.offset_dims, out_rank, "gather", "offset_dims")
    _check_dims_set(dn.collapsed_slice_dims, operand.ndim, "gather", "collapsed_slice_dims")
    _check_disjoint(dn.collapsed_slice_dims, dn.operand_batching_dims, "gather",
                    "collapsed_slice_dims", "operand_batching_dims")
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather: slice_sizes {slice_sizes} must have one entry per dimension "
                        f"of the operand of shape {operand.shape}")
    if len(slice_sizes) != (len(dn.offset_dims) + len(dn.collapsed_slice_dims)
                            + len(dn.operand_batching_dims)):
        raise TypeError(f"gather: every operand dimension must be an offset, collapsed or "
                        f"batching dimension; got slice_sizes={slice_sizes}, offset_dims="
                        f"{dn.offset_dims}, collapsed_slice_dims={dn.collapsed_slice_dims}, "
                        f"operand_batching_dims={dn.operand_batching_dims}")
    if math.prod(indices.shape[:-1]):  # an empty batch gathers nothing: any size goes
        for i, (s, n) in enumerate(zip(slice_sizes, operand.shape)):
            if not 0 <= s <= n:
                raise TypeError(f"gather: slice size {s} at index {i} is out of range, must "
                                f"be within [0, {n}] for operand shape {operand.shape}")
    for d in dn.collapsed_slice_dims:
        if slice_sizes[d] != 1:
            raise TypeError(f"gather: can only collapse slice dims with size 1, but "
                            f"slice_sizes[{d}] = {slice_sizes[d]}")
    for d in dn.operand_batching_dims:
        if slice_sizes[d] > 1:
            raise TypeError(f"gather: operand batching dims must have slice size 0 or 1, but "
                            f"slice_sizes[{d}] = {slice_sizes[d]}")
    return ShapedArray(_gather_shape(indices.shape, dn, slice_sizes), operand.dtype,
                       operand.weak_type)


def _tangent_fill(mode):
    return 0 if mode is GatherScatterMode.FILL_OR_DROP else None


gather_p.def_impl(_gather_impl)
gather_p.def_abstract_eval(_gather_aval)
defjvp(gather_p, lambda g, operand, indices, **params: gather_p.bind(
    g, indices, **{**params, "fill_value": _tangent_fill(params["mode"])}), None)


def default_fill_value(dtype):
    """What a gather in "fill" mode reads out of bounds by default: NaN, the integer type's
    extreme (its minimum if signed, maximum if unsigned), or True."""
    if dtypes.issubdtype(dtype, np.inexact):
        return np.nan
    if dtypes.issubdtype(dtype, np.signedinteger):
        return int(dtypes.iinfo(dtype).min)
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        return int(dtypes.iinfo(dtype).max)
    return True


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather: slices of `operand` of size `slice_sizes` starting at each index vector
    (the last dimension of `start_indices`), arranged by `dimension_numbers`."""
    parsed = (GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
              else GatherScatterMode.from_any(mode))
    if parsed is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = default_fill_value(get_aval(operand).dtype)
        elif hasattr(fill_value, "item"):  # a concrete array scalar: params are static
            fill_value = fill_value.item()
    else:
        fill_value = None
    return gather_p.bind(
        operand, start_indices,
        dimension_numbers=_canonical_dnums(GatherDimensionNumbers, dimension_numbers),
        slice_sizes=tuple(int(s) for s in slice_sizes), unique_indices=bool(unique_indices),
        indices_are_sorted=bool(indices_are_sorted), mode=parsed, fill_value=fill_value)


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes,
                      unique_indices, indices_are_sorted, mode, fill_value):
    """Scatter-add of the cotangent windows back where the gather read them, in the
    gather's mode as JAX does (so where PROMISE_IN_BOUNDS gathers clamp, the scatter-add
    drops: an out-of-bounds read gets no cotangent)."""
    dn = dimension_numbers
    aval = operand.aval
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    if get_aval(ct).size == 0 or any(slice_sizes[d] == 0 for d in dropped):
        return [zeros_like_aval(aval), None]  # the gather read nothing
    sdn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)
    return [scatter_add(zeros_like_aval(aval), indices, ct, sdn,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode), None]


gather_p.def_transpose(_gather_transpose)


def _gather_batch(size, vals, dims, *, dimension_numbers, slice_sizes, unique_indices,
                  indices_are_sorted, mode, fill_value):
    operand, indices = vals
    operand_bdim, indices_bdim = dims
    dn = dimension_numbers
    params = dict(unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                  mode=mode, fill_value=fill_value)
    if indices_bdim is None:  # the batch dimension is read whole, as one more window dim
        operand = batching.moveaxis(operand, operand_bdim, 0)
        bdn = GatherDimensionNumbers(
            offset_dims=(0,) + _shift(dn.offset_dims),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        return gather_p.bind(operand, indices, dimension_numbers=bdn,
                             slice_sizes=(size,) + slice_sizes, **params), 0
    indices = batching.moveaxis(indices, indices_bdim, 0)
    if operand_bdim is None:  # each index batch reads the same operand
        bdn = dn._replace(offset_dims=_shift(dn.offset_dims),
                          start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
        # Batched reads of one array may repeat or be out of order.
        params.update(unique_indices=False, indices_are_sorted=False)
        return gather_p.bind(operand, indices, dimension_numbers=bdn,
                             slice_sizes=slice_sizes, **params), 0
    operand = batching.moveaxis(operand, operand_bdim, 0)
    bdn = GatherDimensionNumbers(
        offset_dims=_shift(dn.offset_dims),
        collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
        start_index_map=_shift(dn.start_index_map),
        operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _shift(dn.start_indices_batching_dims))
    return gather_p.bind(operand, indices, dimension_numbers=bdn,
                         slice_sizes=(min(size, 1),) + slice_sizes, **params), 0


gather_p.def_batch(_gather_batch)


# Gathers and scatters natively: one loop nest over the result (a gather) or the updates (a
# scatter), in row-major order, each window's start read from its index vector once; a
# scatter applies its updates in that order, as NumPy's `np.add.at` and fancy assignment do.


def _index_loops(em, dims, starts_at, body):
    """C loops over `dims` [(loop variable, extent, is_window)] in order; `starts_at(ind)`
    writes the window's start where every non-window loop is open (before any loop if there
    is none) and returns the C condition the remaining loops run under, or None; `body(ind)`
    writes the innermost statements. The innermost loop over a window is a vector loop."""
    last_batch = max((k for k, (_, _, window) in enumerate(dims) if not window), default=-1)
    ind, opened = "", []  # (the indentation of each opened brace)

    def start(ind):
        condition = starts_at(ind)
        if condition is None:
            return ind
        em.line(f"{ind}if ({condition}) {{")
        opened.append(ind)
        return ind + "    "

    if last_batch < 0:
        ind = start(ind)
    for k, (var, extent, window) in enumerate(dims):
        if k == len(dims) - 1 and window:
            em.line(f"{ind}#pragma omp simd")
        em.line(f"{ind}for (npy_intp {var} = 0; {var} < {extent}; {var}++) {{")
        opened.append(ind)
        ind += "    "
        if k == last_batch:
            ind = start(ind)
    body(ind)
    for ind in reversed(opened):
        em.line(f"{ind}}}")


def _loop_dims(shape, window_positions, window_dims):
    """The loops of _index_loops over the result of a gather or the updates of a scatter,
    of `shape` in row-major order: a window loop `w<d>` at each of `window_positions` (over
    the operand's dimensions `window_dims`, in order), a batch loop `b<t>` elsewhere (over
    the index vectors' dimensions, in order); and the operand's window dimensions looped."""
    window_dims, batch = iter(window_dims), iter(range(len(shape)))
    dims, windows = [], []
    for k, n in enumerate(shape):
        if k in window_positions:
            windows.append(next(window_dims))
            dims.append((f"w{windows[-1]}", n, True))
        else:
            dims.append((f"b{next(batch)}", n, False))
    return dims, windows


def _offset(terms, start=None) -> str:
    """C of a flat offset: `start` plus each (loop variable, stride) term; "0" if there is
    neither (a 0-d result or update)."""
    return " + ".join(([start] if start else []) + [f"{v} * {st}" for v, st in terms]) or "0"


def _index_start(ix, ixtype, at) -> str:
    """The C int64 of the index vector's element at `at` (uint64 saturated, as
    _as_int64 does)."""
    if ixtype == "npy_uint64":
        return f"({ix}[{at}] > (npy_uint64)NPY_MAX_INT64 ? NPY_MAX_INT64 : (npy_int64){ix}[{at}])"
    return f"(npy_int64){ix}[{at}]"


def _window_start(em, name, indices, shape, sizes, start_map, batching, *, clamp, check, skip):
    """The `starts_at` of _index_loops for windows of `sizes` in a row-major operand of
    `shape`: C declaring `name`, the flat position of the window's start (its dimension d
    in `start_map` at the index vector's element, clamped into bounds if `clamp`; at batch
    loop `batching[d]` for an operand batching dimension), and with `check` `in_bounds`,
    whether the window was entirely in bounds, which with `skip` the rest runs under."""
    ishape = indices.aval.shape
    ix, ixtype = f"p{em.slots[indices]}", C_TYPES[indices.aval.dtype]
    istrides, ostrides = contiguous(ishape), contiguous(shape)
    ibase = _offset([(f"b{t}", istrides[t]) for t in range(len(ishape) - 1)], start="0")

    def starts_at(ind):
        em.line(f"{ind}npy_intp {name} = 0;")
        if check:
            em.line(f"{ind}int in_bounds = 1;")
        for d, n in enumerate(shape):
            if d in start_map:
                k, top = start_map.index(d), n - sizes[d]
                em.line(f"{ind}{{ npy_int64 x = {_index_start(ix, ixtype, f'{ibase} + {k}')};")
                if check:
                    em.line(f"{ind}  in_bounds &= (x >= 0) & (x <= {top});")
                at = f"(x < 0 ? 0 : x > {top} ? {top} : x)" if clamp else "x"
                em.line(f"{ind}  {name} += {at} * {ostrides[d]}; }}")
            elif d in batching:
                em.line(f"{ind}{name} += b{batching[d]} * {ostrides[d]};")
        return "in_bounds" if skip else None

    return starts_at


def _gather_native_when(eqn) -> bool:
    operand, indices = eqn.invars
    out = eqn.outvars[0]
    return (type(operand) is not Literal and type(indices) is not Literal
            and operand.aval.dtype in C_TYPES and indices.aval.dtype in INTS
            and math.prod(out.aval.shape) > 0
            and all(s >= 1 for s in eqn.params["slice_sizes"]))


@native_rule(gather_p, kind="block", when=_gather_native_when, counts=lambda eqn: (1, 0))
def _gather_native(em, eqn):
    """Each window copied from its start (clamped into bounds; in "fill" mode a window
    not entirely in bounds is the fill value), as _gather_impl computes it."""
    operand, indices = eqn.invars
    out = eqn.outvars[0]
    dn, sizes = eqn.params["dimension_numbers"], eqn.params["slice_sizes"]
    mode = eqn.params["mode"]
    shape, oshape = operand.aval.shape, out.aval.shape
    for a in (operand, indices):
        em.operand(a)
        em.as_array(a)
    s = em.slot(out)
    em.new_array(s, out.aval, var=out)
    p, q = f"p{em.slots[operand]}", f"q{s}"
    ostrides, qstrides = contiguous(shape), contiguous(oshape)
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    dims, windows = _loop_dims(oshape, dn.offset_dims,
                               [d for d in range(len(shape)) if d not in dropped])
    fill = mode is GatherScatterMode.FILL_OR_DROP
    batching = {d: t for d, t in zip(dn.operand_batching_dims, dn.start_indices_batching_dims)}
    starts_at = _window_start(em, "src", indices, shape, sizes, dn.start_index_map, batching,
                              clamp=True, check=fill, skip=False)
    read = _offset([(f"w{d}", ostrides[d]) for d in windows], start="src")
    at = _offset([(var, qstrides[k]) for k, (var, _, _) in enumerate(dims)])
    value = f"{p}[{read}]"
    if fill:
        filled = np.asarray(eqn.params["fill_value"]).astype(out.aval.dtype)
        value = f"(in_bounds ? {value} : {c_constant(filled, out.aval.dtype)})"
    _index_loops(em, dims, starts_at, lambda ind: em.line(f"{ind}{q}[{at}] = {value};"))


def _window_sizes(operand_shape, updates_shape, dn):
    """The size of the updated window along each operand dimension."""
    windows = iter(updates_shape[d] for d in dn.update_window_dims)
    return [1 if d in dn.inserted_window_dims or d in dn.operand_batching_dims
            else next(windows) for d in range(len(operand_shape))]


def _scatter_targets(operand_shape, indices, updates_shape, dn, mode):
    """The flat operand position of every update element, and whether its window is
    applied (XLA drops a window that is not entirely in bounds, unless mode is CLIP), or
    None if every window is."""
    starts = _as_int64(indices)
    nu = len(updates_shape)
    scatter_dims = [d for d in range(nu) if d not in dn.update_window_dims]
    sizes = _window_sizes(operand_shape, updates_shape, dn)
    window_axes = iter(dn.update_window_dims)
    flat = np.zeros((1,) * nu, np.int64)
    valid = np.ones((1,) * nu, bool)
    for d, (n, w) in enumerate(zip(operand_shape, sizes)):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            offsets = 0
        else:
            offsets = _iota_along(w, next(window_axes), nu)
        if d in dn.scatter_dims_to_operand_dims:
            start = np.expand_dims(starts[..., dn.scatter_dims_to_operand_dims.index(d)],
                                   tuple(dn.update_window_dims))
            if mode is GatherScatterMode.CLIP:
                start = np.clip(start, 0, n - w)
            else:
                valid = valid & (start >= 0) & (start <= n - w)
        elif d in dn.operand_batching_dims:
            b = dn.scatter_indices_batching_dims[dn.operand_batching_dims.index(d)]
            start = _iota_along(updates_shape[scatter_dims[b]], scatter_dims[b], nu)
        else:
            start = 0
        # Dropped windows are never written: clipping just keeps their positions sane.
        flat = flat * n + np.clip(start + offsets, 0, max(n - 1, 0))
    if valid.all():  # (every window applies: no mask to select by)
        return np.broadcast_to(flat, updates_shape), None
    flat, valid = np.broadcast_arrays(flat, valid)
    return np.broadcast_to(flat, updates_shape), np.broadcast_to(valid, updates_shape)


def _scatter_impl_with(combine):
    def impl(operand, indices, updates, *, dimension_numbers, mode, **_):
        out = operand.copy().reshape(-1)
        if out.size and updates.size:
            flat, valid = _scatter_targets(operand.shape, indices, updates.shape,
                                           dimension_numbers, mode)
            if valid is None:  # (in the updates' order, as the selection below keeps it)
                combine(out, np.ascontiguousarray(flat).reshape(-1), updates.reshape(-1))
            else:
                combine(out, flat[valid], updates[valid])
        return out.reshape(operand.shape)

    return impl


def _replace(out, where, values):
    out[where] = values  # NumPy assigns in order: the last of duplicate targets wins


def _scatter_aval(name):
    def aval(operand, indices, updates, *, update_jaxpr, update_consts, dimension_numbers,
             indices_are_sorted, unique_indices, mode):
        dn = dimension_numbers
        _check_mode(name, mode)
        _check_index_avals(name, operand, indices, dn)
        _check_same_dtype(name, operand, updates, "updates")
        batch_shape = indices.shape[:-1]
        if updates.ndim != len(batch_shape) + len(dn.update_window_dims):
            raise TypeError(f"{name}: updates must have rank {len(batch_shape)} (indices "
                            f"batch dims) + {len(dn.update_window_dims)} (window dims), got "
                            f"shape {updates.shape}")
        _check_dims_set(dn.update_window_dims, updates.ndim, name, "update_window_dims")
        _check_dims_set(dn.inserted_window_dims, operand.ndim, name, "inserted_window_dims")
        _check_disjoint(dn.inserted_window_dims, dn.operand_batching_dims, name,
                        "inserted_window_dims", "operand_batching_dims")
        rank = (len(dn.update_window_dims) + len(dn.inserted_window_dims)
                + len(dn.operand_batching_dims))
        if rank != operand.ndim:
            raise TypeError(f"{name}: the window has rank {rank} (update_window_dims + "
                            f"inserted_window_dims + operand_batching_dims), which must be "
                            f"the operand rank {operand.ndim}")
        window_bounds = [n for d, n in enumerate(operand.shape)
                         if d not in dn.inserted_window_dims
                         and d not in dn.operand_batching_dims]
        for d, bound in zip(dn.update_window_dims, window_bounds):
            if updates.shape[d] > bound:
                raise TypeError(f"{name}: window dimension {d} of updates has size "
                                f"{updates.shape[d]}, larger than the operand dimension "
                                f"({bound}) it updates (operand shape {operand.shape})")
        scatter_sizes = tuple(n for d, n in enumerate(updates.shape)
                              if d not in dn.update_window_dims)
        if scatter_sizes != batch_shape:
            raise TypeError(f"{name}: the scatter dimensions of updates {updates.shape} have "
                            f"sizes {scatter_sizes}, which must equal the batch dimensions "
                            f"{batch_shape} of indices {indices.shape}")
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)

    return aval


def _scatter_primitive(name, combine, linear=False):
    p = core.primitive(name, linear=linear)
    p.def_impl(_scatter_impl_with(combine))
    p.def_abstract_eval(_scatter_aval(name))
    return p


scatter_p = _scatter_primitive("scatter", _replace, linear=True)


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
    """XLA's scatter: `updates` replace windows of `operand` at the index vectors."""
    return _bind_scatter(scatter_p, None, operand, scatter_indices, updates,
                         dimension_numbers, indices_are_sorted, unique_indices, mode)


def _scatter_jvp(primals, tangents, *, update_jaxpr, update_consts, dimension_numbers,
                 indices_are_sorted, unique_indices, mode):
    """Which of several updates to one place wins is up to the impl, so (as JAX does) the
    scatter is redone on update ids; gathering the ids back tells which update, or the
    operand, each output element came from, and both outputs are rebuilt by scatter-add
    of the masked values."""
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dn = dimension_numbers
    params = dict(update_jaxpr=update_jaxpr, update_consts=update_consts,
                  dimension_numbers=dn, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode)
    if is_zero(g_operand) and is_zero(g_updates):
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, _zero_tangent_of(out)
    g_operand, g_updates = instantiate(g_operand), instantiate(g_updates)
    if unique_indices:
        return (scatter_p.bind(operand, indices, updates, **params),
                scatter_p.bind(g_operand, indices, g_updates, **params))

    updates_shape = get_aval(updates).shape
    ids_shape = [1 if d in dn.update_window_dims else n for d, n in enumerate(updates_shape)]
    ids = reshape(iota(np.int32, math.prod(ids_shape)), ids_shape)
    update_ids = add(broadcast_in_dim(ids, updates_shape, range(len(updates_shape))),
                     np.int32(1))
    scattered_ids = scatter_p.bind(full(get_aval(operand).shape, 0, np.int32), indices,
                                   update_ids, **params)
    gathered_ids = _inverse_gather(scattered_ids, indices, dn, updates_shape)
    kept = eq(scattered_ids, np.int32(0))
    won = eq(update_ids, gathered_ids)
    add_params = dict(dimension_numbers=dn, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=mode)

    def rebuild(x, u):
        return scatter_add(_select(kept, x, zeros_like(x)), indices,
                           _select(won, u, zeros_like(u)), **add_params)

    return rebuild(operand, updates), rebuild(g_operand, g_updates)


scatter_p.def_jvp(_scatter_jvp)


def _scatter_transpose(ct, operand, indices, updates, *, update_jaxpr, update_consts,
                       dimension_numbers, indices_are_sorted, unique_indices, mode):
    """Only with unique indices (as in JAX) is it known which update each place keeps;
    the JVP of a scatter emits this primitive only then."""
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    operand_t = update_t = None
    if is_undefined(operand):  # the places written over get no cotangent
        operand_t = scatter_p.bind(ct, indices, zeros_like_aval(_aval_of(updates)),
                                   update_jaxpr=update_jaxpr, update_consts=update_consts,
                                   dimension_numbers=dimension_numbers,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=True, mode=mode)
    if is_undefined(updates):
        update_t = _scatter_updates_transpose(ct, indices, updates.aval, dimension_numbers,
                                              mode)
    return [operand_t, None, update_t]


scatter_p.def_transpose(_scatter_transpose)

scatter_add_p = _scatter_primitive("scatter-add", np.add.at, linear=True)


def _scatter_native_when(eqn) -> bool:
    operand, indices, updates = eqn.invars
    dn = eqn.params["dimension_numbers"]
    sizes = _window_sizes(operand.aval.shape, updates.aval.shape, dn)
    dtype = operand.aval.dtype
    return (not any(type(a) is Literal for a in eqn.invars)
            and (dtype in FLOATS or dtype in INTS
                 or eqn.primitive is scatter_p and dtype in C_TYPES)
            and indices.aval.dtype in INTS and math.prod(operand.aval.shape) > 0
            and all(w <= n for w, n in zip(sizes, operand.aval.shape)))


def _scatter_native(em, eqn):
    """The operand copied (or its array taken over if nothing reads it after: Emitter.
    copy_or_take), then each update applied in the updates' row-major order (an
    assignment: the last to a place stays; an addition: in that order) where its window is
    entirely in bounds (in "clip" mode: each start clamped), as _scatter_impl_with does."""
    operand, indices, updates = eqn.invars
    out = eqn.outvars[0]
    dn, mode = eqn.params["dimension_numbers"], eqn.params["mode"]
    shape, ushape = operand.aval.shape, updates.aval.shape
    dtype = out.aval.dtype
    for a in (operand, indices, updates):
        em.operand(a)
    for a in (indices, updates):
        em.as_array(a)
    em.copy_or_take(eqn, operand, out)
    u, q = f"p{em.slots[updates]}", f"q{em.slots[out]}"
    if not math.prod(ushape):
        return
    ostrides, ustrides = contiguous(shape), contiguous(ushape)
    sizes = _window_sizes(shape, ushape, dn)
    dims, windows = _loop_dims(ushape, dn.update_window_dims, [
        d for d in range(len(shape))
        if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims])
    clip = mode is GatherScatterMode.CLIP
    batching = {d: t for d, t in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims)}
    starts_at = _window_start(em, "dst", indices, shape, sizes, dn.scatter_dims_to_operand_dims,
                              batching, clamp=clip, check=not clip, skip=not clip)
    target = f"{q}[{_offset([(f'w{d}', ostrides[d]) for d in windows], start='dst')}]"
    value = f"{u}[{_offset([(var, ustrides[k]) for k, (var, _, _) in enumerate(dims)])}]"
    if eqn.primitive is scatter_add_p:
        value = wrapped(dtype, "+", target, value)
    _index_loops(em, dims, starts_at, lambda ind: em.line(f"{ind}{target} = {value};"))


native_rule(scatter_p, kind="block", when=_scatter_native_when,
            counts=lambda eqn: (1, 0))(_scatter_native)


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """Like `scatter`, but updates are added (duplicates accumulate)."""
    return _bind_scatter(scatter_add_p, add, operand, scatter_indices, updates,
                         dimension_numbers, indices_are_sorted, unique_indices, mode)


def _scatter_add_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    out = scatter_add_p.bind(operand, indices, updates, **params)
    g_operand, _, g_updates = tangents
    if is_zero(g_operand) and is_zero(g_updates):
        return out, _zero_tangent_of(out)
    return out, scatter_add_p.bind(instantiate(g_operand), indices, instantiate(g_updates),
                                   **params)


scatter_add_p.def_jvp(_scatter_add_jvp)


def _scatter_add_transpose(ct, operand, indices, updates, *, dimension_numbers, mode, **_):
    operand_t = ct if is_undefined(operand) else None
    update_t = None
    if is_undefined(updates):
        update_t = _scatter_updates_transpose(ct, indices, updates.aval, dimension_numbers,
                                              mode)
    return [operand_t, None, update_t]


scatter_add_p.def_transpose(_scatter_add_transpose)
native_rule(scatter_add_p, kind="block", when=_scatter_native_when,
            counts=lambda eqn: (1, 0))(_scatter_native)


# Dynamic slices natively: each start read from its scalar (or literal), clamped into
# [0, dim - size] as _clamped_starts does, then one loop nest over the window.


def _dynamic_native_when(eqn) -> bool:
    operand, *rest = eqn.invars
    updating = eqn.primitive is dynamic_update_slice_p
    starts = rest[1:] if updating else rest
    window = rest[0].aval.shape if updating else eqn.outvars[0].aval.shape
    return (type(operand) is not Literal and operand.aval.dtype in C_TYPES
            and not (updating and type(rest[0]) is Literal)
            and all(a.aval.dtype in INTS for a in starts) and math.prod(window) > 0)


def _window_at(em, starts, shape, sizes):
    """`starts_at` of _index_loops: C declaring `at`, the flat position in a row-major
    operand of `shape` of the window of `sizes` at the scalar `starts`, each clamped."""
    for a in starts:
        if type(a) is not Literal:
            em.operand(a)
            em.as_array(a)
    strides = contiguous(shape)

    def starts_at(ind):
        em.line(f"{ind}npy_intp at = 0;")
        for d, (a, n, size) in enumerate(zip(starts, shape, sizes)):
            top = n - size
            x = (f"(npy_int64){int(a.val)}" if type(a) is Literal else
                 _index_start(f"p{em.slots[a]}", C_TYPES[a.aval.dtype], "0"))
            em.line(f"{ind}{{ npy_int64 x = {x};")
            em.line(f"{ind}  at += (x < 0 ? 0 : x > {top} ? {top} : x) * {strides[d]}; }}")
        return None

    return starts_at


def _window_loops(em, shape, sizes, statement):
    """Loops over a window of `sizes` in an operand of `shape`; `statement(o, w)` the C at
    each element, given its flat offsets in the operand (from `at`) and in the window."""
    ostrides, wstrides = contiguous(shape), contiguous(sizes)
    o = _offset([(f"w{d}", ostrides[d]) for d in range(len(sizes))], start="at")
    w = _offset([(f"w{d}", wstrides[d]) for d in range(len(sizes))])
    return [(f"w{d}", n, True) for d, n in enumerate(sizes)], lambda ind: em.line(
        ind + statement(o, w))


@native_rule(dynamic_slice_p, kind="block", when=_dynamic_native_when,
             counts=lambda eqn: (1, 0))
def _dynamic_slice_native(em, eqn):
    operand, *starts = eqn.invars
    out = eqn.outvars[0]
    shape, sizes = operand.aval.shape, eqn.params["slice_sizes"]
    em.operand(operand)
    em.as_array(operand)
    starts_at = _window_at(em, starts, shape, sizes)
    s = em.slot(out)
    em.new_array(s, out.aval, var=out)
    p, q = f"p{em.slots[operand]}", f"q{s}"
    dims, body = _window_loops(em, shape, sizes, lambda o, w: f"{q}[{w}] = {p}[{o}];")
    _index_loops(em, dims, starts_at, body)


@native_rule(dynamic_update_slice_p, kind="block", when=_dynamic_native_when,
             counts=lambda eqn: (1, 0))
def _dynamic_update_slice_native(em, eqn):
    """The operand copied (or taken over: Emitter.copy_or_take), the update written over
    the window at the clamped starts."""
    operand, update, *starts = eqn.invars
    out = eqn.outvars[0]
    shape, sizes = operand.aval.shape, update.aval.shape
    em.operand(operand)
    em.operand(update)
    em.as_array(update)
    starts_at = _window_at(em, starts, shape, sizes)
    em.copy_or_take(eqn, operand, out)
    u, q = f"p{em.slots[update]}", f"q{em.slots[out]}"
    dims, body = _window_loops(em, shape, sizes, lambda o, w: f"{q}[{o}] = {u}[{w}];")
    _index_loops(em, dims, starts_at, body)

scatter_sub_p = _scatter_primitive("scatter-sub", np.subtract.at, linear=True)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """Like `scatter`, but updates are subtracted (duplicates accumulate)."""
    return _bind_scatter(scatter_sub_p, sub, operand, scatter_indices, updates,
                         dimension_numbers, indices_are_sorted, unique_indices, mode)


def _scatter_sub_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    out = scatter_sub_p.bind(operand, indices, updates, **params)
    g_operand, _, g_updates = tangents
    if is_zero(g_operand) and is_zero(g_updates):
        return out, _zero_tangent_of(out)
    return out, scatter_sub_p.bind(instantiate(g_operand), indices, instantiate(g_updates),
                                   **params)


scatter_sub_p.def_jvp(_scatter_sub_jvp)


def _scatter_sub_transpose(ct, operand, indices, updates, *, dimension_numbers, mode, **_):
    operand_t = ct if is_undefined(operand) else None
    update_t = None
    if is_undefined(updates):
        update_t = neg(_scatter_updates_transpose(ct, indices, updates.aval, dimension_numbers,
                                                  mode))
    return [operand_t, None, update_t]


scatter_sub_p.def_transpose(_scatter_sub_transpose)

scatter_mul_p = _scatter_primitive("scatter-mul", np.multiply.at)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """Like `scatter`, but the operand is multiplied by the updates."""
    return _bind_scatter(scatter_mul_p, mul, operand, scatter_indices, updates,
                         dimension_numbers, indices_are_sorted, unique_indices, mode)


def _scatter_mul_jvp_updates(g, x, indices, y, *, dimension_numbers, indices_are_sorted,
                             unique_indices, mode, **_):
    if not unique_indices:
        raise NotImplementedError(
            "scatter_mul gradients are only implemented if `unique_indices=True`")
    return mul(x, scatter_add(zeros_like(x), indices, g, dimension_numbers,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode))


defjvp(scatter_mul_p, lambda g, x, indices, y, **params: scatter_mul_p.bind(
    g, indices, y, **params), None, _scatter_mul_jvp_updates)


def _scatter_mul_transpose(ct, operand, indices, updates, *, dimension_numbers,
                           indices_are_sorted, unique_indices, mode, **params):
    """Linear in the operand (known updates), or, with unique indices, in the updates
    (known operand); never in both at once."""
    if is_undefined(operand) and is_undefined(updates):
        raise NotImplementedError("transpose of 'scatter-mul': the product of the operand "
                                  "and the updates is not linear")
    if is_undefined(operand):
        return [scatter_mul_p.bind(ct, indices, updates, dimension_numbers=dimension_numbers,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode, **params),
                None, None]
    if not unique_indices:
        raise NotImplementedError(
            "scatter_mul gradients are only implemented if `unique_indices=True`")
    return [None, None, _scatter_updates_transpose(mul(ct, operand), indices, updates.aval,
                                                   dimension_numbers, mode)]


scatter_mul_p.def_transpose(_scatter_mul_transpose)

scatter_min_p = _scatter_primitive("scatter-min", np.minimum.at)


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """Like `scatter`, keeping the minimum of operand and updates."""
    return _bind_scatter(scatter_min_p, min_, operand, scatter_indices, updates,
                         dimension_numbers, indices_are_sorted, unique_indices, mode)


def _scatter_extremal_jvp(prim, primals, tangents, *, update_jaxpr, update_consts,
                          dimension_numbers, indices_are_sorted, unique_indices, mode):
    """JAX's rule: tangents flow from the values that attain the result; ties (between
    updates, or with the operand) share the tangent equally. Out-of-bounds updates are
    read back from clamped places but are dropped (or clamped) by the final scatter."""
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dn = dimension_numbers
    out = prim.bind(operand, indices, updates, update_jaxpr=update_jaxpr,
                    update_consts=update_consts, dimension_numbers=dn,
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                    mode=mode)
    if is_zero(g_operand) and is_zero(g_updates):
        return out, _zero_tangent_of(out)
    g_operand, g_updates = instantiate(g_operand), instantiate(g_updates)
    shape = get_aval(updates).shape

    def gathered(x):  # (a CLIP scatter's updates read, and are transposed to, clamped places)
        return _inverse_gather(x, indices, dn, shape,
                               mode=mode if mode is GatherScatterMode.CLIP else None)

    initial_vals = gathered(operand)
    target_vals = gathered(out)
    successful = eq(updates, target_vals)
    retained = eq(initial_vals, target_vals)
    ones, zeros = full_like(updates, 1), zeros_like(updates)
    # JAX counts with the default mode (FILL_OR_DROP): under CLIP clamped updates then go
    # uncounted and the tangent is NaN. Counting with the scatter's own mode fixes that.
    num_updates = gathered(scatter_add(zeros_like(operand), indices,
                                       _select(successful, ones, zeros), dn, mode=mode))
    num_refs = gathered(scatter_add(zeros_like(operand), indices, ones, dn, mode=mode))
    updates_normalizer = _select(retained, div(ones, add(num_updates, ones)),
                                 div(ones, num_updates))
    updates_coef = _select(successful, updates_normalizer, zeros)
    operand_normalizer = _select(retained, div(ones, add(num_updates, ones)), zeros)
    # Every applied update counts itself; only dropped ones can see 0 (and need no coef).
    operand_coef = div(sub(operand_normalizer, ones), max_(num_refs, ones))
    tangent_updates = add(mul(gathered(g_operand), operand_coef), mul(g_updates, updates_coef))
    return out, scatter_add(g_operand, indices, tangent_updates, dn,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode)


scatter_min_p.def_jvp(functools.partial(_scatter_extremal_jvp, scatter_min_p))

scatter_max_p = _scatter_primitive("scatter-max", np.maximum.at)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """Like `scatter`, keeping the maximum of operand and updates."""
    return _bind_scatter(scatter_max_p, max_, operand, scatter_indices, updates,
                         dimension_numbers, indices_are_sorted, unique_indices, mode)


scatter_max_p.def_jvp(functools.partial(_scatter_extremal_jvp, scatter_max_p))


@functools.lru_cache(maxsize=None)
def _combiner_jaxpr(combine, dtype):
    """The scalar jaxpr recorded as `update_jaxpr`, as JAX does (`add e f` for
    scatter-add); cached so equal scatters have equal params."""
    aval = ShapedArray((), dtype)
    closed, _ = trace_to_jaxpr(lambda x, y: [combine(x, y)], [aval, aval])
    return closed.jaxpr


def _bind_scatter(p, combine, operand, indices, updates, dimension_numbers,
                  indices_are_sorted, unique_indices, mode):
    jaxpr = None if combine is None else _combiner_jaxpr(combine, get_aval(operand).dtype)
    return p.bind(operand, indices, updates, update_jaxpr=jaxpr, update_consts=(),
                  dimension_numbers=_canonical_dnums(ScatterDimensionNumbers,
                                                     dimension_numbers),
                  indices_are_sorted=bool(indices_are_sorted),
                  unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode))


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """`func` applied to the elements of `operand` that a scatter of updates of shape
    `update_shape` would write, once per update that writes there (as XLA applies it).

    A composition: the written elements are gathered, passed through `func` (vmapped, so
    it sees scalars as in JAX) and scattered back, repeated while some element has updates
    left; so unlike JAX's it can be differentiated.
    """
    dn = _canonical_dnums(ScatterDimensionNumbers, dimension_numbers)
    mode = GatherScatterMode.from_any(mode)
    update_shape = tuple(int(d) for d in update_shape)
    params = dict(indices_are_sorted=bool(indices_are_sorted),
                  unique_indices=bool(unique_indices), mode=mode)
    aval = get_aval(operand)
    if math.prod(update_shape) == 0:
        return operand
    hits = scatter_add(full(aval.shape, 0, np.int32), scatter_indices,
                       full(update_shape, 1, np.int32), dn, **params)
    hits_per_update = _inverse_gather(hits, scatter_indices, dn, update_shape, mode=mode,
                                      fill_value=0)

    def apply_once(i, x):
        values = _inverse_gather(x, scatter_indices, dn, update_shape, mode=mode)
        size = math.prod(update_shape)
        flat = reshape(values, (size,))
        applied = reshape(batching.vmap_flat(lambda v: [func(v)], [flat], [0], size)[0],
                          update_shape)
        if get_aval(applied).dtype != aval.dtype:
            raise TypeError(f"scatter_apply: func must return values of the operand's dtype "
                            f"{aval.dtype.name}, got {get_aval(applied).dtype.name}")
        return scatter(x, scatter_indices, _select(lt(i, hits_per_update), applied, values),
                       dn, **params)

    if unique_indices:
        return apply_once(np.int32(0), operand)
    rounds = reduce_max(hits, tuple(range(aval.ndim)))
    _, out = while_loop(lambda c: lt(c[0], rounds),
                        lambda c: (add(c[0], np.int32(1)), apply_once(*c)),
                        (np.int32(0), operand))
    return out


def index_take(src, idxs, axes):
    """src[idxs[0], idxs[1], ...] along `axes` (indices wrap around, Python-style), the
    indexed dimensions replaced by one leading dimension."""
    axes = tuple(int(a) for a in axes)
    shape = get_aval(src).shape
    indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    sizes = np.array([shape[a] for a in axes], get_aval(indices).dtype)
    bound = broadcast_in_dim(sizes, get_aval(indices).shape, (1,))
    remainder = rem(indices, bound)  # Python's modulo: add the size to negative remainders
    indices = select_n(lt(remainder, full_like(remainder, 0)), remainder, add(remainder, bound))
    slice_sizes = [1 if d in axes else n for d, n in enumerate(shape)]
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
                                   collapsed_slice_dims=axes, start_index_map=axes)
    return gather(src, indices, dnums, slice_sizes, mode=GatherScatterMode.PROMISE_IN_BOUNDS)


def _inverse_gather(x, indices, dn, updates_shape, mode=None, fill_value=None):
    gdn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    return gather(x, indices, gdn, _window_sizes(get_aval(x).shape, updates_shape, dn),
                  mode=mode, fill_value=fill_value)


def _zero_tangent_of(out):
    return Zero(get_aval(out).to_tangent_aval())


def _select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def _aval_of(x):
    return x.aval if is_undefined(x) else get_aval(x)


def _scatter_updates_transpose(ct, indices, updates_aval, dn, mode):
    """The cotangent of the updates: the gather of where each one wrote, in the scatter's
    mode as JAX does (zero for a window FILL_OR_DROP dropped; PROMISE_IN_BOUNDS, which
    drops it, gathers clamped)."""
    fill = mode is GatherScatterMode.FILL_OR_DROP
    return _inverse_gather(ct, indices, dn, updates_aval.shape, mode=mode,
                           fill_value=0 if fill else None)


def _shift(dims, by=1):
    return tuple(d + by for d in dims)


def _batch_dynamic_slice_indices(size, indices, dims):
    """Scalar start indices as one (size, n) index array, batched along dimension 0."""
    return concatenate([broadcast_in_dim(i, (size, 1), (0,) if d is not None else ())
                        for i, d in zip(indices, dims)], 1)


def _zero_index(indices):
    return np.zeros((), get_aval(indices[0]).dtype if indices else np.int32)


def _scatter_batch(prim, size, vals, dims, *, dimension_numbers, **params):
    """The operand and the updates get their batch dimension first (broadcast there if
    unbatched); it is a window dimension for unbatched indices, else a batching one."""
    operand, indices, updates = vals
    operand_bdim, indices_bdim, updates_bdim = dims
    dn = dimension_numbers
    operand = batching.bdim_at_front(operand, operand_bdim, size)
    updates = batching.bdim_at_front(updates, updates_bdim, size)
    if indices_bdim is None:
        bdn = ScatterDimensionNumbers(
            update_window_dims=(0,) + _shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    else:
        indices = batching.moveaxis(indices, indices_bdim, 0)
        bdn = ScatterDimensionNumbers(
            update_window_dims=_shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
            scatter_indices_batching_dims=(0,) + _shift(dn.scatter_indices_batching_dims))
    return prim.bind(operand, indices, updates, dimension_numbers=bdn, **params), 0


for _p in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
           scatter_max_p):
    _p.def_batch(functools.partial(_scatter_batch, _p))


__all__ = [
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
    "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "gather", "scatter",
    "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max", "scatter_apply",
    "index_take",
]
