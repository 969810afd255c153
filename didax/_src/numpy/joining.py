"""Joining and splitting: concatenate, stack (and its h/v/d/column forms), block, append,
unstack and the split family. Static shapes fix every piece, so each is one lax concatenate
or a set of slices. Joining concrete Arrays follows a plan (see _plans.py): one
np.concatenate.
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.core import ArrayBase
from didax._src.errors import user_error
from didax._src.lax import elementwise as lax_ew
from didax._src.lax import shape as lax_shape
from didax._src.numpy._helpers import (
    _asarray,
    _aval,
    _concrete_int,
    _range,
    _slice_axis,
    _user_dtype,
)
from didax._src.numpy._plans import EVAL as _EVAL
from didax._src.numpy._plans import Array as _Array
from didax._src.numpy._plans import ctx as _ctx
from didax._src.numpy._plans import from_numpy as _from_numpy
from didax._src.numpy._plans import plans as _plans
from didax._src.numpy._plans import remember as _remember
from didax._src.numpy.shape_ops import (
    _integer_axis,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    ndim,
    ravel,
)
from didax._src.numpy.util import asarray, canonical_axis, check_arraylike, promote_dtypes

__all__ = [
    "concatenate", "concat", "stack", "unstack", "vstack", "hstack", "dstack", "column_stack",
    "block", "append", "split", "array_split", "vsplit", "hsplit", "dsplit",
]


# --------------------------------------------------------------------------------------
# Joining


def _as_array_list(name, arrays):
    """A sequence of arrays, or the slices along axis 0 of one array, as a list."""
    if isinstance(arrays, (np.ndarray, ArrayBase)):
        arrays = asarray(arrays)
        if _aval(arrays).ndim == 0:
            raise ValueError(f"{name}: need a sequence of arrays or an array of rank >= 1, "
                             "got a scalar")
        return list(unstack(arrays))
    arrays = list(arrays)
    for a in arrays:
        if not isinstance(a, ArrayBase):
            break
    else:  # (arrays and tracers already: nothing to check or convert)
        return arrays
    check_arraylike(name, *arrays)
    return [asarray(a) for a in arrays]


def _eager_key(name, axis, arrays):
    """The plan key of joining `arrays` along `axis` if it is a list or tuple of concrete
    Arrays and this call evaluates now, else None."""
    if (type(arrays) is list or type(arrays) is tuple) and _ctx.interp is _EVAL:
        key = [name, axis]
        for x in arrays:
            if type(x) is not _Array:
                return None
            key.append(x.aval)
        return tuple(key)
    return None


def _promote(arrs):
    """The operands at their common dtype, as JAX joins them: `promote_dtypes`, except that
    operands all weakly typed take the bound of their own dtypes, weakly (two weak float16
    arrays stay float16, where `result_type` gives a weak type its kind's default dtype)."""
    if len(arrs) > 1 and all(_aval(a).weak_type for a in arrs):
        to = dtypes.result_type(*[_aval(a).dtype for a in arrs])
        return [lax_ew.convert_element_type(a, to, True) for a in arrs]
    return promote_dtypes(*arrs)


def _unconverted(arrs, promoted) -> bool:
    """Whether promotion left every operand as it was (a plan holds no conversions)."""
    return all(p is a for p, a in zip(promoted, arrs))


def concatenate(arrays, axis=0, dtype=None):
    """Joins arrays along an existing axis (`axis=None` flattens them first)."""
    key = _eager_key("concatenate", axis, arrays) if dtype is None and type(axis) is int else None
    if key is not None:
        plan = _plans.get(key)
        if plan is not None:  # (result type, canonical axis); no type: one operand
            if plan[0] is None:
                return arrays[0]
            return _from_numpy(np.concatenate([x._value for x in arrays], plan[1]), plan[0])
    arrs = _as_array_list("concatenate", arrays)
    if not arrs:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrs], 0, dtype)
    if _aval(arrs[0]).ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    nd = _aval(arrs[0]).ndim
    axis = canonical_axis(_integer_axis(axis, "concatenate"), nd, "concatenate")
    if dtype is None:
        promoted = _promote(arrs)
        if not _unconverted(arrs, promoted):
            key = None
        arrs = promoted
    else:
        arrs = [_asarray(a, _user_dtype(dtype, "concatenate")) for a in arrs]
    shapes = [_aval(a).shape for a in arrs]
    if any(len(s) != nd for s in shapes):
        raise user_error(TypeError, (
            "Cannot concatenate arrays with different numbers of dimensions: got "
            f"{', '.join(map(str, shapes))}."))
    if any(s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:] for s in shapes):
        raise user_error(TypeError, (
            "Cannot concatenate arrays with shapes that differ in dimensions other "
            f"than the one being concatenated: concatenating along dimension {axis} "
            f"for shapes {', '.join(map(str, shapes))}."))
    out = lax_shape.concatenate(arrs, axis)
    if key is not None and type(out) is _Array:
        _remember(key, (None, None) if len(arrs) == 1 else (out.aval, axis))
    return out


