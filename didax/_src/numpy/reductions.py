"""Reductions of didax.numpy (sum, mean, var, max, argmax, cumsum, quantile...).

Each is a `lax.reduce_*` (or cumulative) primitive with NumPy's conventions put around it:
axis canonicalisation, `keepdims`, `where` masks (the masked-out entries become the
reduction's identity), `initial`, and JAX's dtype rules: small integers and bools are
summed in the default integer dtype, means of integers are floats, float16 is accumulated
in float32.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from didax._src import dtypes
from didax._src.base_prims import scalar_array
from didax._src.core import ArrayBase
from didax._src.eager.registry import step
from didax._src.errors import user_error
from didax._src.lax import elementwise as lax
from didax._src.lax import reduction as lax_red
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy.util import (
    asarray,
    broadcast_to,
    check_arraylike,
    promote_dtypes_inexact,
    promote_dtypes_numeric,
)

__all__ = [
    "sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "average", "var", "std",
    "ptp", "count_nonzero", "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum",
    "cumulative_prod", "nancumsum", "nancumprod", "nansum", "nanprod", "nanmax", "nanmin",
    "nanmean", "nanvar", "nanstd", "nanargmax", "nanargmin", "median", "nanmedian", "quantile",
    "nanquantile", "percentile", "nanpercentile",
]

# --------------------------------------------------------------------------------------
# Helpers: axes, dtypes, masks


def _canonical_axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise user_error(np.exceptions.AxisError, (
            f"axis {axis} is out of bounds for array of dimension {ndim}"))
    return axis % ndim


def _static_axis(axis):
    """`axis` as None, an int or a tuple of ints; it must be known when tracing."""
    if axis is None:
        return None
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(a) for a in axis)


def _reduction_dims(ndim: int, axis) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    dims = tuple(_canonical_axis(a, ndim) for a in axes)
    if len(set(dims)) != len(dims):
        raise user_error(ValueError, f"duplicate value in 'axis': {axis}")
    return dims


def _arraylike(name, a):
    check_arraylike(name, a)
    return asarray(a)


def _user_dtype(dtype, name):
    return None if dtype is None else dtypes.check_and_canonicalize_user_dtype(dtype, name)


def _promote_integer_dtype(dtype: np.dtype) -> np.dtype:
    """JAX sums small integers (and bools) in the default integer width."""
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    if dtypes.kind(dtype) == "u" and dtype.itemsize < dtypes.default_uint_dtype().itemsize:
        return dtypes.default_uint_dtype()
    if dtypes.kind(dtype) == "i" and dtype.itemsize < dtypes.default_int_dtype().itemsize:
        return dtypes.default_int_dtype()
    return dtype


def _upcast_f16(dtype: np.dtype) -> np.dtype:
    """JAX accumulates float16 and bfloat16 (not the float8 types) in float32."""
    return np.dtype(np.float32) if dtype == np.float16 or dtype == dtypes.bfloat16 else dtype


def _to_inexact(dtype: np.dtype) -> np.dtype:
    """JAX's rule: integers and bools of up to 32 bits become float32, 64-bit ones float64."""
    if dtypes.kind(dtype) in "fc":
        return dtype
    return np.dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def _check_where(name, where):
    if where is None:
        return None
    where = _arraylike(name, where)
    if where.dtype != np.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={where.dtype!r}.")
    return where


def _init_value(dtype: np.dtype, value) -> np.ndarray:
    """The identity `value` (0, 1, +-inf...) as a scalar of `dtype`, saturating integers."""
    if dtype == np.bool_:
        return np.array(value > 0, dtype)
    if dtypes.kind(dtype) in "iu" and np.isinf(value):
        info = dtypes.iinfo(dtype)
        return np.array(info.min if value < 0 else info.max, dtype)
    return np.array(value, dtype)


def _convert(x, dtype):
    """`lax.convert_element_type` to a strong dtype, skipped cheaply when it is a no-op."""
    if isinstance(x, ArrayBase) and x.dtype == dtype and not x.weak_type:
        return x
    return lax.convert_element_type(x, dtype)


def _isnan(x):
    return lax.ne(x, x)


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


# --------------------------------------------------------------------------------------
# The generic reduction


_PLAIN_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class _Op:
    """A monoid: its reduction primitive, binary operation and identity (and bool versions)."""

    def __init__(self, reduce, binary, identity, bool_reduce=None, bool_binary=None):
        self.reduce, self.binary, self.identity = reduce, binary, identity
        self.bool_reduce = bool_reduce or reduce
        self.bool_binary = bool_binary or binary


