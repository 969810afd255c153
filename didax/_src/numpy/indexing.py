"""NumPy indexing: `x[idx]`, `x.at[idx].set(...)`, take, take_along_axis, put(_along_axis).

An index is parsed once against the array's shape, then lowered as JAX lowers it: static
ints and slices become `slice` (+ `rev`, `squeeze`), scalar traced ints `dynamic_slice`,
and anything else (integer or boolean arrays, out-of-bounds modes) one `gather`. The
gather's dimension numbers, transposed, drive the `scatter` behind `.at[]` updates.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from didax._src import core, dtypes
from didax._src.core import Array, ArrayBase, get_aval
from didax._src.errors import NonConcreteBooleanIndexError, user_error
from didax._src.lax import elementwise as lax_ew
from didax._src.lax import indexing as lax_idx
from didax._src.lax import shape as lax_shape
from didax._src.lax.indexing import GatherScatterMode
from didax._src.numpy import eager_indexing, ufuncs, util
from didax._src.numpy.searching import nonzero

NONE, ELLIPSIS, SLICE, INTEGER, BOOLEAN, ARRAY = ("none", "ellipsis", "slice", "integer",
                                                  "boolean", "array")


class _Index(NamedTuple):
    """One entry of an index tuple, with the array axes it consumes."""

    index: Any
    kind: str
    axes: tuple[int, ...]


# --------------------------------------------------------------------------------------
# Parsing


def _as_tuple(idx) -> tuple:
    """A non-tuple sequence is ambiguous in NumPy; JAX (and didax) reject it."""
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, Sequence) and not isinstance(idx, str):
        nested = any(isinstance(i, (list, tuple, slice)) or i is None or i is Ellipsis
                     or (isinstance(i, (np.ndarray, ArrayBase)) and np.ndim(i) != 0)
                     for i in idx)
        fix = "arr[tuple(seq)]" if nested else "arr[array(seq)]"
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        f"allowed; use `{fix}` instead of `arr[seq]`.")
    return (idx,)


def _kind(idx) -> str:
    if idx is None:
        return NONE
    if idx is Ellipsis:
        return ELLIPSIS
    if isinstance(idx, slice):
        return SLICE
    if isinstance(idx, (bool, np.bool_)):
        return BOOLEAN
    if isinstance(idx, (int, np.integer)):
        return INTEGER
    if isinstance(idx, ArrayBase):
        dtype = get_aval(idx).dtype
        if dtype == np.bool_:
            return BOOLEAN
        if dtypes.issubdtype(dtype, np.integer):
            return ARRAY
        raise user_error(TypeError, (
            f"Indexer must have integer or boolean type, got indexer with type "
            f"{dtype}.\nWhat to do: index with integers (`i.astype(jnp.int32)` for an "
            "array of positions) or a boolean mask."))
    if isinstance(idx, str):
        raise TypeError(f"didax does not support string indexing; got idx={idx!r}")
    if isinstance(idx, (float, complex, np.generic)):
        raise user_error(TypeError, (
            f"Indexer must have integer or boolean type, got indexer with type "
            f"{np.dtype(type(idx))} ({idx!r}).\nWhat to do: index with an integer "
            "(`int(i)`)."))
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                     f"integer or boolean arrays are valid indices. Got {idx!r}")


def _as_index_array(idx):
    """NumPy arrays and (nested) sequences become didax arrays; empty ones are integers."""
    if isinstance(idx, (list, tuple)) and not idx:
        return Array(np.zeros((0,), np.int32))
    if isinstance(idx, (list, tuple, np.ndarray)):
        return util.asarray(idx)
    return idx


def _static_slice_entry(value, position, s):
    if value is None:
        return None
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, core.Tracer):
        shown = ", ".join("None" if v is None else get_aval(v).str_short() if isinstance(
            v, core.Tracer) else repr(v) for v in (s.start, s.stop, s.step))
        raise user_error(IndexError, (
            f"Slice entries must be static integers. Got slice({shown}) at position "
            f"{position}: a slice's bounds set the result's shape, which must be known while "
            "tracing.\nWhat to do: for a window of fixed size at a traced start use "
            "`lax.dynamic_slice(x, (start,), (size,))` or `lax.dynamic_slice_in_dim`; or make "
            "the bound a static argument (`static_argnums`/`static_argnames`).")) from None
    raise user_error(TypeError, f"Slice entries must be integers (or None), as in JAX: "
                     f"{type(value).__name__} object cannot be interpreted as an integer. Got "
                     f"{s!r} at position {position}") from None


def _parse(idx, shape) -> list[_Index]:
    """Classifies each entry of `idx` and assigns it the axes of `shape` it consumes."""
    indices = [_as_index_array(i) for i in _as_tuple(idx)]
    kinds = [_kind(i) for i in indices]
    consumed = [0 if k in (NONE, ELLIPSIS) else (np.ndim(i) if k == BOOLEAN else 1)
                for i, k in zip(indices, kinds)]
    ellipses = [n for n, k in enumerate(kinds) if k == ELLIPSIS]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if sum(consumed) > len(shape):
        raise user_error(IndexError, (
            f"Too many indices: array is {len(shape)}-dimensional (shape {tuple(shape)}), "
            f"but {sum(consumed)} were indexed"))
    if ellipses:
        consumed[ellipses[0]] = len(shape) - sum(consumed)
    parsed, dim = [], 0
    for position, (i, k, n) in enumerate(zip(indices, kinds, consumed)):
        if k == SLICE:
            i = slice(*(_static_slice_entry(v, position, i) for v in (i.start, i.stop, i.step)))
            if i.step == 0:
                raise ValueError("slice step cannot be zero")
        parsed.append(_Index(i, k, tuple(range(dim, dim + n))))
        dim += n
    return parsed


def _expand_ellipsis(parsed, ndim) -> list[_Index]:
    """Replaces `...` and the implicit trailing `:`s by one full slice per axis."""
    out = []
    for p in parsed:
        if p.kind == ELLIPSIS:
            out.extend(_Index(slice(None), SLICE, (a,)) for a in p.axes)
        else:
            out.append(p)
    used = sum(len(p.axes) for p in parsed)
    out.extend(_Index(slice(None), SLICE, (a,)) for a in range(used, ndim))
    return out


def _expand_bool_indices(parsed, shape) -> list[_Index]:
    """Boolean arrays become the integer arrays of their True positions (needs values)."""
    out = []
    for position, p in enumerate(parsed):
        if p.kind != BOOLEAN:
            out.append(p)
            continue
        value = core.concrete_value(p.index)
        if value is None:
            aval = get_aval(p.index)
            raise user_error(NonConcreteBooleanIndexError,
                f"Array boolean indices must be concrete; got {aval.str_short()}.\n"
                "The shape of x[mask] depends on the values of the mask, which are unknown "
                "while tracing (jit, make_jaxpr, vmap...).\n"
                "What to do: keep shapes static with `jnp.where(mask, x, fill)` instead of "
                "`x[mask]` and `jnp.where(mask, v, x)` instead of `x.at[mask].set(v)`, or "
                "index with `jnp.nonzero(mask, size=n)` for a static size n.")
        value = np.asarray(value)
        if value.ndim == 0:
            out.append(p._replace(index=bool(value)))
            continue
        expected = [shape[a] for a in p.axes]
        if not all(s in (0, e) for s, e in zip(value.shape, expected)):
            raise IndexError(f"boolean index did not match shape of indexed array in index "
                             f"{position}: got {value.shape}, expected {expected}")
        out.extend(_Index(util.asarray(i), ARRAY, (a,))
                   for i, a in zip(np.nonzero(value), p.axes))
    return out


def _gather_mode(mode) -> GatherScatterMode:
    """Indexing's default: gathers may assume indices are in bounds (they then clamp)."""
    if mode is None:
        return GatherScatterMode.PROMISE_IN_BOUNDS
    return GatherScatterMode.from_any(mode)


