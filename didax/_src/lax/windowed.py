"""Windowed reductions: `reduce_window` (pooling) and the primitives that differentiate it.

`reduce_window_sum`, `reduce_window_max` and `reduce_window_min` reduce every window of an
operand that is dilated (`base_dilation`) and padded; windows may be strided and dilated
themselves. The impls place the operand in a buffer filled with the reduction's identity and
take all windows at once as a `sliding_window_view` (strides and window dilation are view
strides), folding the window positions together one strided slice at a time.

Derivatives are JAX's. A window sum is linear; its transpose is a window sum of the padded,
strided cotangent. A window max (min) passes on, per window, the tangent of the element it
selected: `select_and_gather_add`. Its transpose, `select_and_scatter_add`, adds each
cotangent back to that element, and the two transpose into each other, so derivatives of
every order stay within these five primitives. Selection reproduces XLA's: elements are
visited in order and a later one replaces the choice unless `choice >= element` (`<=` for
min), which picks the first of tied elements and decides NaNs as XLA does; padding and
dilation holes are skipped by the gather and selectable (as the identity) by the scatter,
as on XLA's CPU backend. `select_and_scatter_add` (the max-pool gradient) and the float
window reductions run as C loops over the windows where the native tier has built them
(`window_kernels`, on either jit tier and eager), with the NumPy paths as their twins of the
same bits.

`lax.reduce_window` with any other computation stages JAX's general `reduce_window`
(reduce_general.py), which folds the window positions into the initial values in that same
order. The windows' geometry is window_geometry.py's.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import core, dtypes, tree_util
from didax._src.core import ShapedArray, Zero, get_aval, is_zero
from didax._src.interpreters.batching import bdim_at_front
from didax._src.interpreters.jvp import defjvp, deflinear
from didax._src.interpreters.transpose import is_undefined
from didax._src.lax import window_kernels
from didax._src.lax.conv import _vjp_lhs_padding, dilate_dim, padtype_to_pads
from didax._src.lax.elementwise import add, convert_element_type, ge_p, le_p
from didax._src.lax.elementwise import max as lax_max
from didax._src.lax.elementwise import min as lax_min
from didax._src.lax.reduce_general import bind_reduce_window
from didax._src.lax.reduction import max_identity, min_identity
from didax._src.lax.shape import pad
from didax._src.lax.shape import slice as lax_slice
from didax._src.lax.window_geometry import (
    WINDOW_PARAMS,
    buffer,
    check_positive,
    flat_windows,
    insert_unit,
    placement,
    positions,
    reduce_window_shape_tuple,
    window_shape,
    windows,
)
from didax._src.typecheck import bool_, check_dtype, float_, int_, int_tuple, num

_ORDERED = bool_ + int_ + float_  # max and min need an order: complex values have none


# --------------------------------------------------------------------------------------
# Window geometry


# --------------------------------------------------------------------------------------
# reduce_window_sum, reduce_window_max, reduce_window_min


def _fold_max(out, v):
    """out = the maximum of out and v, NaN propagating, v where they are equal (as NumPy's
    maximum does on x86, but whatever the CPU: its sign of equal zeros is the CPU's)."""
    np.copyto(out, v, where=~((out > v) | (out != out)))


def _fold_min(out, v):
    np.copyto(out, v, where=~((out < v) | (out != out)))


def _reducer_impl(fold, identity):
    def impl(x, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        out_shape = reduce_window_shape_tuple(x.shape, window_dimensions, window_strides,
                                              padding, base_dilation, window_dilation)
        if math.prod(out_shape) == 0:
            return np.full(out_shape, identity(x.dtype), x.dtype)
        buf, padded = buffer(x, identity(x.dtype), padding, base_dilation)

        def numpy_twin():
            view = windows(padded, window_dimensions, window_strides, window_dilation)
            first, *rest = positions(window_dimensions)
            out = np.array(view[first], x.dtype)
            for k in rest:
                _FOLDS[fold](out, view[k])
            return out

        window_dilation = window_dilation or (1,) * x.ndim
        if buf is x:
            buf = np.ascontiguousarray(x)
            crop = tuple(slice(0, n) for n in x.shape)
        else:
            crop = placement(x.shape, padding, base_dilation)[2]
        steps, offsets, start = flat_windows(buf.shape, crop, window_dimensions,
                                              window_strides, window_dilation)
        out = window_kernels.reduce_windows(buf, out_shape, steps, offsets, start, fold,
                                            numpy_twin)
        return numpy_twin() if out is None else out

    return impl


_FOLDS = {"sum": lambda out, v: np.add(out, v, out=out), "max": _fold_max, "min": _fold_min}


def _reducer_aval(name, accepted):
    def abstract_eval(x, **params):
        if not any(dtypes.issubdtype(x.dtype, k) for k in accepted):
            if name == "reduce_window_sum":
                raise TypeError(f"operand to reduce_window_sum must have a number dtype, got "
                                f"{x.dtype.name}")
            check_dtype(name, x, accepted)
        return ShapedArray(window_shape("reduce_window", x, **params), x.dtype, x.weak_type)

    return abstract_eval


def _reducer(name, fold, identity, accepted) -> core.Primitive:
    p = core.primitive(name)
    p.def_impl(_reducer_impl(fold, identity))
    p.def_abstract_eval(_reducer_aval(name, accepted))
    return p


reduce_window_sum_p = _reducer("reduce_window_sum", "sum", lambda dtype: 0, num)
deflinear(reduce_window_sum_p)


def _reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    """JAX's rule: the cotangent, spread out by the strides and padded as for a
    convolution's input gradient, summed over the same windows (strided by the base
    dilation, which the result undoes)."""
    in_shape = x.aval.shape
    pads = _vjp_lhs_padding(in_shape, window_dimensions, window_strides, get_aval(ct).shape,
                            padding, base_dilation, window_dilation)
    config = [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)]
    spread = pad(ct, np.zeros((), get_aval(ct).dtype), config)
    ones = (1,) * len(in_shape)
    out = reduce_window_sum_p.bind(spread, window_dimensions=window_dimensions,
                                   window_strides=base_dilation,
                                   padding=((0, 0),) * len(in_shape), base_dilation=ones,
                                   window_dilation=window_dilation)
    assert get_aval(out).shape == in_shape, (get_aval(out).shape, in_shape)
    return [out]


reduce_window_sum_p.def_transpose(_reduce_window_sum_transpose)

reduce_window_max_p = _reducer("reduce_window_max", "max", max_identity, _ORDERED)


def _chooser_jvp(select_prim):
    def rule(g, x, **params):
        return select_and_gather_add_p.bind(g, x, select_prim=select_prim, **params)

    return rule


defjvp(reduce_window_max_p, _chooser_jvp(ge_p))

reduce_window_min_p = _reducer("reduce_window_min", "min", min_identity, _ORDERED)
defjvp(reduce_window_min_p, _chooser_jvp(le_p))


def _selects(select_prim, acc, key):
    """XLA's choice between the current selection and the next element: keep the current
    one where `acc >= key` (`<=` for min), else take the element (so NaNs are passed on)."""
    keep = np.greater_equal(acc, key) if select_prim is ge_p else np.less_equal(acc, key)
    return ~keep


def _select_and_gather_add_impl(tangents, operand, *, select_prim, window_dimensions,
                                window_strides, padding, base_dilation, window_dilation):
    """A variadic window reduction of (operand, tangents) pairs starting from (identity, 0);
    padding and dilation holes are skipped."""
    out_shape = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                          padding, base_dilation, window_dilation)
    identity = (max_identity if select_prim is ge_p else min_identity)(operand.dtype)
    key = np.full(out_shape, identity, operand.dtype)
    out = np.zeros(out_shape, tangents.dtype)
    if math.prod(out_shape) == 0:
        return out
    window = (window_dimensions, window_strides, window_dilation)
    keys = windows(buffer(operand, identity, padding, base_dilation)[1], *window)
    values = windows(buffer(tangents, 0, padding, base_dilation)[1], *window)
    real = None
    if any(p != (0, 0) for p in padding) or any(d != 1 for d in base_dilation):
        real = windows(buffer(np.ones(operand.shape, bool), False, padding,
                                base_dilation)[1], *window)
    for k in positions(window_dimensions):
        take = _selects(select_prim, key, keys[k])
        if real is not None:
            take &= real[k]
        np.copyto(key, keys[k], where=take)
        np.copyto(out, values[k], where=take)
    return out


