"""Type rules shared by primitive declarations: dtype classes, checks, lax broadcasting.

Pure functions of abstract values, below every interpreter and primitive family, so that
any layer may validate its operands the way lax does.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src import caches, core, dtypes
from didax._src.core import ShapedArray
from didax._src.errors import concretization_error

# Dtype classes accepted by primitives (checked by abstract eval).
bool_ = (np.bool_,)
int_ = (np.signedinteger, np.unsignedinteger)
sint = (np.signedinteger,)
uint = (np.unsignedinteger,)
float_ = (np.floating,)
complex_ = (np.complexfloating,)
inexact = float_ + complex_
num = int_ + inexact
any_ = bool_ + num
int_or_bool = int_ + bool_

_KIND_NAMES = {
    np.bool_: "bool", np.signedinteger: "signedinteger", np.unsignedinteger: "unsignedinteger",
    np.floating: "floating", np.complexfloating: "complexfloating",
}


_accepts = caches.memo("typecheck.accepts")  # (dtype, kinds) -> bool: np.issubdtype is slow


def dtype_in(dtype, accepted) -> bool:
    key = (dtype, accepted)
    ok = _accepts.get(key)
    if ok is None:
        ok = caches.add(_accepts, key, any(dtypes.issubdtype(dtype, k) for k in accepted))
    return ok


def check_dtype(name: str, aval: ShapedArray, accepted, what: str = "") -> None:
    if not dtype_in(aval.dtype, accepted):
        kinds = ", ".join(_KIND_NAMES[k] for k in accepted)
        raise TypeError(f"{name} does not accept dtype {aval.dtype.name}{what}. "
                        f"Accepted dtypes are subtypes of {kinds}.")


def check_same_dtypes(name: str, avals) -> None:
    first = avals[0].dtype
    if any(a.dtype != first for a in avals[1:]):
        got = ", ".join(a.dtype.name for a in avals)
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {got}. "
            f"(Tip: jnp.{name} is a similar function that does automatic type promotion "
            "on inputs).")


def broadcast_shapes(name: str, *shapes) -> tuple:
    """lax-level broadcasting: equal ranks with size-1 dims stretching, or rank-0 operands."""
    if len(shapes) == 2 and len(shapes[0]) == len(shapes[1]):  # the common case, quickly
        out = []
        for m, n in zip(*shapes):
            if m == n or n == 1:
                out.append(m)
            elif m == 1:
                out.append(n)
            else:
                break  # incompatible: the general path explains
        else:
            return tuple(out)
    ranked = [s for s in shapes if len(s)]
    if not ranked:
        return ()
    rank = len(ranked[0])
    if any(len(s) != rank for s in ranked):
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{', '.join(map(str, shapes))}. Broadcast them first (jnp.{name} "
                        "broadcasts automatically).")
    out = []
    for dims in zip(*ranked):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, shapes))}.")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def naryop_aval(name, avals, accepted, out_dtype=None) -> ShapedArray:
    first = avals[0]
    shape, dtype0, weak = first.shape, first.dtype, first.weak_type
    same_shapes = True
    for a in avals:
        if not dtype_in(a.dtype, accepted):
            check_dtype(name, a, accepted)
        if a.dtype != dtype0:
            check_same_dtypes(name, avals)
        if a.shape != shape:
            same_shapes = False
        weak = weak and a.weak_type
    if not same_shapes:
        shape = broadcast_shapes(name, *(a.shape for a in avals))
    elif out_dtype is None and weak == first.weak_type:
        return first  # avals are immutable: the common case allocates nothing
    if out_dtype is None:
        dtype = avals[0].dtype
    elif isinstance(out_dtype, type) or isinstance(out_dtype, np.dtype):
        dtype = np.dtype(out_dtype)
    else:  # a function of the input dtype
        dtype = np.dtype(out_dtype(avals[0].dtype))
    return ShapedArray(shape, dtype, weak)


def canonical_axes(name: str, axes, ndim: int) -> tuple:
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for an array of rank {ndim}")
        out.append(a % ndim if ndim else a)
    return tuple(out)


def int_tuple(op: str, name: str, values) -> tuple:
    """`values` (a parameter `name` of `op`: strides, dilations...) as a tuple of ints."""
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{op}: {name} must be a sequence of integers, got {values!r}") from None


def static_int(x, what: str) -> int:
    """`operator.index(x)` for a size or a dimension, which must be known while tracing: a
    traced `x` raises a ConcretizationTypeError saying `what` needed it and to make it
    static."""
    if isinstance(x, core.Tracer):
        v = core.concrete_value(x)
        if v is None:
            raise concretization_error(x, what, topic="shape")
        x = v
    return operator.index(x)


def static_shape(name: str, shape) -> tuple:
    """A shape argument of `name` as a tuple of Python ints (an int alone is one
    dimension); traced dimensions raise with the position and the fix."""
    if type(shape) is tuple and all(type(d) is int for d in shape):
        return shape  # the common case: nothing to convert, no message to prepare
    if isinstance(shape, (tuple, list)):
        dims = shape
    elif isinstance(shape, core.Tracer) and shape.aval.ndim:
        v = core.concrete_value(shape)
        if v is None:
            raise concretization_error(shape, f"the shape passed to {name}", topic="shape")
        dims = tuple(v)
    elif np.ndim(shape) == 0:
        dims = (shape,)
    else:
        dims = tuple(shape)
    out = []
    for i, d in enumerate(dims):
        if isinstance(d, core.Tracer) and core.concrete_value(d) is None:
            raise concretization_error(
                d, f"dimension {i} of the shape {_show(dims)} passed to {name}", topic="shape")
        out.append(static_int(d, name))
    return tuple(out)


def _show(dims) -> str:
    """A shape for messages, traced entries shown by their type."""
    parts = [d.aval.str_short() if isinstance(d, core.Tracer) else repr(d) for d in dims]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def check_shape(name: str, shape) -> tuple:
    if type(shape) is tuple:  # the common case, already normalised by a lax wrapper
        for d in shape:
            if type(d) is not int or d < 0:
                break
        else:
            return shape
    if any(isinstance(d, core.Tracer) for d in shape):
        shape = static_shape(name, shape)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shapes must be sequences of integers, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise TypeError(f"{name}: shape {shape} has a negative dimension")
    return shape


def as_dtype(dtype) -> np.dtype:
    return dtypes.canonicalize_dtype(np.dtype(dtype))


_PY_TYPE_OF_KIND = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def const_like(x, value):
    """`value` as a constant of `x`'s dtype: a (weakly typed) Python scalar when that
    dtype is the Python scalar's default, so it never changes `x`'s weak type; else a
    NumPy scalar of that dtype."""
    dtype = core.get_aval(x).dtype
    py_type = _PY_TYPE_OF_KIND.get(dtypes.kind(dtype))
    if py_type is not None and dtypes.python_scalar_dtype(py_type(0)) == dtype:
        return py_type(value)
    return np.asarray(value, dtype)
