"""NumPy's array creation, shape manipulation, sorting, searching and set functions.

Every function is a composition of lax operations, so it runs on tracers (jvp,
make_jaxpr) exactly as on concrete arrays. NumPy computes only static data: shapes,
axes, index patterns, and the values JAX requires to be concrete (for instance the
output size of `nonzero` or `unique`, unless a static `size=` is given).
"""
from __future__ import annotations

import builtins
import math
import operator
import types
from typing import NamedTuple

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ArrayBase, get_aval
from didax._src.lax import elementwise as lax
from didax._src.lax import indexing as lax_idx
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy.util import (
    array, asarray, broadcast_arrays, broadcast_to, canonical_axis, check_arraylike,
    concrete_or_error, promote_dtypes, promote_dtypes_inexact,
)

_range = builtins.range
_slice = builtins.slice

# --------------------------------------------------------------------------------------
# Helpers


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
    """`operator.index(x)` for a value that must be known while tracing."""
    if isinstance(x, ArrayBase):
        x = concrete_or_error(x, what)
    return operator.index(x)


def _canonical_shape(shape, fun_name="shape"):
    if isinstance(shape, types.GeneratorType):
        raise TypeError("expected sequence object with len >= 0 or a single integer")
    if not isinstance(shape, (tuple, list)) and np.ndim(shape) == 0:
        shape = (shape,)
    try:
        out = tuple(_concrete_int(d, f"the {fun_name} argument") for d in shape)
    except TypeError as e:
        if isinstance(e, core.ConcretizationTypeError):
            raise
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{fun_name}: negative dimensions are not allowed, got {out}")
    return out


def _axis_tuple(axis):
    if isinstance(axis, (tuple, list)):
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


# --------------------------------------------------------------------------------------
# Array creation


def _check_forgot_shape_tuple(name, shape, dtype):
    if isinstance(dtype, int) and isinstance(shape, int):
        raise TypeError(f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally "
                        f"write `jax.numpy.{name}({shape}, {dtype})` when you meant "
                        f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple "
                        "argument for the shape?")


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (float by default)."""
    _check_forgot_shape_tuple("zeros", shape, dtype)
    dtype = _user_dtype(float if dtype is None else dtype, "zeros")
    return _filled(_canonical_shape(shape, "zeros"), 0, dtype)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    _check_forgot_shape_tuple("ones", shape, dtype)
    dtype = _user_dtype(float if dtype is None else dtype, "ones")
    return _filled(_canonical_shape(shape, "ones"), 1, dtype)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """Arrays are immutable, so an "uninitialised" array is simply zeros, as in JAX."""
    _check_forgot_shape_tuple("empty", shape, dtype)
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    check_arraylike("full", fill_value)
    dtype = None if dtype is None else _user_dtype(dtype, "full")
    fill = asarray(fill_value)
    aval = _aval(fill)
    if aval.ndim == 0:
        return _filled(_canonical_shape(shape, "full"), fill, dtype or aval.dtype,
                       dtype is None and aval.weak_type)
    return broadcast_to(_asarray(fill, dtype), shape)


def _like_args(name, a, dtype, shape):
    if not (hasattr(a, "dtype") and hasattr(a, "shape")):
        if hasattr(a, "__jax_array__"):
            a = a.__jax_array__()
        check_arraylike(name, a)
    aval = _aval(a if isinstance(a, ArrayBase) else asarray(a))
    weak = dtype is None and aval.weak_type
    dtype = aval.dtype if dtype is None else _user_dtype(dtype, name)
    shape = aval.shape if shape is None else _canonical_shape(shape, name)
    return dtype, shape, weak


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array shaped like `a` filled with `fill_value`; keeps `a`'s (weak) dtype."""
    check_arraylike("full_like", fill_value)
    dtype, shape, weak = _like_args("full_like", a, dtype, shape)
    if np.ndim(fill_value) == 0:
        return _filled(shape, fill_value, dtype, weak)
    return broadcast_to(_asarray(fill_value, dtype), shape)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    dtype, shape, weak = _like_args("zeros_like", a, dtype, shape)
    return _filled(shape, 0, dtype, weak)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    dtype, shape, weak = _like_args("ones_like", a, dtype, shape)
    return _filled(shape, 1, dtype, weak)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    return zeros_like(prototype, dtype, shape)


def copy(a, order=None):
    """Arrays are immutable, so a copy is the same values (a fresh array for NumPy input)."""
    check_arraylike("copy", a)
    return asarray(a, order=order)


def astype(x, dtype, /, *, copy=False, device=None):
    check_arraylike("astype", x)
    x = asarray(x)
    dtype = dtypes.default_float_dtype() if dtype is None else _user_dtype(dtype, "astype")
    if _aval(x).dtype.kind == "c" and dtype == np.bool_:
        return lax.ne(x, _const(x, 0))
    return lax.convert_element_type(x, dtype)


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in [start, stop); the arguments must be concrete scalars."""
    dtype = None if dtype is None else _user_dtype(dtype, "arange")
    for v in (start, stop, step):
        if v is not None:
            check_arraylike("arange", v)
    start_name = "stop" if stop is None and step is None else "start"
    given = [v for v in (start, stop, step) if v is not None]
    values = []
    for name, v in ((start_name, start), ("stop", stop), ("step", step)):
        if v is not None:
            what = f"the '{name}' argument of jnp.arange (it sets the output size)"
            v = np.asarray(concrete_or_error(v, what))
            if v.ndim != 0:
                raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
            if v.dtype.kind == "c":
                raise ValueError("Passing complex start/stop/step to jnp.arange is no longer "
                                 "supported starting in JAX v0.10.0.")
            v = v.item()
        values.append(v)
    start, stop, step = values
    if dtype is None:
        dtype = dtypes.result_type(*given)
    if stop is None:
        start, stop = 0, start
    if step is not None:
        if step == 0:
            raise ValueError("arange: step must be nonzero")
        work = np.dtype(np.float32) if dtype.kind == "f" and dtype.itemsize < 4 else dtype
        size = max(0, int(np.ceil((stop - start) / step)))
        out = lax.add(lax.convert_element_type(start, work),
                      lax.mul(lax.convert_element_type(step, work), _iota(work, (size,))))
        return lax.convert_element_type(out, dtype)
    if start == 0:
        return _iota(dtype, (max(0, int(np.ceil(stop))),))
    size = max(0, int(np.ceil(stop - start)))
    return lax.add(lax.convert_element_type(start, dtype), _iota(dtype, (size,)))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """`num` evenly spaced samples from start to stop; start and stop may be traced arrays."""
    num = _concrete_int(num, "'num' argument of jnp.linspace")
    axis = _concrete_int(axis, "'axis' argument of jnp.linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    start, stop = asarray(start), asarray(stop)
    if dtype is None:
        dtype = _to_inexact(dtypes.result_type(start, stop))
    else:
        dtype = _user_dtype(dtype, "linspace")
    cdtype = _to_inexact(dtype)
    start = lax.convert_element_type(start, cdtype)
    stop = lax.convert_element_type(stop, cdtype)
    bounds = list(np.broadcast_shapes(_aval(start).shape, _aval(stop).shape))
    bstart, bstop = broadcast_to(start, bounds), broadcast_to(stop, bounds)
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    out_bounds = bounds[:axis] + [1] + bounds[axis:]
    div = num - 1 if endpoint else num
    if num > 1:
        delta = ufuncs.true_divide(ufuncs.subtract(stop, start), _asarray(div, cdtype))
        real = np.finfo(cdtype).dtype
        iota_shape = [1] * len(out_bounds)
        iota_shape[axis] = div
        step = lax.div(lax_shape.reshape(_iota(real, (div,)), iota_shape), np.asarray(div, real))
        step = lax.convert_element_type(step, cdtype)
        one_minus = lax.sub(_const(step, 1), step)
        out = lax.add(lax.mul(lax_shape.reshape(bstart, out_bounds), one_minus),
                      lax.mul(lax_shape.reshape(bstop, out_bounds), step))
        if endpoint:
            out = lax_shape.concatenate([out, lax_shape.expand_dims(bstop, (axis,))], axis)
    elif num == 1:
        delta = _asarray(np.nan if endpoint else ufuncs.subtract(stop, start), cdtype)
        out = lax_shape.reshape(bstart, out_bounds)
    else:
        delta = _filled((), np.nan, cdtype)
        out = _filled(bounds[:axis] + [0] + bounds[axis:], 0, cdtype)
    if np.issubdtype(dtype, np.integer) and not np.issubdtype(_aval(out).dtype, np.integer):
        out = lax.floor(out)
    result = lax.convert_element_type(out, dtype)
    return (result, delta) if retstep else result


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    num = _concrete_int(num, "'num' argument of jnp.logspace")
    axis = _concrete_int(axis, "'axis' argument of jnp.logspace")
    check_arraylike("logspace", start, stop)
    if dtype is None:
        dtype = _to_inexact(dtypes.result_type(start, stop))
    else:
        dtype = _user_dtype(dtype, "logspace")
    cdtype = _to_inexact(dtype)
    start = lax.convert_element_type(asarray(start), cdtype)
    stop = lax.convert_element_type(asarray(stop), cdtype)
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return lax.convert_element_type(ufuncs.power(base, lin), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    num = _concrete_int(num, "'num' argument of jnp.geomspace")
    axis = _concrete_int(axis, "'axis' argument of jnp.geomspace")
    check_arraylike("geomspace", start, stop)
    if dtype is None:
        dtype = _to_inexact(dtypes.result_type(start, stop))
    else:
        dtype = _user_dtype(dtype, "geomspace")
    cdtype = _to_inexact(dtype)
    start = lax.convert_element_type(asarray(start), cdtype)
    stop = lax.convert_element_type(asarray(stop), cdtype)
    sign = ufuncs.sign(start)
    res = ufuncs.multiply(sign, logspace(ufuncs.log10(ufuncs.true_divide(start, sign)),
                                         ufuncs.log10(ufuncs.true_divide(stop, sign)), num,
                                         endpoint=endpoint, base=10.0, dtype=cdtype, axis=0))
    nd = _aval(res).ndim
    axis = canonical_axis(axis, nd, "geomspace")
    if axis != 0:
        res = lax_shape.transpose(res, (*_range(1, axis + 1), 0, *_range(axis + 1, nd)))
    return lax.convert_element_type(res, dtype)


def _shifted_iotas(n, m, k):
    """Row and column indices of an (n, m) grid, the rows shifted by the (maybe traced) k."""
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
        k = int(np.clip(k, np.iinfo(np.int32).min, np.iinfo(np.int32).max))
    offset = asarray(k)
    if not (_aval(offset).shape == () and np.issubdtype(_aval(offset).dtype, np.integer)):
        raise ValueError(f"k must be a scalar integer; got {k}")
    dt = _aval(offset).dtype
    i = lax.add(_iota(dt, (n, m), 0), lax.convert_element_type(offset, dt))
    return i, _iota(dt, (n, m), 1)


def _dims(n, m, fun_name):
    n = _concrete_int(n, f"argument 'N' of jnp.{fun_name}()")
    m = n if m is None else _concrete_int(m, f"argument 'M' of jnp.{fun_name}()")
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n} and {m}")
    return n, m


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """Ones on the k-th diagonal; `k` may be a traced integer."""
    dtype = _user_dtype(float if dtype is None else dtype, "eye")
    n, m = _dims(N, M, "eye")
    i, j = _shifted_iotas(n, m, k)
    return lax.convert_element_type(lax.eq(i, j), dtype)


def identity(n, dtype=None):
    dtype = None if dtype is None else _user_dtype(dtype, "identity")
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal (float32 by default, as in JAX)."""
    dtype = np.dtype(np.float32) if dtype is None else _user_dtype(dtype, "tri")
    n, m = _dims(N, M, "tri")
    i, j = _shifted_iotas(n, m, k)
    return lax.convert_element_type(lax.ge(i, j), dtype)


def _tri_select(name, m, k, lower):
    check_arraylike(name, m)
    m = asarray(m)
    shape = _aval(m).shape
    if len(shape) < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    mask = tri(shape[-2], shape[-1], k=k if lower else k - 1, dtype=bool)
    which = lax_shape.broadcast_in_dim(mask, shape, (len(shape) - 2, len(shape) - 1))
    zero = _zeros_like(m)
    return lax.select_n(which, zero, m) if lower else lax.select_n(which, m, zero)


def tril(m, k=0):
    """Zeros above the k-th diagonal of the last two axes."""
    return _tri_select("tril", m, k, True)


def triu(m, k=0):
    return _tri_select("triu", m, k, False)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    check_arraylike("meshgrid", *xi)
    args = [asarray(x) for x in xi]
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if any(_aval(a).ndim != 1 for a in args):
        raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{[_aval(a).shape for a in args]}")
    swap = indexing == "xy" and len(args) >= 2
    if swap:
        args[0], args[1] = args[1], args[0]
    sizes = [_aval(a).shape[0] for a in args]
    out = []
    for i, a in enumerate(args):
        shape = [1] * len(args) if sparse else list(sizes)
        shape[i] = sizes[i]
        out.append(lax_shape.broadcast_in_dim(a, shape, (i,)))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


def indices(dimensions, dtype=None, sparse=False):
    """Index grids: out[i] varies along axis i (a tuple of broadcastable grids if sparse)."""
    dtype = _user_dtype(int if dtype is None else dtype, "indices")
    dims = tuple(_concrete_int(d, "dimensions argument of jnp.indices") for d in dimensions)
    n = len(dims)
    out = []
    for i, d in enumerate(dims):
        shape = (1,) * i + (d,) + (1,) * (n - i - 1) if sparse else dims
        out.append(lax_shape.broadcast_in_dim(_iota(dtype, (d,)), shape, (i,)))
    if sparse:
        return tuple(out)
    return stack(out, 0) if out else _filled((0,), 0, dtype)