def _select_and_gather_add_aval(tangents, operand, *, select_prim, **params):
    if select_prim not in (ge_p, le_p):
        raise TypeError(f"select_and_gather_add: select_prim must be ge or le, got "
                        f"{select_prim}")
    if tangents.shape != operand.shape:
        raise TypeError(f"select_and_gather_add tangents and operand shapes must match, got "
                        f"{tangents.shape} and {operand.shape}.")
    check_dtype("select_and_gather_add", operand, _ORDERED, " (operand)")
    shape = window_shape("select_and_gather_add", operand, **params)
    return ShapedArray(shape, tangents.dtype, tangents.weak_type)


select_and_gather_add_p = core.primitive("select_and_gather_add", linear=True)
select_and_gather_add_p.def_impl(_select_and_gather_add_impl)
select_and_gather_add_p.def_abstract_eval(_select_and_gather_add_aval)


def _linear_in_first_jvp(prim):
    def rule(primals, tangents, **params):
        (values, operand), (t_values, _) = primals, tangents
        out = prim.bind(values, operand, **params)
        if is_zero(t_values):
            return out, Zero(get_aval(out).to_tangent_aval())
        return out, prim.bind(t_values, operand, **params)

    return rule


select_and_gather_add_p.def_jvp(_linear_in_first_jvp(select_and_gather_add_p))


