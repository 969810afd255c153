"""`select_and_scatter`: XLA's SelectAndScatter with computations of the user's own.

select_and_scatter_p: operands `operand`, `source` (one value per window) and a scalar
`init_value`; params `select_jaxpr` and `scatter_jaxpr` (open jaxprs of two scalars of
init_value's dtype, their constants' values in `select_consts` and `scatter_consts`) and the
window geometry `window_dimensions`, `window_strides`, `padding` (as JAX's). The result has the
operand's shape and dtype, every element starting as `init_value`.

Semantics (XLA's documented ones): for each window, its positions are visited in row-major
order, skipping padding (padding is never selected); the first real position is the initial
choice, and each later one replaces it unless `select(current, candidate)` is true. Then, one
window at a time in row-major order of the windows, the chosen element's result becomes
`scatter(result, source)`. A window of padding alone selects nothing (its source is dropped).

A deliberate, documented difference: where a padded, multi-window operand has tied elements
in a window, XLA:CPU (JAX's backend) may choose among the ties as if it visited the window's
positions in another order (a detail of its layout), while didax always visits them in
row-major order. Without ties (or without padding) the two agree.

Nothing in lax's public functions stages it (their max-pool gradients stage
select_and_scatter_add); `select_and_scatter` below stages it as JAX's internal helper does.
As in JAX, it has no JVP, transpose or batching rule.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.core import ShapedArray, Tracer, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import eval_jaxpr
from didax._src.lax.reduce_general import check_open_jaxpr
from didax._src.lax.window_geometry import placement, positions, window_shape, windows
from didax._src.tree_util import tree_leaves

select_and_scatter_p = core.primitive("select_and_scatter")


def _check_jaxpr(what, jaxpr, consts, dtype, out_dtype):
    check_open_jaxpr("select_and_scatter", f"{what}_", jaxpr, consts)
    ins, outs = jaxpr.in_avals, jaxpr.out_avals
    scalar = ShapedArray((), dtype)
    if len(ins) != 2 or any(a.shape != () or a.dtype != dtype for a in ins):
        raise TypeError(f"select_and_scatter: {what}_jaxpr must take two scalars of type "
                        f"{scalar.str_short()}, got {[a.str_short() for a in ins]}")
    if len(outs) != 1 or outs[0].shape != () or outs[0].dtype != out_dtype:
        raise TypeError(f"select_and_scatter: {what}_jaxpr must return one scalar of type "
                        f"{ShapedArray((), out_dtype).str_short()}, got "
                        f"{[a.str_short() for a in outs]}")


def _aval(operand, source, init_value, *, select_jaxpr, select_consts, scatter_jaxpr,
          scatter_consts, window_dimensions, window_strides, padding):
    ones = (1,) * len(window_dimensions)
    shape = window_shape("select_and_scatter", operand, window_dimensions=window_dimensions,
                          window_strides=window_strides, padding=padding, base_dilation=ones,
                          window_dilation=ones)
    if source.shape != shape:
        raise TypeError(f"select_and_scatter: source shape {source.shape} must be the window "
                        f"reduction's output shape {shape} (operand {operand.shape})")
    if init_value.shape != ():
        raise TypeError(f"select_and_scatter: init_value must be a scalar, got "
                        f"{init_value.str_short()}")
    if not source.dtype == init_value.dtype == operand.dtype:  # (XLA's refusal)
        raise TypeError(f"select_and_scatter: operand, source and init_value must have one "
                        f"dtype, got {operand.dtype}, {source.dtype} and {init_value.dtype}")
    _check_jaxpr("select", select_jaxpr, select_consts, operand.dtype, np.dtype(np.bool_))
    _check_jaxpr("scatter", scatter_jaxpr, scatter_consts, operand.dtype, operand.dtype)
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _lanes(jaxpr, consts, a, b):
    """The scalar computation `jaxpr` at every lane of the 1-D arrays `a` and `b`."""
    def scalar(x, y):
        return eval_jaxpr(jaxpr, list(consts), x, y)
    (out,) = batching.vmap_flat(scalar, [core.Array(a), core.Array(b)], [0, 0], len(a))
    return np.asarray(out)


def _choices(operand, select_jaxpr, select_consts, window_dimensions, window_strides,
             padding):
    """The flat index into `operand` each window chooses (-1: none), windows in row-major
    order: every window's positions visited at once, one position at a time."""
    ones = (1,) * operand.ndim
    full, place, crop = placement(operand.shape, padding, ones)
    buf = np.zeros(full, operand.dtype)
    buf[place] = operand
    index = np.full(full, -1, np.intp)
    index[place] = np.arange(operand.size).reshape(operand.shape)
    keys = windows(buf[crop], window_dimensions, window_strides, ones)
    where = windows(index[crop], window_dimensions, window_strides, ones)
    lanes = int(np.prod(keys.shape[:operand.ndim]))
    chosen = np.full(lanes, -1, np.intp)
    current = np.zeros(lanes, operand.dtype)
    for k in positions(window_dimensions):
        candidate = keys[k].reshape(lanes)
        at = where[k].reshape(lanes)
        real, have = at >= 0, chosen >= 0
        take = real & ~have
        both = real & have
        if both.any():
            take |= both & ~_lanes(select_jaxpr, select_consts, current, candidate)
        np.copyto(current, candidate, where=take)
        np.copyto(chosen, at, where=take)
    return chosen


