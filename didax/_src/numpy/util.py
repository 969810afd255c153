"""NumPy-semantics glue: array conversion, dtype promotion and rank promotion.

Everything in didax.numpy is a composition of lax functions; these helpers turn
NumPy's implicit rules (promotion, broadcasting of ranks) into explicit lax calls.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.compat.dtype_handlers import canonicalize_dtype_handlers
from didax._src.config import config
from didax._src.core import Array, ArrayBase, get_aval
from didax._src.errors import concretization_error, user_error
from didax._src.lax import elementwise as lax_ew
from didax._src.lax import shape as lax_shape
from didax._src.numpy import _plans
from didax._src.numpy.rank_promotion import rank_promotion
from didax._src.typecheck import static_shape

_SCALARS = (bool, int, float, complex)
_FAST_SCALARS = (int, float)  # exact types: not bool, not NumPy scalars
_FLOAT_KINDS = "fc"  # (NumPy's kinds: ml_dtypes' floats have kind "V" and take the long way)
_ARRAYLIKE = (ArrayBase, np.ndarray, np.generic) + _SCALARS


def is_arraylike(x) -> bool:
    return isinstance(x, _ARRAYLIKE) or hasattr(x, "__jax_array__")


def operand_or_none(x):
    """`x` as an operand of an array's operator (`__jax_array__` objects converted), or None
    for a type arrays do not know: the operator then returns NotImplemented, so that type's
    reflected operator runs (as in JAX)."""
    if isinstance(x, _ARRAYLIKE):
        return x
    convert = getattr(x, "__jax_array__", None)
    return None if convert is None else convert()


def check_arraylike(fun_name: str, *args):
    """JAX rejects lists and tuples where an array is expected (they are pytrees)."""
    for i, a in enumerate(args):
        if not isinstance(a, _ARRAYLIKE):
            if hasattr(a, "__jax_array__"):
                continue
            hint = (" Use jnp.asarray(x) to convert a list or tuple explicitly."
                    if isinstance(a, (list, tuple)) else "")
            raise user_error(TypeError, f"{fun_name} requires ndarray or scalar arguments, got "
                            f"{type(a).__name__} at position {i}.{hint}")


def _canonical_user_dtype(dtype):
    if dtype is None:
        return None
    if isinstance(dtype, type) and dtype in (int, float, complex):
        return {int: dtypes.default_int_dtype, float: dtypes.default_float_dtype,
                complex: dtypes.default_complex_dtype}[dtype]()
    return dtypes.canonicalize_dtype(dtypes.user_np_dtype(dtype))


def _nested_has_traced(obj) -> bool:
    if isinstance(obj, ArrayBase):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_nested_has_traced(o) for o in obj)
    return False


def _stack_nested(obj, dtype):
    """Builds an array from nested lists that contain didax arrays or tracers."""
    if isinstance(obj, (list, tuple)):
        if not obj:
            return Array(np.zeros((0,), dtype or dtypes.default_float_dtype()))
        parts = [_stack_nested(o, dtype) for o in obj]
        parts = promote_dtypes(*parts)
        shapes = {get_aval(p).shape for p in parts}
        if len(shapes) != 1:
            raise ValueError(f"setting an array element with a sequence: inhomogeneous shapes "
                             f"{sorted(shapes)} in a nested list")
        parts = [lax_shape.expand_dims(asarray(p), (0,)) for p in parts]
        return lax_shape.concatenate(parts, 0)
    return asarray(obj, dtype)


_KNOWN_TYPES = frozenset((np.ndarray, list, tuple) + _SCALARS)


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """Converts `a` to a didax array (tracers pass through, converted only if `dtype` asks)."""
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"asarray: order={order!r} is not supported")
    dtype = _canonical_user_dtype(dtype)
    if isinstance(a, ArrayBase):
        if dtype is not None and dtype != a.dtype:
            return lax_ew.convert_element_type(a, dtype)
        return a
    if hasattr(a, "__jax_array__"):
        return asarray(a.__jax_array__(), dtype)
    if type(a) not in _KNOWN_TYPES and type(a) in canonicalize_dtype_handlers:
        a = canonicalize_dtype_handlers[type(a)](a)  # (a type a library registered)
    if isinstance(a, _SCALARS) or type(a) in _SCALARS:
        aval = get_aval(a)
        if dtype is None:
            return Array(np.asarray(a, aval.dtype), aval.weak_type)
        return Array(np.asarray(a, dtype), False)
    if isinstance(a, (list, tuple)) and _nested_has_traced(a):
        out = _stack_nested(a, dtype)
        return out if dtype is None else asarray(out, dtype)
    if isinstance(a, (list, tuple)) and not a and dtype is None:
        return Array(np.zeros((0,), dtypes.default_float_dtype()))
    try:
        value = np.asarray(a)
    except ValueError as e:
        raise user_error(ValueError, (
            f"cannot convert {type(a).__name__} to an array: {e}\nWhat to do: nested lists "
            "must be rectangular (every row the same length); pad the rows, or keep ragged "
            "data as a list of separate arrays.")) from None
    except Exception as e:
        raise user_error(TypeError, f"cannot convert {type(a).__name__} to an array: {e}") from None
    if value.dtype == object:
        raise TypeError(f"cannot convert {a!r} to an array: it is not numeric data")
    if dtypes.kind(value.dtype) in "SUV" and value.dtype.names is None:
        raise TypeError(f"didax arrays hold numbers, not strings: got dtype {value.dtype}")
    if dtype is None and isinstance(a, (list, tuple)):
        # Lists of Python scalars take default dtypes (float32, int32) like JAX.
        dtype = dtypes.canonicalize_dtype(value.dtype)
    target = dtype or dtypes.canonicalize_dtype(value.dtype)
    if value.dtype != target or copy or not isinstance(a, np.ndarray):
        value = np.array(value, target)
    else:
        value = value.copy()  # our arrays are immutable: never alias the caller's buffer
    return Array(value, False)


def array(object, dtype=None, copy=True, order="K", ndmin=0, *, device=None):
    out = asarray(object, dtype, order=None if order == "K" else order)
    nd = get_aval(out).ndim
    if ndmin > nd:
        out = lax_shape.reshape(out, (1,) * (ndmin - nd) + get_aval(out).shape)
    return out


# --------------------------------------------------------------------------------------
# Promotion


def promote_dtypes(*args):
    """Converts arguments to their common dtype (JAX's lattice, weak types respected)."""
    if len(args) < 2:
        return [asarray(a) if not isinstance(a, ArrayBase) else a for a in args]
    if len(args) == 2 and isinstance(args[0], ArrayBase) and isinstance(args[1], ArrayBase):
        a, b = args[0].aval, args[1].aval  # two strong arrays of one canonical dtype: no-op
        if (a.dtype == b.dtype and not a.weak_type and not b.weak_type
                and dtypes.canonicalize_dtype(a.dtype) == a.dtype):
            return list(args)
    to, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [lax_ew.convert_element_type(a, to, weak) for a in args]


def to_inexact_dtype(dtype) -> np.dtype:
    """JAX's mapping of bools and integers to floats: 64-bit integers to float64, the rest
    to float32 (then canonicalized)."""
    dtype = np.dtype(dtype)
    if dtypes.kind(dtype) in "fc":
        return dtype
    wide = dtypes.kind(dtype) in "iu" and dtype.itemsize == 8
    return dtypes.canonicalize_dtype(np.float64 if wide else np.float32)


def promote_dtypes_inexact(*args):
    """As promote_dtypes, then integers and bools become floats (`to_inexact_dtype`)."""
    if len(args) == 1 and isinstance(args[0], ArrayBase):  # one array: converted only if
        if args[0].aval.dtype.kind in _FLOAT_KINDS:  # not already floating or complex
            return list(args)  # (the types of arrays are canonical: nothing to convert)
    to, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    to = to_inexact_dtype(to)
    return [lax_ew.convert_element_type(a, to, weak) for a in args]


def promote_dtypes_numeric(*args):
    to, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if to == np.bool_:
        to = dtypes.default_int_dtype()
    return [lax_ew.convert_element_type(a, to, weak) for a in args]


def promote_shapes(fun_name: str, *args):
    """Rank promotion: lower-rank non-scalar operands get leading size-1 dimensions."""
    if len(args) < 2:
        return list(args)
    shapes = [get_aval(a).shape for a in args]
    first = shapes[0]
    for s in shapes:
        if s != first:
            break
    else:
        return list(args)
    nonscalar_ranks = {len(s) for s in shapes if s}
    if len(nonscalar_ranks) < 2:  # (as in JAX, where lax finds these: a TypeError)
        _check_broadcastable(fun_name, shapes, TypeError)
        return list(args)
    _check_broadcastable(fun_name, shapes)
    if config.read("jax_numpy_rank_promotion") != "allow":
        rank_promotion(fun_name, shapes)
    rank = max(nonscalar_ranks)
    return [a if not s or len(s) == rank else lax_shape.broadcast_to_rank(a, rank)
            for a, s in zip(args, shapes)]


def _check_broadcastable(fun_name, shapes, error=ValueError):
    if len(shapes) == 2 and len(shapes[0]) == len(shapes[1]):  # (np.broadcast_shapes is slow)
        if all(m == n or m == 1 or n == 1 for m, n in zip(*shapes)):
            return
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise user_error(error, (
            f"{fun_name}: incompatible shapes for broadcasting: "
            f"{', '.join(map(str, shapes))}."
            "\nWhat to do: shapes broadcast when, aligned from the right, each pair of "
            "dimensions is equal or one of them is 1; insert axes of size 1 "
            "(`x[:, None]`, `jnp.expand_dims`) or reshape to line them up.")) from None


def promote_args(fun_name: str, *args):
    if len(args) == 2:  # two arrays of one type, or an array and a Python scalar that takes
        x, y = args  # its type: nothing to convert or broadcast here
        tx, ty = type(x), type(y)
        if tx in _FAST_SCALARS and isinstance(y, ArrayBase):
            x, y, tx, ty = y, x, ty, tx
            swapped = True
        else:
            swapped = False
        if isinstance(x, ArrayBase):
            a = x.aval
            if isinstance(y, ArrayBase):
                if y.aval is a and not a.weak_type:
                    return [y, x] if swapped else [x, y]
            elif not a.weak_type and (ty is float and a.dtype.kind in _FLOAT_KINDS
                                      or ty is int and a.dtype.kind in "fciu"):
                y = lax_ew.convert_element_type(y, a.dtype, False)  # as the lattice says
                return [y, x] if swapped else [x, y]
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args):
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args):
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def broadcast_arrays(*args):
    """Broadcasts all arguments to one shape (NumPy rules)."""
    shapes = [get_aval(a).shape for a in args]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise user_error(ValueError, (
            f"broadcast_arrays: incompatible shapes for broadcasting: "
            f"{', '.join(map(str, shapes))}."
            "\nWhat to do: shapes broadcast when, aligned from the right, each pair of "
            "dimensions is equal or one of them is 1; insert axes of size 1 "
            "(`x[:, None]`, `jnp.expand_dims`) or reshape to line them up.")) from None
    return [broadcast_to(a, shape) for a in args]