def _select_and_gather_add_transpose(ct, tangents, operand, *, select_prim,
                                     window_dimensions, window_strides, padding,
                                     base_dilation, window_dilation):
    """Scatters the cotangents back to the selected elements. Base dilation becomes holes of
    identity in the operand (never selected over a real element), dropped afterwards."""
    if is_undefined(operand):
        raise NotImplementedError("transpose of 'select_and_gather_add': the operation is "
                                  "not linear in its operand")
    aval = tangents.aval
    if is_zero(ct):
        return [Zero(aval), None]
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        dtype = get_aval(operand).dtype
        identity = (max_identity if select_prim is ge_p else min_identity)(dtype)
        operand = pad(operand, np.asarray(identity, dtype),
                      tuple((0, 0, d - 1) for d in base_dilation))
    out = select_and_scatter_add_p.bind(
        ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding,
        **({} if all(d == 1 for d in window_dilation) else {"window_dilation": window_dilation}))
    if dilated:
        out = lax_slice(out, (0,) * aval.ndim, get_aval(out).shape, base_dilation)
    return [out, None]


def _pair_batch(prim):
    """Both operands with the batch dimension first (broadcast if unbatched)."""
    def rule(size, vals, dims, **params):
        args = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        names = [n for n in WINDOW_PARAMS if n in params]
        return prim.bind(*args, **insert_unit(params, 0, names)), 0

    return rule


def _select_and_scatter_add_transpose(ct, source, operand, *, select_prim, window_dimensions,
                                      window_strides, padding, window_dilation=None):
    if is_undefined(operand):
        raise NotImplementedError("transpose of 'select_and_scatter_add': the operation is "
                                  "not linear in its operand")
    if is_zero(ct):
        return [Zero(source.aval), None]
    ones = (1,) * len(window_dimensions)
    return [select_and_gather_add_p.bind(
        ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=ones,
        window_dilation=window_dilation or ones), None]


select_and_gather_add_p.def_transpose(_select_and_gather_add_transpose)
select_and_gather_add_p.def_batch(_pair_batch(select_and_gather_add_p))