# --------------------------------------------------------------------------------------
# x[idx]


def rewriting_take(arr, idx, *, indices_are_sorted=False, unique_indices=False, mode=None,
                   fill_value=None, normalize_indices=True):
    """`arr[idx]` with NumPy semantics, lowered to slice, dynamic_slice or gather."""
    shape = get_aval(arr).shape
    parsed = _parse(idx, shape)
    gmode = _gather_mode(mode)
    slicing_mode = gmode in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP)
    if slicing_mode and _is_static_slice(parsed, shape, gmode, normalize_indices):
        return _static_slice(arr, parsed, shape, normalize_indices)
    if slicing_mode and _is_dynamic_slice(parsed, shape):
        return _dynamic_slice(arr, parsed, shape, normalize_indices)
    parsed = _expand_bool_indices(parsed, shape)
    return _gather(arr, parsed, shape, indices_are_sorted=indices_are_sorted,
                   unique_indices=unique_indices, mode=gmode, fill_value=fill_value,
                   normalize=normalize_indices)


def _is_static_slice(parsed, shape, mode, normalize) -> bool:
    """Only static ints and slices; ints must be in bounds unless the mode clips."""
    for p in parsed:
        if p.kind == INTEGER:
            size = shape[p.axes[0]]
            i = int(p.index)
            i = i + size if normalize and i < 0 else i
            if size == 0 or (mode is GatherScatterMode.PROMISE_IN_BOUNDS and not 0 <= i < size):
                return False
        elif p.kind not in (SLICE, NONE, ELLIPSIS):
            return False
    return True


