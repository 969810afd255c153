"""Indexing of concrete arrays outside any transformation, done by NumPy's own indexing.

With nothing traced, `x[idx]`, `x.at[idx].<op>(y)` and `jnp.take` need no gather or scatter
primitive: NumPy's indexing gives the same numbers (a view for basic indices, one copy for
integer arrays, one copy and one in-place set or `ufunc.at` for an update), at a fraction of
the cost of parsing the index in Python and binding primitives. NumPy parses the index (in
C); this module only checks that every entry means to NumPy what it means to JAX (ints,
slices, None, Ellipsis, integer arrays) and that the update keeps the operand's dtype.

Each function returns None ("declines") when it is unsure: booleans, traced or unusual
entries, values needing a dtype promotion, anything NumPy rejects. The general path of
`indexing.py` then runs, and raises JAX's errors. JAX's rules for indices out of bounds are
kept: negative indices wrap once; then a gather clamps, an update drops and `take` fills.
"""
from __future__ import annotations

import numpy as np

from didax._src import caches, core, dtypes
from didax._src.core import Array
from didax._src.lax.indexing import default_fill_value

_ctx = core._ctx
_eval = core.eval_interpreter
_ndarray = np.ndarray
_integer = np.integer
_new_object = object.__new__
# The type codes of the integer index arrays taken: booleans are masks, and NumPy would cast
# uint64 values past int64 to negative indices (the general path runs for both).
_INDEX_CHARS = "".join({np.dtype(t).char for t in (
    np.int8, np.int16, np.intc, np.int_, np.longlong, np.uint8, np.uint16, np.uintc)})
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1  # the general path's index dtype


class Op:
    """How an update combines with the operand: `ufunc_at` None sets (the last of repeated
    indices wins); `negate`, `y` is negated first; `arithmetic`, booleans are refused (the
    scatter primitive's type rule raises: the general path runs)."""

    __slots__ = ("name", "ufunc_at", "negate", "arithmetic")

    def __init__(self, name, ufunc_at, negate=False, arithmetic=False):
        self.name, self.ufunc_at = name, ufunc_at
        self.negate, self.arithmetic = negate, arithmetic


SET = Op("set", None)
ADD = Op("add", np.add.at, arithmetic=True)
SUBTRACT = Op("subtract", np.add.at, negate=True, arithmetic=True)  # (as the general path:
# x + -y)
MULTIPLY = Op("multiply", np.multiply.at, arithmetic=True)
MIN = Op("min", np.minimum.at)
MAX = Op("max", np.maximum.at)


_bounds = caches.memo("numpy.eager_indexing.integer_bounds", limit=64)  # dtype -> (min, max)


def _integer_bounds(dtype) -> tuple[int, int]:
    """(min, max) of an integer dtype (`iinfo` costs a microsecond)."""
    b = _bounds.get(dtype)
    if b is None:
        info = dtypes.iinfo(dtype)
        b = caches.add(_bounds, dtype, (int(info.min), int(info.max)))
    return b


# The result type of indexing an operand of type `aval` to `shape`: the operand's dtype and
# weak type, as gathers and slices keep them.
_result_avals = caches.memo("numpy.eager_indexing.result_avals", limit=4096)


def _result(value, aval: core.ShapedArray, x_aval: core.ShapedArray | None = None) -> Array:
    """`value` as an Array of `aval`, or of `x_aval`'s dtype and weak type at its shape."""
    if aval is None:
        key = (x_aval, value.shape)
        aval = _result_avals.get(key)
        if aval is None:
            aval = caches.add(_result_avals, key, core.ShapedArray(
                value.shape, x_aval.dtype, x_aval.weak_type))
    a = _new_object(Array)
    a._value = value
    a.aval = aval
    return a


# --------------------------------------------------------------------------------------
# The index as NumPy takes it