def _impl(operand, source, init_value, *, select_jaxpr, select_consts, scatter_jaxpr,
          scatter_consts, window_dimensions, window_strides, padding):
    operand, source = np.asarray(operand), np.asarray(source)
    out = np.full(operand.size, init_value, operand.dtype)
    if source.size == 0 or operand.size == 0:
        return out.reshape(operand.shape)
    chosen = _choices(operand, select_jaxpr, select_consts, window_dimensions,
                      window_strides, padding)
    live = np.flatnonzero(chosen >= 0)  # windows choosing an element (row-major order)
    targets = chosen[live]
    # Each window's rank among the windows choosing the same element: windows of one rank
    # scatter together (their targets differ), ranks in order.
    order = np.argsort(targets, kind="stable")
    first = np.searchsorted(targets[order], targets[order], side="left")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order)) - first
    values = source.reshape(-1)
    for r in range(int(rank.max(initial=-1)) + 1):
        these = rank == r
        t = targets[these]
        out[t] = _lanes(scatter_jaxpr, scatter_consts, out[t], values[live[these]])
    return out.reshape(operand.shape)


select_and_scatter_p.def_impl(_impl)
select_and_scatter_p.def_abstract_eval(_aval)
for _kind, _what in (("jvp", "differentiation"), ("transpose", "transpose"),
                     ("batch", "batching")):
    select_and_scatter_p.mark_absent(_kind, f"JAX defines no {_what} rule for "
                                            "select_and_scatter")


def _trace(what, fn, scalar):
    """The closed jaxpr of `fn` on two scalars of type `scalar`."""
    def flat(a, b):
        out = tree_leaves(fn(a, b))
        if len(out) != 1:
            raise TypeError(f"select_and_scatter: {what} must return one scalar, got "
                            f"{len(out)} values")
        return out
    closed, _ = trace_to_jaxpr(flat, [scalar, scalar])
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError(f"select_and_scatter: {what} can't close over traced "
                                  "values (as in JAX)")
    return closed


def select_and_scatter(operand, select, window_dimensions, window_strides, padding, source,
                       init_value, scatter):
    """One select_and_scatter equation, as JAX's internal helper of this signature stages
    it: `select` and `scatter` traced on scalars of init_value's type."""
    init_value = core.asarray_value(init_value)
    scalar = ShapedArray((), get_aval(init_value).dtype)
    sel, sca = (_trace(what, fn, scalar) for what, fn in (("select", select),
                                                          ("scatter", scatter)))
    return select_and_scatter_p.bind(
        operand, source, init_value, select_jaxpr=sel.jaxpr, select_consts=tuple(sel.consts),
        scatter_jaxpr=sca.jaxpr, scatter_consts=tuple(sca.consts),
        window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
        padding=tuple(tuple(p) for p in padding))


__all__ = ["select_and_scatter", "select_and_scatter_p"]
