"""Shape information and rearrangement: ndim/shape/size, reshape, ravel, transposes and axis
moves, squeeze/expand_dims, atleast_*d, flips, roll and rot90.

Each is a lax reshape, transpose, rev, slice or concatenate; permutations and shapes are
computed with NumPy from the static shapes. Evaluated on a concrete Array, the common ones
follow a plan instead (see _plans.py): one NumPy call on the Array's buffer.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ArrayBase
from didax._src.errors import user_error
from didax._src.lax import elementwise as lax
from didax._src.lax import indexing as lax_idx
from didax._src.lax import shape as lax_shape
from didax._src.numpy import ufuncs
from didax._src.numpy._helpers import _aval, _axis_tuple, _concrete_int, _range
from didax._src.numpy._plans import EVAL as _EVAL
from didax._src.numpy._plans import Array as _Array
from didax._src.numpy._plans import ctx as _ctx
from didax._src.numpy._plans import from_numpy as _from_numpy
from didax._src.numpy._plans import int_key as _int_key
from didax._src.numpy._plans import plans as _plans
from didax._src.numpy._plans import remember as _remember
from didax._src.numpy._plans import remember_type as _remember_type
from didax._src.numpy.util import array, asarray, broadcast_to, canonical_axis, check_arraylike
from didax._src.typecheck import static_shape

__all__ = [
    "ndim", "shape", "size", "iterable", "isscalar", "can_cast", "reshape", "ravel",
    "transpose", "permute_dims", "matrix_transpose", "swapaxes", "moveaxis", "rollaxis",
    "squeeze", "expand_dims", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes",
    "flip", "fliplr", "flipud", "roll", "rot90",
]


# --------------------------------------------------------------------------------------
# Eager plans (see _plans.py): a hit is the impl's NumPy call on the Array's buffer


def _reshaped(a, out):
    """A reshape-like plan (its result type) applied: `a` itself for its own type (as the
    lax wrappers return the operand), else its buffer reshaped (the impls' call)."""
    if out is a.aval:
        return a
    return _from_numpy(a._value.reshape(out.shape), out)


def _permuted(a, plan):
    perm, out = plan
    if perm is None:
        return a
    return _from_numpy(a._value.transpose(perm), out)


def _transposed(key, a, perm):
    """`a` transposed by `perm` through lax; remembers the plan for `key` (if not None)."""
    perm = tuple(perm)
    out = lax_shape.transpose(a, perm)
    if key is not None and type(out) is _Array:
        identity = perm == tuple(_range(len(perm)))
        _remember(key, (None if identity else perm, out.aval))
    return out


def _eager_key(name, a, *args):
    """The plan key of operation `name` on `a` with static `args` (each an `_int_key`) if it
    evaluates now on a concrete Array, else None (then the general path runs and nothing is
    remembered)."""
    if type(a) is _Array and _ctx.interp is _EVAL and None not in args:
        return (name, a.aval, *args)
    return None


def _integer_axis(axis, fun_name, error=TypeError):
    """`axis` if it is an integer (arrays are left to `canonical_axis`, which explains a
    traced one); a float raises `error`, as in JAX, where `int()` would truncate it."""
    if isinstance(axis, ArrayBase):
        return axis
    try:
        return operator.index(axis)
    except TypeError:
        raise user_error(error, f"jnp.{fun_name}: axis {axis!r} is not an integer: axes are "
                         "Python ints (or integer scalars).") from None


# --------------------------------------------------------------------------------------
# Array information


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


# --------------------------------------------------------------------------------------
# Reshaping and moving axes


def _infer_shape(newshape, total, original, error=TypeError):
    """The shape `newshape` asks for, its -1 inferred; a malformed one raises `error` (JAX's
    TypeError, or NumPy's ValueError, which JAX passes on for a NumPy input)."""
    newshape = list(newshape)
    unknown = [i for i, d in enumerate(newshape) if d == -1]
    if len(unknown) > 1:
        raise user_error(error, f"jnp.reshape: can only specify one unknown dimension "
                         f"(-1), got shape {tuple(newshape)}")
    if any(d < -1 for d in newshape):
        raise user_error(error, f"jnp.reshape: invalid shape {tuple(newshape)}: "
                         "dimensions must be non-negative, or -1 for one inferred dimension")
    if unknown:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or total % known:
            raise user_error(TypeError, (
                f"cannot reshape array of shape {original} (size {total}) into shape "
                f"{tuple(newshape)}: the other dimensions multiply to {known}, which does not "
                f"divide {total}, so no size for the -1 dimension fits."))
        newshape[unknown[0]] = total // known
    if math.prod(newshape) != total:
        raise user_error(TypeError, (
            f"cannot reshape array of shape {original} (size {total}) into shape "
            f"{tuple(newshape)} (size {math.prod(newshape)}): a reshape keeps the number of "
            "elements; use -1 for one dimension to have it inferred."))
    return tuple(newshape)


def _reshaped_by_plan(name, a, static, general, *args):
    """A reshape-like operation `name` of the concrete Array `a` (evaluated now) with the
    static argument `static`: its plan's result if it has one, else `general(a, *args)`,
    whose type becomes the plan (if `static` can be part of a key)."""
    key = (name, a.aval, _int_key(static))
    out = _plans.get(key)
    if out is not None:
        return _reshaped(a, out)
    if key[2] is not None:
        return _remember_type(key, general(a, *args))
    return general(a, *args)


def reshape(a, shape, order="C", *, copy=None, out_sharding=None):
    """A new shape for the same elements; one dimension may be -1 (inferred)."""
    if type(a) is _Array and order == "C" and _ctx.interp is _EVAL:
        return _reshaped_by_plan("reshape", a, shape, _reshape, shape, order)
    return _reshape(a, shape, order)


def _reshape(a, shape, order):
    check_arraylike("reshape", a)
    error = ValueError if isinstance(a, np.ndarray) else TypeError
    a = asarray(a)
    aval = _aval(a)
    newshape = static_shape("jnp.reshape", shape)
    newshape = _infer_shape(newshape, aval.size, aval.shape, error)
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
    if type(a) is _Array and order == "C" and _ctx.interp is _EVAL:
        key = ("ravel", a.aval)
        out = _plans.get(key)
        if out is not None:
            return _reshaped(a, out)
        return _remember_type(key, reshape(a, (a.aval.size,)))
    check_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (size(a),), order)