def _numpy_entry(e):
    """An index entry NumPy reads as JAX does (itself, or the NumPy array of an Array or a
    list of ints), or None for anything else (booleans, floats, tracers...)."""
    t = type(e)
    if t is Array:
        v = e._value
        return v if v.dtype.char in _INDEX_CHARS else None
    if t is _ndarray:
        return e if e.dtype.char in _INDEX_CHARS else None
    if t is list:  # (inside a tuple only: a bare list is a non-tuple sequence, rejected)
        try:
            v = np.asarray(e)
        except Exception:  # noqa: BLE001 - ragged, huge ints...: the general path says
            return None
        return v if v.dtype.char in _INDEX_CHARS else None
    if isinstance(e, _integer):  # (np.bool_ is not an np.integer)
        return e
    return None


def numpy_index(idx):
    """`idx` as NumPy takes it, or None if some entry may mean something else to NumPy.

    Slices pass as they are: NumPy reads their bounds with `__index__`, as JAX does, and
    rejects what JAX rejects. Ints, slices, None and Ellipsis need no conversion, so a
    tuple of those is returned as it is."""
    t = type(idx)
    if t is int or t is slice or idx is Ellipsis:  # (bool is not int)
        return idx
    if idx is None:
        return (None,)  # (None itself says "declined")
    if t is tuple:
        converted = None
        for k, e in enumerate(idx):
            t = type(e)
            if t is int or t is slice or e is None or e is Ellipsis:
                continue
            v = _numpy_entry(e)
            if v is None:
                return None
            if v is not e:
                if converted is None:
                    converted = list(idx)
                converted[k] = v
        return idx if converted is None else tuple(converted)
    if t is list:
        return None  # a non-tuple sequence: JAX refuses it, NumPy would not
    return _numpy_entry(idx)


# The shape of x[idx] for an operand of `shape`, by the structure of the index (the kinds of
# its entries, its slices, its arrays' shapes: not its values), found by NumPy on a miss.
_target_shapes = caches.memo("numpy.eager_indexing.target_shapes", limit=2048)
_INT = -1  # an int entry in a structure (shapes hold no negative numbers)


def _structure(np_idx) -> tuple:
    entries = np_idx if type(np_idx) is tuple else (np_idx,)
    key = []
    for e in entries:
        t = type(e)
        if t is _ndarray:
            key.append(e.shape)
        elif t is slice:
            key.append((e.start, e.stop, e.step, "slice"))
        elif e is None or e is Ellipsis:
            key.append(e)
        else:  # (an int or NumPy integer: numpy_index admits nothing else)
            key.append(_INT)
    return tuple(key)


def _target_shape(np_idx, shape):
    """The shape of x[np_idx] for `x` of `shape`, or None if NumPy refuses the index."""
    key = (shape, _structure(np_idx))
    try:
        target = _target_shapes.get(key)
    except TypeError:  # (slice bounds that are not hashable, e.g. arrays)
        return None
    if target is None:
        entries = [(e if e is None or e is Ellipsis or type(e) is slice else
                    np.zeros(k, np.intp) if type(k) is tuple else 0)
                   for e, k in zip(np_idx if type(np_idx) is tuple else (np_idx,), key[1])]
        dummy = np.broadcast_to(np.zeros((), np.int8), shape)  # (NumPy's own rules)
        try:
            target = dummy[tuple(entries)].shape
        except Exception:  # noqa: BLE001 - the general path raises JAX's error
            return None
        target = caches.add(_target_shapes, key, target)
    return target


# --------------------------------------------------------------------------------------
# Indices out of bounds (the uncommon path: NumPy raised IndexError)


def _canonical_index(e):
    """An int or integer-array entry as the general path converts it (to its canonical
    dtype: an int64 array wraps to int32 without x64), or None where that path would raise
    or wrap again (values past int32, its index type)."""
    if type(e) is int:
        return np.asarray(e, np.int64) if _INT32_MIN <= e <= _INT32_MAX else None
    v = _numpy_entry(e)
    if v is None:
        return None
    v = np.asarray(v)
    canonical = dtypes.canonicalize_dtype(v.dtype)
    if canonical != v.dtype:
        v = v.astype(canonical)
    if v.size and (v.min() < _INT32_MIN or v.max() > _INT32_MAX):
        return None
    return v.astype(np.int64)