def _select_and_scatter_add_impl(source, operand, *, select_prim, window_dimensions,
                                 window_strides, padding, window_dilation=None):
    """XLA's SelectAndScatter on the operand padded with the identity (JAX's CPU lowering):
    the first element of a window is the initial choice; sources that land on padding are
    dropped."""
    ndim = operand.ndim
    window_dilation = window_dilation or (1,) * ndim
    if source.size == 0 or operand.size == 0:
        return np.zeros(operand.shape, source.dtype)
    identity = (max_identity if select_prim is ge_p else min_identity)(operand.dtype)
    ones = (1,) * ndim
    full, place, crop = placement(operand.shape, padding, ones)
    if full == operand.shape:
        buf = np.ascontiguousarray(operand)
    else:
        buf = np.full(full, identity, operand.dtype)
        buf[place] = operand
    window = (window_dimensions, window_strides, window_dilation)

    def numpy_twin():
        keys = windows(buf[crop], *window)
        where = windows(np.arange(buf.size).reshape(full)[crop], *window)
        first, *rest = positions(window_dimensions)
        key, chosen = np.array(keys[first]), np.array(where[first])
        for k in rest:
            take = _selects(select_prim, key, keys[k])
            np.copyto(key, keys[k], where=take)
            np.copyto(chosen, where[k], where=take)
        total = np.zeros(buf.size, source.dtype)
        np.add.at(total, chosen.reshape(-1), source.reshape(-1))
        return total

    steps, offsets, start = flat_windows(full, crop, window_dimensions, window_strides,
                                          window_dilation)
    disjoint = all((k - 1) * d < s for k, s, d in zip(window_dimensions, window_strides,
                                                       window_dilation))
    total = window_kernels.scatter_selected(buf, source, steps, offsets, start,
                                            select_prim is ge_p, numpy_twin, disjoint)
    if total is None:
        total = numpy_twin()
    if full == operand.shape:
        return total.reshape(full)
    return np.ascontiguousarray(total.reshape(full)[place])


def _select_and_scatter_add_aval(source, operand, *, select_prim, window_dimensions,
                                 window_strides, padding, window_dilation=None):
    if select_prim not in (ge_p, le_p):
        raise TypeError(f"select_and_scatter_add: select_prim must be ge or le, got "
                        f"{select_prim}")
    check_dtype("select_and_scatter_add", operand, _ORDERED, " (operand)")
    ones = (1,) * len(window_dimensions)
    shape = window_shape("select_and_scatter_add", operand,
                          window_dimensions=window_dimensions, window_strides=window_strides,
                          padding=padding, base_dilation=ones,
                          window_dilation=window_dilation or ones)
    if source.shape != shape:
        raise TypeError(f"select_and_scatter_add: source shape {source.shape} must be the "
                        f"window reduction's output shape {shape} (operand {operand.shape})")
    return ShapedArray(operand.shape, source.dtype, source.weak_type)


select_and_scatter_add_p = core.primitive("select_and_scatter_add", linear=True)
select_and_scatter_add_p.def_impl(_select_and_scatter_add_impl)
select_and_scatter_add_p.def_abstract_eval(_select_and_scatter_add_aval)
# Window dilation is an addition to JAX's parameters (its transpose of a dilated gather
# raises): a param only when used, so equations carry JAX's params.
select_and_scatter_add_p.pp_hidden = {
    "window_dilation": lambda d: d is None or all(v == 1 for v in d)}
select_and_scatter_add_p.def_jvp(_linear_in_first_jvp(select_and_scatter_add_p))
select_and_scatter_add_p.def_transpose(_select_and_scatter_add_transpose)
select_and_scatter_add_p.def_batch(_pair_batch(select_and_scatter_add_p))


def _reducer_batch(prim):
    def rule(size, vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **insert_unit(params, d, WINDOW_PARAMS)), d

    return rule


for _p in (reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p):
    _p.def_batch(_reducer_batch(_p))
_MONOIDS = {add: (reduce_window_sum_p, lambda dtype: 0),
            lax_max: (reduce_window_max_p, max_identity),
            lax_min: (reduce_window_min_p, min_identity)}