def ix_(*args):
    """Open mesh from 1-D index arrays: the i-th output varies along axis i only."""
    check_arraylike("ix", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if _aval(a).ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{_aval(a).shape}")
        if _aval(a).dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = _aval(a).shape[0]
        if _aval(a).shape[0] == 0:
            out.append(_filled(shape, 0, _default_int()))
        else:
            out.append(lax_shape.broadcast_in_dim(a, shape, (i,)))
    return tuple(out)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`function` called once on the index grids (as NumPy does); it must be vectorized."""
    shape = _canonical_shape(shape, "fromfunction")
    return function(*indices(shape, dtype=dtype), **kwargs)


# --------------------------------------------------------------------------------------
# Shape information and manipulation


def ndim(a):
    if hasattr(a, "ndim"):
        return a.ndim
    check_arraylike("ndim", a)
    return np.ndim(a)


def shape(a):
    if hasattr(a, "shape"):
        return a.shape
    check_arraylike("shape", a)
    return np.shape(a)


def size(a, axis=None):
    check_arraylike("size", a)
    if axis is None and hasattr(a, "size"):
        return a.size
    s = shape(a)
    if axis is None:
        return math.prod(s)
    axes = [canonical_axis(ax, len(s), "size") for ax in _axis_tuple(axis)]
    if len(set(axes)) != len(axes):
        raise ValueError(f"size: repeated axis in {axis}")
    return math.prod(s[i] for i in axes)


def iterable(y):
    return np.iterable(y)


def isscalar(element):
    """True for Python/NumPy scalars and 0-d arrays (unlike NumPy, which says False)."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, ArrayBase)):
        return element.ndim == 0
    if hasattr(element, "__jax_array__"):
        return asarray(element).ndim == 0
    return False


def can_cast(from_, to, casting="safe"):
    return np.can_cast(from_, to, casting)


def _infer_shape(newshape, total, original):
    newshape = list(newshape)
    unknown = [i for i, d in enumerate(newshape) if d == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(d < -1 for d in newshape):
        raise ValueError(f"reshape: invalid shape {tuple(newshape)}")
    if unknown:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape array of shape {original} (size {total}) into "
                            f"shape {tuple(newshape)}")
        newshape[unknown[0]] = total // known
    if math.prod(newshape) != total:
        raise ValueError(f"cannot reshape array of shape {original} (size {total}) into shape "
                        f"{tuple(newshape)}")
    return tuple(newshape)


def reshape(a, shape, order="C", *, copy=None, out_sharding=None):
    """A new shape for the same elements; one dimension may be -1 (inferred)."""
    check_arraylike("reshape", a)
    a = asarray(a)
    aval = _aval(a)
    newshape = tuple(_concrete_int(d, "reshape shape") for d in (
        shape if isinstance(shape, (tuple, list)) or np.ndim(shape) else (shape,)))
    newshape = _infer_shape(newshape, aval.size, aval.shape)
    if order == "C":
        return lax_shape.reshape(a, newshape)
    if order == "F":
        out = lax_shape.reshape(lax_shape.transpose(a, tuple(_range(aval.ndim))[::-1]),
                                newshape[::-1])
        return lax_shape.transpose(out, tuple(_range(len(newshape)))[::-1])
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a, order="C", *, out_sharding=None):
    check_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (size(a),), order)


def transpose(a, axes=None):
    check_arraylike("transpose", a)
    a = asarray(a)
    nd = _aval(a).ndim
    axes = tuple(_range(nd))[::-1] if axes is None else axes
    perm = [canonical_axis(i, nd, "transpose") for i in axes]
    if sorted(perm) != list(_range(nd)):
        raise ValueError(f"transpose: axes {tuple(axes)} don't match array of dimension {nd}")
    return lax_shape.transpose(a, perm)


def permute_dims(a, /, axes):
    check_arraylike("permute_dims", a)
    return transpose(a, axes)


