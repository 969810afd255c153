"""Private helpers shared by the didax.numpy modules built from lax compositions.

Small lax building blocks that many jnp functions need (a filled array, an iota, a 1-D
gather or scatter, a slice along one axis) and the canonicalisation of static arguments
(shapes, axes, integers that must be concrete). NumPy only ever computes static data here.
"""
from __future__ import annotations

import builtins
import operator
import types

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ArrayBase, get_aval
from didax._src.errors import user_error
from didax._src.lax import elementwise as lax
from didax._src.lax import indexing as lax_idx
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy.util import asarray, concrete_or_error
from didax._src.typecheck import static_shape

__all__ = [
    "_range", "_slice", "_aval", "_user_dtype", "_default_int", "_TO_INEXACT", "_to_inexact",
    "_concrete_int", "_canonical_shape", "_axis_tuple", "_asarray", "_filled", "_zeros_like",
    "_const", "_iota", "_int_sum", "_any", "_all", "_take", "_scatter1d", "_slice_axis",
]


# Builtins under names that parameters called `range` or `slice` cannot shadow.
_range = builtins.range
_slice = builtins.slice


def _aval(x):
    return get_aval(x)


def _user_dtype(dtype, fun_name):
    return dtypes.check_and_canonicalize_user_dtype(dtype, fun_name)


def _default_int():
    return dtypes.default_int_dtype()


_TO_INEXACT = {np.dtype(k): np.dtype(v) for k, v in [
    ("bool", "float32"), ("uint8", "float32"), ("int8", "float32"), ("uint16", "float32"),
    ("int16", "float32"), ("uint32", "float32"), ("int32", "float32"),
    ("uint64", "float64"), ("int64", "float64")]}


def _to_inexact(dtype):
    """JAX's `to_inexact_dtype`: integers and bools map to a float of matching width."""
    dtype = np.dtype(dtype)
    return dtypes.canonicalize_dtype(_TO_INEXACT.get(dtype, dtype))


def _concrete_int(x, what):
    """`operator.index(x)` for a size or count that must be known while tracing."""
    if isinstance(x, ArrayBase):
        x = concrete_or_error(x, what, topic="shape")
    return operator.index(x)


def _canonical_shape(shape, fun_name="shape", prefix="jnp."):
    if isinstance(shape, types.GeneratorType):
        raise TypeError("expected sequence object with len >= 0 or a single integer")
    try:
        out = static_shape(prefix + fun_name, shape)
    except TypeError as e:
        if isinstance(e, core.ConcretizationTypeError):
            raise
        raise user_error(TypeError, f"{prefix}{fun_name}: shapes must be sequences of "
                         f"integers (or one integer), got {shape!r}.") from None
    if any(d < 0 for d in out):
        raise user_error(ValueError, f"{prefix}{fun_name}: negative dimensions are not "
                         f"allowed, got {out}")
    return out


def _axis_tuple(axis):
    if isinstance(axis, (tuple, list, range)):
        return tuple(operator.index(a) for a in axis)
    return (operator.index(axis),)


def _asarray(x, dtype=None):
    """`asarray(x, dtype)`, converting afterwards so that every dtype spelling works."""
    x = asarray(x)
    return x if dtype is None else lax.convert_element_type(x, dtypes.canonicalize_dtype(dtype))


def _filled(shape, value, dtype, weak=False):
    """An array of `shape` whose every element is the scalar `value` (possibly traced)."""
    value = lax.convert_element_type(value, dtype, weak)
    return lax_shape.broadcast_in_dim(value, tuple(shape), ())


def _zeros_like(x, shape=None):
    """Zeros with `x`'s dtype and weak type."""
    aval = _aval(x)
    return _filled(aval.shape if shape is None else shape, 0, aval.dtype, aval.weak_type)


def _const(x, value):
    return np.asarray(value, _aval(x).dtype)


def _iota(dtype, shape, dimension=0):
    return lax_shape.broadcasted_iota(dtype, shape, dimension)


def _int_sum(mask, axes=None):
    """Number of True entries of a bool array (over `axes`), in the default int dtype."""
    axes = tuple(_range(_aval(mask).ndim)) if axes is None else axes
    return lax_red.reduce_sum(lax.convert_element_type(mask, _default_int()), axes)


def _any(x, axes=None):
    axes = tuple(_range(_aval(x).ndim)) if axes is None else axes
    return lax_red.reduce_or(ufuncs._to_bool(x), axes)


def _all(x, axes=None):
    axes = tuple(_range(_aval(x).ndim)) if axes is None else axes
    return lax_red.reduce_and(ufuncs._to_bool(x), axes)


def _take(arr, idx, axis=0, mode="clip", fill_value=None):
    """`arr` indexed along `axis` by the integer array `idx` (a lax.gather)."""
    aval = _aval(arr)
    idx = asarray(idx)
    ib = _aval(idx).ndim
    if aval.shape[axis] == 0:  # nothing to read: the result holds no data from `arr`
        shape = aval.shape[:axis] + _aval(idx).shape + aval.shape[axis + 1:]
        return _filled(shape, 0 if fill_value is None else fill_value, aval.dtype,
                       aval.weak_type)
    offset_dims = tuple(_range(axis)) + tuple(_range(axis + ib, aval.ndim - 1 + ib))
    dnums = lax_idx.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=(axis,),
                                           start_index_map=(axis,))
    slice_sizes = aval.shape[:axis] + (1,) + aval.shape[axis + 1:]
    return lax_idx.gather(arr, lax_shape.expand_dims(idx, (ib,)), dnums, slice_sizes, mode=mode,
                          fill_value=fill_value)


def _scatter1d(fn, operand, idx, updates, mode="drop"):
    """`fn` (a lax scatter) of `updates` into the 1-D `operand` at the integer array `idx`."""
    idx = asarray(idx)
    dnums = lax_idx.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))
    return fn(operand, lax_shape.expand_dims(idx, (_aval(idx).ndim,)), updates, dnums, mode=mode)


def _slice_axis(x, start, stop, axis, step=1):
    """x[start:stop:step] along `axis`, with Python's slice semantics."""
    start, stop, step = _slice(start, stop, step).indices(_aval(x).shape[axis])
    stop = max(stop, start)
    return lax_shape.slice_in_dim(x, start, stop, step, axis)
