"""The array primitives the interpreters bind themselves.

Interpreters need a few array operations of their own: zeros for symbolic-zero tangents,
`add_any` to sum tangents and cotangents, broadcasts, reshapes and transposes to move batch
dimensions, sums and conversions to unbroadcast cotangents. Those primitives are declared
here, below the interpreters, with their impl and type rule; their other rules (JVP,
transpose, batching, codegen) are registered by the family modules that own them
(`lax/shape.py`, `lax/reduction.py`, `lax/elementwise.py`), so the interpreters never import
`lax`.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import caches, core, dtypes
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.typecheck import as_dtype, check_dtype, check_shape, dtype_in, num, static_shape

ALWAYS = core.PP_ALWAYS_HIDE
_SCALAR_TYPES = (int, float, complex)

# --------------------------------------------------------------------------------------
# broadcast_in_dim, reshape, transpose

broadcast_in_dim_p = core.primitive("broadcast_in_dim")
broadcast_in_dim_p.pp_hidden = {"shape": ALWAYS, "sharding": None, "broadcast_dimensions": ()}


SMALL_BROADCAST = 4096  # outputs up to this size are filled: np.broadcast_to costs ~7 us
# per call (also in generated code: lax/shape.py)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, sharding=None):
    expanded = [1] * len(shape)
    for d, size in zip(broadcast_dimensions, x.shape):
        expanded[d] = size
    return broadcast_value(x, expanded, shape)


def broadcast_value(x, expanded, shape):
    """The NumPy value of broadcast_in_dim: `x`, its dimensions placed by reshaping it to
    `expanded` (of the result's rank), broadcast to `shape`; small results filled, others a
    broadcast view."""
    if math.prod(shape) <= SMALL_BROADCAST:  # (assignment and `fill` cost less than np.copyto)
        out = np.empty(shape, x.dtype)
        if x.ndim == 0:
            out.fill(x)
        else:
            out[...] = x.reshape(expanded)
        return out
    return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_aval(x, *, shape, broadcast_dimensions, sharding=None):
    shape = check_shape("broadcast_in_dim", shape)
    dims = tuple(broadcast_dimensions)
    if len(dims) != x.ndim:
        raise TypeError(f"broadcast_in_dim: broadcast_dimensions {dims} must have one entry per "
                        f"operand dimension; operand shape {x.shape}")
    prev = -1
    for d in dims:  # strictly increasing, within the output's rank
        if not prev < d < len(shape):
            raise TypeError(f"broadcast_in_dim: broadcast_dimensions {dims} must be strictly "
                            f"increasing dimensions of the output shape {shape}")
        prev = d
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim: operand dimension {i} of size {x.shape[i]} "
                            f"cannot broadcast to output dimension {d} of size {shape[d]} "
                            f"(operand shape {x.shape}, target shape {shape})")
    return ShapedArray(shape, x.dtype, x.weak_type)


broadcast_in_dim_p.def_impl(_broadcast_in_dim_impl)
broadcast_in_dim_p.def_abstract_eval(_broadcast_in_dim_aval)


def _sizes(name, shape):
    try:
        return tuple(map(int, shape))
    except core.ConcretizationTypeError:
        return static_shape(name, shape)  # raises, naming the traced dimension


def broadcast_in_dim(operand, shape, broadcast_dimensions, sharding=None):
    shape = _sizes("lax.broadcast_in_dim", shape)
    dims = tuple(map(int, broadcast_dimensions))
    aval = get_aval(operand)
    if aval.shape == shape and dims == tuple(range(len(shape))) and isinstance(operand,
                                                                               core.ArrayBase):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims,
                                   sharding=sharding)


def broadcast(operand, sizes):
    """Adds leading dimensions of the given sizes."""
    aval = get_aval(operand)
    shape = tuple(sizes) + aval.shape
    return broadcast_in_dim(operand, shape, tuple(range(len(sizes), len(shape))))


def broadcast_to_rank(x, rank):
    aval = get_aval(x)
    if aval.ndim == rank:
        return x
    return broadcast_in_dim_p.bind(x, **to_rank_params(aval.shape, rank))


def to_rank_params(shape, rank) -> dict:
    """broadcast_in_dim's parameters giving `shape` leading size-1 dimensions up to `rank`
    (rank promotion's equation; jnp's ufuncs bind it directly on their hot path)."""
    pad = rank - len(shape)
    return {"shape": (1,) * pad + tuple(shape), "broadcast_dimensions": tuple(range(pad, rank)),
            "sharding": None}


def full(shape, fill_value, dtype=None, sharding=None):
    """An array of `shape` filled with `fill_value` (a broadcast of a scalar)."""
    shape = check_shape("full", shape)
    weak = dtype is None and isinstance(fill_value, (int, float, complex)) and not isinstance(
        fill_value, bool)
    dtype = as_dtype(dtype) if dtype is not None else get_aval(fill_value).dtype
    fill = convert_element_type(fill_value, dtype, weak_type=weak)
    if get_aval(fill).shape != ():
        raise TypeError(f"full: fill_value must be a scalar, got shape {get_aval(fill).shape}")
    return broadcast_in_dim(fill, shape, ())


reshape_p = core.primitive("reshape")
reshape_p.def_impl(lambda x, *, new_sizes, dimensions=None, sharding=None: (
    (x if dimensions is None else np.transpose(x, dimensions)).reshape(new_sizes)))


def _reshape_aval(x, *, new_sizes, dimensions=None, sharding=None):
    new_sizes = check_shape("reshape", new_sizes)
    if math.prod(new_sizes) != math.prod(x.shape):  # (np.prod costs microseconds)
        raise TypeError(f"reshape: cannot reshape an array of shape {x.shape} ({x.size} "
                        f"elements) into shape {new_sizes}")
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(f"reshape: dimensions {dimensions} must be a permutation of "
                        f"range({x.ndim})")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p.def_abstract_eval(_reshape_aval)


def reshape(operand, new_sizes, dimensions=None, sharding=None):
    new_sizes = _sizes("lax.reshape", new_sizes)
    aval = get_aval(operand)
    if aval.shape == new_sizes and dimensions is None and isinstance(operand, core.ArrayBase):
        return operand
    dims = None if dimensions is None or tuple(dimensions) == tuple(range(aval.ndim)) else tuple(
        dimensions)
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=sharding)


transpose_p = core.primitive("transpose")
transpose_p.def_impl(lambda x, *, permutation: x.transpose(permutation))  # (np.transpose's call,
# without its dispatch)


def _transpose_aval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose: permutation {permutation} is not a permutation of the "
                        f"dimensions of an array of shape {x.shape}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p.def_abstract_eval(_transpose_aval)


def transpose(operand, permutation):
    perm = tuple(map(int, permutation))
    if perm == tuple(range(len(perm))) and isinstance(operand, core.ArrayBase):
        return operand
    return transpose_p.bind(operand, permutation=perm)


# --------------------------------------------------------------------------------------
# Reductions: the shared declaration, and reduce_sum


def where_text(x: ShapedArray) -> str:
    return f" (operand {x.str_short()})"


def check_axes(name: str, x: ShapedArray, axes) -> None:
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: duplicate value in 'axes' of reduction: {axes}{where_text(x)}")
    if not all(0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: reduction axes {axes} contain out-of-bounds indices for an "
                         f"operand of shape {x.shape}; lax axes must lie in [0, {x.ndim}) "
                         "(negative axes are not allowed)")


def reducer(name: str, accepted, impl, keep_weak: bool = True) -> core.Primitive:
    """A reduction primitive `name[axes=...]` with its impl and type rule."""
    p = core.primitive(name)

    def abstract_eval(x, *, axes, **_):
        if not dtype_in(x.dtype, accepted):  # the message is only built for an error
            check_dtype(name, x, accepted, where_text(x))
        check_axes(name, x, axes)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, keep_weak and x.weak_type)

    def impl_or_identity(x, *, axes, **params):  # over no axes: the operand itself
        return impl(x, axes=axes, **params) if axes else x

    p.def_impl(impl_or_identity)
    p.def_abstract_eval(abstract_eval)
    return p


def row_major(x):
    """`x`, or a row-major copy: a NumPy reduction adds in the order of the operand's
    memory, so a float sum is the same bits for the same values only if that order is."""
    return x if x.flags.c_contiguous else x.copy()


reduce_sum_p = reducer("reduce_sum", num, lambda x, *, axes, out_sharding=None: np.add.reduce(
    row_major(x), axis=axes, dtype=x.dtype))


def reduce_sum(operand, axes, *, out_sharding=None):
    """Sum over `axes` (non-negative, distinct); integers keep their dtype (and wrap)."""
    return reduce_sum_p.bind(operand, axes=tuple(map(int, axes)), out_sharding=out_sharding)


# --------------------------------------------------------------------------------------
# convert_element_type

convert_element_type_p = core.primitive("convert_element_type")


_saturation_bounds = caches.memo("base_prims.saturation_bounds")  # (float, int dtype) -> bounds


def saturation_bounds(src, dst):
    """For a float dtype `src` and an integer dtype `dst`: the least and greatest `src`
    values that truncate into `dst`'s range, and `dst`'s extremes. Past them a conversion
    saturates (the extremes are powers of two or one less, so the bounds are exact where
    `src` can hold them, and its largest finite values where it cannot)."""
    key = (np.dtype(src), np.dtype(dst))
    bounds = _saturation_bounds.get(key)
    if bounds is None:
        info, finfo = dtypes.iinfo(dst), dtypes.finfo(src)
        top = 2.0 ** (info.bits - (info.min < 0))  # the first value past the maximum
        big = float(finfo.max)
        hi = big if top > big else top - top * 2.0 ** -(finfo.nmant + 1)  # (below top)
        lo = max(float(info.min), -big)
        bounds = caches.add(_saturation_bounds, key, (np.asarray(lo, src), np.asarray(hi, src),
                                                      int(info.min), int(info.max)))
    return bounds


def _float_to_int(x, dtype):
    """XLA's conversion: truncation towards zero, saturating at the integer type's extremes
    (infinities too), NaN to 0."""
    lo, hi, imin, imax = saturation_bounds(x.dtype, dtype)
    out = np.clip(x, lo, hi)
    out = np.where(out != out, np.zeros((), x.dtype), out).astype(dtype)  # NaN: 0
    out[x > hi] = imax
    if lo > imin:  # (a type whose largest values are below the minimum: -inf)
        out[x < lo] = imin
    return out


def _convert_impl(x, *, new_dtype, weak_type):
    src, dst = dtypes.kind(x.dtype), dtypes.kind(np.dtype(new_dtype))
    if src == "c" and dst != "c":
        x = np.real(x)
        src = dtypes.kind(x.dtype)
    if src == "f" and dst in "iu":
        return _float_to_int(x, new_dtype)
    if new_dtype == np.bool_:
        return x != 0
    return x.astype(new_dtype)


def _convert_aval(x, *, new_dtype, weak_type):
    return ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p.def_impl(_convert_impl)
convert_element_type_p.def_abstract_eval(_convert_aval)


_scalar_arrays = caches.memo("base_prims.scalar_arrays")  # (dtype, weak, type, value) -> Array


def scalar_array(x, dtype: np.dtype, weak_type: bool):
    """The Python scalar `x` as a 0-d Array of the canonical `dtype`: one shared object per
    (dtype, weak type, type, value), where sharing is safe (Arrays are immutable; zeros and
    complex numbers, whose zeros are signed, and NaN, which never matches itself, are not)."""
    key = (dtype, weak_type, type(x), x)
    a = _scalar_arrays.get(key) if x else None
    if a is None:
        try:
            value = np.asarray(x, dtype)
        except OverflowError:  # a Python int past an integer type's range wraps, as in JAX
            value = np.asarray(x, get_aval(x).dtype).astype(dtype)  # (through int32/int64)
        a = core.Array.from_numpy(value, ShapedArray((), dtype, weak_type))
        if (x and type(x) is not complex and not (type(x) is float and math.isnan(x))
                and len(_scalar_arrays) < 1024):
            a = caches.add(_scalar_arrays, key, a)
    return a


def convert_element_type(x, new_dtype, weak_type: bool = False):
    new_dtype = dtypes.canonicalize_dtype(np.dtype(new_dtype))
    if type(x) in _SCALAR_TYPES or type(x) is bool:  # a Python scalar: convert now
        if dtypes.kind(new_dtype) in "fc":  # exact for any Python scalar (ints may overflow)
            return scalar_array(x, new_dtype, weak_type)
    aval = get_aval(x)
    if aval.dtype == new_dtype and aval.weak_type == weak_type and isinstance(x, core.ArrayBase):
        return x
    if not isinstance(x, core.ArrayBase):  # a constant: convert now, no equation
        val = core.concrete_value(x)
        if val is not None and not isinstance(x, core.Tracer):
            return core.Array(_convert_impl(np.asarray(val, aval.dtype), new_dtype=new_dtype,
                                            weak_type=weak_type), weak_type)
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


# --------------------------------------------------------------------------------------
# Tangent arithmetic: add_any and materialised zeros

add_any_p = core.primitive("add_any", linear=True)
add_any_p.def_impl(np.add)


def _add_any_aval(x, y):
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError(f"add_any: tangents must have equal types, got {x.str_short()} and "
                        f"{y.str_short()}")
    return x


add_any_p.def_abstract_eval(_add_any_aval)


def add_tangents(x, y):
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


def instantiate(t):
    """A materialised array for a possibly-symbolic zero tangent."""
    if type(t) is not Zero:
        return t
    aval = t.aval
    if aval.dtype == dtypes.float0:
        return core.Array(np.zeros(aval.shape, dtypes.float0))
    if core._ctx.interp is core.eval_interpreter:  # evaluating: zeros, without binding
        return core.Array.from_numpy(np.zeros(aval.shape, aval.dtype), aval)
    # (weakly typed where the zero's type is, as JAX's zeros are)
    return broadcast_in_dim(convert_element_type(0, aval.dtype, aval.weak_type), aval.shape, ())


def zeros_like_aval(aval):
    return instantiate(Zero(aval))