def _monoid(computation, init_values):
    """The primitive for `computation` if it is lax.add/max/min and the initial value a
    concrete scalar equal to its identity (JAX's test), else None."""
    try:
        entry = _MONOIDS.get(computation) if len(init_values) == 1 else None
    except TypeError:  # an unhashable callable is no monoid of ours
        entry = None
    if entry is None:
        return None
    prim, identity = entry
    value = core.concrete_value(init_values[0])
    aval = get_aval(init_values[0])
    if value is None or aval.shape != ():
        return None
    return prim if np.asarray(value) == identity(aval.dtype) else None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduces every window of `operand` (an array or a pytree of arrays) with
    `computation`, starting from `init_value`.

    `padding` is 'VALID', 'SAME', 'SAME_LOWER' or (low, high) pairs; `base_dilation` spreads
    the operand out, `window_dilation` the window. lax.add, lax.max and lax.min with their
    identity as `init_value` bind one primitive each; any other computation binds
    reduce_window, holding its jaxpr (see reduce_general.py).
    """
    operands, tree = tree_util.tree_flatten(operand)
    inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} "
                         f"vs. {init_tree}")
    if not operands:
        raise ValueError("reduce_window must have at least one operand.")
    window_dimensions = int_tuple("reduce_window", "window_dimensions", window_dimensions)
    ndim = len(window_dimensions)
    window_strides, base_dilation, window_dilation = (
        (1,) * ndim if v is None else int_tuple("reduce_window", name, v)
        for name, v in (("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)))
    check_positive("reduce_window", window_dimensions, "window_dimensions")
    check_positive("reduce_window", window_strides, "window_strides")
    if isinstance(padding, str):
        shape = get_aval(operands[0]).shape
        if len(shape) != ndim:
            raise TypeError(f"reduce_window got the wrong number of window_dimensions for "
                            f"operand: got operand shape {shape} with window_dimensions "
                            f"{window_dimensions}.")
        padding = padtype_to_pads(shape, tuple(map(dilate_dim, window_dimensions,
                                                   window_dilation)), window_strides, padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"reduce_window padding must be a string or a sequence of (low, high) "
                        f"pairs of integers, got {padding!r}") from None
    params = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  padding=padding, base_dilation=base_dilation,
                  window_dilation=window_dilation)
    prim = _monoid(computation, inits)
    if prim is not None:
        return tree_util.tree_unflatten(tree, [prim.bind(operands[0], **params)])
    out = _fold_windows(operands, inits, computation, tree, **params)
    return tree_util.tree_unflatten(tree, out)


def _fold_windows(operands, inits, computation, tree, *, window_dimensions, window_strides,
                  padding, base_dilation, window_dilation):
    """A general computation: one reduce_window equation holding its jaxpr (reduce_general.py
    folds the window positions in order, skipping padding and dilation holes as XLA does)."""
    avals = [get_aval(x) for x in operands]
    shape = avals[0].shape
    if any(a.shape != shape for a in avals):
        raise TypeError(f"reduce_window operands must have equal shapes, got "
                        f"{[a.shape for a in avals]}")
    window_shape("reduce_window", avals[0], window_dimensions=window_dimensions,
                  window_strides=window_strides, padding=padding,
                  base_dilation=base_dilation, window_dilation=window_dilation)
    inits = [_init_like(v, a) for v, a in zip(inits, avals)]
    geometry = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                    padding=padding, base_dilation=base_dilation,
                    window_dilation=window_dilation)
    return bind_reduce_window(operands, inits, computation, tree, geometry)


def _init_like(value, operand: ShapedArray):
    """An initial value as a scalar of the operand's dtype (Python scalars are converted)."""
    aval = get_aval(value)
    if aval.shape != ():
        raise TypeError(f"reduce_window expected init_values to be scalars but init_values "
                        f"have shapes {aval.shape}.")
    if isinstance(value, (bool, int, float, complex)):
        return convert_element_type(value, operand.dtype)
    if aval.dtype != operand.dtype:
        raise TypeError(f"reduce_window got inconsistent dtypes for operands and init_values:"
                        f" got operand dtype {operand.dtype.name} and init_value dtype "
                        f"{aval.dtype.name}.")
    return value


__all__ = ["reduce_window", "reduce_window_shape_tuple"]