def concat(arrays, /, *, axis=0):
    check_arraylike("concat", *arrays)
    return concatenate(arrays, axis=axis)


def stack(arrays, axis=0, out=None, dtype=None):
    """Joins arrays along a new axis."""
    key = (_eager_key("stack", axis, arrays) if out is None and dtype is None
           and type(axis) is int else None)
    if key is not None:
        plan = _plans.get(key)
        if plan is not None:  # (result type, canonical axis, each operand's new shape)
            result, axis, expanded = plan
            values = [x._value.reshape(expanded) for x in arrays]  # (expand_dims' impl)
            if len(values) == 1:
                return _from_numpy(values[0], result)
            return _from_numpy(np.concatenate(values, axis), result)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    arrs = _as_array_list("stack", arrays)
    if arrs is None:
        raise ValueError("Need at least one array to stack.")
    shapes = {_aval(a).shape for a in arrs}
    if len(shapes) != 1:
        raise user_error(ValueError, (
            f"All input arrays must have the same shape, got {sorted(shapes)}.\nWhat to do: "
            "stack arrays of one shape (pad or broadcast them first), or use "
            "jnp.concatenate to join along an existing axis."))
    nd = _aval(arrs[0]).ndim + 1
    axis = canonical_axis(_integer_axis(axis, "stack"), nd, "stack")
    if dtype is None:
        promoted = _promote(arrs)
        if not _unconverted(arrs, promoted):
            key = None
        arrs = promoted
    else:
        arrs = [_asarray(a, _user_dtype(dtype, "stack")) for a in arrs]
    result = lax_shape.concatenate([lax_shape.expand_dims(a, (axis,)) for a in arrs], axis)
    if key is not None and type(result) is _Array:
        expanded = list(_aval(arrs[0]).shape)
        expanded.insert(axis, 1)
        _remember(key, (result.aval, axis, tuple(expanded)))
    return result


def unstack(x, /, *, axis=0):
    check_arraylike("unstack", x)
    x = asarray(x)
    if _aval(x).ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    axis = canonical_axis(axis, _aval(x).ndim, "unstack")
    return tuple(lax_shape.index_in_dim(x, i, axis, False) for i in _range(_aval(x).shape[axis]))


def _seq_apply(fn, arrs):
    out = fn(*arrs)
    return out if isinstance(out, list) else [out]


def _joined(name, atleast, axis_of, general, tup, dtype):
    """vstack, hstack or dstack (`general`): each operand made `atleast` (atleast_*d),
    joined along `axis_of(the first one's rank then)`; on concrete Arrays, a plan (see
    _plans.py) of atleast_*d's reshapes and the concatenate, when no operand changes dtype."""
    key = _eager_key(name, None, tup) if dtype is None else None
    if key is not None:
        plan = _plans.get(key)
        if plan is not None:  # (result type, axis, each operand's new shape or None)
            out, axis, shapes = plan
            values = [x._value if s is None else x._value.reshape(s)
                      for x, s in zip(tup, shapes)]
            if len(values) == 1:
                return tup[0] if shapes[0] is None else _from_numpy(values[0], out)
            return _from_numpy(np.concatenate(values, axis), out)
    result = general(tup, dtype)
    if key is not None and type(result) is _Array:
        out, avals = result.aval, key[2:]
        if all(a.dtype == out.dtype and a.weak_type == out.weak_type for a in avals):
            reshaped = [atleast(x).aval for x in tup]  # (plans of their own: lookups)
            shapes = tuple(None if r is a else r.shape for r, a in zip(reshaped, avals))
            _remember(key, (out, axis_of(len(reshaped[0].shape)), shapes))
    return result