def _static_slice(arr, parsed, shape, normalize):
    starts, limits, strides = [], [], []
    rev_axes, squeeze_axes, newaxis_dims = [], [], []
    for p in _expand_ellipsis(parsed, len(shape)):
        if p.kind == NONE:
            newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
            continue
        (axis,) = p.axes
        size = shape[axis]
        if p.kind == INTEGER:
            i = int(p.index)
            i = i + size if normalize and i < 0 else i
            i = min(max(i, 0), size - 1)  # only reached out of bounds in mode "clip"
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            squeeze_axes.append(axis)
            continue
        start, stop, step = p.index.indices(size)
        if step < 0:
            first = min(size, stop + 1 + abs(start - stop - 1) % -step)
            starts.append(first)
            limits.append(max(first, start + 1))
            strides.append(-step)
            rev_axes.append(axis)
        else:
            starts.append(start)
            limits.append(max(start, stop))
            strides.append(step)
    trivial = all(st == 1 for st in strides) and starts == [0] * len(shape) and (
        tuple(limits) == tuple(shape))
    out = arr if trivial else lax_shape.slice(arr, starts, limits, strides)
    if rev_axes:
        out = lax_shape.rev(out, rev_axes)
    if squeeze_axes:
        out = lax_shape.squeeze(out, squeeze_axes)
    return _expand_dims(out, newaxis_dims)


def _is_dynamic_slice(parsed, shape) -> bool:
    """Scalar (possibly traced) ints and unit-step slices: a `dynamic_slice` suffices."""
    for p in parsed:
        if p.kind in (INTEGER, ARRAY):
            if np.ndim(p.index) != 0 or shape[p.axes[0]] == 0:
                return False
        elif p.kind == SLICE:
            if p.index.step not in (None, 1, -1):
                return False
        elif p.kind not in (NONE, ELLIPSIS):
            return False
    return True


def _dynamic_slice(arr, parsed, shape, normalize):
    starts, sizes, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], []
    for p in _expand_ellipsis(parsed, len(shape)):
        if p.kind == NONE:
            newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
            continue
        (axis,) = p.axes
        if p.kind in (INTEGER, ARRAY):
            starts.append(p.index)
            sizes.append(1)
            squeeze_axes.append(axis)
            continue
        start, stop, step = p.index.indices(shape[axis])
        if step < 0:
            starts.append(stop + 1)
            sizes.append(max(0, start - stop))
            rev_axes.append(axis)
        else:
            starts.append(start)
            sizes.append(max(0, stop - start))
    if len(starts) > 1:  # dynamic_slice wants start indices of one dtype
        dtype = _index_dtype(shape)
        starts = [Array(np.asarray(s, dtype)) if isinstance(s, (int, np.integer))
                  else lax_ew.convert_element_type(s, dtype) for s in starts]
    else:
        starts = [util.asarray(s) for s in starts]
    out = lax_idx.dynamic_slice(arr, starts, sizes, allow_negative_indices=normalize)
    if rev_axes:
        out = lax_shape.rev(out, rev_axes)
    if squeeze_axes:
        out = lax_shape.squeeze(out, squeeze_axes)
    return _expand_dims(out, newaxis_dims)


def _gather(arr, parsed, shape, *, indices_are_sorted, unique_indices, mode, fill_value,
            normalize):
    g = _index_to_gather(shape, parsed, normalize)
    if fill_value is not None:
        fill_value = util.concrete_or_error(fill_value, "fill_value argument to indexed get()")
        if np.ndim(fill_value) != 0:
            raise ValueError("fill_value argument to indexed get() must be a scalar")
        fill_value = np.asarray(fill_value).item()
    aval = get_aval(arr)
    if 0 in g.slice_shape:
        return _zeros(g.slice_shape, aval)
    y = _expand_dims(arr, g.scalar_bool_dims)
    if 0 not in np.shape(g.gather_indices):
        y = lax_idx.gather(y, g.gather_indices, g.dnums, g.gather_slice_shape,
                           unique_indices=unique_indices or g.unique_indices,
                           indices_are_sorted=indices_are_sorted or g.indices_are_sorted,
                           mode=mode, fill_value=fill_value)
    if g.reversed_y_dims:
        y = lax_shape.rev(y, g.reversed_y_dims)
    return _expand_dims(y, g.newaxis_dims)


# --------------------------------------------------------------------------------------
# From an index to gather dimension numbers (also used, transposed, by scatters)