def _wrapped_once(idx, shape):
    """The entries of `idx`, each int or integer array wrapped once (int64), and the axis
    each of those indexes, by position; None if NumPy and JAX might differ on them."""
    entries = list(idx) if type(idx) is tuple else [idx]
    consumed = sum(e is not None and e is not Ellipsis for e in entries)
    if sum(e is Ellipsis for e in entries) > 1 or consumed > len(shape):
        return None
    if max(shape, default=0) > _INT32_MAX:
        return None
    axes, axis = {}, 0
    for k, e in enumerate(entries):
        if e is None:
            continue
        if e is Ellipsis:
            axis += len(shape) - consumed
            continue
        n = shape[axis]
        if type(e) is not slice:
            v = _canonical_index(e)
            if v is None or n == 0:
                return None
            entries[k] = np.where(v < 0, v + n, v)
            axes[k] = axis
        axis += 1
    return entries, axes


def _clamped(value, idx):
    """`value[idx]` with out-of-bounds indices clamped (JAX's gathers), or None."""
    wrapped = _wrapped_once(idx, value.shape)
    if wrapped is None:
        return None
    entries, axes = wrapped
    for k, axis in axes.items():
        entries[k] = np.clip(entries[k], 0, value.shape[axis] - 1)
    try:
        return value[tuple(entries)]
    except Exception:  # noqa: BLE001 - e.g. arrays that do not broadcast: the general path
        return None


def _dropped(value, idx, y, op: Op):
    """A copy of `value` updated at `idx` by `op` with `y`, updates out of bounds dropped
    (JAX's scatters), or None.

    Each indexed axis gets one more slot where the dropped indices point: updates land
    there in NumPy's order with the others, and the slots are cut off after."""
    wrapped = _wrapped_once(idx, value.shape)
    if wrapped is None:
        return None
    entries, axes = wrapped
    padded = list(value.shape)
    for k, axis in axes.items():
        n = value.shape[axis]
        e = entries[k]
        entries[k] = np.where((e < 0) | (e >= n), n, e)
        padded[axis] = n + 1
    big = np.empty(padded, value.dtype)
    inside = tuple(slice(0, n) for n in value.shape)
    big[inside] = value
    try:
        if op.ufunc_at is None:
            big[tuple(entries)] = y
        else:
            op.ufunc_at(big, tuple(entries), y)
    except Exception:  # noqa: BLE001 - e.g. values that do not broadcast: the general path
        return None
    return np.ascontiguousarray(big[inside])


# --------------------------------------------------------------------------------------
# x[idx], x.at[idx].<op>(y), take


def getitem(x, idx):
    """`x[idx]` by NumPy (a view of `x`'s buffer, or a copy for integer arrays), or None
    under a transformation or when unsure."""
    if _ctx.interp is not _eval or type(x) is not Array:
        return None
    t = type(idx)
    if t is int or t is slice:
        np_idx = idx
    elif t is Array:
        np_idx = idx._value
        if np_idx.dtype.char not in _INDEX_CHARS:
            return None
    else:
        np_idx = numpy_index(idx)
        if np_idx is None:
            return None
    value = x._value
    try:
        # (`take` along the first axis is an integer array's x[idx], only faster)
        out = value.take(np_idx, 0) if t is Array and value.ndim else value[np_idx]
    except IndexError:  # out of bounds (or malformed: then the general path raises)
        out = _clamped(value, idx)
        if out is None:
            return None
    except Exception:  # noqa: BLE001 - the general path raises JAX's error
        return None
    if type(out) is not _ndarray:  # (a scalar, for an integer per axis)
        out = np.asarray(out)
    return _result(out, None, x.aval)