def _vstack(tup, dtype):
    return concatenate(_seq_apply(atleast_2d, _as_array_list("vstack", tup)), 0, dtype)


def _hstack(tup, dtype):
    arrs = _seq_apply(atleast_1d, _as_array_list("hstack", tup))
    return concatenate(arrs, _hstack_axis(_aval(arrs[0]).ndim), dtype)


def _hstack_axis(ndim):
    return 0 if ndim == 1 else 1


def _dstack(tup, dtype):
    return concatenate(_seq_apply(atleast_3d, _as_array_list("dstack", tup)), 2, dtype)


def vstack(tup, dtype=None):
    return _joined("vstack", atleast_2d, lambda ndim: 0, _vstack, tup, dtype)


def hstack(tup, dtype=None):
    return _joined("hstack", atleast_1d, _hstack_axis, _hstack, tup, dtype)


def dstack(tup, dtype=None):
    return _joined("dstack", atleast_3d, lambda ndim: 2, _dstack, tup, dtype)


def column_stack(tup):
    arrs = _as_array_list("column_stack", tup)
    arrs = [lax_shape.transpose(atleast_2d(a), (1, 0)) if _aval(a).ndim < 2 else a
            for a in arrs]
    return concatenate(arrs, 1)


def _block(xs):
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if not xs:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts, depths = zip(*[_block(x) for x in xs])
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = max(depths[0], max(_aval(p).ndim for p in parts))
        parts = [lax_shape.broadcast_to_rank(p, rank) for p in parts]
        return concatenate(parts, -depths[0]), depths[0] + 1
    check_arraylike("block", xs)
    return asarray(xs), 1


def block(arrays):
    """Assembles an array from nested lists of blocks (the innermost lists join last axes)."""
    return _block(arrays)[0]


def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# --------------------------------------------------------------------------------------
# Splitting


def _split(name, ary, indices_or_sections, axis):
    check_arraylike(name, ary)
    ary = asarray(ary)
    axis = canonical_axis(_concrete_int(axis, f"the `axis` argument of jnp.{name}"),
                          _aval(ary).ndim, name)
    n = _aval(ary).shape[axis]
    ios = indices_or_sections
    if isinstance(ios, (tuple, list)) or (isinstance(ios, (np.ndarray, ArrayBase))
                                          and np.ndim(ios) > 0):
        what = f"the indices_or_sections argument of jnp.{name}"
        bounds = [0] + [_concrete_int(i, what) for i in ios] + [n]
        return [_slice_axis(ary, lo, hi, axis) for lo, hi in zip(bounds[:-1], bounds[1:])]
    sections = _concrete_int(ios, f"the indices_or_sections argument of jnp.{name}")
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    part, r = divmod(n, sections)
    if r and name != "array_split":
        raise user_error(ValueError, (
            f"array split does not result in an equal division: rest is {r} (jnp.{name} of "
            f"{n} elements along axis {axis} into {sections} parts).\nWhat to do: use "
            "jnp.array_split for parts of unequal size, or pass the split indices."))
    sizes = [part + 1] * r + [part] * (sections - r)
    starts = np.cumsum([0] + sizes)
    return [lax_shape.slice_in_dim(ary, int(s), int(s + z), 1, axis)
            for s, z in zip(starts, sizes)]


def split(ary, indices_or_sections, axis=0):
    return _split("split", ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis=0):
    return _split("array_split", ary, indices_or_sections, axis)


def vsplit(ary, indices_or_sections):
    if ndim(asarray(ary)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", ary, indices_or_sections, 0)


def hsplit(ary, indices_or_sections):
    a = asarray(ary)
    if ndim(a) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", a, indices_or_sections, 0 if ndim(a) == 1 else 1)


def dsplit(ary, indices_or_sections):
    if ndim(asarray(ary)) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", ary, indices_or_sections, 2)