class _GatherIndexer(NamedTuple):
    slice_shape: tuple  # the shape of x[idx]
    gather_slice_shape: tuple  # the slice_sizes of the gather
    gather_indices: Any
    dnums: lax_idx.GatherDimensionNumbers
    unique_indices: bool  # no advanced index: windows never overlap
    indices_are_sorted: bool
    reversed_y_dims: tuple  # output dims of negative-step slices
    newaxis_dims: tuple  # output dims added by None
    scalar_bool_dims: tuple  # size-1 dims inserted into x for scalar boolean indices


def _index_dtype(shape):
    big = any(d > dtypes.iinfo(np.int32).max for d in shape)
    return dtypes.canonicalize_dtype(np.int64 if big else np.int32)


def _expand_scalar_bools(shape, parsed):
    """A scalar boolean adds a size-1 axis, indexed by arange(1) (True) or arange(0)."""
    shape, out, dims, dim = list(shape), [], [], 0
    for p in parsed:
        if p.kind == BOOLEAN:
            shape.insert(dim, 1)
            dims.append(dim)
            out.append(_Index(Array(np.arange(int(p.index), dtype=np.int32)), ARRAY, (dim,)))
            dim += 1
        else:
            out.append(p._replace(axes=tuple(range(dim, dim + len(p.axes)))))
            dim += len(p.axes)
    return tuple(shape), out, tuple(dims)


def _normalize_array_index(idx, size):
    """Wraps negative entries of a signed integer index array once (`i + size`)."""
    dtype = get_aval(idx).dtype
    if not dtypes.issubdtype(dtype, np.signedinteger):
        return idx
    if size > dtypes.iinfo(dtype).max:
        idx = lax_ew.convert_element_type(idx, _index_dtype((size,)))
        dtype = get_aval(idx).dtype
    zero, n = np.asarray(0, dtype), np.asarray(size, dtype)
    return lax_ew.select_n(lax_ew.lt(idx, zero), idx, lax_ew.add(idx, n))


def _normalize_indices(shape, parsed):
    out = []
    for p in parsed:
        size = shape[p.axes[0]] if p.axes else None
        if p.kind == INTEGER and not isinstance(p.index, np.unsignedinteger) and p.index < 0:
            out.append(p._replace(index=int(p.index) + size))
        elif p.kind == ARRAY:
            out.append(p._replace(index=_normalize_array_index(p.index, size)))
        else:
            out.append(p)
    return out


def _canonicalize_slice(s: slice, size: int):
    """(start, step, length) of `x[s]` along an axis of `size`; start is the first element."""
    start, stop, step = s.indices(size)
    return start, step, len(range(start, stop, step))