def _update_values(y, dtype):
    """`y` as a NumPy value of `dtype` where the general path gives the same (it promotes
    `y` with the operand: the update keeps the operand's dtype only when nothing widens),
    else None."""
    t = type(y)
    if t is Array:
        v = y._value
        return v if v.dtype == dtype else None
    if t is _ndarray:
        if dtypes.canonicalize_dtype(y.dtype) != dtype:
            return None
        return y if y.dtype == dtype else y.astype(dtype)
    kind = dtypes.kind(dtype)
    if t is float:
        ok = kind in "fc"
    elif t is int:
        if kind in "iu":
            lo, hi = _integer_bounds(dtype)
            ok = lo <= y <= hi
        else:
            ok = kind in "fc"
    elif t is bool:
        ok = True
    elif t is complex:
        ok = kind == "c"
    elif isinstance(y, np.generic):
        ok = dtypes.canonicalize_dtype(y.dtype) == dtype
    else:
        return None
    if not ok:
        return None
    try:
        return np.asarray(y, dtype)
    except Exception:  # noqa: BLE001 - e.g. an int past float16's range
        return None


def update(x, idx, y, op: Op):
    """`x.at[idx].<op>(y)` by NumPy: one copy of `x` and one set or `ufunc.at`, duplicate
    indices applying in order as the scatter primitives do; or None when unsure."""
    if _ctx.interp is not _eval or type(x) is not Array:
        return None
    value = x._value
    aval = x.aval
    if op.arithmetic and aval.dtype == np.bool_:
        return None
    if op.negate and type(y) is not Array and type(y) is not _ndarray:
        return None  # (the general path negates a scalar `y` before promoting it)
    y = _update_values(y, aval.dtype)
    if y is None:
        return None
    if op.negate:
        y = np.negative(y)
    np_idx = numpy_index(idx)
    if np_idx is None:
        return None
    target = _target_shape(np_idx, value.shape)
    if target is None:
        return None
    if y.shape != target and (y.ndim or op.ufunc_at is not None):
        # Broadcast here, as JAX does: NumPy's own would drop leading unit axes of `y`
        # (JAX refuses them), and `ufunc.at` reads wrong values when it broadcasts `y`
        # against a multidimensional index (NumPy 2.4). (Setting a scalar is safe.)
        try:
            y = np.broadcast_to(y, target)
        except ValueError:
            return None
    out = value.copy()
    try:
        if op.ufunc_at is None:
            out[np_idx] = y
        else:
            op.ufunc_at(out, np_idx, y)
    except IndexError:  # out of bounds (or malformed: then the general path raises)
        out = _dropped(value, idx, y, op)
        if out is None:
            return None
    except Exception:  # noqa: BLE001 - the general path raises JAX's error
        return None
    return _result(out, aval)


def take(a, indices, axis):
    """`jnp.take(a, indices, axis)` in its default mode ("fill") by NumPy, or None."""
    if _ctx.interp is not _eval or type(a) is not Array:
        return None
    t = type(indices)
    if t is Array:
        iv = indices._value
    elif t is _ndarray:
        iv = indices
    else:
        return None
    if iv.dtype.char not in _INDEX_CHARS:
        return None
    value = a._value
    if axis is None:
        value = value.reshape(-1)
        axis = 0
    elif type(axis) is not int or not -value.ndim <= axis < value.ndim:
        return None
    n = value.shape[axis]
    index_dtype = dtypes.canonicalize_dtype(iv.dtype)
    if n == 0 or n > _integer_bounds(index_dtype)[1]:
        return None  # (the general path wraps negative indices by adding n in their dtype)
    try:
        out = value.take(iv, axis)
    except IndexError:
        out = _filled_take(value, iv.astype(index_dtype), axis % value.ndim)
    except Exception:  # noqa: BLE001 - the general path raises JAX's error
        return None
    if type(out) is not _ndarray:
        out = np.asarray(out)
    return _result(out, None, a.aval)


def _filled_take(value, iv, axis):
    """`value.take(iv, axis)` reading the gather's default fill value where an index is out
    of bounds once negative indices are wrapped."""
    n = value.shape[axis]
    i = iv.astype(np.int64)
    i = np.where(i < 0, i + n, i)
    valid = (i >= 0) & (i < n)
    out = value.take(np.where(valid, i, 0), axis)
    mask = valid.reshape((1,) * axis + valid.shape + (1,) * (value.ndim - axis - 1))
    fill = np.asarray(default_fill_value(value.dtype)).astype(value.dtype)
    return np.where(mask, out, fill)
