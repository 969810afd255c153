"""Array creation: zeros/ones/full/empty and their *_like forms, ranges (arange, linspace,
logspace, geomspace), eye/identity/tri, meshgrid, indices, copy/astype and from* converters.

Shapes and sizes must be concrete; fill values and the bounds of linspace and friends may be
traced. (JAX keeps most of these in its array_creation.py.)
"""
from __future__ import annotations

import numpy as np

from didax._src import dtypes
from didax._src.core import ArrayBase, ShapedArray
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import (
    _asarray,
    _aval,
    _canonical_shape,
    _concrete_int,
    _const,
    _filled,
    _iota,
    _range,
    _to_inexact,
    _user_dtype,
)
from didax._src.numpy.joining import stack
from didax._src.numpy.util import (
    asarray,
    broadcast_to,
    canonical_axis,
    check_arraylike,
    concrete_or_error,
)

__all__ = [
    "zeros", "ones", "empty", "full", "full_like", "zeros_like", "ones_like", "empty_like",
    "copy", "astype", "arange", "linspace", "logspace", "geomspace", "eye", "identity", "tri",
    "meshgrid", "indices", "frombuffer", "fromstring", "fromfunction", "fromiter",
]


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
    elif not isinstance(a, (ArrayBase, np.ndarray, np.generic)):
        # a description of an array (ShapeDtypeStruct, an aval): its shape and dtype
        a = ShapedArray(tuple(a.shape), dtypes.canonicalize_dtype(np.dtype(a.dtype)),
                        bool(getattr(a, "weak_type", False)))
    aval = a if isinstance(a, ShapedArray) else _aval(
        a if isinstance(a, ArrayBase) else asarray(a))
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
    if dtypes.kind(_aval(x).dtype) == "c" and dtype == np.bool_:
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
            v = np.asarray(concrete_or_error(v, what, topic="shape"))
            if v.ndim != 0:
                raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
            if dtypes.kind(v.dtype) == "c":
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
        work = np.dtype(np.float32) if dtypes.kind(dtype) == "f" and dtype.itemsize < 4 else dtype
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
        real = dtypes.finfo(cdtype).dtype
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
    if dtypes.issubdtype(dtype, np.integer) and not dtypes.issubdtype(_aval(out).dtype, np.integer):
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
        k = int(np.clip(k, dtypes.iinfo(np.int32).min, dtypes.iinfo(np.int32).max))
    offset = asarray(k)
    if not (_aval(offset).shape == () and dtypes.issubdtype(_aval(offset).dtype, np.integer)):
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


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`function` called once on the index grids (as NumPy does); it must be vectorized."""
    shape = _canonical_shape(shape, "fromfunction")
    return function(*indices(shape, dtype=dtype), **kwargs)


def fromiter(*args, **kwargs):
    """Not provided, as in JAX: consuming an iterator is a side effect."""
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other transformations. Consider using jnp.asarray(np.fromiter(...)) "
        "instead, although care should be taken if np.fromiter is used within a "
        "transformation because of its potential side-effect of consuming the iterable object.")