_SUM = _Op(lax_red.reduce_sum, lax.add, 0, lax_red.reduce_or, lax.bitwise_or)
_PROD = _Op(lax_red.reduce_prod, lax.mul, 1, lax_red.reduce_and, lax.bitwise_and)
_MAX = _Op(lax_red.reduce_max, lax.max, -np.inf)
_MIN = _Op(lax_red.reduce_min, lax.min, np.inf)
_ALL = _Op(lax_red.reduce_and, lax.bitwise_and, True)
_ANY = _Op(lax_red.reduce_or, lax.bitwise_or, False)


def _to_numeric(x):
    return promote_dtypes_numeric(x)[0] if x.dtype == np.bool_ else x


def _to_bool(x):
    if dtypes.kind(x.dtype) == "c":
        x = lax.real(x)  # as JAX: only the real part decides
    return _convert(x, np.bool_)


def _reduction(a, name, op: _Op, *, has_identity=True, preproc=None, upcast_f16=False, axis=None,
               dtype=None, out=None, keepdims=False, initial=None, where=None,
               promote_integers=False):
    if (isinstance(a, ArrayBase) and (axis is None or type(axis) is int) and out is None
            and initial is None and where is None and preproc is not _to_bool):
        aval = a.aval  # a strong float32 or float64 array over one axis or all: no conversion
        if (aval.dtype in _PLAIN_FLOATS and not aval.weak_type  # and no upcast on the way
                and (dtype is None or dtype is aval.dtype)):
            dims = _reduction_dims(len(aval.shape), axis)
            if has_identity or 0 not in aval.shape:
                result = op.reduce(a, dims)
                return lax_shape.expand_dims(result, dims) if keepdims else result
    _no_out(name, out)
    a = _arraylike(name, a)
    where = _check_where(name, where)
    axis = _static_axis(axis)
    if initial is None and not has_identity and where is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    if preproc is not None:
        a = preproc(a)
    shape = a.shape
    dims = _reduction_dims(len(shape), axis)
    if initial is None and not has_identity and not builtins.all(shape[d] >= 1 for d in dims):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is None:
        result_dtype = a.dtype
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = dtypes.check_and_canonicalize_user_dtype(dtype, name)
    computation_dtype = _upcast_f16(result_dtype) if upcast_f16 else result_dtype
    a = _convert(a, computation_dtype)
    is_bool = computation_dtype == np.bool_
    reduce, binary = (op.bool_reduce, op.bool_binary) if is_bool else (op.reduce, op.binary)
    if where is not None:
        a = ufuncs.where(where, a, _init_value(computation_dtype, op.identity))
    result = reduce(a, dims)
    if initial is not None:
        init = _convert(initial, computation_dtype)
        if init.shape != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape "
                             f"{init.shape}")
        result = binary(init, result)
    if keepdims:
        result = lax_shape.expand_dims(result, dims)
    return _convert(result, result_dtype)


@step
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    return _reduction(a, "sum", _SUM, preproc=_to_numeric, upcast_f16=dtype is None, axis=axis,
                      dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where,
                      promote_integers=promote_integers)


@step
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    return _reduction(a, "prod", _PROD, preproc=_to_numeric, upcast_f16=dtype is None,
                      axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial,
                      where=where, promote_integers=promote_integers)


@step
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _reduction(a, "max", _MAX, has_identity=False, axis=axis, out=out,
                      keepdims=keepdims, initial=initial, where=where)


@step
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _reduction(a, "min", _MIN, has_identity=False, axis=axis, out=out,
                      keepdims=keepdims, initial=initial, where=where)