def _index_to_gather(shape, parsed, normalize=True) -> _GatherIndexer:
    # NumPy puts the advanced-index dims first unless the advanced indices are adjacent.
    advanced_pos = [n for n, p in enumerate(parsed) if p.kind in (ARRAY, INTEGER, BOOLEAN)]
    contiguous = all(b - a == 1 for a, b in zip(advanced_pos, advanced_pos[1:]))
    parsed = _expand_ellipsis(parsed, len(shape))
    shape, parsed, scalar_bool_dims = _expand_scalar_bools(shape, parsed)
    if normalize:
        parsed = _normalize_indices(shape, parsed)
    index_dtype = _index_dtype(shape)

    advanced, idx_advanced, x_advanced = [], [], []
    if any(p.kind == ARRAY and np.ndim(p.index) > 0 for p in parsed):
        without_none = [(i, p) for i, p in enumerate(parsed) if p.kind != NONE]
        for j, (i, p) in enumerate(without_none):
            if p.kind in (ARRAY, INTEGER):
                advanced.append(util.asarray(p.index))
                idx_advanced.append(i)
                x_advanced.append(j)

    x_axis = y_axis = collapsed_y_axis = 0
    offset_dims, collapsed_slice_dims, start_index_map = [], [], []
    gather_indices, gather_indices_shape = [], []  # (array, first dim) pairs; their shape
    slice_shape, newaxis_dims, reversed_y_dims, gather_slice_shape = [], [], [], []

    for pos, p in enumerate(parsed):
        if advanced and pos == (idx_advanced[0] if contiguous else 0):
            arrays = util.broadcast_arrays(*advanced)
            adv_shape = get_aval(arrays[0]).shape
            start_dim = len(gather_indices_shape)
            gather_indices.extend((lax_ew.convert_element_type(a, index_dtype), start_dim)
                                  for a in arrays)
            gather_indices_shape.extend(adv_shape)
            start_index_map.extend(x_advanced)
            collapsed_slice_dims.extend(x_advanced)
            slice_shape.extend(adv_shape)
            y_axis += len(adv_shape)
            collapsed_y_axis += len(adv_shape)
        if pos in idx_advanced:
            x_axis += 1
            gather_slice_shape.append(1)
            continue
        if p.kind in (INTEGER, ARRAY):  # a scalar index, with no advanced indices around
            if shape[x_axis] == 0:
                raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
            i = (np.asarray(p.index, index_dtype) if p.kind == INTEGER
                 else lax_ew.convert_element_type(p.index, index_dtype))
            gather_indices.append((i, len(gather_indices_shape)))
            collapsed_slice_dims.append(x_axis)
            gather_slice_shape.append(1)
            start_index_map.append(x_axis)
            x_axis += 1
        elif p.kind == NONE:
            slice_shape.append(1)
            newaxis_dims.append(y_axis)
            y_axis += 1
        else:
            size = shape[x_axis]
            start, step, length = _canonicalize_slice(p.index, size)
            slice_shape.append(length)
            if step == 1:
                if length != size:
                    gather_indices.append((np.asarray(start, index_dtype),
                                           len(gather_indices_shape)))
                    start_index_map.append(x_axis)
                gather_slice_shape.append(length)
                offset_dims.append(collapsed_y_axis)
            else:
                positions = lax_ew.add(np.asarray(start, index_dtype), lax_ew.mul(
                    np.asarray(step, index_dtype), lax_shape.iota(index_dtype, length)))
                if step < 0:
                    reversed_y_dims.append(collapsed_y_axis)
                    positions = lax_shape.rev(positions, (0,))
                gather_slice_shape.append(1)
                gather_indices.append((positions, len(gather_indices_shape)))
                start_index_map.append(x_axis)
                gather_indices_shape.append(length)
                collapsed_slice_dims.append(x_axis)
            collapsed_y_axis += 1
            y_axis += 1
            x_axis += 1

    if not gather_indices:
        indices = Array(np.zeros((0,), index_dtype))
    else:
        full_shape = tuple(gather_indices_shape) + (1,)
        parts = [lax_shape.broadcast_in_dim(g, full_shape, tuple(range(d, d + np.ndim(g))))
                 for g, d in gather_indices]
        indices = lax_shape.concatenate(parts, len(gather_indices_shape))
    dnums = lax_idx.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(sorted(collapsed_slice_dims)),
        start_index_map=tuple(start_index_map))
    return _GatherIndexer(tuple(slice_shape), tuple(gather_slice_shape), indices, dnums,
                          not advanced, not advanced, tuple(reversed_y_dims),
                          tuple(newaxis_dims), scalar_bool_dims)