def matrix_transpose(x, /):
    check_arraylike("matrix_transpose", x)
    x = asarray(x)
    nd = _aval(x).ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={nd}")
    return lax_shape.transpose(x, (*_range(nd - 2), nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    check_arraylike("swapaxes", a)
    a = asarray(a)
    nd = _aval(a).ndim
    perm = list(_range(nd))
    i, j = canonical_axis(axis1, nd, "swapaxes"), canonical_axis(axis2, nd, "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return lax_shape.transpose(a, perm)


def moveaxis(a, source, destination):
    check_arraylike("moveaxis", a)
    a = asarray(a)
    nd = _aval(a).ndim
    src = [canonical_axis(i, nd, "moveaxis") for i in _axis_tuple(source)]
    dst = [canonical_axis(i, nd, "moveaxis") for i in _axis_tuple(destination)]
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: repeated axis in source {source} or destination "
                         f"{destination}")
    perm = [i for i in _range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax_shape.transpose(a, perm)


def rollaxis(a, axis, start=0):
    check_arraylike("rollaxis", a)
    nd = ndim(a)
    axis = canonical_axis(axis, nd, "rollaxis")
    start = _concrete_int(start, "'start' argument of jnp.rollaxis()")
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


def squeeze(a, axis=None):
    check_arraylike("squeeze", a)
    a = asarray(a)
    s = _aval(a).shape
    if axis is None:
        return lax_shape.squeeze(a, [i for i, d in enumerate(s) if d == 1])
    axes = [canonical_axis(i, len(s), "squeeze") for i in _axis_tuple(axis)]
    for i in axes:
        if s[i] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             f"to one, got shape={s} and dimensions={tuple(axes)}")
    return lax_shape.squeeze(a, axes)


def expand_dims(a, axis):
    check_arraylike("expand_dims", a)
    a = asarray(a)
    axes = _axis_tuple(axis)
    nd = _aval(a).ndim + len(axes)
    canon = [canonical_axis(i, nd, "expand_dims") for i in axes]
    if len(set(canon)) != len(canon):
        raise ValueError(f"repeated axis in expand_dims: {axis}")
    return lax_shape.expand_dims(a, canon)


def atleast_1d(*arys):
    check_arraylike("atleast_1d", *arys)
    out = [array(a, copy=False, ndmin=1) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    check_arraylike("atleast_2d", *arys)
    out = [array(a, copy=False, ndmin=2) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """Like NumPy: a 1-D array of shape (n,) becomes (1, n, 1), a 2-D one gains a last axis."""
    check_arraylike("atleast_3d", *arys)
    out = []
    for a in arys:
        a = asarray(a)
        dims = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(_aval(a).ndim, ())
        out.append(lax_shape.expand_dims(a, dims) if dims else a)
    return out[0] if len(out) == 1 else out


def broadcast_shapes(*shapes):
    if not shapes:
        return ()
    shapes = [(int(s),) if np.ndim(s) == 0 else tuple(int(d) for d in s) for s in shapes]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def resize(a, new_shape):
    """`a`'s elements repeated cyclically to fill `new_shape`."""
    check_arraylike("resize", a)
    new_shape = _canonical_shape(new_shape, "resize")
    arr = ravel(a)
    new_size = math.prod(new_shape)
    if _aval(arr).size == 0 or new_size == 0:
        return _zeros_like(arr, new_shape)
    repeats = -(-new_size // _aval(arr).size)
    arr = lax_shape.slice_in_dim(tile(arr, repeats), 0, new_size)
    return lax_shape.reshape(arr, new_shape)


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices of the coordinate arrays `multi_index` in an array of shape `dims`."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(_concrete_int(d, "in `dims` argument of ravel_multi_index().") for d in dims)
    check_arraylike("ravel_multi_index", *multi_index)
    idx = [asarray(i) for i in multi_index]
    if dtype is None:
        dtype = dtypes.result_type(int, *idx)
    else:
        dtype = _user_dtype(dtype, "ravel_multi_index")
    if not np.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold "
                         f"flattened index for dims={dims}. Use the dtype argument to pass a "
                         "suitable dtype.")
    for i in idx:
        if not np.issubdtype(_aval(i).dtype, np.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for i, d in zip(idx, dims):
            v = np.asarray(concrete_or_error(
                i, "the indices checked by ravel_multi_index(mode='raise') (use mode='wrap' "
                   "or mode='clip' under transformations)"))
            if np.any((v < 0) | (v >= d)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        idx = [ufuncs.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [ufuncs.remainder(i, d) for i, d in zip(idx, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or "
                         "'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = _asarray(0, dtype)
    for i, s in zip(idx, strides):
        result = ufuncs.add(result, ufuncs.multiply(lax.convert_element_type(i, dtype), int(s)))
    return result


def unravel_index(indices, shape):
    """Coordinates of flat `indices` in an array of `shape`; out-of-range ones are clipped."""
    check_arraylike("unravel_index", indices)
    idx = asarray(indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        idx, out[i] = ufuncs.divmod(idx, s)
    oob_pos = ufuncs.greater(idx, 0)
    if _aval(idx).dtype.kind == "u":
        oob_neg = asarray(False)
    else:
        oob_neg = ufuncs.less(idx, -1)
    return tuple(ufuncs.where(oob_pos, s - 1, ufuncs.where(oob_neg, 0, i))
                 for s, i in zip(shape, out))


# --------------------------------------------------------------------------------------
# Joining and splitting


def _as_array_list(name, arrays):
    """A sequence of arrays, or the slices along axis 0 of one array, as a list."""
    if isinstance(arrays, (np.ndarray, ArrayBase)):
        arrays = asarray(arrays)
        if _aval(arrays).ndim == 0:
            raise ValueError(f"{name}: need a sequence of arrays or an array of rank >= 1, "
                             "got a scalar")
        return list(unstack(arrays))
    arrays = list(arrays)
    check_arraylike(name, *arrays)
    return [asarray(a) for a in arrays]


def concatenate(arrays, axis=0, dtype=None):
    """Joins arrays along an existing axis (`axis=None` flattens them first)."""
    arrs = _as_array_list("concatenate", arrays)
    if not arrs:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrs], 0, dtype)
    if _aval(arrs[0]).ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    nd = _aval(arrs[0]).ndim
    axis = canonical_axis(axis, nd, "concatenate")
    if dtype is None:
        arrs = promote_dtypes(*arrs)
    else:
        arrs = [_asarray(a, _user_dtype(dtype, "concatenate")) for a in arrs]
    shapes = [_aval(a).shape for a in arrs]
    if any(len(s) != nd for s in shapes):
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(map(str, shapes))}.")
    if any(s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:] for s in shapes):
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                        f"than the one being concatenated: concatenating along dimension {axis} "
                        f"for shapes {', '.join(map(str, shapes))}.")
    return lax_shape.concatenate(arrs, axis)


def concat(arrays, /, *, axis=0):
    check_arraylike("concat", *arrays)
    return concatenate(arrays, axis=axis)


def stack(arrays, axis=0, out=None, dtype=None):
    """Joins arrays along a new axis."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    arrs = _as_array_list("stack", arrays)
    if arrs is None:
        raise ValueError("Need at least one array to stack.")
    shapes = {_aval(a).shape for a in arrs}
    if len(shapes) != 1:
        raise ValueError(f"All input arrays must have the same shape, got {sorted(shapes)}.")
    nd = _aval(arrs[0]).ndim + 1
    axis = canonical_axis(axis, nd, "stack")
    if dtype is None:
        arrs = promote_dtypes(*arrs)
    else:
        arrs = [_asarray(a, _user_dtype(dtype, "stack")) for a in arrs]
    return lax_shape.concatenate([lax_shape.expand_dims(a, (axis,)) for a in arrs], axis)


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


def vstack(tup, dtype=None):
    return concatenate(_seq_apply(atleast_2d, _as_array_list("vstack", tup)), 0, dtype)


def hstack(tup, dtype=None):
    arrs = _seq_apply(atleast_1d, _as_array_list("hstack", tup))
    return concatenate(arrs, 0 if _aval(arrs[0]).ndim == 1 else 1, dtype)


def dstack(tup, dtype=None):
    return concatenate(_seq_apply(atleast_3d, _as_array_list("dstack", tup)), 2, dtype)


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
        raise ValueError(f"array split does not result in an equal division: rest is {r}")
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


def tile(A, reps):
    """`A` repeated `reps` times along each axis (a broadcast and a reshape)."""
    check_arraylike("tile", A)
    A = asarray(A)
    try:
        reps = tuple(reps)
    except TypeError:
        reps = (reps,)
    reps = tuple(_concrete_int(r, "reps argument of jnp.tile") for r in reps)
    nd = max(len(reps), _aval(A).ndim)
    reps = (1,) * (nd - len(reps)) + reps
    A = lax_shape.broadcast_to_rank(A, nd)
    s = _aval(A).shape
    inter = [d for pair in zip(reps, s) for d in pair]
    out = lax_shape.broadcast_in_dim(A, inter, tuple(_range(1, 2 * nd, 2)))
    return lax_shape.reshape(out, [r * d for r, d in zip(reps, s)])


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Each element repeated; traced `repeats` need a static `total_repeat_length`."""
    if isinstance(repeats, (int, np.integer)):
        check_arraylike("repeat", a)
    else:
        check_arraylike("repeat", a, repeats)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _concrete_int(axis, "'axis' argument of jnp.repeat()")
    nd = _aval(a).ndim
    if nd:
        axis = canonical_axis(axis, nd, "repeat")
    if total_repeat_length is None:
        reps = np.asarray(concrete_or_error(
            repeats, "the `repeats` argument of jnp.repeat (pass a static "
                     "`total_repeat_length` to use traced repeats)"))
        if np.any(reps < 0):
            raise ValueError("repeat: repeats may not contain negative values")
        if reps.ndim == 0 and nd:
            s = _aval(a).shape
            aux = s[:axis + 1] + (int(reps),) + s[axis + 1:]
            out = lax_shape.broadcast_in_dim(a, aux, [i for i in _range(nd + 1) if i != axis + 1])
            return lax_shape.reshape(out, s[:axis] + (s[axis] * int(reps),) + s[axis + 1:])
        reps = np.ravel(reps)
        if nd == 0:
            if reps.shape != (1,):
                raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                                 "scalar values of the parameter `repeats`.")
            return full((int(reps[0]),), a)
        reps = np.broadcast_to(reps, (_aval(a).shape[axis],))
        return _take(a, np.repeat(np.arange(reps.size), reps).astype(np.int32), axis)
    total = _concrete_int(total_repeat_length, "total_repeat_length argument of jnp.repeat")
    reps = ravel(asarray(repeats))
    if nd == 0:
        if _aval(reps).shape != (1,):
            raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                             "scalar values of the parameter `repeats`.")
        return full((total,), a)
    n = _aval(a).shape[axis]
    if total == 0 or n == 0:
        s = list(_aval(a).shape)
        s[axis] = 0 if total == 0 else s[axis]
        return _zeros_like(a, s) if total == 0 else a
    reps = broadcast_to(reps, (n,))
    # Each block start gets a 1; a running sum of those marks says which element a slot shows.
    starts = lax_red.cumsum(reps, 0)
    starts = lax_shape.concatenate([_filled((1,), 0, _aval(starts).dtype),
                                    lax_shape.slice_in_dim(starts, 0, n - 1)], 0)
    marks = _scatter1d(lax_idx.scatter_add, _filled((total,), 0, np.int32), starts,
                       _filled((n,), 1, np.int32))
    return _take(a, lax.sub(lax_red.cumsum(marks, 0), np.int32(1)), axis)


# --------------------------------------------------------------------------------------
# Flips, rolls and rotations


def flip(m, axis=None):
    check_arraylike("flip", m)
    m = asarray(m)
    nd = _aval(m).ndim
    axes = _range(nd) if axis is None else _axis_tuple(axis)
    return lax_shape.rev(m, [canonical_axis(a, nd, "flip") for a in axes])


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Elements shifted cyclically along `axis` (over the flattened array if None)."""
    check_arraylike("roll", a)
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _aval(a).shape)
    nd = _aval(a).ndim
    axes = [canonical_axis(ax, nd, "roll") for ax in _axis_tuple(axis)]
    static = core.concrete_value(shift) if not isinstance(shift, core.Tracer) else None
    if static is not None or isinstance(shift, (tuple, list)):
        shifts = np.asarray(shift if static is None else static)
        if shifts.ndim > 1 or not np.issubdtype(shifts.dtype, np.integer):
            raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D "
                             "integer arrays")
        for ax, s in zip(*np.broadcast_arrays(axes, shifts)):
            n = _aval(a).shape[ax]
            if n:
                i = int(-s % n)
                a = lax_shape.concatenate([lax_shape.slice_in_dim(a, i, n, 1, ax),
                                           lax_shape.slice_in_dim(a, 0, i, 1, ax)], int(ax))
        return a
    shift = asarray(shift)
    if _aval(shift).ndim > 1 or len(np.broadcast_shapes(_aval(shift).shape, (len(axes),))) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = broadcast_to(shift, np.broadcast_shapes(_aval(shift).shape, (len(axes),)))
    axes = np.broadcast_to(axes, _aval(shifts).shape)
    for k, ax in enumerate(axes):
        n = _aval(a).shape[ax]
        s = lax.convert_element_type(lax_shape.index_in_dim(shifts, k, 0, False), np.int32)
        s = ufuncs.remainder(s, np.int32(max(n, 1)))
        doubled = lax_shape.concatenate([a, a], int(ax))
        a = lax_idx.dynamic_slice_in_dim(doubled, lax.sub(np.int32(n), s), n, int(ax))
    return a


def rot90(m, k=1, axes=(0, 1)):
    check_arraylike("rot90", m)
    m = asarray(m)
    nd = _aval(m).ndim
    if nd < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but got "
                         f"first argument of shape {_aval(m).shape}, which has ndim {nd}")
    ax1, ax2 = (canonical_axis(a, nd, "rot90") for a in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = _concrete_int(k, "'k' argument of jnp.rot90") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(_range(nd))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


# --------------------------------------------------------------------------------------
# Diagonals


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The `offset` diagonal of the (axis1, axis2) planes, as the last axis of the result.

    Read with a strided slice of the flattened planes (element (i, i) of a row-major
    (d, m) matrix sits at i * (m + 1)), so it is linear and needs no gather.
    """
    check_arraylike("diagonal", a)
    a = asarray(a)
    nd = _aval(a).ndim
    if nd < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = _concrete_int(offset, "'offset' argument of jnp.diagonal()")
    ax1, ax2 = canonical_axis(axis1, nd, "diagonal"), canonical_axis(axis2, nd, "diagonal")
    if ax1 == ax2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    if offset >= 0:
        a = _slice_axis(a, offset, None, nd - 1)
    else:
        a = _slice_axis(a, -offset, None, nd - 2)
    *batch, n, m = _aval(a).shape
    d = min(n, m)
    a = lax_shape.slice_in_dim(a, 0, d, 1, nd - 2)
    flat = lax_shape.reshape(a, (*batch, d * m))
    return lax_shape.slice_in_dim(flat, 0, d * m, m + 1, nd - 2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal; integer inputs are summed as `jnp.sum` would sum them."""
    from didax._src.numpy import reductions

    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    check_arraylike("trace", a)
    nd = ndim(a)
    if nd >= 2 and canonical_axis(axis1, nd) == canonical_axis(axis2, nd):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    return reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with the 1-D `v` on its k-th diagonal."""
    check_arraylike("diag", v)
    v = asarray(v)
    k = operator.index(k)
    nd = _aval(v).ndim
    if nd == 2:
        return diagonal(v, offset=k)
    if nd != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = _aval(v).shape[0] + abs(k)
    v = lax_shape.pad(v, _const(v, 0), [(max(0, -k), max(0, k), 0)])
    rows = lax_shape.broadcast_in_dim(v, (n, n), (0,))
    return lax.select_n(eye(n, k=k, dtype=bool), _zeros_like(rows), rows)


def diagflat(v, k=0):
    check_arraylike("diagflat", v)
    return diag(ravel(v), k)


def _index_tuple(arrays):
    return tuple(asarray(np.asarray(x, _default_int())) for x in arrays)


def diag_indices(n, ndim=2):
    n = _concrete_int(n, "'n' argument of jnp.diag_indices()")
    ndim = _concrete_int(ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (_iota(_default_int(), (n,)),) * ndim


def diag_indices_from(arr):
    check_arraylike("diag_indices_from", arr)
    s = shape(arr)
    if len(s) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], len(s))


def _tri_indices(fn, name, n, k, m):
    n = _concrete_int(n, f"n argument of jnp.{name}")
    k = _concrete_int(k, f"k argument of jnp.{name}")
    m = n if m is None else _concrete_int(m, f"m argument of jnp.{name}")
    return _index_tuple(fn(n, k, m))


def tril_indices(n, k=0, m=None):
    return _tri_indices(np.tril_indices, "tril_indices", n, k, m)


def triu_indices(n, k=0, m=None):
    return _tri_indices(np.triu_indices, "triu_indices", n, k, m)


def _shape2d(arr):
    s = arr.shape if hasattr(arr, "shape") else shape(arr)
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return s


def tril_indices_from(arr, k=0):
    n, m = _shape2d(arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    n, m = _shape2d(arr)
    return triu_indices(n, k, m)


def mask_indices(n, mask_func, k=0, *, size=None):
    i, j = nonzero(mask_func(ones((n, n)), k), size=size)
    return i, j


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of `a` with its main diagonal set to `val` (repeated cyclically if an array)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a, val = asarray(a), asarray(val)
    s = _aval(a).shape
    if len(s) < 2:
        raise ValueError("array must be at least 2-d")
    if len(s) > 2 and len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(s)
    val = lax.convert_element_type(val, _aval(a).dtype, _aval(a).weak_type)
    if _aval(val).ndim:
        flat = ravel(val)
        val = lax_shape.slice_in_dim(tile(flat, -(-n // _aval(flat).size)), 0, n)
        rows = lax_shape.pad(val, _const(val, 0), [(0, s[0] - n, 0)])
        val = lax_shape.broadcast_in_dim(rows, s, (0,))
    else:
        val = lax_shape.broadcast_in_dim(val, s, ())
    iotas = [_iota(np.int32, s, d) for d in _range(len(s))]
    on_diag = _all(stack([lax.eq(iotas[0], i) for i in iotas[1:]]), (0,))
    return lax.select_n(on_diag, a, val)


# --------------------------------------------------------------------------------------
# Padding


def _pad_pairs(values, nd, name):
    """NumPy's accepted forms ((nd, 2), (1, 2), (2,), (1,), scalar) as nd (before, after) pairs."""
    if isinstance(values, ArrayBase):
        values = concrete_or_error(values, f"{name} argument of jnp.pad")
    try:
        arr = np.asarray(values)
    except ValueError as e:
        raise TypeError(f"`{name}` entries must be the same shape: {values}") from e
    if arr.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if arr.shape == (nd, 2):
        return tuple((arr[i, 0], arr[i, 1]) for i in _range(nd))
    if arr.shape == (1, 2):
        return ((arr[0, 0], arr[0, 1]),) * nd
    if arr.shape == (2,):
        return ((arr[0], arr[1]),) * nd
    if arr.shape in ((1,), ()):
        v = arr.reshape(())[()]
        return ((v, v),) * nd
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {arr.shape}. Valid "
                     f"shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _check_no_padding(pads, mode):
    if pads[0] > 0 or pads[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_constant(x, pad_width, constant_values):
    aval = _aval(x)
    values = lax.convert_element_type(asarray(constant_values), aval.dtype, aval.weak_type)
    nd = aval.ndim
    vshape = _aval(values).shape
    if vshape == () or vshape == (1,):
        return lax_shape.pad(x, lax_shape.reshape(values, ()),
                             [(lo, hi, 0) for lo, hi in pad_width])
    if len(vshape) == 1 and vshape[0] != 2:
        raise ValueError(f"jnp.pad: constant_values has unsupported shape {vshape}. If the "
                         "shape is 1D or 2D, the last dimension must be of size 1 or 2.")
    values = broadcast_to(values, (nd, 2))
    for i, (lo, hi) in enumerate(pad_width):
        for side, width in ((0, lo), (1, hi)):
            if width:
                config = [(0, 0, 0)] * nd
                config[i] = (width, 0, 0) if side == 0 else (0, width, 0)
                v = lax_shape.reshape(lax_shape.slice(values, (i, side), (i + 1, side + 1)), ())
                x = lax_shape.pad(x, v, config)
    return x


def _pad_wrap(x, pad_width):
    for i, (lo, hi) in enumerate(pad_width):
        n = _aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), "wrap")
            continue
        left_reps, left_rem = divmod(lo, n)
        right_reps, right_rem = divmod(hi, n)
        parts = [lax_shape.slice_in_dim(x, n - left_rem, n, 1, i)] if left_rem else []
        parts += [x] * (left_reps + right_reps + 1)
        parts += [lax_shape.slice_in_dim(x, 0, right_rem, 1, i)] if right_rem else []
        x = lax_shape.concatenate(parts, i)
    return x


def _pad_symmetric_or_reflect(x, pad_width, mode, reflect_type):
    for i, (lo, hi) in enumerate(pad_width):
        n = _aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), mode)
            continue
        offset = 1 if mode == "reflect" and n > 1 else 0
        for before, padding in ((True, lo), (False, hi)):
            edge = lax_shape.slice_in_dim(x, *((0, 1) if before else (_aval(x).shape[i] - 1,
                                                                     _aval(x).shape[i])), 1, i)
            while padding > 0:
                cur = min(padding, n - offset)
                padding -= cur
                size_i = _aval(x).shape[i]
                if before:
                    part = lax_shape.slice_in_dim(x, offset, offset + cur, 1, i)
                else:
                    stop = size_i if mode == "symmetric" or n == 1 else size_i - 1
                    part = lax_shape.slice_in_dim(x, stop - cur, stop, 1, i)
                part = lax_shape.rev(part, (i,))
                if reflect_type == "odd":
                    part = ufuncs.subtract(ufuncs.multiply(2, edge), part)
                    if n > 1:
                        k = _aval(part).shape[i]
                        edge = lax_shape.slice_in_dim(part, *((0, 1) if before else (k - 1, k)),
                                                      1, i)
                x = lax_shape.concatenate([part, x] if before else [x, part], i)
    return x


def _pad_edge(x, pad_width):
    for i, (lo, hi) in enumerate(pad_width):
        n = _aval(x).shape[i]
        if n == 0:
            _check_no_padding((lo, hi), "edge")
            continue
        before = repeat(lax_shape.slice_in_dim(x, 0, 1, 1, i), lo, axis=i)
        after = repeat(lax_shape.slice_in_dim(x, n - 1, n, 1, i), hi, axis=i)
        x = lax_shape.concatenate([before, x, after], i)
    return x


def _pad_linear_ramp(x, pad_width, end_values):
    aval = _aval(x)
    for i, ((lo, hi), (end_lo, end_hi)) in enumerate(zip(pad_width, end_values)):
        n = _aval(x).shape[i]
        first = lax_shape.squeeze(lax_shape.slice_in_dim(x, 0, 1, 1, i), (i,))
        last = lax_shape.squeeze(lax_shape.slice_in_dim(x, n - 1, n, 1, i), (i,))
        ramp_lo = linspace(end_lo, first, lo, endpoint=False, dtype=aval.dtype, axis=i)
        ramp_hi = linspace(end_hi, last, hi, endpoint=False, dtype=aval.dtype, axis=i)
        ramp_lo = lax.convert_element_type(ramp_lo, aval.dtype, aval.weak_type)
        ramp_hi = lax.convert_element_type(lax_shape.rev(ramp_hi, (i,)), aval.dtype,
                                           aval.weak_type)
        x = lax_shape.concatenate([ramp_lo, x, ramp_hi], i)
    return x


def _pad_stats(x, pad_width, stat_length, stat_func):
    aval = _aval(x)
    for i, (lo, hi) in enumerate(pad_width):
        n = _aval(x).shape[i]
        if stat_length is None:
            stat_lo = stat_hi = stat_func(x, i)
        else:
            len_lo, len_hi = stat_length[i]
            if len_lo == 0 or len_hi == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            stat_lo = stat_func(lax_shape.slice_in_dim(x, 0, min(len_lo, n), 1, i), i)
            stat_hi = stat_func(lax_shape.slice_in_dim(x, n - min(len_hi, n), n, 1, i), i)
        stats = []
        for stat in (stat_lo, stat_hi):
            if np.issubdtype(aval.dtype, np.integer):
                stat = ufuncs.round(stat)
            stats.append(lax.convert_element_type(stat, aval.dtype, aval.weak_type))
        x = lax_shape.concatenate([repeat(stats[0], lo, axis=i), x,
                                   repeat(stats[1], hi, axis=i)], i)
    return x


def _stat_max(x, axis):
    return lax_shape.expand_dims(lax_red.reduce_max(x, (axis,)), (axis,))


def _stat_min(x, axis):
    return lax_shape.expand_dims(lax_red.reduce_min(x, (axis,)), (axis,))


def _stat_mean(x, axis):
    (x,) = promote_dtypes_inexact(x)
    n = _aval(x).shape[axis]
    total = lax_shape.expand_dims(lax_red.reduce_sum(x, (axis,)), (axis,))
    return lax.div(total, _const(total, n))


def _stat_median(x, axis):
    """Mean of the middle one or two sorted values; NaN if the slice holds a NaN."""
    (x,) = promote_dtypes_inexact(x)
    n = _aval(x).shape[axis]
    s = lax_red.sort(x, axis)
    mid = lax.div(lax.add(lax_shape.slice_in_dim(s, (n - 1) // 2, (n - 1) // 2 + 1, 1, axis),
                          lax_shape.slice_in_dim(s, n // 2, n // 2 + 1, 1, axis)),
                  _const(x, 2))
    has_nan = lax_shape.expand_dims(_any(ufuncs.isnan(x), (axis,)), (axis,))
    return lax.select_n(has_nan, mid, _filled(_aval(mid).shape, np.nan, _aval(mid).dtype))


_STAT_FUNCS = {"maximum": _stat_max, "minimum": _stat_min, "mean": _stat_mean,
               "median": _stat_median}
_PAD_KWARGS = {"empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
               "linear_ramp": ["end_values"], "maximum": ["stat_length"],
               "mean": ["stat_length"], "median": ["stat_length"], "minimum": ["stat_length"],
               "reflect": ["reflect_type"], "symmetric": ["reflect_type"]}


def pad(array, pad_width, mode="constant", **kwargs):
    """NumPy's `pad` for every string mode (callable modes are not supported)."""
    check_arraylike("pad", array)
    x = asarray(array)
    nd = _aval(x).ndim
    if callable(mode):
        raise NotImplementedError("jnp.pad with a callable mode needs vmap, which didax does not "
                                  "provide yet; use one of the string modes.")
    if mode not in _PAD_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if nd == 0:
        return x
    pairs = _pad_pairs(pad_width, nd, "pad_width")
    try:
        pad_width = tuple((operator.index(lo), operator.index(hi)) for lo, hi in pairs)
    except TypeError:
        raise TypeError("`pad_width` must be of integral type.") from None
    if any(lo < 0 or hi < 0 for lo, hi in pad_width):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(x, pad_width, kwargs.get("constant_values", 0))
    if mode == "wrap":
        return _pad_wrap(x, pad_width)
    if mode in ("symmetric", "reflect"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
        return _pad_symmetric_or_reflect(x, pad_width, mode, reflect_type)
    if mode == "edge":
        return _pad_edge(x, pad_width)
    if mode == "linear_ramp":
        end_values = _pad_pairs(kwargs.get("end_values", 0), nd, "end_values")
        return _pad_linear_ramp(x, pad_width, end_values)
    if mode == "empty":
        return _pad_constant(x, pad_width, 0)
    stat_length = kwargs.get("stat_length")
    if stat_length is not None:
        stat_length = tuple((operator.index(lo), operator.index(hi))
                            for lo, hi in _pad_pairs(stat_length, nd, "stat_length"))
    return _pad_stats(x, pad_width, stat_length, _STAT_FUNCS[mode])


# --------------------------------------------------------------------------------------
# Inserting, deleting and trimming (the positions must be concrete)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """`arr` without the entries at `obj` (an int, a slice, ints or a bool mask) along `axis`."""
    check_arraylike("delete", arr)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, _aval(a).ndim, "delete")
    n = _aval(a).shape[axis]
    if isinstance(obj, _slice):
        keep = np.ones(n, bool)
        keep[obj] = False
    else:
        check_arraylike("delete", a, obj)
        idx = np.asarray(concrete_or_error(obj, "'obj' array argument of jnp.delete()"))
        if idx.dtype == np.bool_:
            if idx.shape != (n,):
                raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                                 "one-dimensional with length matching specified axis.")
            keep = ~idx
        elif np.issubdtype(idx.dtype, np.integer) or idx.size == 0:
            if np.any((idx < -n) | (idx >= n)):
                raise IndexError(f"index out of bounds for axis {axis} with size {n}: {idx}")
            keep = np.ones(n, bool)
            keep[idx.astype(np.int64)] = False
        else:
            raise ValueError(f"np.delete(arr, obj): got obj.dtype={idx.dtype}; must be integer "
                             "or bool.")
    return _take(a, np.flatnonzero(keep).astype(np.int32), axis)


def insert(arr, obj, values, axis=None):
    """`arr` with `values` inserted before the positions `obj` (concrete) along `axis`."""
    check_arraylike("insert", arr, 0 if isinstance(obj, _slice) else obj, values)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(_concrete_int(axis, "axis argument of jnp.insert()"), _aval(a).ndim,
                          "insert")
    n = _aval(a).shape[axis]
    if isinstance(obj, _slice):
        idx = np.arange(*obj.indices(n))
    else:
        idx = np.asarray(concrete_or_error(obj, "'obj' argument of jnp.insert()"))
    if idx.ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not np.issubdtype(idx.dtype, np.integer):
        if idx.size == 0 and not isinstance(obj, ArrayBase):
            idx = idx.astype(int)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    vals = array(values, ndmin=_aval(a).ndim)
    vals = lax.convert_element_type(vals, _aval(a).dtype, _aval(a).weak_type)
    if idx.size == 1:
        if idx.ndim == 0:
            vals = moveaxis(vals, 0, axis)
        idx = np.full(_aval(vals).shape[axis], idx.reshape(()))
    n_insert = np.broadcast_shapes(idx.shape, (_aval(vals).shape[axis],))[0]
    idx = np.broadcast_to(idx, (n_insert,))
    out_shape = list(_aval(a).shape)
    out_shape[axis] = n_insert
    vals = broadcast_to(vals, out_shape)
    idx = np.clip(np.where(idx < 0, idx + n, idx), 0, n)
    # NumPy's rule: values for equal positions keep their order (a stable sort).
    values_pos = idx.copy()
    values_pos[np.argsort(idx, kind="stable")] += np.arange(n_insert)
    source = np.empty(n + n_insert, np.int64)
    keep = np.ones(n + n_insert, bool)
    keep[values_pos] = False
    source[keep] = np.arange(n)
    source[values_pos] = n + np.arange(n_insert)
    both = lax_shape.concatenate([a, vals], axis)
    return _take(both, source.astype(np.int32), axis)


def trim_zeros(filt, trim="fb", axis=None):
    """`filt` without its leading ('f') and/or trailing ('b') zeros; `filt` must be concrete."""
    check_arraylike("trim_zeros", filt)
    filt = asarray(filt)
    value = np.asarray(concrete_or_error(filt, "the `filt` argument of jnp.trim_zeros"))
    nd = value.ndim
    axes = set(_range(nd)) if axis is None else {canonical_axis(a, nd, "trim_zeros")
                                                   for a in _axis_tuple(axis)}
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt
    for ax in sorted(axes):
        mask = np.any(value != 0, axis=tuple(i for i in _range(nd) if i != ax))
        if not mask.any():
            start, stop = 0, 0
        else:
            start = int(mask.argmax()) if "f" in trim else 0
            stop = value.shape[ax] - int(mask[::-1].argmax()) if "b" in trim else value.shape[ax]
        filt = lax_shape.slice_in_dim(filt, start, stop, 1, ax)
    return filt


# --------------------------------------------------------------------------------------
# Sorting


def _check_sort_args(name, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy of `a` along `axis` (NaNs last, like NumPy); `axis=None` flattens."""
    _check_sort_args("sort", kind, order)
    check_arraylike("sort", a)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    dim = canonical_axis(axis, _aval(a).ndim, "sort")
    out = lax_red.sort(a, dim, is_stable=stable)
    return lax_shape.rev(out, (dim,)) if descending else out


def _index_dtype(user_dtype, name):
    return _default_int() if user_dtype is None else _user_dtype(user_dtype, name)


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """Indices that sort `a`; with stable=True equal elements keep their order (also when
    descending)."""
    _check_sort_args("argsort", kind, order)
    check_arraylike("argsort", a)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    dim = canonical_axis(axis, _aval(a).ndim, "argsort")
    iota = _iota(_index_dtype(dtype, "argsort"), _aval(a).shape, dim)
    if descending and stable:
        a, iota = lax_shape.rev(a, (dim,)), lax_shape.rev(iota, (dim,))
    _, idx = lax_red.sort_key_val(a, iota, dim, is_stable=stable)
    return lax_shape.rev(idx, (dim,)) if descending else idx


def lexsort(keys, axis=-1):
    """Indices sorting by several keys; the last key is the primary one."""
    keys = _as_array_list("lexsort", keys) if not isinstance(keys, (tuple, list)) else [
        asarray(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({_aval(k).shape for k in keys}) > 1:
        raise ValueError("all keys need to be the same shape")
    s = _aval(keys[0]).shape
    if not s:
        return _filled((), 0, _default_int())
    axis = canonical_axis(axis, len(s), "lexsort")
    iota = _iota(_default_int(), s, axis)
    return lax_red.sort((*keys[::-1], iota), axis, num_keys=len(keys))[-1]


def _partition_setup(name, a, kth, axis):
    check_arraylike(name, a)
    arr = asarray(a)
    if _aval(arr).dtype.kind == "c":
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = canonical_axis(axis, _aval(arr).ndim, name)
    kth = canonical_axis(kth, _aval(arr).shape[axis], name)
    arr = swapaxes(arr, axis, -1)
    if _aval(arr).dtype.kind == "u":
        neg = lax.neg(lax.add(arr, _const(arr, 1)))
    else:
        neg = lax.neg(arr)
    return arr, axis, kth, neg


def partition(a, kth, axis=-1):
    """The kth+1 smallest values in ascending order, then the rest (largest first), as JAX's
    top_k-based partition orders them."""
    arr, axis, kth, neg = _partition_setup("partition", a, kth, axis)
    bottom = lax.neg(lax_red.top_k(neg, kth + 1)[0])
    if _aval(arr).dtype.kind == "u":
        bottom = lax.sub(bottom, _const(bottom, 1))
    top = lax_red.top_k(arr, _aval(arr).shape[-1] - kth - 1)[0]
    out = lax_shape.concatenate([bottom, top], _aval(arr).ndim - 1)
    return swapaxes(out, -1, axis)


def argpartition(a, kth, axis=-1):
    arr, axis, kth, neg = _partition_setup("argpartition", a, kth, axis)
    nd, n = _aval(arr).ndim, _aval(arr).shape[-1]
    bottom = lax_red.top_k(neg, kth + 1)[1]
    positions = _iota(_aval(bottom).dtype, _aval(bottom).shape + (n,), nd)
    chosen = _any(lax.eq(lax_shape.expand_dims(bottom, (nd,)), positions), (nd - 1,))
    proxy = lax.convert_element_type(lax.bitwise_not(chosen), np.float32)
    top = lax_red.top_k(proxy, n - kth - 1)[1]
    out = lax_shape.concatenate([bottom, top], nd - 1)
    return swapaxes(out, -1, axis)


def sort_complex(a):
    check_arraylike("sort_complex", a)
    a = lax_red.sort(asarray(a), -1)
    dt = _aval(a).dtype
    cdt = np.complex128 if _to_inexact(dt) in (np.float64, np.complex128) else np.complex64
    return lax.convert_element_type(a, dtypes.canonicalize_dtype(cdt))


# --------------------------------------------------------------------------------------
# Searching


def _order_keys(x):
    if _aval(x).dtype.kind == "c":
        return [lax.real(x), lax.imag(x)]
    return [x]


def _key_lt(x, y):
    if _aval(x).dtype.kind == "f":  # NaN is the largest value, as in sorting
        return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))
    return lax.lt(x, y)


def _key_eq(x, y):
    if _aval(x).dtype.kind == "f":
        return lax.bitwise_or(lax.eq(x, y), lax.bitwise_and(lax.ne(x, x), lax.ne(y, y)))
    return lax.eq(x, y)


def _total_order(x, y, or_equal):
    """x < y (or x <= y) in the order sort uses: lexicographic for complex, NaN last."""
    xs, ys = _order_keys(x), _order_keys(y)
    last = _key_lt(xs[-1], ys[-1])
    if or_equal:
        last = lax.bitwise_or(last, _key_eq(xs[-1], ys[-1]))
    for xk, yk in zip(xs[-2::-1], ys[-2::-1]):
        last = lax.bitwise_or(_key_lt(xk, yk), lax.bitwise_and(_key_eq(xk, yk), last))
    return last


def _search_compare_all(a, v, side, dtype):
    n, vnd = _aval(a).shape[0], _aval(v).ndim
    col = lax_shape.broadcast_in_dim(a, (n,) + _aval(v).shape, (0,))
    row = lax_shape.broadcast_in_dim(v, (n,) + _aval(v).shape, tuple(_range(1, vnd + 1)))
    hits = _total_order(col, row, or_equal=side == "right")
    return lax_red.reduce_sum(lax.convert_element_type(hits, dtype), (0,))


def _search_binary(a, v, side, dtype):
    """Binary search unrolled over the ceil(log2(n + 1)) levels; all queries at once."""
    n = _aval(a).shape[0]
    low = _filled(_aval(v).shape, 0, dtype)
    high = _filled(_aval(v).shape, n, dtype)
    for _ in _range(int(np.ceil(np.log2(n + 1)))):
        mid = lax.add(low, lax.div(lax.sub(high, low), np.asarray(2, dtype)))
        go_left = _total_order(v, _take(a, mid), or_equal=side == "left")
        low, high = lax.select_n(go_left, mid, low), lax.select_n(go_left, high, mid)
    return high


def _rank(x, dtype):
    """rank[i] = position of x[i] in a stable sort of x."""
    m = _aval(x).shape[0]
    iota = _iota(dtype, (m,))
    perm = lax_red.sort_key_val(x, iota, 0)[1]
    return _scatter1d(lax_idx.scatter, _filled((m,), 0, dtype), perm, iota)


def _search_sort(a, v, side, dtype):
    """Co-sorting: a query's rank among the sorted values and the queries, minus its rank
    among the queries alone."""
    n = _aval(a).shape[0]
    q = ravel(v)
    nq = _aval(q).shape[0]
    work = np.dtype(np.int32) if n + nq <= np.iinfo(np.int32).max else np.dtype(np.int64)
    if side == "left":
        index = lax_shape.slice_in_dim(_rank(lax_shape.concatenate([q, a], 0), work), 0, nq)
    else:
        index = lax_shape.slice_in_dim(_rank(lax_shape.concatenate([a, q], 0), work), n, n + nq)
    out = lax.sub(index, _rank(q, work))
    return lax.convert_element_type(lax_shape.reshape(out, _aval(v).shape), dtype)


_SEARCH_METHODS = {"scan": _search_binary, "scan_unrolled": _search_binary,
                   "compare_all": _search_compare_all, "sort": _search_sort}


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion points of `v` in the sorted 1-D `a` that keep it sorted.

    `method` picks the algorithm ('scan' and 'scan_unrolled' are an unrolled binary
    search, 'compare_all' compares every pair, 'sort' co-sorts); all give equal results.
    """
    if sorter is None:
        check_arraylike("searchsorted", a, v)
    else:
        check_arraylike("searchsorted", a, v, sorter)
    a, v = asarray(a), asarray(v)
    if _aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if side not in ("left", "right"):
        raise ValueError(f"side={side!r} is not supported; expected 'left' or 'right'")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"invalid argument method={method!r}, expected one of "
                         f"{tuple(_SEARCH_METHODS)}")
    a, v = promote_dtypes(a, v)
    if sorter is not None:
        a = _take(a, sorter)
    n = _aval(a).shape[0]
    dtype = np.dtype(np.int32) if n <= np.iinfo(np.int32).max else _default_int()
    if n == 0:
        return _filled(_aval(v).shape, 0, dtype)
    return _SEARCH_METHODS[method](a, v, side, dtype)


def digitize(x, bins, right=False, *, method=None):
    """Index of the bin each `x` falls in; `bins` may be increasing or decreasing."""
    check_arraylike("digitize", x, bins)
    x, bins = asarray(x), asarray(bins)
    right = bool(concrete_or_error(right, "right argument of jnp.digitize()"))
    if _aval(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    n = _aval(bins).shape[0]
    if n == 0:
        return _filled(_aval(x).shape, 0, np.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = ufuncs.greater_equal(lax_shape.slice_in_dim(bins, n - 1, n),
                                      lax_shape.slice_in_dim(bins, 0, 1))
    up = searchsorted(bins, x, side=side, **kw)
    down = lax.sub(np.int32(n), searchsorted(lax_shape.rev(bins, (0,)), x, side=side, **kw))
    return lax.select_n(lax_shape.broadcast_in_dim(lax_shape.reshape(increasing, ()),
                                                   _aval(up).shape, ()), down, up)


def _compact_indices(mask, size):
    """Positions of the True entries of the 1-D `mask`, in order, padded with 0 to `size`."""
    dt = _default_int()
    n = _aval(mask).shape[0]
    counts = lax_red.cumsum(lax.convert_element_type(mask, dt), 0)
    target = lax.select_n(mask, _filled((n,), size, dt), lax.sub(counts, _const(counts, 1)))
    return _scatter1d(lax_idx.scatter, _filled((size,), 0, dt), target, _iota(dt, (n,)))


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per axis. Without a static `size`, the
    input must be concrete (the output shape depends on its values)."""
    check_arraylike("nonzero", a)
    arr = asarray(a)
    s = _aval(arr).shape
    if not s:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    mask = ufuncs._to_bool(arr)
    if size is None:
        size = int(concrete_or_error(_int_sum(mask), "the number of nonzero elements, which is "
                                     "the output size of jnp.nonzero (pass a static `size=` to "
                                     "use it under transformations)"))
    else:
        size = _concrete_int(size, "size argument of jnp.nonzero")
    if math.prod(s) == 0 or size == 0:
        return tuple(_filled((size,), 0, _default_int()) for _ in s)
    flat = _compact_indices(ravel(mask), size)
    strides = np.cumprod(s[::-1])[::-1] // s
    out = tuple(lax.rem(lax.div(flat, _const(flat, st)), _const(flat, d))
                for st, d in zip(strides, s))
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(s)
        if len(fills) != len(s) or any(np.shape(f) != () for f in fills):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {len(s)}; got "
                             f"{fill_value}")
        fill_mask = ufuncs.greater_equal(_iota(_default_int(), (size,)), _int_sum(mask))
        out = tuple(ufuncs.where(fill_mask, f, o) for f, o in zip(fills, out))
    return out


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements as rows of a (count, ndim) array."""
    check_arraylike("argwhere", a)
    a = asarray(a)
    result = transpose(vstack(nonzero(atleast_1d(a), size=size, fill_value=fill_value)))
    count = _aval(result).shape[0]
    if _aval(a).ndim == 0:
        return lax_shape.reshape(lax_shape.slice_in_dim(result, 0, 0), (count, 0))
    return lax_shape.reshape(result, (count, _aval(a).ndim))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` where the 1-D `condition` holds."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    check_arraylike("compress", condition, a, fill_value)
    cond = ufuncs._to_bool(asarray(condition))
    if _aval(cond).ndim != 1:
        raise ValueError("condition must be a 1D array")
    arr = asarray(a)
    if axis is None:
        axis, arr = 0, ravel(arr)
    else:
        arr = moveaxis(arr, axis, 0)
    n, nc = _aval(arr).shape[0], _aval(cond).shape[0]
    extra = _slice_axis(cond, n, None, 0)
    cond = _slice_axis(cond, 0, n, 0)
    arr = _slice_axis(arr, 0, nc, 0)
    m = _aval(arr).shape[0]
    if size is None:
        if _aval(extra).size and np.any(concrete_or_error(
                extra, "the `condition` argument of jnp.compress")):
            raise ValueError("condition contains entries that are out of bounds")
        result = _take(arr, nonzero(cond)[0], 0)
    else:
        size = _concrete_int(size, "size argument of jnp.compress")
        if not 0 <= size <= m:
            raise ValueError("size must be positive and not greater than the size of the "
                             f"array axis; got size={size} for a.shape[axis]={m}")
        keep = lax_shape.broadcast_in_dim(cond, _aval(arr).shape, (0,))
        arr = ufuncs.where(keep, arr, _asarray(fill_value, _aval(arr).dtype))
        order = argsort(cond, stable=True, descending=True)
        result = _take(arr, lax_shape.slice_in_dim(order, 0, size), 0)
    return moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    check_arraylike("extract", condition, arr, fill_value)
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


# --------------------------------------------------------------------------------------
# unique and set operations

_UNIQUE_SIZE_HINT = ("(pass a static `size=`, which fixes the output size, to use it under "
                     "transformations)")


def _unique_sorted_mask(ar, axis, equal_nan):
    """The slices of `ar` along `axis`, sorted; a mask of first-of-a-run; the permutation."""
    aux = moveaxis(ar, axis, 0)
    if _aval(aux).dtype.kind == "c":
        aux = ufuncs.where(ufuncs.isnan(aux), _const(aux, np.nan), aux)
    n, *rest = _aval(aux).shape
    width = math.prod(rest)
    if width == 0:  # as JAX: one (empty) slice, whatever the number of slices
        n, perm = 1, _filled((1,), 0, _default_int())
        aux = _zeros_like(aux, (1, *rest))
    else:
        cols = lax_shape.reshape(aux, (n, width))
        perm = lexsort([lax_shape.index_in_dim(cols, j, 1, False)
                        for j in _range(width)][::-1], axis=0)
        aux = _take(aux, perm, 0)
    if _aval(aux).size == 0:
        return aux, _filled((n,), False, np.bool_), perm
    later, earlier = _slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, n - 1, 0)
    if equal_nan and _aval(aux).dtype.kind in "fc":
        differ = lax.bitwise_and(lax.ne(later, earlier),
                                 lax.bitwise_not(lax.bitwise_and(ufuncs.isnan(later),
                                                                 ufuncs.isnan(earlier))))
    else:
        differ = lax.ne(later, earlier)
    differ = _any(differ, tuple(_range(1, _aval(aux).ndim)))
    mask = lax_shape.concatenate([_filled((1,), True, np.bool_), differ], 0)
    return aux, mask, perm


def _unique(ar, axis, return_index=False, return_inverse=False, return_counts=False,
            equal_nan=True, size=None, fill_value=None, return_true_size=False):
    axis = canonical_axis(axis, _aval(ar).ndim, "unique")
    if _aval(ar).shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan)
    count = _int_sum(mask)
    if size is None:
        n_out = int(concrete_or_error(count, "the number of unique values "
                                      + _UNIQUE_SIZE_HINT))
    else:
        n_out = size
    ind = nonzero(mask, size=n_out)[0]
    result = _take(aux, ind, 0) if _aval(aux).size else aux
    if size is not None and fill_value is not None:
        fill = lax.convert_element_type(asarray(fill_value), _aval(result).dtype)
        if _aval(result).shape[0]:
            valid = lax.lt(_iota(_default_int(), (size,)), count)
            valid = lax_shape.broadcast_in_dim(valid, _aval(result).shape, (0,))
            result = lax.select_n(valid, _filled(_aval(result).shape, fill, _aval(fill).dtype),
                                  result)
        else:
            result = full((size, *_aval(result).shape[1:]), fill)
    out = (moveaxis(result, 0, axis),)
    if return_index:
        out += (_take(perm, ind) if _aval(aux).size else perm,)
    if return_inverse:
        n = _aval(mask).shape[0]
        if _aval(aux).size:
            imask = lax.sub(lax_red.cumsum(lax.convert_element_type(mask, _default_int()), 0),
                            _const(count, 1))
            inv = _scatter1d(lax_idx.scatter, _filled((n,), 0, _default_int()), perm, imask)
        else:
            inv = _filled((_aval(ar).shape[axis],), 0, _default_int())
        out += (inv,)
    if return_counts:
        if _aval(aux).size:
            if size is None:
                idx = concatenate([ind, _filled((1,), _aval(mask).shape[0], _default_int())])
            else:
                idx = nonzero(mask, size=size + 1)[0]
                tail = _slice_axis(idx, 1, None, 0)
                tail = lax.select_n(lax.ne(tail, _const(tail, 0)),
                                    _filled(_aval(tail).shape, _aval(mask).shape[0],
                                            _aval(tail).dtype), tail)
                idx = lax_shape.concatenate([_slice_axis(idx, 0, 1, 0), tail], 0)
            out += (diff(idx),)
        elif _aval(ar).shape[axis]:
            out += (_filled((1,), _aval(ar).shape[axis], _default_int()),)
        else:
            out += (_filled((0,), 0, _default_int()),)
    if return_true_size:
        out += (count,)
    return out[0] if len(out) == 1 else out


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique elements (or slices along `axis`). Without a static `size` the
    input must be concrete; with it, the result is padded with `fill_value` (default: the
    smallest unique value)."""
    check_arraylike("unique", ar)
    arr = asarray(ar)
    if size is None:
        concrete_or_error(arr, "the argument of jnp.unique " + _UNIQUE_SIZE_HINT)
    else:
        size = _concrete_int(size, "the `size` argument of jnp.unique")
    arr_shape = _aval(arr).shape
    if axis is None:
        arr, axis_int = ravel(arr), 0
    else:
        axis_int = canonical_axis(axis, _aval(arr).ndim, "unique")
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts,
                     equal_nan=equal_nan, size=size, fill_value=fill_value)
    if return_inverse and axis is None:
        i = 2 if return_index else 1
        result = (*result[:i], lax_shape.reshape(result[i], arr_shape), *result[i + 1:])
    return result


class _UniqueAllResult(NamedTuple):
    values: ArrayBase
    indices: ArrayBase
    inverse_indices: ArrayBase
    counts: ArrayBase


class _UniqueCountsResult(NamedTuple):
    values: ArrayBase
    counts: ArrayBase


class _UniqueInverseResult(NamedTuple):
    values: ArrayBase
    inverse_indices: ArrayBase


def unique_all(x, /, *, size=None, fill_value=None):
    check_arraylike("unique_all", x)
    return _UniqueAllResult(*unique(x, True, True, True, equal_nan=False, size=size,
                                    fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    check_arraylike("unique_counts", x)
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    check_arraylike("unique_inverse", x)
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                        fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
    check_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def _in1d(ar1, ar2, invert, method="auto", assume_unique=False):
    arr1, arr2 = promote_dtypes(asarray(ar1), asarray(ar2))
    arr1, arr2 = ravel(arr1), ravel(arr2)
    n1, n2 = _aval(arr1).shape[0], _aval(arr2).shape[0]
    if n1 == 0 or n2 == 0:
        return _filled((n1,), invert, np.bool_)
    if method in ("auto", "compare_all"):
        col = lax_shape.broadcast_in_dim(arr1, (n1, n2), (0,))
        row = lax_shape.broadcast_in_dim(arr2, (n1, n2), (1,))
        if invert:
            return _all(lax.ne(col, row), (1,))
        return _any(lax.eq(col, row), (1,))
    if method == "binary_search":
        arr2 = lax_red.sort(arr2, 0)
        found = lax.eq(arr1, _take(arr2, searchsorted(arr2, arr1)))
        return lax.bitwise_not(found) if invert else found
    if method == "sort":
        if assume_unique:
            inverse = None
        else:
            arr1, inverse = unique(arr1, size=n1, return_inverse=True,
                                   fill_value=lax_red.reduce_max(arr2, (0,)))
        both = lax_shape.concatenate([arr1, arr2], 0)
        aux, order = lax_red.sort_key_val(both, _iota(_default_int(), (n1 + n2,)), 0)
        later, earlier = _slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0)
        flags = lax.ne(later, earlier) if invert else lax.eq(later, earlier)
        found = _scatter1d(lax_idx.scatter, _filled((n1,), invert, np.bool_),
                           _slice_axis(order, 0, -1, 0), flags)
        return found if inverse is None else _take(found, inverse)
    raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', "
                     "'binary_search', 'sort', and 'auto'")


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Elementwise: is each element of `element` in `test_elements`?"""
    check_arraylike("isin", element, test_elements)
    result = _in1d(element, test_elements, invert, method, assume_unique)
    return lax_shape.reshape(result, np.shape(element))


def union1d(ar1, ar2, *, size=None, fill_value=None):
    check_arraylike("union1d", ar1, ar2)
    if size is None:
        concrete_or_error(asarray(ar1), "the arguments of jnp.union1d " + _UNIQUE_SIZE_HINT)
        concrete_or_error(asarray(ar2), "the arguments of jnp.union1d " + _UNIQUE_SIZE_HINT)
    else:
        size = _concrete_int(size, "the `size` argument of jnp.union1d")
    both = concatenate((asarray(ar1), asarray(ar2)), axis=None)
    return unique(both, size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of `ar1` that are not in `ar2`."""
    check_arraylike("setdiff1d", ar1, ar2)
    arr1, arr2 = ravel(ar1), ravel(ar2)
    if size is None:
        concrete_or_error(arr1, "the first argument of jnp.setdiff1d " + _UNIQUE_SIZE_HINT)
    else:
        size = _concrete_int(size, "the `size` argument of jnp.setdiff1d")
    fill = full_like(arr1, 0 if fill_value is None else fill_value, shape=())
    n1 = _aval(arr1).shape[0]
    if n1 == 0:
        return full_like(arr1, fill, shape=(size or 0,))
    if not assume_unique:
        arr1 = unique(arr1, size=size and n1)
    mask = _in1d(arr1, arr2, invert=True)
    if size is None:
        return _take(arr1, nonzero(mask)[0])
    n = _aval(arr1).shape[0]
    if not assume_unique:
        first = lax_shape.broadcast_in_dim(lax_shape.slice_in_dim(arr1, 0, 1), (n,), (0,))
        n_unique = lax.sub(np.asarray(n + 1, _default_int()), _int_sum(lax.eq(arr1, first)))
        mask = lax.bitwise_and(mask, lax.lt(_iota(_default_int(), (n,)), n_unique))
    vals = _take(arr1, nonzero(mask, size=size)[0])
    return ufuncs.where(lax.lt(_iota(_default_int(), (size,)), _int_sum(mask)), vals, fill)


def _pad_result(vals, num, fill_value):
    """vals[i] for i < num, else fill_value (default: the smallest valid value, as JAX)."""
    n = _aval(vals).shape[0]
    valid = lax.lt(_iota(_default_int(), (n,)), num)
    if fill_value is None:
        vals = ufuncs.where(valid, vals, lax_red.reduce_max(vals, (0,)))
        return ufuncs.where(valid, vals, lax_red.reduce_min(vals, (0,)))
    return ufuncs.where(valid, vals, fill_value)


def _concat_unique(arr1, arr2):
    """The unique values of each array, packed one after the other, and their total count."""
    arr1, num1 = _unique(ravel(arr1), 0, size=_aval(arr1).size, return_true_size=True)
    arr2, num2 = _unique(ravel(arr2), 0, size=_aval(arr2).size, return_true_size=True)
    dt = dtypes.result_type(arr1, arr2)
    out = _filled((_aval(arr1).size + _aval(arr2).size,), 0, dt)
    out = lax_idx.dynamic_update_slice(out, lax.convert_element_type(arr1, dt), (0,))
    out = lax_idx.dynamic_update_slice(out, lax.convert_element_type(arr2, dt), (num1,))
    return out, lax.add(num1, num2)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values that are in exactly one of the inputs."""
    check_arraylike("setxor1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ravel(ar1), ravel(ar2))
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value, assume_unique,
                              _concrete_int(size, "size argument of jnp.setxor1d"))
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = lax_shape.concatenate([arr1, arr2], 0)
    if _aval(aux).size == 0:
        return aux
    aux = lax_red.sort(aux, 0)
    differ = lax.ne(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
    true = _filled((1,), True, np.bool_)
    flag = lax_shape.concatenate([true, differ, true], 0)
    keep = lax.bitwise_and(_slice_axis(flag, 1, None, 0), _slice_axis(flag, 0, -1, 0))
    return _take(aux, nonzero(keep)[0])


def _setxor1d_size(arr1, arr2, fill_value, assume_unique, size):
    if assume_unique:
        aux = lax_red.sort(lax_shape.concatenate([arr1, arr2], 0), 0)
        n = _aval(aux).size
        differ = lax.ne(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
        flag = lax_shape.concatenate([_filled((1,), bool(n), np.bool_), differ,
                                      _filled((1,), True, np.bool_)], 0)
    else:
        arr, num = _concat_unique(arr1, arr2)
        n = _aval(arr).size
        mask = lax.lt(_iota(_default_int(), (n + 1,)), lax.add(num, _const(num, 1)))
        _, aux = lax_red.sort([lax.bitwise_not(_slice_axis(mask, 1, None, 0)), arr], 0,
                              num_keys=2)
        differ = lax.ne(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
        flag = lax_shape.concatenate([_filled((1,), bool(n), np.bool_), differ,
                                      _filled((1,), False, np.bool_)], 0)
        at_num = lax.eq(_iota(_default_int(), _aval(flag).shape), num)
        flag = lax.bitwise_and(mask, lax.bitwise_or(flag, at_num))
    keep = lax.bitwise_and(_slice_axis(flag, 1, None, 0), _slice_axis(flag, 0, -1, 0))
    num_results = _int_sum(keep)
    if n:
        where_idx = nonzero(keep, size=size, fill_value=n)[0]
        vals = _take(aux, where_idx, mode="fill", fill_value=0)
    else:
        vals = _filled((size,), 0, _aval(aux).dtype)
    return _pad_result(vals, num_results, fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """Sorted values common to both inputs (and optionally where each first occurs)."""
    check_arraylike("intersect1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ravel(ar1), ravel(ar2))
    if size is not None:
        return _intersect1d_size(arr1, arr2, fill_value, assume_unique,
                                 _concrete_int(size, "size argument of jnp.intersect1d"),
                                 return_indices)
    ind1 = ind2 = None
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    both = lax_shape.concatenate([arr1, arr2], 0)
    n = _aval(both).shape[0]
    aux, order = lax_red.sort_key_val(both, _iota(np.int32, (n,)), 0)
    mask = lax.eq(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
    hits = nonzero(mask)[0] if n > 1 else _filled((0,), 0, _default_int())
    values = _take(aux, hits)
    if not return_indices:
        return values
    idx1 = _take(order, hits)
    idx2 = lax.sub(_take(order, lax.add(hits, _const(hits, 1))),
                   _const(order, _aval(arr1).shape[0]))
    if ind1 is not None:
        idx1, idx2 = _take(ind1, idx1), _take(ind2, idx2)
    return values, idx1, idx2


def _intersect1d_size(arr1, arr2, fill_value, assume_unique, size, return_indices):
    dt = _default_int()
    n1, n2 = _aval(arr1).size, _aval(arr2).size
    if assume_unique:
        ind1, num1 = _iota(dt, (n1,)), np.asarray(n1, dt)
        ind2 = _iota(dt, (n2,))
        arr = lax_shape.concatenate([arr1, arr2], 0)
        aux, aux_order = lax_red.sort([arr, _iota(dt, (n1 + n2,))], 0, num_keys=1)
        mask = _filled((n1 + n2,), True, np.bool_)
    else:
        arr1, ind1, num1 = _unique(arr1, 0, size=n1, return_index=True,
                                   return_true_size=True, fill_value=0)
        arr2, ind2, num2 = _unique(arr2, 0, size=n2, return_index=True,
                                   return_true_size=True, fill_value=0)
        arr = _filled((n1 + n2,), 0, _aval(arr1).dtype)
        arr = lax_idx.dynamic_update_slice(arr, arr1, (0,))
        arr = lax_idx.dynamic_update_slice(arr, arr2, (num1,))
        mask = lax.lt(_iota(dt, (n1 + n2,)), lax.add(num1, num2))
        _, aux, aux_order = lax_red.sort([lax.bitwise_not(mask), arr, _iota(dt, (n1 + n2,))],
                                         0, num_keys=2)
    same = lax.eq(_slice_axis(aux, 1, None, 0), _slice_axis(aux, 0, -1, 0))
    aux_mask = lax.bitwise_and(same, _slice_axis(mask, 1, None, 0))
    num_results = _int_sum(aux_mask)
    if _aval(aux).size:
        hits = nonzero(aux_mask, size=size, fill_value=_aval(aux).size)[0]
        vals = _take(aux, hits, mode="fill", fill_value=0)
    else:
        hits = _filled((0,), 0, dt)
        vals = _filled((size,), 0, _aval(aux).dtype)
    vals = _pad_result(vals, num_results, fill_value)
    if not return_indices:
        return vals
    valid = lax.lt(_iota(dt, (_aval(hits).shape[0],)), num_results)
    idx1 = _take(aux_order, hits, mode="fill", fill_value=n1)
    idx1 = ufuncs.where(valid, idx1, n1)
    idx2 = ufuncs.subtract(_take(aux_order, lax.add(hits, _const(hits, 1)), mode="fill",
                                 fill_value=n2), num1)
    idx2 = ufuncs.where(valid, idx2, n2)
    if not assume_unique:
        idx1 = _take(ind1, idx1, mode="fill", fill_value=_aval(ind1).size)
        idx2 = _take(ind2, idx2, mode="fill", fill_value=_aval(ind2).size)
    return vals, idx1, idx2


# --------------------------------------------------------------------------------------
# Choosing and counting


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    default, *choices = promote_dtypes(asarray(default), *(asarray(c) for c in choicelist))
    conds = [ufuncs._to_bool(c) for c in condlist]
    out = broadcast_arrays(default, *conds, *choices)[0]
    for cond, choice in zip(conds[::-1], choices[::-1]):
        out = ufuncs.where(cond, choice, out)
    return out


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] elementwise (after broadcasting `a` with every choice)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    choices = _as_array_list("choose", choices)
    check_arraylike("choose", a)
    a = asarray(a)
    if not np.issubdtype(_aval(a).dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        v = np.asarray(concrete_or_error(a, "the indices checked by jnp.choose(mode='raise') "
                                         "(use mode='wrap' or mode='clip' under "
                                         "transformations)"))
        if np.any((v < 0) | (v >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = ufuncs.remainder(a, n)
    elif mode == "clip":
        a = ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    choices = [lax.convert_element_type(c, _aval(c).dtype) for c in promote_dtypes(*choices)]
    a, *choices = broadcast_arrays(a, *choices)
    s = _aval(a).shape
    m = math.prod(s)
    stacked = ravel(stack(choices))
    flat_idx = ufuncs.add(ufuncs.multiply(ravel(a), m), _iota(_aval(a).dtype, (m,)))
    return lax_shape.reshape(_take(stacked, flat_idx), s)


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) (or the constant funclist[i]) where condlist[i] holds; later conditions
    win, and an extra last function is the default. Each function is applied to all of x."""
    check_arraylike("piecewise", x)
    x = asarray(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    dtype = _aval(x).dtype

    def value(f):
        if callable(f):
            return lax.convert_element_type(asarray(f(x, *args, **kw)), dtype)
        return _asarray(f, dtype)

    conds = asarray(condlist, bool)
    out = broadcast_to(value(funclist[0]), _aval(x).shape)
    for i, f in enumerate(funclist[1:]):
        cond = lax_shape.index_in_dim(conds, i, 0, False)
        out = ufuncs.where(cond, value(f), out)
    return out


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative integer in `x`; traced `x` needs a
    static `length`."""
    check_arraylike("bincount", x)
    x = asarray(x)
    if _aval(x).dtype == np.bool_:
        x = lax.convert_element_type(x, np.int32)
    if not np.issubdtype(_aval(x).dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got "
                        f"{_aval(x).dtype}")
    if _aval(x).ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = _concrete_int(minlength, "the `minlength` argument of jnp.bincount")
    if length is None:
        v = np.asarray(concrete_or_error(x, "the values counted by jnp.bincount, which set the "
                                         "output length (pass a static `length=` to use it "
                                         "under transformations)"))
        length = max(minlength, v.size and int(max(0, v.max())) + 1)
    else:
        length = _concrete_int(length, "the `length` argument of jnp.bincount")
    if weights is None:
        weights = _filled(_aval(x).shape, 1, _default_int())
    else:
        weights = asarray(weights)
        if _aval(weights).shape != _aval(x).shape:
            raise ValueError(f"shape of weights must match shape of x. Got x.shape="
                             f"{_aval(x).shape} and weights.shape={_aval(weights).shape}")
    w = _aval(weights)
    return _scatter1d(lax_idx.scatter_add, _filled((length,), 0, w.dtype),
                      ufuncs.maximum(x, _const(x, 0)), weights)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    arr = asarray(a)
    dtype = _to_inexact(_aval(arr).dtype)
    if np.ndim(bins) == 1:
        return _asarray(bins, dtype)
    n_bins = _concrete_int(bins, "bins argument of histogram_bin_edges")
    if range is None:
        axes = tuple(_range(_aval(arr).ndim))
        range = [lax_red.reduce_min(arr, axes), lax_red.reduce_max(arr, axes)]
    range = _asarray(range, dtype)
    if _aval(range).shape != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    lo, hi = lax_shape.index_in_dim(range, 0, 0, False), lax_shape.index_in_dim(range, 1, 0,
                                                                                 False)
    same = lax.eq(lo, hi)
    lo = ufuncs.where(same, ufuncs.subtract(lo, 0.5), lo)
    hi = ufuncs.where(same, ufuncs.add(hi, 0.5), hi)
    return linspace(lo, hi, n_bins + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts (or summed weights) of `a` in each bin, and the bin edges."""
    if weights is None:
        check_arraylike("histogram", a, bins)
        (a,) = promote_dtypes_inexact(asarray(a))
        weights = ones_like(a)
    else:
        check_arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, weights = promote_dtypes_inexact(asarray(a), asarray(weights))
    edges = histogram_bin_edges(a, bins, range, weights)
    n = _aval(edges).shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = ufuncs.where(ufuncs.equal(a, lax_shape.index_in_dim(edges, n - 1, 0, False)), n - 1,
                       idx)
    counts = _scatter1d(lax_idx.scatter_add, _filled((n,), 0, _aval(weights).dtype), ravel(idx),
                        ravel(weights))
    counts = lax_shape.slice_in_dim(counts, 1, n)
    if density:
        total = lax_red.reduce_sum(counts, (0,))
        counts = ufuncs.true_divide(ufuncs.true_divide(counts, diff(edges)), total)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """Counts of the rows of the (N, D) `sample` in a D-dimensional grid of bins."""
    if weights is None:
        check_arraylike("histogramdd", sample)
        (sample,) = promote_dtypes_inexact(asarray(sample))
    else:
        check_arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(asarray(sample), asarray(weights))
    n, d = _aval(sample).shape
    if range is not None and (len(range) != d or any(r is not None and np.shape(r)[0] != 2
                                                     for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or "
                         f"Nones; got range={range}")
    try:
        bins_per_dim = list(bins)
    except TypeError:
        bins_per_dim = d * [bins]
    else:
        if len(bins_per_dim) != d:
            raise ValueError("should be a bin for each dimension.")
    idx_by_dim, edges_by_dim = [], []
    for i in _range(d):
        col = lax_shape.index_in_dim(sample, i, 1, False)
        edges = histogram_bin_edges(col, bins_per_dim[i], None if range is None else range[i])
        m = _aval(edges).shape[0]
        idx = searchsorted(edges, col, side="right")
        last = lax_shape.index_in_dim(edges, m - 1, 0, False)
        idx = ufuncs.where(ufuncs.equal(col, last), ufuncs.subtract(idx, 1), idx)
        idx_by_dim.append(idx)
        edges_by_dim.append(edges)
    nbins = tuple(_aval(e).shape[0] + 1 for e in edges_by_dim)
    xy = ravel_multi_index(tuple(idx_by_dim), nbins, mode="clip")
    hist = reshape(bincount(xy, weights, length=math.prod(nbins)), nbins)
    for i in _range(d):
        hist = lax_shape.slice_in_dim(hist, 1, nbins[i] - 1, 1, i)
    if density:
        hist = lax.convert_element_type(hist, _aval(sample).dtype)
        hist = ufuncs.true_divide(hist, lax_red.reduce_sum(hist, tuple(_range(d))))
        for norm in ix_(*(diff(e) for e in edges_by_dim)):
            hist = ufuncs.true_divide(hist, norm)
    return hist, edges_by_dim


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    check_arraylike("histogram2d", x, y)
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        bins = [asarray(bins), asarray(bins)]
    sample = transpose(stack([asarray(x), asarray(y)]))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


# --------------------------------------------------------------------------------------
# Comparisons of whole arrays, cleaning and interpolation


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise; infinities are close only to themselves."""
    check_arraylike("isclose", a, b)
    a, b = promote_dtypes(asarray(a), asarray(b))
    a, b = promote_dtypes_inexact(a, b)
    a, b = broadcast_arrays(a, b)
    dtype = _aval(a).dtype
    real = np.finfo(dtype).dtype if dtype.kind == "c" else dtype
    rtol = lax.convert_element_type(rtol, real)
    atol = lax.convert_element_type(atol, real)
    both_nan = lax.bitwise_and(ufuncs.isnan(a), ufuncs.isnan(b))
    finite = ufuncs.isfinite(b)
    in_range = ufuncs.less_equal(lax.abs(lax.sub(a, b)),
                                 ufuncs.add(atol, ufuncs.multiply(rtol, lax.abs(b))))
    out = lax.bitwise_or(lax.eq(a, b), lax.bitwise_and(finite, in_range))
    return lax.bitwise_or(out, both_nan) if equal_nan else out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_arraylike("allclose", a, b)
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """True if the shapes match and every element is equal (NaNs too if `equal_nan`)."""
    a1, a2 = asarray(a1), asarray(a2)
    if _aval(a1).shape != _aval(a2).shape:
        return asarray(False, bool)
    eq = ufuncs.equal(a1, a2)
    if equal_nan:
        eq = lax.bitwise_or(eq, lax.bitwise_and(ufuncs.isnan(a1), ufuncs.isnan(a2)))
    return _all(eq)


def array_equiv(a1, a2):
    """True if the arrays broadcast together and are equal everywhere."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        eq = ufuncs.equal(a1, a2)
    except (ValueError, TypeError):
        return asarray(False)
    return _all(eq)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN and infinities replaced by finite numbers (the dtype's extremes by default)."""
    check_arraylike("nan_to_num", x)
    x = asarray(x)
    dtype = _aval(x).dtype
    if dtype.kind not in "fc":
        return x
    if dtype.kind == "c":
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = np.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = ufuncs.where(ufuncs.isnan(x), _asarray(nan, dtype), x)
    out = ufuncs.where(ufuncs.isposinf(out), _asarray(posinf, dtype), out)
    return ufuncs.where(ufuncs.isneginf(out), _asarray(neginf, dtype), out)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x; `xp` must be increasing."""
    check_arraylike("interp", x, xp, fp)
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if _aval(xp).shape != _aval(fp).shape or _aval(xp).ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promote_dtypes_inexact(x, xp)
    (fp,) = promote_dtypes_inexact(fp)
    extrapolate = []
    for name, side in (("left", left), ("right", right)):
        if isinstance(side, str) and side != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but "
                             f"got: {side!r}")
        extrapolate.append(isinstance(side, str))
    if _aval(x).dtype.kind == "c":
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = ufuncs.abs(period)
        x, xp = ufuncs.remainder(x, period), ufuncs.remainder(xp, period)
        xp, fp = lax_red.sort_key_val(xp, fp, 0)
        xp = concatenate([ufuncs.subtract(_slice_axis(xp, -1, None, 0), period), xp,
                          ufuncs.add(_slice_axis(xp, 0, 1, 0), period)])
        fp = concatenate([_slice_axis(fp, -1, None, 0), fp, _slice_axis(fp, 0, 1, 0)])
    n = _aval(xp).shape[0]
    i = ufuncs.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    im1 = ufuncs.subtract(i, 1)
    df = ufuncs.subtract(_take(fp, i), _take(fp, im1))
    dx = ufuncs.subtract(_take(xp, i), _take(xp, im1))
    delta = ufuncs.subtract(x, _take(xp, im1))
    eps = np.spacing(np.finfo(_aval(xp).dtype).eps)
    dx0 = ufuncs.less_equal(ufuncs.abs(dx), eps)
    f = ufuncs.where(dx0, _take(fp, im1), ufuncs.add(
        _take(fp, im1), ufuncs.multiply(ufuncs.true_divide(delta, ufuncs.where(dx0, 1, dx)), df)))
    if period is None:
        if not extrapolate[0]:
            value = _take(fp, 0) if left is None else left
            f = ufuncs.where(ufuncs.less(x, _take(xp, 0)), value, f)
        if not extrapolate[1]:
            value = _take(fp, n - 1) if right is None else right
            f = ufuncs.where(ufuncs.greater(x, _take(xp, n - 1)), value, f)
    return f


def _conv(x, y, mode, op, precision, preferred_element_type):
    """1-D convolution/correlation as a sum of shifted copies, built with one reshape.

    For a (padded) signal of length L and a kernel of length m, broadcasting the signal to
    (m, L), flattening, padding by m and viewing it as (m, L + 1) shifts row r by r: row
    r holds x[r:r + L + 1], so out[i] = sum_r y[r] * rows[r, i].
    """
    if np.ndim(x) != 1 or np.ndim(y) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    if _aval(x).shape[0] == 0 or _aval(y).shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {_aval(x).shape} and "
                         f"{_aval(y).shape}.")
    reverse_out = False
    if op == "correlate":
        y = ufuncs.conj(y)
        if _aval(x).shape[0] < _aval(y).shape[0]:
            x, y, reverse_out = y, x, True
    else:
        if _aval(x).shape[0] < _aval(y).shape[0]:
            x, y = y, x
        y = lax_shape.rev(y, (0,))
    m = _aval(y).shape[0]
    if mode == "valid":
        lo, hi = 0, 0
    elif mode == "same":
        lo, hi = m // 2, m - m // 2 - 1
    elif mode == "full":
        lo, hi = m - 1, m - 1
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if preferred_element_type is not None:
        dt = _user_dtype(preferred_element_type, op)
        x, y = lax.convert_element_type(x, dt), lax.convert_element_type(y, dt)
    x = lax_shape.pad(x, _const(x, 0), [(lo, hi, 0)])
    length = _aval(x).shape[0]
    n_out = length - m + 1
    rows = lax_shape.reshape(lax_shape.broadcast_in_dim(x, (m, length), (1,)), (m * length,))
    rows = lax_shape.pad(rows, _const(rows, 0), [(0, m, 0)])
    rows = lax_shape.slice(lax_shape.reshape(rows, (m, length + 1)), (0, 0), (m, n_out))
    out = lax_red.reduce_sum(lax.mul(rows, lax_shape.broadcast_in_dim(y, (m, n_out), (0,))),
                             (0,))
    return lax_shape.rev(out, (0,)) if reverse_out else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    check_arraylike("convolve", a, v)
    return _conv(asarray(a), asarray(v), mode, "convolve", precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    check_arraylike("correlate", a, v)
    return _conv(asarray(a), asarray(v), mode, "correlate", precision, preferred_element_type)


def polyval(p, x, *, unroll=16):
    """p[0] * x**(n-1) + ... + p[n-1] by Horner's rule."""
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(asarray(p), asarray(x))
    shape = np.broadcast_shapes(_aval(p).shape[1:], _aval(x).shape)
    y = _filled(shape, 0, _aval(x).dtype, _aval(x).weak_type)
    for i in _range(_aval(p).shape[0]):
        y = ufuncs.add(ufuncs.multiply(y, x), lax_shape.index_in_dim(p, i, 0, False))
    return y


def vander(x, N=None, increasing=False):
    """Columns are powers of the 1-D `x` (decreasing powers unless `increasing`)."""
    check_arraylike("vander", x)
    x = asarray(x)
    if _aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = _aval(x).shape[0] if N is None else _concrete_int(N, "'N' argument of jnp.vander()")
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = _iota(_aval(x).dtype, (n,))
    if not increasing:
        powers = lax.sub(_const(powers, n - 1), powers)
    base, exponent = broadcast_arrays(lax_shape.expand_dims(x, (1,)),
                                      lax_shape.expand_dims(powers, (0,)))
    return ufuncs.power(base, exponent)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """n-th discrete difference along `axis` (`!=` for booleans)."""
    check_arraylike("diff", a)
    arr = asarray(a)
    n = _concrete_int(n, "'n' argument of jnp.diff")
    axis = _concrete_int(axis, "'axis' argument of jnp.diff")
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if _aval(arr).ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = canonical_axis(axis, _aval(arr).ndim, "diff")

    def edge(extra):
        extra = asarray(extra)
        if _aval(extra).ndim == 0:
            s = list(_aval(arr).shape)
            s[axis] = 1
            extra = broadcast_to(extra, s)
        return extra

    parts = [edge(prepend)] if prepend is not None else []
    parts += [arr] + ([edge(append)] if append is not None else [])
    if len(parts) > 1:
        arr = concatenate(parts, axis)
    op = ufuncs.not_equal if _aval(arr).dtype == np.bool_ else ufuncs.subtract
    for _ in _range(n):
        arr = op(_slice_axis(arr, 1, None, axis), _slice_axis(arr, 0, -1, axis))
    return arr


def ediff1d(ary, to_end=None, to_begin=None):
    check_arraylike("ediff1d", ary)
    arr = ravel(ary)
    result = lax.sub(_slice_axis(arr, 1, None, 0), _slice_axis(arr, 0, -1, 0))
    dt = _aval(arr).dtype
    if to_begin is not None:
        check_arraylike("ediff1d", to_begin)
        result = concatenate((ravel(_asarray(to_begin, dt)), result))
    if to_end is not None:
        check_arraylike("ediff1d", to_end)
        result = concatenate((result, ravel(_asarray(to_end, dt))))
    return result


def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided at the edges; `varargs` are spacings (scalars
    or coordinate arrays)."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = promote_dtypes_inexact(*(asarray(v) for v in (f, *varargs)))
    nd = _aval(a).ndim

    def along(a, h, ax):
        def sl(x, lo, hi):
            return _slice_axis(x, lo, hi, ax)

        upper = ufuncs.subtract(sl(a, 1, 2), sl(a, 0, 1))
        lower = ufuncs.subtract(sl(a, -1, None), sl(a, -2, -1))
        if _aval(h).ndim == 0:
            inner = ufuncs.true_divide(ufuncs.multiply(ufuncs.subtract(sl(a, 2, None),
                                                                       sl(a, None, -2)), 0.5), h)
            return concatenate((ufuncs.true_divide(upper, h), inner,
                                ufuncs.true_divide(lower, h)), axis=ax)
        if _aval(h).ndim != 1:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        if _aval(h).shape[0] != _aval(a).shape[ax]:
            raise ValueError("Spacing arrays must have the same length as the dimension along "
                             "which the gradient is calculated.")
        shape = [1] * nd
        shape[ax] = _aval(h).shape[0]
        h = lax_shape.reshape(h, shape)
        upper = ufuncs.true_divide(upper, ufuncs.subtract(sl(h, 1, 2), sl(h, 0, 1)))
        lower = ufuncs.true_divide(lower, ufuncs.subtract(sl(h, -1, None), sl(h, -2, -1)))
        dx1 = ufuncs.subtract(sl(h, 1, -1), sl(h, 0, -2))
        dx2 = ufuncs.subtract(sl(h, 2, None), sl(h, 1, -1))
        total = ufuncs.add(dx1, dx2)
        ca = ufuncs.true_divide(ufuncs.negative(dx2), ufuncs.multiply(dx1, total))
        cb = ufuncs.true_divide(ufuncs.subtract(dx2, dx1), ufuncs.multiply(dx1, dx2))
        cc = ufuncs.true_divide(dx1, ufuncs.multiply(dx2, total))
        inner = ufuncs.add(ufuncs.add(ufuncs.multiply(ca, sl(a, 0, -2)),
                                      ufuncs.multiply(cb, sl(a, 1, -1))),
                           ufuncs.multiply(cc, sl(a, 2, None)))
        return concatenate((upper, inner, lower), axis=ax)

    axes = tuple(_range(nd)) if axis is None else tuple(
        canonical_axis(i, nd, "gradient") for i in _axis_tuple(axis))
    if not axes:
        return []
    if min(_aval(a).shape[i] for i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "2 elements are required.")
    if not spacing:
        spacing = [_asarray(1.0, _aval(a).dtype)] * len(axes)
    elif len(spacing) == 1:
        spacing = spacing * len(axes)
    elif len(spacing) != len(axes):
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    out = [along(a, h, ax) for ax, h in zip(axes, spacing)]
    return out[0] if len(axes) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of `y` along `axis` by the trapezoidal rule."""
    from didax._src.numpy import reductions

    if x is None:
        check_arraylike("trapezoid", y)
        (y,) = promote_dtypes_inexact(asarray(y))
        dx = asarray(dx)
        if _aval(dx).ndim > 0:
            dx = moveaxis(lax_shape.broadcast_to_rank(dx, _aval(y).ndim), axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        y, x = promote_dtypes_inexact(asarray(y), asarray(x))
        dx = diff(x) if _aval(x).ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    n = _aval(y).shape[-1]
    if _aval(dx).ndim == 0 or _aval(dx).shape[-1] == 1:
        d = dx if _aval(dx).ndim == 0 else lax_shape.squeeze(dx, (_aval(dx).ndim - 1,))
        ends = ufuncs.add(_slice_axis(y, 0, 1, -1 % _aval(y).ndim),
                          _slice_axis(y, n - 1, n, -1 % _aval(y).ndim))
        ends = lax_shape.squeeze(ends, (_aval(y).ndim - 1,))
        return ufuncs.multiply(d, ufuncs.subtract(reductions.sum(y, -1),
                                                  ufuncs.multiply(0.5, ends)))
    nd = _aval(y).ndim
    pairs = ufuncs.add(_slice_axis(y, 1, None, nd - 1), _slice_axis(y, 0, -1, nd - 1))
    return ufuncs.multiply(0.5, reductions.sum(ufuncs.multiply(dx, pairs), -1))


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """`p` with jumps larger than `discont` replaced by their `period` complement."""
    from didax._src.numpy import reductions

    check_arraylike("unwrap", p)
    p, period = promote_dtypes(asarray(p), asarray(period))
    if _aval(p).dtype.kind == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    axis = canonical_axis(axis, _aval(p).ndim, "unwrap")
    if _aval(p).shape[axis] == 0:
        return p
    if discont is None:
        discont = ufuncs.true_divide(period, 2)
    if _aval(p).dtype.kind in "iu":
        interval = ufuncs.floor_divide(period, 2)
    else:
        interval = ufuncs.true_divide(period, 2)
    dd = diff(p, axis=axis)
    ddmod = ufuncs.subtract(ufuncs.mod(ufuncs.add(dd, interval), period), interval)
    ddmod = ufuncs.where(ufuncs.logical_and(ufuncs.equal(ddmod, ufuncs.negative(interval)),
                                            ufuncs.greater(dd, 0)), interval, ddmod)
    correct = ufuncs.where(ufuncs.less(ufuncs.abs(dd), discont), 0,
                           ufuncs.subtract(ddmod, dd))
    rest = ufuncs.add(_slice_axis(p, 1, None, axis), reductions.cumsum(correct, axis=axis))
    return concatenate((_slice_axis(p, 0, 1, axis), rest), axis=axis)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping the rank."""
    check_arraylike("apply_over_axes", a)
    a = asarray(a)
    for axis in axes:
        b = func(a, axis)
        if _aval(b).ndim == _aval(a).ndim:
            a = b
        elif _aval(b).ndim == _aval(a).ndim - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def packbits(a, axis=None, bitorder="big"):
    """Booleans (nonzero entries) packed 8 to a uint8, along `axis` (flattened if None)."""
    check_arraylike("packbits", a)
    arr = asarray(a)
    if _aval(arr).dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = lax.convert_element_type(ufuncs._to_bool(arr), np.uint8)
    shifts = _iota(np.uint8, (8,))
    if bitorder == "big":
        shifts = lax_shape.rev(shifts, (0,))
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    nd, n = _aval(arr).ndim, _aval(arr).shape[-1]
    if n % 8:
        arr = lax_shape.pad(arr, np.uint8(0), [(0, 0, 0)] * (nd - 1) + [(0, 8 - n % 8, 0)])
    arr = lax_shape.reshape(arr, _aval(arr).shape[:-1] + (_aval(arr).shape[-1] // 8, 8))
    bits = lax.shift_left(arr, lax_shape.broadcast_in_dim(shifts, _aval(arr).shape, (nd,)))
    return swapaxes(lax_red.reduce_or(bits, (nd,)), axis, -1)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    check_arraylike("unpackbits", a)
    arr = asarray(a)
    if _aval(arr).dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    masks = lax.shift_left(np.ones(8, np.uint8), _iota(np.uint8, (8,)))
    if bitorder == "big":
        masks = lax_shape.rev(masks, (0,))
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    nd = _aval(arr).ndim
    full_shape = _aval(arr).shape + (8,)
    spread = lax_shape.broadcast_in_dim(arr, full_shape, tuple(_range(nd)))
    bits = lax.bitwise_and(spread, lax_shape.broadcast_in_dim(masks, full_shape, (nd,)))
    out = lax.convert_element_type(lax.ne(bits, np.uint8(0)), np.uint8)
    out = lax_shape.reshape(out, _aval(arr).shape[:-1] + (_aval(arr).shape[-1] * 8,))
    if count is not None:
        n = _aval(out).shape[-1]
        if count > n:
            out = lax_shape.pad(out, np.uint8(0), [(0, 0, 0)] * (nd - 1) + [(0, count - n, 0)])
        else:
            out = _slice_axis(out, 0, count, nd - 1)
    return swapaxes(out, axis, -1)


def gcd(x1, x2):
    """Greatest common divisor, by Euclid's algorithm unrolled for the worst case of the
    dtype (consecutive Fibonacci numbers need about 1.44 * bits steps)."""
    check_arraylike("gcd", x1, x2)
    x1, x2 = promote_dtypes(asarray(x1), asarray(x2))
    if _aval(x1).dtype.kind not in "iu":
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = broadcast_arrays(ufuncs.abs(x1), ufuncs.abs(x2))
    x1, x2 = lax.max(x1, x2), lax.min(x1, x2)
    zero, one = _zeros_like(x1), _filled(_aval(x1).shape, 1, _aval(x1).dtype)
    for _ in _range(int(1.45 * 8 * _aval(x1).dtype.itemsize) + 2):
        nonzero = lax.ne(x2, zero)
        r = lax.rem(x1, lax.select_n(nonzero, one, x2))
        x1, x2 = lax.select_n(nonzero, x1, x2), lax.select_n(nonzero, zero, r)
    return x1


def lcm(x1, x2):
    check_arraylike("lcm", x1, x2)
    x1, x2 = promote_dtypes(asarray(x1), asarray(x2))
    if _aval(x1).dtype.kind not in "iu":
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    x1, x2 = ufuncs.abs(x1), ufuncs.abs(x2)
    d = gcd(x1, x2)
    safe = ufuncs.where(ufuncs.equal(d, 0), 1, d)
    return ufuncs.where(ufuncs.equal(d, 0), 0,
                        ufuncs.multiply(x1, ufuncs.floor_divide(x2, safe)))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables in the rows (or columns) of `m` (and `y`)."""
    from didax._src.numpy import products, reductions

    if y is not None:
        check_arraylike("cov", m, y)
        m, y = promote_dtypes_inexact(asarray(m), asarray(y))
        if _aval(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        check_arraylike("cov", m)
        (m,) = promote_dtypes_inexact(asarray(m))
    if _aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not np.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
    X = atleast_2d(m)
    if not rowvar and _aval(m).ndim != 1:
        X = matrix_transpose(X)
    if _aval(X).shape[0] == 0:
        return _filled((0, 0), 0, dtypes.default_float_dtype())
    if y is not None:
        Y = atleast_2d(y)
        if not rowvar and _aval(Y).shape[0] != 1:
            Y = matrix_transpose(Y)
        X = concatenate((X, Y), axis=0)
    nvar, nobs = _aval(X).shape
    if nobs == 0:
        return full(() if nvar == 1 else (nvar, nvar), np.nan, dtype=_aval(X).dtype)
    if ddof is None:
        ddof = 1 if not bias else 0
    w = None
    if fweights is not None:
        fweights = asarray(fweights)
        if _aval(fweights).ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if _aval(fweights).shape[0] != nobs:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if _aval(fweights).dtype.kind not in "iu":
            raise TypeError("fweights must be integer.")
        w = ufuncs.abs(fweights)
    if aweights is not None:
        aweights = asarray(aweights)
        if _aval(aweights).ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if _aval(aweights).shape[0] != nobs:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = ufuncs.abs(aweights)
        w = aweights if w is None else ufuncs.multiply(w, aweights)
    if dtype is not None:
        X = lax.convert_element_type(X, _user_dtype(dtype, "cov"))
        w = None if w is None else lax.convert_element_type(w, _user_dtype(dtype, "cov"))
    avg, w_sum = reductions.average(X, axis=1, weights=w, returned=True)
    w_sum = lax_shape.index_in_dim(w_sum, 0, 0, False)
    if w is None:
        f = nobs - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = ufuncs.subtract(w_sum, ddof)
    else:
        f = ufuncs.subtract(w_sum, ufuncs.true_divide(
            ufuncs.multiply(ddof, reductions.sum(ufuncs.multiply(w, aweights))), w_sum))
    X = ufuncs.subtract(X, lax_shape.expand_dims(avg, (1,)))
    Xw = X if w is None else ufuncs.multiply(X, lax_shape.broadcast_to_rank(w, 2))
    c = products.dot(X, ufuncs.conj(matrix_transpose(Xw)))
    return squeeze(ufuncs.true_divide(c, f))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients, clipped to [-1, 1]."""
    check_arraylike("corrcoef", x)
    if dtype is not None and not np.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype}")
    c = cov(x, y, rowvar, dtype=dtype)
    if _aval(c).ndim == 0:
        return ufuncs.true_divide(c, c)
    d = diagonal(c)
    stddev = lax.convert_element_type(ufuncs.sqrt(ufuncs.real(d)), _aval(c).dtype)
    c = ufuncs.true_divide(ufuncs.true_divide(c, lax_shape.expand_dims(stddev, (1,))),
                           lax_shape.expand_dims(stddev, (0,)))
    real = ufuncs.clip(ufuncs.real(c), -1, 1)
    if _aval(c).dtype.kind == "c":
        return lax.complex(real, ufuncs.clip(ufuncs.imag(c), -1, 1))
    return real


def get_printoptions():
    return np.get_printoptions()


def printoptions(*args, **kwargs):
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args, **kwargs):
    return np.set_printoptions(*args, **kwargs)


# --------------------------------------------------------------------------------------
# Index tricks: mgrid, ogrid, r_, c_


def _grid_from_slice(s, op_name):
    start = concrete_or_error(s.start, f"slice start of jnp.{op_name}") if isinstance(
        s.start, ArrayBase) else s.start
    stop = concrete_or_error(s.stop, f"slice stop of jnp.{op_name}") if isinstance(
        s.stop, ArrayBase) else s.stop
    step = s.step
    start = start or 0
    step = step or 1
    if np.iscomplex(step):
        return linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


class _Mgrid:
    """`mgrid[0:3, 0:2]`: dense coordinate grids built from slices (a complex step is a
    number of points, as in NumPy)."""

    def __getitem__(self, key):
        if isinstance(key, _slice):
            return _grid_from_slice(key, "mgrid")
        grids = promote_dtypes(*(_grid_from_slice(k, "mgrid") for k in key))
        out = meshgrid(*grids, indexing="ij", sparse=False)
        return stack(out, 0) if out else arange(0)


class _Ogrid:
    """`ogrid[0:3, 0:2]`: like mgrid, but open (broadcastable) grids."""

    def __getitem__(self, key):
        if isinstance(key, _slice):
            return _grid_from_slice(key, "ogrid")
        grids = promote_dtypes(*(_grid_from_slice(k, "ogrid") for k in key))
        return meshgrid(*grids, indexing="ij", sparse=True)


class _AxisConcat:
    """NumPy's r_/c_: concatenation of arrays, scalars and slices (grids), with an optional
    leading directive string 'axis,ndmin,trans1d' or 'r'/'c'."""

    axis = 0
    ndmin = 1
    trans1d = -1
    op_name = "r_"

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if isinstance(key[0], str):
            directive, key = key[0], key[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = list(map(int, vec))
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, nmin, trans1d, matrix = params
        out = []
        for item in key:
            if isinstance(item, _slice):
                obj, item_ndim = _grid_from_slice(item, self.op_name), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                obj = asarray(item)
                item_ndim = _aval(obj).ndim
            obj = array(obj, copy=False, ndmin=nmin)
            if trans1d != -1 and nmin - item_ndim > 0:
                order = tuple(_range(nmin))
                shift = nmin - abs(nmin + trans1d + 1) % nmin
                obj = transpose(obj, order[shift:] + order[:shift])
            out.append(obj)
        res = concatenate(tuple(out), axis=axis)
        if matrix != -1 and _aval(res).ndim == 1:
            res = expand_dims(res, matrix)
        return res

    def __len__(self):
        return 0


class _RClass(_AxisConcat):
    pass


class _CClass(_AxisConcat):
    axis = -1
    ndmin = 2
    trans1d = 0
    op_name = "c_"


mgrid = _Mgrid()
ogrid = _Ogrid()
r_ = _RClass()
c_ = _CClass()
s_ = np.s_
index_exp = np.index_exp


__all__ = [
    # creation
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
    "copy", "astype", "arange", "linspace", "logspace", "geomspace", "eye", "identity", "tri",
    "tril", "triu", "meshgrid", "indices", "ix_", "frombuffer", "fromstring", "fromfunction",
    "mgrid", "ogrid", "r_", "c_", "s_", "index_exp",
    # shapes
    "ndim", "shape", "size", "iterable", "isscalar", "can_cast", "reshape", "ravel",
    "transpose", "permute_dims", "matrix_transpose", "swapaxes", "moveaxis", "rollaxis",
    "squeeze", "expand_dims", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes",
    "resize", "ravel_multi_index", "unravel_index",
    # joining, splitting, tiling
    "concatenate", "concat", "stack", "unstack", "vstack", "hstack", "dstack", "column_stack",
    "block", "append", "split", "array_split", "vsplit", "hsplit", "dsplit",
    "tile", "repeat",
    # rearranging, diagonals, padding, editing
    "flip", "fliplr", "flipud", "roll", "rot90", "diagonal", "trace", "diag", "diagflat",
    "diag_indices", "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "mask_indices", "fill_diagonal", "pad", "delete", "insert",
    "trim_zeros",
    # sorting, searching, sets
    "sort", "argsort", "lexsort", "partition", "argpartition", "sort_complex", "searchsorted",
    "digitize", "nonzero", "flatnonzero", "argwhere", "compress", "extract", "unique",
    "unique_all", "unique_counts", "unique_inverse", "unique_values", "isin", "union1d",
    "setdiff1d", "setxor1d", "intersect1d",
    # choosing, counting, comparing, numerics
    "select", "choose", "piecewise", "bincount", "histogram_bin_edges", "histogram",
    "histogramdd", "histogram2d", "isclose", "allclose", "array_equal", "array_equiv",
    "nan_to_num", "interp", "convolve", "correlate", "polyval", "vander", "diff", "ediff1d",
    "gradient", "trapezoid", "unwrap", "apply_over_axes", "packbits", "unpackbits", "gcd",
    "lcm", "cov", "corrcoef", "get_printoptions", "printoptions", "set_printoptions",
]