amax = max
amin = min


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    return _reduction(a, "all", _ALL, preproc=_to_bool, axis=axis, out=out, keepdims=keepdims,
                      where=where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    return _reduction(a, "any", _ANY, preproc=_to_bool, axis=axis, out=out, keepdims=keepdims,
                      where=where)


def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak: max - min."""
    _no_out("ptp", out)
    return lax.sub(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    a = _arraylike("count_nonzero", a)
    zero = np.zeros((), a.dtype)
    return sum(lax.ne(a, zero), axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


# --------------------------------------------------------------------------------------
# Moments


def _count(a, axis, keepdims, where, dtype):
    """How many elements each output averages: a constant, or the sum of the `where` mask."""
    if where is None:
        shape = a.shape
        return scalar_array(math.prod(shape[d] for d in _reduction_dims(len(shape), axis)),
                            dtype, False)
    return sum(broadcast_to(where, a.shape), axis, dtype=dtype, keepdims=keepdims)


@step
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    return _mean(a, _static_axis(axis), dtype, out, keepdims, where, dtype is None)


def _mean(a, axis, dtype, out, keepdims, where, upcast_f16):
    _no_out("mean", out)
    a = _arraylike("mean", a)
    where = _check_where("mean", where)
    if dtype is None:
        result_dtype = _to_inexact(a.dtype)
    else:
        result_dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "mean")
    computation_dtype = _upcast_f16(result_dtype) if upcast_f16 else result_dtype
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    total = sum(a, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    return _convert(lax.div(total, normalizer), result_dtype)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The (weighted) mean; `returned` also gives the sum of the weights."""
    axis = _static_axis(axis)
    if weights is None:
        (a,) = promote_dtypes_inexact(_arraylike("average", a))
        avg = mean(a, axis=axis, keepdims=keepdims)
        shape = a.shape
        n = math.prod(shape[d] for d in _reduction_dims(len(shape), axis))
        weights_sum = lax_shape.full((), n, avg.dtype)
    else:
        check_arraylike("average", a, weights)
        a, weights = promote_dtypes_inexact(a, weights)
        a_shape, w_shape = a.shape, weights.shape
        if a_shape != w_shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            axes = _reduction_dims(len(a_shape), axis)
            if w_shape != tuple(a_shape[d] for d in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            new_shape = tuple(d if i in axes else 1 for i, d in enumerate(a_shape))
            weights = lax_shape.reshape(weights, new_shape, tuple(np.argsort(axes)))
        weights_sum = sum(weights, axis=axis, keepdims=keepdims)
        avg = lax.div(sum(ufuncs.multiply(a, weights), axis=axis, keepdims=keepdims),
                      weights_sum)
    if returned:
        if avg.shape != weights_sum.shape:
            weights_sum = broadcast_to(weights_sum, avg.shape)
        return avg, weights_sum
    return avg


def _var_promote_types(a_dtype: np.dtype, dtype):
    """(computation dtype, result dtype) of var/std: complex inputs give real variances."""
    if dtype is not None:
        if dtypes.kind(dtype) != "c" and dtypes.kind(a_dtype) == "c":
            raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                             "computing the variance of an array of complex values.")
        computation_dtype = dtype
    elif dtypes.kind(a_dtype) not in "fc":
        dtype = computation_dtype = _to_inexact(a_dtype)
    else:
        dtype = dtypes.finfo(a_dtype).dtype if dtypes.kind(a_dtype) == "c" else a_dtype
        computation_dtype = a_dtype
    return _upcast_f16(computation_dtype), np.dtype(dtype)


def _correction(ddof, correction):
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _squared_magnitude(x):
    if dtypes.kind(x.dtype) == "c":
        return lax.real(lax.mul(x, lax.conj(x)))
    return lax.square(x)


@step
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Variance; divides by (count - correction), and gives NaN where that is not positive."""
    correction = _correction(ddof, correction)
    _no_out("var", out)
    a = _arraylike("var", a)
    where = _check_where("var", where)
    axis = _static_axis(axis)
    computation_dtype, dtype = _var_promote_types(a.dtype, _user_dtype(dtype, "var"))
    a = _convert(a, computation_dtype)
    if mean is None:
        a_mean = _mean(a, axis, computation_dtype, None, True, where, True)
    else:
        a_mean = _convert(_arraylike("var", mean), computation_dtype)
    centered = _squared_magnitude(ufuncs.subtract(a, a_mean))
    computation_dtype = centered.dtype
    result = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    if where is None and isinstance(correction, (int, float)):  # a static normalizer
        shape = a.shape
        n = math.prod(shape[d] for d in _reduction_dims(len(shape), axis)) - correction
        result = _convert(
            lax.div(result, np.array(n, computation_dtype)), dtype)
        return result if n > 0 else lax_shape.full(result.shape, np.nan, dtype)
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    normalizer = lax.sub(normalizer, _convert(correction, computation_dtype))
    result = _convert(lax.div(result, normalizer), dtype)
    return ufuncs.where(lax.gt(normalizer, np.zeros((), computation_dtype)), result, np.nan)


@step
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    correction = _correction(ddof, correction)
    _no_out("std", out)
    dtype = _user_dtype(dtype, "std")
    if dtype is not None and dtypes.kind(dtype) not in "fc":
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims,
                        where=where, mean=mean))


# --------------------------------------------------------------------------------------
# argmax, argmin


def _argminmax(name, lax_fn, a, axis, out, keepdims):
    _no_out(name, out)
    a = _arraylike(name, a)
    shape = a.shape
    if axis is None:
        dims = tuple(range(len(shape)))
        a = lax_shape.reshape(a, (math.prod(shape),))
        axis = 0
    else:
        axis = _canonical_axis(axis, len(shape))
        dims = (axis,)
    if a.shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = lax_fn(a, axis, dtypes.default_int_dtype())
    return lax_shape.expand_dims(result, dims) if keepdims else result


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the first maximum (NaN counts as the maximum)."""
    return _argminmax("argmax", lax_red.argmax, a, axis, out, bool(keepdims))


def argmin(a, axis=None, out=None, keepdims=None):
    return _argminmax("argmin", lax_red.argmin, a, axis, out, bool(keepdims))


def _nanargminmax(name, fn, fill, a, axis, out, keepdims):
    _no_out(name, out)
    a = _arraylike(name, a)
    if dtypes.kind(a.dtype) not in "fc":
        return fn(a, axis=axis, keepdims=keepdims)
    nan_mask = _isnan(a)
    res = fn(ufuncs.where(nan_mask, fill, a), axis=axis, keepdims=keepdims)
    return ufuncs.where(all(nan_mask, axis=axis, keepdims=keepdims), -1, res)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """argmax ignoring NaNs; -1 where everything is NaN."""
    return _nanargminmax("nanargmax", argmax, -np.inf, a, axis, out, bool(keepdims))


def nanargmin(a, axis=None, out=None, keepdims=None):
    return _nanargminmax("nanargmin", argmin, np.inf, a, axis, out, bool(keepdims))


# --------------------------------------------------------------------------------------
# NaN-ignoring reductions


def _nan_reduction(a, name, reduction, init_val, nan_if_all_nan, axis=None, keepdims=False,
                   where=None, **kwargs):
    a = _arraylike(name, a)
    where = _check_where(name, where)
    if dtypes.kind(a.dtype) not in "fc":
        return reduction(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
    nan_mask = _isnan(a)
    out = reduction(ufuncs.where(nan_mask, _init_value(a.dtype, init_val), a), axis=axis,
                    keepdims=keepdims, where=where, **kwargs)
    if nan_if_all_nan:
        all_nan = all(nan_mask, axis=axis, keepdims=keepdims)
        return ufuncs.where(all_nan, np.array(np.nan, a.dtype), out)
    return out


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_reduction(a, "nanmin", min, np.inf, initial is None, axis=axis, out=out,
                          keepdims=keepdims, initial=initial, where=where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_reduction(a, "nanmax", max, -np.inf, initial is None, axis=axis, out=out,
                          keepdims=keepdims, initial=initial, where=where)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_reduction(a, "nansum", sum, 0, False, axis=axis, dtype=_user_dtype(
        dtype, "nansum"), out=out, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_reduction(a, "nanprod", prod, 1, False, axis=axis, dtype=_user_dtype(
        dtype, "nanprod"), out=out, keepdims=keepdims, initial=initial, where=where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    _no_out("nanmean", out)
    a = _arraylike("nanmean", a)
    where = _check_where("nanmean", where)
    if dtypes.kind(a.dtype) in "biu":
        return mean(a, axis, dtype, out, keepdims, where=where)
    dtype = _to_inexact(a.dtype) if dtype is None else _user_dtype(dtype, "nanmean")
    normalizer = sum(lax.bitwise_not(_isnan(a)), axis=axis, dtype=dtype, keepdims=keepdims,
                     where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), normalizer)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Variance of the non-NaN entries; NaN where fewer than ddof + 1 of them remain."""
    _no_out("nanvar", out)
    a = _arraylike("nanvar", a)
    where = _check_where("nanvar", where)
    computation_dtype, dtype = _var_promote_types(a.dtype, _user_dtype(dtype, "nanvar"))
    a = _convert(a, computation_dtype)
    if mean is None:
        a_mean = nanmean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        a_mean = _convert(_arraylike("nanvar", mean), computation_dtype)
    nan_mask = _isnan(a)
    centered = ufuncs.where(nan_mask, 0, ufuncs.subtract(a, a_mean))
    centered = _squared_magnitude(centered)
    normalizer = sum(lax.bitwise_not(nan_mask), axis=axis, keepdims=keepdims, where=where)
    normalizer = ufuncs.subtract(normalizer, ddof)
    empty = lax.le(normalizer, np.zeros((), normalizer.dtype))
    result = sum(centered, axis, keepdims=keepdims, where=where)
    result = ufuncs.where(empty, np.nan, result)
    divisor = ufuncs.where(empty, 1, normalizer)
    result = lax.div(result, _convert(divisor, result.dtype))
    return _convert(result, dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    _no_out("nanstd", out)
    return lax.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                           mean=mean))


# --------------------------------------------------------------------------------------
# Cumulative reductions


def _cumulative(name, lax_fn, a, axis, dtype, out=None, fill_nan=None, promote_integers=False):
    _no_out(name, out)
    a = _arraylike(name, a)
    if axis is None or a.ndim == 0:
        a = lax_shape.reshape(a, (a.size,))
    axis = _canonical_axis(0 if axis is None else axis, a.ndim)
    if fill_nan is not None and dtypes.kind(a.dtype) in "fc":
        a = ufuncs.where(_isnan(a), np.array(fill_nan, a.dtype), a)
    if dtype is None:
        if promote_integers or a.dtype == np.bool_:
            result_dtype = _promote_integer_dtype(a.dtype)
        else:
            result_dtype = a.dtype
        computation_dtype = result_dtype
    elif np.dtype(dtype) == np.bool_:
        result_dtype = np.dtype(np.bool_)
        if a.dtype != np.bool_:
            a = lax.ne(a, np.zeros((), a.dtype))
        computation_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = computation_dtype = dtypes.check_and_canonicalize_user_dtype(dtype, name)
    a = _convert(a, computation_dtype)
    return _convert(lax_fn(a, axis), result_dtype)


def cumsum(a, axis=None, dtype=None, out=None):
    """Inclusive cumulative sum (of the flattened array if axis is None)."""
    return _cumulative("cumsum", lax_red.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    return _cumulative("cumprod", lax_red.cumprod, a, axis, dtype, out)


def nancumsum(a, axis=None, dtype=None, out=None):
    return _cumulative("nancumsum", lax_red.cumsum, a, axis, dtype, out, fill_nan=0)


def nancumprod(a, axis=None, dtype=None, out=None):
    return _cumulative("nancumprod", lax_red.cumprod, a, axis, dtype, out, fill_nan=1)


def _array_api_cumulative(name, lax_fn, identity, x, axis, dtype, include_initial,
                          promote_integers):
    x = _arraylike(name, x)
    ndim = x.ndim
    if ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative {name[11:]}, "
                         "however a scalar value or scalar array was given.")
    if axis is None:
        if ndim > 1:
            raise ValueError(f"The input array has rank {ndim}, however axis was not set to an "
                             "explicit value. The axis argument is only optional for "
                             "one-dimensional arrays.")
        axis = 0
    axis = _canonical_axis(axis, ndim)
    out = _cumulative(name, lax_fn, x, axis, _user_dtype(dtype, name),
                      promote_integers=promote_integers)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        out = lax_shape.concatenate([lax_shape.full(shape, identity, out.dtype), out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative sum: `include_initial` prepends the zero."""
    return _array_api_cumulative("cumulative_sum", lax_red.cumsum, 0, x, axis, dtype,
                                 include_initial, True)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _array_api_cumulative("cumulative_prod", lax_red.cumprod, 1, x, axis, dtype,
                                 include_initial, False)


# --------------------------------------------------------------------------------------
# Quantiles: sort along the axis, then pick (and interpolate) the entries at the quantile
# positions with a one-hot mask, which works whether the positions are static or traced.

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _pick(a, index, axis):
    """`a` (sorted along `axis`) at `index`, an integer array of shape q_shape + a's shape
    with `axis` of size 1 (other dimensions may be 1 too); gives q_shape + reduced shape."""
    q_ndim = index.ndim - a.ndim
    shape = index.shape[:q_ndim] + a.shape
    hit = lax.eq(lax_shape.broadcasted_iota(index.dtype, shape, q_ndim + axis),
                 broadcast_to(index, shape))
    picked = lax.select_n(hit, lax_shape.full(shape, 0, a.dtype), broadcast_to(a, shape))
    return lax_red.reduce_sum(picked, (q_ndim + axis,))


def _quantile(name, a, q, axis, method, keepdims, squash_nans, out, overwrite_input, weights):
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")
    if weights is not None:
        raise NotImplementedError(f"jnp.{name}: weights are only supported with "
                                  "method='inverted_cdf', which didax does not implement")
    if method not in _METHODS:
        raise ValueError(f"method can only be one of {', '.join(map(repr, _METHODS))}; got "
                         f"{method!r}")
    check_arraylike(name, a, q)
    (a,), q = promote_dtypes_inexact(a), asarray(q)
    if dtypes.kind(a.dtype) == "c":
        raise ValueError("quantile does not support complex input, as the operation is poorly "
                         "defined.")
    if dtypes.kind(q.dtype) != "f":
        raise TypeError(f"jnp.{name}: q must be a floating-point array or scalar, got dtype "
                        f"{q.dtype}")
    q_shape = q.shape
    if len(q_shape) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
    a_shape = a.shape
    keep_shape = None
    axis = _static_axis(axis)
    if axis is None:
        keep_shape = (1,) * len(a_shape)
        a, axis = lax_shape.reshape(a, (math.prod(a_shape),)), 0
    elif isinstance(axis, tuple):  # flatten the reduced axes into one last axis
        dims = _reduction_dims(len(a_shape), axis)
        keep_shape = tuple(1 if i in dims else d for i, d in enumerate(a_shape))
        kept = [i for i in range(len(a_shape)) if i not in dims]
        new_shape = tuple(a_shape[i] for i in kept) + (math.prod(a_shape[d] for d in dims),)
        a, axis = lax_shape.reshape(a, new_shape, tuple(kept) + dims), len(kept)
    else:
        axis = _canonical_axis(axis, len(a_shape))
    n = a.shape[axis]
    nan_mask = _isnan(a)
    if squash_nans:
        a = lax_red.sort(a, dimension=axis)  # NaNs sort last
        counts = sum(lax.bitwise_not(nan_mask), axis=axis, dtype=q.dtype, keepdims=True)
    else:
        a = ufuncs.where(any(nan_mask, axis=axis, keepdims=True), np.nan, a)
        a = lax_red.sort(a, dimension=axis)
        counts = _convert(n, q.dtype)
    # Positions have shape q_shape + a's shape with `axis` of size 1.
    q = lax_shape.reshape(q, q_shape + (1,) * a.ndim)
    pos = ufuncs.multiply(q, lax.sub(counts, np.ones((), q.dtype)))
    low, high = lax.floor(pos), lax.ceil(pos)
    last = ufuncs.maximum(lax.sub(counts, np.ones((), q.dtype)), 0)
    index_dtype = dtypes.default_int_dtype()
    low_value, high_value = (
        _pick(a, _convert(ufuncs.maximum(ufuncs.minimum(i, last), 0),
                                          index_dtype), axis) for i in (low, high))

    def weight(w):  # the interpolation weight, shaped like the values
        return broadcast_to(lax_shape.squeeze(w, (len(q_shape) + axis,)), low_value.shape)

    if method == "linear":
        high_weight = lax.sub(pos, low)
        low_weight = lax.sub(np.ones((), q.dtype), high_weight)
        result = lax.add(
            lax.mul(_convert(low_value, q.dtype), weight(low_weight)),
            lax.mul(_convert(high_value, q.dtype), weight(high_weight)))
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":  # as JAX: a tie goes to the lower neighbour
        pred = lax.le(weight(lax.sub(pos, low)), np.array(0.5, q.dtype))
        result = lax.select_n(pred, high_value, low_value)
    else:  # midpoint
        result = lax.mul(lax.add(low_value, high_value), np.array(0.5, low_value.dtype))
    if n == 0:  # as NumPy: the quantile of nothing is NaN
        result = lax_shape.full(result.shape, np.nan, result.dtype)
    if keepdims:
        result = lax_shape.reshape(
            result, q_shape + (keep_shape if keep_shape is not None else tuple(
                1 if i == axis else d for i, d in enumerate(a_shape))))
    return _convert(result, a.dtype)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None):
    """The q-th quantiles (q in [0, 1]) along `axis`, interpolated by `method`."""
    return _quantile("quantile", a, q, axis, method, keepdims, False, out, overwrite_input,
                     weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, out, overwrite_input,
                     weights)


def _percent(name, q):
    check_arraylike(name, q)
    (q,) = promote_dtypes_inexact(q)
    return ufuncs.true_divide(q, 100)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    return quantile(a, _percent("percentile", q), axis=axis, out=out,
                    overwrite_input=overwrite_input, method=method, keepdims=keepdims,
                    weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    return nanquantile(a, _percent("nanpercentile", q), axis=axis, out=out,
                       overwrite_input=overwrite_input, method=method, keepdims=keepdims,
                       weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")