def transpose(a, axes=None):
    if type(a) is _Array and _ctx.interp is _EVAL:
        key = ("transpose", a.aval, "T" if axes is None else _int_key(axes))
        plan = _plans.get(key)
        if plan is not None:
            if plan[0] is None:
                return a
            return _from_numpy(a._value.transpose(plan[0]), plan[1])
        if key[-1] is None:
            key = None
    else:
        key = None
    check_arraylike("transpose", a)
    a = asarray(a)
    nd = _aval(a).ndim
    axes = tuple(_range(nd))[::-1] if axes is None else axes
    perm = [canonical_axis(_integer_axis(i, "transpose"), nd, "transpose") for i in axes]
    if sorted(perm) != list(_range(nd)):
        raise user_error(TypeError, (
            f"jnp.transpose: axes {tuple(axes)} are not a permutation of the dimensions of an "
            f"array of shape {_aval(a).shape}: each of 0..{nd - 1} must appear exactly once "
            f"(e.g. {tuple(_range(nd))[::-1]} reverses them)."))
    return _transposed(key, a, perm)


def permute_dims(a, /, axes):
    check_arraylike("permute_dims", a)
    return transpose(a, axes)


def matrix_transpose(x, /):
    key = _eager_key("mT", x)
    if key is not None:
        plan = _plans.get(key)
        if plan is not None:
            return _permuted(x, plan)
    check_arraylike("matrix_transpose", x)
    x = asarray(x)
    nd = _aval(x).ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={nd}")
    return _transposed(key, x, (*_range(nd - 2), nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    key = _eager_key("swapaxes", a, _int_key(axis1), _int_key(axis2))
    if key is not None:
        plan = _plans.get(key)
        if plan is not None:
            return _permuted(a, plan)
    check_arraylike("swapaxes", a)
    a = asarray(a)
    nd = _aval(a).ndim
    perm = list(_range(nd))
    i, j = (canonical_axis(_integer_axis(ax, "swapaxes", IndexError), nd, "swapaxes")
            for ax in (axis1, axis2))
    perm[i], perm[j] = perm[j], perm[i]
    return _transposed(key, a, perm)


def moveaxis(a, source, destination):
    key = _eager_key("moveaxis", a, _int_key(source), _int_key(destination))
    if key is not None:
        plan = _plans.get(key)
        if plan is not None:
            return _permuted(a, plan)
    check_arraylike("moveaxis", a)
    a = asarray(a)
    nd = _aval(a).ndim
    src = [canonical_axis(i, nd, "moveaxis") for i in _axis_tuple(source)]
    dst = [canonical_axis(i, nd, "moveaxis") for i in _axis_tuple(destination)]
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):  # (a TypeError in JAX)
        raise user_error(TypeError, f"jnp.moveaxis: repeated axis in source {source} or "
                         f"destination {destination}: each axis may move once, to one place.")
    perm = [i for i in _range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return _transposed(key, a, perm)


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
    if type(a) is _Array and _ctx.interp is _EVAL:
        key = ("squeeze", a.aval, "all" if axis is None else _int_key(axis))
        plan = _plans.get(key)
        if plan is not None:
            dims, out = plan
            return _from_numpy(a._value.squeeze(dims), out) if dims else a
        if key[2] is None:
            key = None
    else:
        key = None
    check_arraylike("squeeze", a)
    a = asarray(a)
    s = _aval(a).shape
    if axis is None:
        dims = [i for i, d in enumerate(s) if d == 1]
    else:
        dims = [canonical_axis(i, len(s), "squeeze") for i in _axis_tuple(axis)]
        for i in dims:
            if s[i] != 1:
                raise user_error(ValueError, (
                    "cannot select an axis to squeeze out which has size not equal "
                    f"to one, got shape={s} and dimensions={tuple(dims)}: axis {i} has size "
                    f"{s[i]}.\nWhat to do: squeeze only axes of size 1 (`axis=None` squeezes "
                    "all of them); use reshape or indexing to drop others."))
    out = lax_shape.squeeze(a, dims)
    if key is not None and type(out) is _Array:
        _remember(key, (tuple(sorted(dims)), out.aval))
    return out


def expand_dims(a, axis):
    if type(a) is _Array and _ctx.interp is _EVAL:
        return _reshaped_by_plan("expand_dims", a, axis, _expand_dims, axis)
    return _expand_dims(a, axis)


def _expand_dims(a, axis):
    check_arraylike("expand_dims", a)
    a = asarray(a)
    axes = _axis_tuple(axis)
    nd = _aval(a).ndim + len(axes)
    canon = [canonical_axis(i, nd, "expand_dims") for i in axes]
    if len(set(canon)) != len(canon):
        raise ValueError(f"repeated axis in expand_dims: {axis}")
    return lax_shape.expand_dims(a, canon)


def _atleast(name, general, arys):
    """`general` applied to each of `arys`, with plans for concrete Arrays (each result is
    a reshape of its operand); one array alone, many as a list."""
    if len(arys) != 1:
        check_arraylike(name, *arys)
    out = []
    for a in arys:
        if type(a) is _Array and _ctx.interp is _EVAL:
            key = (name, a.aval)
            plan = _plans.get(key)
            out.append(_reshaped(a, plan) if plan is not None else
                       _remember_type(key, general(a)))
        else:
            check_arraylike(name, a)
            out.append(general(a))
    return out[0] if len(out) == 1 else out


def _atleast_1d(a):
    return array(a, copy=False, ndmin=1)


def _atleast_2d(a):
    return array(a, copy=False, ndmin=2)


def _atleast_3d(a):
    """Like NumPy: a 1-D array of shape (n,) becomes (1, n, 1), a 2-D one gains a last axis."""
    a = asarray(a)
    dims = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(_aval(a).ndim, ())
    return lax_shape.expand_dims(a, dims) if dims else a


def atleast_1d(*arys):
    return _atleast("atleast_1d", _atleast_1d, arys)


def atleast_2d(*arys):
    return _atleast("atleast_2d", _atleast_2d, arys)


def atleast_3d(*arys):
    """Like NumPy: a 1-D array of shape (n,) becomes (1, n, 1), a 2-D one gains a last axis."""
    return _atleast("atleast_3d", _atleast_3d, arys)


def broadcast_shapes(*shapes):
    if not shapes:
        return ()
    shapes = [(int(s),) if np.ndim(s) == 0 else tuple(int(d) for d in s) for s in shapes]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


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
        if shifts.ndim > 1 or not dtypes.issubdtype(shifts.dtype, np.integer):
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