def broadcast_to(a, shape):
    key = None
    if type(a) is Array and _plans.ctx.interp is _plans.EVAL:  # (see _plans.py)
        key = ("broadcast_to", a.aval, _plans.int_key(shape))
        plan = _plans.plans.get(key)
        if plan is not None:
            return _plans.broadcast(a, plan)
        if key[2] is None:
            key = None
    a = asarray(a)
    shape = static_shape("jnp.broadcast_to", shape)
    aval = get_aval(a)
    if aval.shape == shape:
        if key is not None:
            _plans.remember(key, (None, None))
        return a
    nlead = len(shape) - aval.ndim
    if nlead < 0 or any(s not in (1, t) for s, t in zip(aval.shape, shape[nlead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {aval.shape} and requested "
                         f"shape {shape}")
    kept = [i for i, s in enumerate(aval.shape) if s == shape[nlead + i]]
    squeezed = [i for i in range(aval.ndim) if i not in kept]
    if squeezed:
        a = lax_shape.reshape(a, [aval.shape[i] for i in kept])
    out = lax_shape.broadcast_in_dim(a, shape, tuple(nlead + i for i in kept))
    if key is not None and type(out) is Array:
        _plans.remember(key, _plans.broadcast_plan(aval, out.aval))
    return out


def canonical_axis(axis, ndim, fun_name="") -> int:
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise user_error(np.exceptions.AxisError, (
            f"{fun_name}: axis {axis} is out of bounds for array of dimension "
            f"{ndim}"))
    return axis % ndim if ndim else 0


def concrete_or_error(x, what: str, topic="branch"):
    """A concrete value needed at trace time; a clear error otherwise (`topic` "shape" for
    sizes, whose fix is a static argument)."""
    v = core.concrete_value(x)
    if v is None:
        raise concretization_error(x, what, topic=topic)
    return v