def _expand_dims(x, dims):
    """Inserts size-1 axes with `broadcast_in_dim`, as `jax.lax.expand_dims` does."""
    if not dims:
        return x
    shape = list(get_aval(x).shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    kept = tuple(i for i in range(len(shape)) if i not in set(dims))
    return lax_shape.broadcast_in_dim(x, shape, kept)


def _zeros(shape, aval):
    zeros = lax_shape.full(shape, 0, aval.dtype)
    return lax_ew.convert_element_type(zeros, aval.dtype, aval.weak_type)


# --------------------------------------------------------------------------------------
# x.at[idx].set(y) and friends


def _scatter_update(x, idx, y, scatter_op, *, indices_are_sorted=False, unique_indices=False,
                    mode=None, normalize_indices=True):
    """`x[idx] op= y` without mutation: one scatter with the gather's dimension numbers
    transposed. `y` is promoted with `x`, broadcast to `x[idx]`'s shape, and the result
    cast back to `x`'s dtype."""
    x = util.asarray(x)
    aval = get_aval(x)
    if (isinstance(y, int) and dtypes.issubdtype(aval.dtype, np.integer)
            and dtypes.iinfo(aval.dtype).min <= y <= dtypes.iinfo(aval.dtype).max):
        y = util.asarray(y, aval.dtype)
    elif not isinstance(y, (int, float, complex)):  # Python scalars promote as constants
        y = util.asarray(y)
    parsed = _expand_bool_indices(_parse(idx, aval.shape), aval.shape)
    g = _index_to_gather(aval.shape, parsed, normalize_indices)
    if 0 in g.slice_shape:
        return x
    x, y = util.promote_dtypes(x, y)
    try:
        y = util.broadcast_to(y, g.slice_shape)
    except ValueError:
        method = _METHOD_OF.get(getattr(scatter_op, "__name__", ""), "set")
        target = tuple(d for i, d in enumerate(g.slice_shape) if i not in g.newaxis_dims)
        raise user_error(ValueError, (
            f"x.at[{_index_text(idx)}].{method}(values): values of shape "
            f"{get_aval(y).shape} do not broadcast to the shape of the indexed part "
            f"x[{_index_text(idx)}], {target} (x has shape {aval.shape}).\n"
            f"What to do: pass values of shape {target}, or one that broadcasts to it (a "
            "scalar, or size-1 axes); check which axes the index selects.")) from None
    y = lax_shape.squeeze(y, g.newaxis_dims)
    if g.reversed_y_dims:
        y = lax_shape.rev(y, g.reversed_y_dims)
    x = _expand_dims(x, g.scalar_bool_dims)
    dnums = lax_idx.ScatterDimensionNumbers(
        update_window_dims=g.dnums.offset_dims,
        inserted_window_dims=g.dnums.collapsed_slice_dims,
        scatter_dims_to_operand_dims=g.dnums.start_index_map)
    out = scatter_op(x, g.gather_indices, y, dnums,
                     indices_are_sorted=g.indices_are_sorted or indices_are_sorted,
                     unique_indices=g.unique_indices or unique_indices, mode=mode)
    if g.scalar_bool_dims:
        out = lax_shape.squeeze(out, g.scalar_bool_dims)
    return lax_ew.convert_element_type(out, aval.dtype, aval.weak_type)


_METHOD_OF = {"scatter": "set", "scatter_add": "add", "scatter_mul": "multiply",
              "scatter_min": "min", "scatter_max": "max", "scatter_apply": "apply"}


def _index_text(idx) -> str:
    """An index as the user wrote it, arrays shown by their type."""
    def one(i):
        if isinstance(i, slice):
            parts = ["" if v is None else one(v) for v in (i.start, i.stop, i.step)]
            return ":".join(parts[:2] if i.step is None else parts)
        if i is Ellipsis:
            return "..."
        if isinstance(i, (ArrayBase, np.ndarray)):
            return f"<{get_aval(i).str_short()} array>"
        return repr(i)
    return ", ".join(one(i) for i in idx) if isinstance(idx, tuple) else one(idx)


def _drops_out_of_bounds(mode) -> bool:
    """Whether an update's `mode` is the default, which drops updates out of bounds (the
    only one the eager path implements)."""
    return mode is None or type(mode) is str and mode == "drop"


class IndexUpdateHelper:
    """The `x.at` property: `x.at[idx]` names the elements an update applies to.

    `x.at[idx].set(y)` is the pure form of `x[idx] = y`; likewise add, subtract, multiply
    (mul), divide, power, min, max, apply and get. Repeated indices all apply (updates
    accumulate); out-of-bounds updates are dropped unless `mode="clip"`, while `get`
    clamps unless `mode="fill"`.
    """

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """An array and an index; each method returns an updated copy of the array."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def _update(self, values, op, indices_are_sorted, unique_indices, mode,
                wrap_negative_indices, array=None, eager_op=None):
        """The scatter `op` of `values` (NumPy's own update `eager_op`, if given, when it can
        tell they agree); an `eager_op` that negates its values negates them for `op` too."""
        if eager_op is not None and wrap_negative_indices and _drops_out_of_bounds(mode):
            out = eager_indexing.update(self.array, self.index, values, eager_op)
            if out is not None:
                return out
        if eager_op is not None and eager_op.negate:
            values = ufuncs.negative(values)
        return _scatter_update(self.array if array is None else array, self.index, values, op,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode,
                               normalize_indices=wrap_negative_indices)

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, wrap_negative_indices=True):
        """`x[idx]`, with control of out-of-bounds indices (`mode`, `fill_value`)."""
        if wrap_negative_indices and fill_value is None and (
                mode is None or type(mode) is str and mode == "clip"):
            out = eager_indexing.getitem(self.array, self.index)  # (both modes clamp)
            if out is not None:
                return out
        return rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                              normalize_indices=wrap_negative_indices)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """`x[idx] = values`."""
        return self._update(values, lax_idx.scatter, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, eager_op=eager_indexing.SET)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """`x[idx] += values`."""
        return self._update(values, lax_idx.scatter_add, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, eager_op=eager_indexing.ADD)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        """`x[idx] -= values` (a scatter-add of the negated values)."""
        return self._update(values, lax_idx.scatter_add, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, eager_op=eager_indexing.SUBTRACT)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        """`x[idx] *= values`."""
        return self._update(values, lax_idx.scatter_mul, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, eager_op=eager_indexing.MULTIPLY)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               wrap_negative_indices=True):
        """`x[idx] /= values`: x divided by ones scatter-multiplied by `values`."""
        ones = lax_ew.full_like(self.array, 1)
        return ufuncs.divide(self.array, self._update(
            values, lax_idx.scatter_mul, indices_are_sorted, unique_indices, mode,
            wrap_negative_indices, array=ones))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """`x[idx] **= values`: x to the power of ones scatter-multiplied by `values`."""
        ones = lax_ew.full_like(self.array, 1)
        return ufuncs.power(self.array, self._update(
            values, lax_idx.scatter_mul, indices_are_sorted, unique_indices, mode,
            wrap_negative_indices, array=ones))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """`x[idx] = minimum(x[idx], values)`."""
        return self._update(values, lax_idx.scatter_min, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, eager_op=eager_indexing.MIN)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """`x[idx] = maximum(x[idx], values)`."""
        return self._update(values, lax_idx.scatter_max, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, eager_op=eager_indexing.MAX)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """`x[idx] = func(x[idx])` for an elementwise `func`.

        Unlike JAX (whose scatter applies `func` once per occurrence of a repeated index),
        `func` is applied once per distinct element: it is gathered, mapped and set back.
        """
        old = self.get(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode="clip", wrap_negative_indices=wrap_negative_indices)
        return self.set(func(old), indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode,
                        wrap_negative_indices=wrap_negative_indices)


# --------------------------------------------------------------------------------------
# jnp functions


def _ravel(a):
    return lax_shape.reshape(a, (get_aval(a).size,))


def _append_index_dim(indices):
    """indices[..., None]: the trailing index-vector dimension gather expects."""
    shape = get_aval(indices).shape
    return lax_shape.broadcast_in_dim(indices, shape + (1,), tuple(range(len(shape))))


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """`a` indexed along `axis` (flattened if None); out-of-bounds indices fill with NaN
    (or `fill_value`) by default, or clip/wrap as `mode` says."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    if fill_value is None and (mode is None or type(mode) is str and mode == "fill"):
        fast = eager_indexing.take(a, indices, axis)
        if fast is not None:
            return fast
    util.check_arraylike("take", a, indices)
    a, indices = util.asarray(a), util.asarray(indices)
    if axis is None:
        a = _ravel(a)
        axis = 0
    shape = get_aval(a).shape
    axis = util.canonical_axis(operator.index(axis), len(shape), "take")
    n = shape[axis]
    if mode is None or mode == "fill":
        gather_mode = GatherScatterMode.FILL_OR_DROP
        indices = ufuncs.where(ufuncs.less(indices, 0), ufuncs.add(indices, n), indices)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = ufuncs.remainder(indices, n)
        gather_mode = GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    idx_shape = get_aval(indices).shape
    if n == 0:
        if 0 not in idx_shape:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if 0 in idx_shape:
        return _zeros(shape[:axis] + idx_shape + shape[axis + 1:], get_aval(a))
    index_dims = len(idx_shape)
    dnums = lax_idx.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + index_dims,
                                                     len(shape) + index_dims - 1)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    slice_sizes = shape[:axis] + (1,) + shape[axis + 1:]
    return lax_idx.gather(a, _append_index_dim(indices), dnums, slice_sizes, mode=gather_mode,
                          unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                          fill_value=fill_value)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """`arr` indexed along `axis` by `indices` of the same rank (broadcast against `arr`
    elsewhere): the inverse of argsort-like functions. Out-of-bounds indices fill."""
    util.check_arraylike("take_along_axis", arr, indices)
    a, indices = util.asarray(arr), util.asarray(indices)
    idx_aval = get_aval(indices)
    if not dtypes.issubdtype(idx_aval.dtype, np.integer):
        raise TypeError(f"take_along_axis indices must be of integer type, got "
                        f"{idx_aval.dtype}")
    if axis is None:
        if idx_aval.ndim != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{idx_aval.shape}")
        a = _ravel(a)
        axis = 0
    shape = get_aval(a).shape
    rank = len(shape)
    if rank != idx_aval.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{idx_aval.ndim} vs. {rank}")
    axis = util.canonical_axis(axis, rank, "take_along_axis")
    idx_shape = idx_aval.shape
    arr_shape = shape[:axis] + (1,) + shape[axis + 1:]
    try:
        out_shape = np.broadcast_shapes(idx_shape, arr_shape)
    except ValueError:
        raise ValueError(f"take_along_axis: indices of shape {idx_shape} do not broadcast "
                         f"with arr of shape {shape} outside axis {axis}") from None
    axis_size = shape[axis]
    if axis_size == 0:
        return _zeros(out_shape, get_aval(a).strip_weak_type())
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:
        indices = lax_ew.convert_element_type(indices, _index_dtype((axis_size,)))
        indices = _normalize_array_index(indices, axis_size)

    index_dims = [i for i, n in enumerate(idx_shape) if i == axis or n != 1]
    gather_indices = lax_shape.reshape(
        indices, tuple(out_shape[i] for i in index_dims) + (1,))
    slice_sizes, offset_dims, start_index_map, collapsed = [], [], [], []
    operand_batching, indices_batching, squeezed = [], [], []
    new_i = j = 0
    for i in range(rank):
        if i == axis:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed.append(new_i)
            new_i += 1
            j += 1
        elif idx_shape[i] == 1:  # take the whole of arr's axis, no index needed
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif arr_shape[i] == 1:  # arr broadcasts along the index: drop its axis
            squeezed.append(i)
            j += 1
        else:  # matching dims: batch them
            slice_sizes.append(0 if arr_shape[i] == 0 else 1)
            operand_batching.append(new_i)
            indices_batching.append(j)
            new_i += 1
            j += 1
    a = lax_shape.squeeze(a, squeezed)
    dnums = lax_idx.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
        start_index_map=tuple(start_index_map), operand_batching_dims=tuple(operand_batching),
        start_indices_batching_dims=tuple(indices_batching))
    return lax_idx.gather(a, gather_indices, dnums, tuple(slice_sizes),
                          mode="fill" if mode is None else mode, fill_value=fill_value)


def _tile_to_size(v, size):
    """The 1-D `v` repeated cyclically to exactly `size` elements."""
    n = get_aval(v).shape[0]
    reps = -(-size // n)
    tiled = lax_shape.reshape(lax_shape.broadcast_in_dim(v, (reps, n), (1,)), (reps * n,))
    return tiled if reps * n == size else lax_shape.slice(tiled, (0,), (size,))


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of `a` with `v` put at the flat indices `ind` (`v` repeats as needed).

    Out-of-range indices are clipped (after wrapping negatives once) or wrapped
    (`mode="wrap"`). `inplace=False` is required: arrays are immutable.
    """
    if inplace:
        raise ValueError("didax.numpy.put cannot modify arrays in-place, because arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    util.check_arraylike("put", a, ind, v)
    arr, ind, v = util.asarray(a), _ravel(util.asarray(ind)), _ravel(util.asarray(v))
    aval = get_aval(arr)
    n_ind, n_v = get_aval(ind).size, get_aval(v).size
    if not aval.size or not n_ind or not n_v:
        return arr
    v = _tile_to_size(v, n_ind)
    if mode is None:
        ind = ufuncs.where(ufuncs.less(ind, 0), ufuncs.add(ind, aval.size), ind)
        ind = ufuncs.clip(ind, 0, aval.size - 1)
    elif mode == "clip":
        ind = ufuncs.clip(ind, 0, aval.size - 1)
    elif mode == "wrap":
        ind = ufuncs.remainder(ind, aval.size)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    flat = _ravel(arr).at[ind].set(v, mode="promise_in_bounds")
    return lax_shape.reshape(flat, aval.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """A copy of `arr` with `values` set at `indices` along `axis` (as take_along_axis)."""
    if inplace:
        raise ValueError("didax.numpy.put_along_axis cannot modify arrays in-place, because "
                         "arrays are immutable. Pass inplace=False to instead return an "
                         "updated array.")
    util.check_arraylike("put_along_axis", arr, indices, values)
    arr, indices, values = util.asarray(arr), util.asarray(indices), util.asarray(values)
    original_shape = get_aval(arr).shape
    if axis is None:
        arr = _ravel(arr)
        axis = 0
    shape = get_aval(arr).shape
    idx_shape = get_aval(indices).shape
    if len(shape) != len(idx_shape):
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. "
                         f"Got arr.ndim={len(shape)} and indices.ndim={len(idx_shape)}.")
    values = util.broadcast_to(values, idx_shape)
    axis = util.canonical_axis(axis, len(shape), "put_along_axis")
    idx = tuple(indices if d == axis else lax_shape.broadcasted_iota(
        np.int32, tuple(n if k == d else 1 for k in range(len(shape))), d)
        for d, n in enumerate(shape))
    out = arr.at[idx].set(values, mode=mode)
    return lax_shape.reshape(out, original_shape)


def place(arr, mask, vals, *, inplace=True):
    """A copy of `arr` whose elements where `mask` holds take the successive elements of
    `vals` (repeated as needed); `inplace=False` is required, as for `put`."""
    util.check_arraylike("place", arr, mask, vals)
    data, mask, vals = util.asarray(arr), util.asarray(mask), _ravel(util.asarray(vals))
    if inplace:
        raise ValueError("didax.numpy.place cannot modify arrays in-place, because arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    aval = get_aval(data)
    if aval.size != get_aval(mask).size:
        raise ValueError("place: arr and mask must be the same size")
    if not get_aval(vals).size:
        raise ValueError("Cannot place values from an empty array")
    if not aval.size:
        return data
    n = get_aval(mask).size
    (indices,) = nonzero(_ravel(mask), size=n, fill_value=n)
    vals = _tile_to_size(vals, n)
    flat = _ravel(data).at[indices].set(vals, mode="drop")
    return lax_shape.reshape(flat, aval.shape)


__all__ = ["take", "take_along_axis", "put", "put_along_axis", "place"]
