"""`reduce` and `reduce_window` with a computation of the user's own: one equation each,
holding the computation's jaxpr, as JAX stages them.

`lax.reduce` and `lax.reduce_window` bind these where JAX does: whenever the computation is
not one of lax's monoid functions (`lax.add`, `lax.max`... compared by identity) started
from its concrete identity; those stay reduce_sum/reduce_max/... and reduce_window_sum/...

reduce_p: operands, then one scalar initial value per operand; params `computation` (the
Python callable, kept as JAX keeps it: only printed), `jaxpr` (a closed jaxpr of the scalar
computation: the accumulators, then the elements, to the new accumulators) and `dimensions`
(the reduced axes, as given). The impl folds sequentially, starting from the initial values,
over the reduced elements in row-major order of the (sorted) reduced dimensions; for a
computation that is not associative XLA leaves the order unspecified, and this is the order
JAX's CPU backend gives today. Its JVP is the JVP of that same fold (a scan, so it
transposes and differentiates again); JAX's instead combines the elements pairwise, which
assumes an associative computation started from its identity (didax's tests differentiate
folds that are not: their derivatives here are the fold's, and agree with JAX's, up to
rounding, wherever JAX's are right). A tangent of an initial value is refused, as by JAX.

reduce_window_p: operands, then the initial values; params `jaxpr` (an open jaxpr of the
computation), `consts` (the values of its constvars) and reduce_window's geometry. Window
positions are folded into the initial values in row-major order; positions that fall on
padding or base-dilation holes are skipped (the accumulator is unchanged there), as XLA's CPU
backend does. Its JVP is JAX's: one reduce_window of the (operand, tangent) pairs whose jaxpr
is the JVP of the computation; that is not linear, so there is no reverse mode (as in JAX).

Under vmap both move batch dimensions to the front; batched initial values are refused, as by
JAX. Computations closing over traced values are refused, as by JAX.
"""
from __future__ import annotations

import math
import re

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import broadcast_in_dim, instantiate, reshape, transpose
from didax._src.core import ShapedArray, Tracer, Zero, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters.batching import bdim_at_front
from didax._src.interpreters.jvp import jvp_flat
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import ClosedJaxpr, Jaxpr, derived, eval_jaxpr
from didax._src.lax.control_flow.scan import scan
from didax._src.lax.elementwise import convert_element_type
from didax._src.lax.window_geometry import (
    WINDOW_PARAMS,
    buffer,
    insert_unit,
    reduce_window_shape_tuple,
    window_shape,
)
from didax._src.tree_util import tree_flatten, tree_unflatten

reduce_p = core.primitive("reduce", multiple_results=True)
reduce_window_p = core.primitive("reduce_window", multiple_results=True)


# --------------------------------------------------------------------------------------
# Shared: the computation as a jaxpr, and applied to every position of arrays


def trace_computation(name: str, computation, tree, avals) -> ClosedJaxpr:
    """The jaxpr of `computation(accumulated, element)` (pytrees of structure `tree`) on
    scalars of the operands' dtypes: flat accumulators, then flat elements, in."""
    scalars = [ShapedArray((), a.dtype) for a in avals]
    k = len(scalars)

    def flat(*args):
        out, out_tree = tree_flatten(computation(tree_unflatten(tree, list(args[:k])),
                                                 tree_unflatten(tree, list(args[k:]))))
        if out_tree != tree:
            raise ValueError(f"{name} output must have the same tree structure as the "
                             f"operands {tree} vs. {out_tree}")
        return out

    closed, _ = trace_to_jaxpr(flat, scalars + scalars)
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError(
            f"{name}: reduction computations can't close over traced values (as in JAX): "
            "pass them as operands instead")
    return closed


def _lanes(closed: ClosedJaxpr, size: int) -> ClosedJaxpr:
    """`closed` (a scalar computation) over `size` lanes: every input and output batched
    along axis 0 (made once per jaxpr and size)."""
    return derived(closed, ("general_reduce_lanes", size),
                   lambda: batching.batch_jaxpr(closed, size, [0] * len(closed.in_avals)))


def _apply_elementwise(closed: ClosedJaxpr, args, shape):
    """The scalar computation `closed` at every position of `args` (arrays of `shape`),
    traced through as many vmaps as `shape` has dimensions."""
    def scalar(*xs):
        return eval_jaxpr(closed.jaxpr, closed.consts, *xs)

    def mapped(inner, size):
        return lambda *xs: batching.vmap_flat(inner, list(xs), [0] * len(xs), size)

    fn = scalar
    for size in reversed(shape):
        fn = mapped(fn, size)
    return fn(*args)


def _check_computation(name, closed, operand_dtypes):
    scalars = [ShapedArray((), d) for d in operand_dtypes]
    ins = [ShapedArray(a.shape, a.dtype) for a in closed.in_avals]
    if ins != scalars + scalars:
        raise TypeError(f"{name}: the computation's jaxpr must take the accumulators, then the "
                        f"elements, as scalars of the operands' dtypes "
                        f"({', '.join(s.str_short() for s in scalars + scalars)}); it takes "
                        f"({', '.join(a.str_short() for a in closed.in_avals)})")
    outs = closed.out_avals
    if len(outs) != len(scalars) or any(a.shape != () or a.dtype != s.dtype
                                        for a, s in zip(outs, scalars)):
        raise TypeError(f"{name} computation must return one scalar of each operand's dtype "
                        f"({', '.join(s.str_short() for s in scalars)}); it returns "
                        f"({', '.join(a.str_short() for a in outs)})")


def _split_avals(name, avals):
    if not avals or len(avals) % 2:
        raise TypeError(f"{name} takes operands and one initial value per operand, got "
                        f"{len(avals)} arguments")
    n = len(avals) // 2
    ops, inits = avals[:n], avals[n:]
    if any(a.shape != ops[0].shape for a in ops):
        raise TypeError(f"{name} operands must all have one shape, got "
                        f"{[a.shape for a in ops]}")
    if any(i.shape != () for i in inits):
        raise TypeError(f"{name} initial values must be scalars, got shapes "
                        f"{[i.shape for i in inits]}")
    if any(o.dtype != i.dtype for o, i in zip(ops, inits)):
        raise TypeError(f"{name} operand dtypes should match corresponding initial value "
                        f"dtypes, got operands={[o.str_short() for o in ops]} and "
                        f"initial_values={[i.str_short() for i in inits]}")
    return ops, inits


def _masked_repr(fn) -> str:
    """A function's repr with its address hidden, as JAX prints it in equations."""
    return re.sub(r"0x[0-9a-fA-F]+", lambda m: "0x" + "X" * (len(m.group()) - 2), repr(fn))


# --------------------------------------------------------------------------------------
# reduce


def _canonical_dims(name, dimensions, ndim):
    dims = tuple(int(d) for d in dimensions)
    if any(not -ndim <= d < ndim for d in dims) or \
            len({d % max(ndim, 1) for d in dims}) != len(dims):
        raise TypeError(f"{name}: dimensions {dims} are not distinct axes of an operand of "
                        f"rank {ndim}")
    return tuple(d % ndim for d in dims)


def _reduce_aval(*avals, computation, jaxpr, dimensions):
    ops, _ = _split_avals("reduce", avals)
    if not isinstance(jaxpr, ClosedJaxpr):
        raise TypeError(f"reduce: jaxpr must be a ClosedJaxpr, got {type(jaxpr).__name__}")
    _check_computation("reduce", jaxpr, [a.dtype for a in ops])
    shape = ops[0].shape
    dims = _canonical_dims("reduce", dimensions, len(shape))
    out_shape = tuple(n for d, n in enumerate(shape) if d not in dims)
    return [ShapedArray(out_shape, a.dtype) for a in ops]


def _reduce_impl(*args, computation, jaxpr, dimensions):
    """A sequential fold from the initial values over the reduced elements in row-major
    order, every kept position at once (the computation batched over them)."""
    n = len(args) // 2
    ops = [np.asarray(a) for a in args[:n]]
    inits = [np.asarray(a) for a in args[n:]]
    shape = ops[0].shape
    dims = tuple(sorted(_canonical_dims("reduce", dimensions, len(shape))))
    kept = tuple(d for d in range(len(shape)) if d not in dims)
    out_shape = tuple(shape[d] for d in kept)
    rows, lanes = math.prod(shape[d] for d in dims), math.prod(out_shape)
    if rows == 0 or lanes == 0:
        return [np.full(out_shape, i, x.dtype) for x, i in zip(ops, inits)]
    stacked = [np.transpose(x, dims + kept).reshape(rows, lanes) for x in ops]
    batched = _lanes(jaxpr, lanes)
    acc = [core.Array(np.full((lanes,), i, x.dtype)) for x, i in zip(ops, inits)]
    for r in range(rows):
        acc = eval_jaxpr(batched.jaxpr, batched.consts, *acc,
                         *[core.Array(np.ascontiguousarray(s[r])) for s in stacked])
    return [np.asarray(a, x.dtype).reshape(out_shape) for a, x in zip(acc, ops)]


def _fold(ops, inits, jaxpr, dims):
    """The impl's fold, from differentiable primitives: a scan over the reduced elements in
    row-major order, every kept position at once (the computation vmapped over them)."""
    shape = get_aval(ops[0]).shape
    dims = tuple(sorted(dims))
    kept = tuple(d for d in range(len(shape)) if d not in dims)
    out_shape = tuple(shape[d] for d in kept)
    rows, lanes = math.prod(shape[d] for d in dims), math.prod(out_shape)
    starts = [broadcast_in_dim(convert_element_type(i, get_aval(x).dtype), out_shape, ())
              for x, i in zip(ops, inits)]
    if rows == 0 or lanes == 0:
        return starts
    stacked = [reshape(transpose(x, dims + kept), (rows, lanes)) for x in ops]

    def body(carry, xs):
        return _apply_elementwise(jaxpr, list(carry) + list(xs), (lanes,)), None

    final, _ = scan(body, [reshape(s, (lanes,)) for s in starts], stacked)
    return [reshape(c, out_shape) for c in final]


def _reduce_jvp(primals, tangents, *, computation, jaxpr, dimensions):
    """The JVP of the impl's fold (a scan: it transposes, and differentiates again).

    JAX's rule instead combines the reduced elements pairwise (halves, the second padded
    with the initial values): right only for an associative computation started from its
    identity, as its primal differs from the fold otherwise. This one agrees with the fold
    for every computation (and with JAX's, up to rounding, where JAX's is right)."""
    n = len(primals) // 2
    ops, inits = list(primals[:n]), list(primals[n:])
    if any(type(t) is not Zero for t in tangents[n:]):
        raise NotImplementedError("reduce: differentiation of a general lax.reduce with "
                                  "non-zero tangents for its initial values is not "
                                  "implemented (nor in JAX)")
    dims = _canonical_dims("reduce", dimensions, get_aval(ops[0]).ndim)
    return jvp_flat(lambda *xs: _fold(list(xs), inits, jaxpr, dims), ops,
                    list(tangents[:n]))


def _reduce_batch(size, vals, dims, *, computation, jaxpr, dimensions):
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce: vmap over batched initial values is not "
                                  "implemented (nor in JAX)")
    ndim = get_aval(vals[0]).ndim if dims[0] is None else get_aval(vals[0]).ndim - 1
    ops = [bdim_at_front(x, d, size) for x, d in zip(vals[:n], dims[:n])]
    new_dims = tuple(d + 1 for d in _canonical_dims("reduce", dimensions, ndim))
    outs = reduce_p.bind(*ops, *vals[n:], computation=computation, jaxpr=jaxpr,
                         dimensions=new_dims)
    return outs, [0] * n


reduce_p.def_impl(_reduce_impl)
reduce_p.def_abstract_eval(_reduce_aval)
reduce_p.def_jvp(_reduce_jvp)
reduce_p.def_batch(_reduce_batch)
reduce_p.pp_format = {"computation": _masked_repr}


def bind_reduce(operands, init_values, computation, tree, dimensions):
    """`lax.reduce` of a general computation: one reduce equation. `init_values` are
    scalars of the operands' dtypes; `dimensions` in range, distinct."""
    closed = trace_computation("reduce", computation, tree,
                               [get_aval(x) for x in operands])
    return reduce_p.bind(*operands, *init_values, computation=computation, jaxpr=closed,
                         dimensions=tuple(dimensions))


def check_open_jaxpr(name: str, what: str, jaxpr, consts) -> None:
    """Raises unless `jaxpr` (the param `{what}jaxpr` of `name`) is an open Jaxpr given its
    constants in `{what}consts`."""
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"{name}: {what}jaxpr must be an (open) Jaxpr with its constants in "
                        f"`{what}consts`, got {type(jaxpr).__name__}")
    if len(consts) != len(jaxpr.constvars):
        raise TypeError(f"{name}: {len(consts)} {what}consts for a jaxpr with "
                        f"{len(jaxpr.constvars)} constvars")


# --------------------------------------------------------------------------------------
# reduce_window


def _window_aval(*avals, jaxpr, consts, **geometry):
    ops, _ = _split_avals("reduce_window", avals)
    check_open_jaxpr("reduce_window", "", jaxpr, consts)
    _check_computation("reduce_window", ClosedJaxpr(jaxpr, list(consts)),
                       [a.dtype for a in ops])
    shape = window_shape("reduce_window", ops[0], **geometry)
    return [ShapedArray(shape, a.dtype) for a in ops]


def _window_impl(*args, jaxpr, consts, window_dimensions, window_strides, padding,
                 base_dilation, window_dilation):
    """Each window position's elements (one strided slice of every padded operand, for all
    windows at once) folded into the accumulators in row-major order; where a position is
    padding or a dilation hole the accumulator keeps its value."""
    n = len(args) // 2
    ops = [np.asarray(a) for a in args[:n]]
    inits = [np.asarray(a) for a in args[n:]]
    out_shape = reduce_window_shape_tuple(ops[0].shape, window_dimensions, window_strides,
                                          padding, base_dilation, window_dilation)
    lanes = math.prod(out_shape)
    if lanes == 0:
        return [np.full(out_shape, i, x.dtype) for x, i in zip(ops, inits)]
    padded = [buffer(x, i, padding, base_dilation)[1] for x, i in zip(ops, inits)]
    real = buffer(np.ones(ops[0].shape, bool), False, padding, base_dilation)[1]
    batched = _lanes(ClosedJaxpr(jaxpr, list(consts)), lanes)
    acc = [np.full((lanes,), i, x.dtype) for x, i in zip(ops, inits)]
    for k in np.ndindex(*window_dimensions):
        where = tuple(slice(i * d, i * d + (o - 1) * s + 1, s) for i, d, o, s in
                      zip(k, window_dilation, out_shape, window_strides))
        keep = real[where].reshape(lanes)
        if not keep.any():
            continue
        new = eval_jaxpr(batched.jaxpr, batched.consts, *map(core.Array, acc),
                         *[core.Array(np.ascontiguousarray(p[where]).reshape(lanes))
                           for p in padded])
        new = [np.asarray(v, x.dtype) for v, x in zip(new, ops)]
        acc = new if keep.all() else [np.where(keep, v, a) for v, a in zip(new, acc)]
    return [a.reshape(out_shape) for a in acc]


def _window_jvp(primals, tangents, *, jaxpr, consts, **geometry):
    """One reduce_window of (operands, tangents of the inexact ones) from (initial values,
    zeros), the computation's JVP as its jaxpr."""
    n = len(primals) // 2
    ops, inits = list(primals[:n]), list(primals[n:])
    if any(type(t) is not Zero for t in tangents[n:]):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    avals = [ShapedArray((), get_aval(x).dtype) for x in ops]
    inexact = [dtypes.is_inexact(a.dtype) for a in avals]
    t_avals = [a for a, f in zip(avals, inexact) if f]
    k = len(t_avals)
    closed = ClosedJaxpr(jaxpr, list(consts))

    def with_zeros(ts):
        given = iter(ts)
        return [next(given) if f else Zero(a.to_tangent_aval()) for a, f in zip(avals, inexact)]

    def pairs(*args):  # (acc, acc tangents, elem, elem tangents) -> (acc, acc tangents)
        acc, t_acc = args[:n], args[n:n + k]
        elem, t_elem = args[n + k:2 * n + k], args[2 * n + k:]
        out, t_out = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                              list(acc) + list(elem), with_zeros(t_acc) + with_zeros(t_elem))
        return list(out) + [instantiate(t) for t, f in zip(t_out, inexact) if f]

    jvp_closed, _ = trace_to_jaxpr(pairs, avals + t_avals + avals + t_avals)
    t_ops = [instantiate(t) for t, f in zip(tangents[:n], inexact) if f]
    t_inits = [np.zeros((), a.dtype) for a in t_avals]
    outs = reduce_window_p.bind(*ops, *t_ops, *inits, *t_inits, jaxpr=jvp_closed.jaxpr,
                                consts=tuple(jvp_closed.consts), **geometry)
    given = iter(outs[n:])
    t_out = [next(given) if f else Zero(get_aval(o).to_tangent_aval())
             for o, f in zip(outs[:n], inexact)]
    return outs[:n], t_out


def _window_batch(size, vals, dims, *, jaxpr, consts, **geometry):
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce_window batching is not implemented for initial "
                                  "values (nor in JAX)")
    ops = [bdim_at_front(x, d, size) for x, d in zip(vals[:n], dims[:n])]
    outs = reduce_window_p.bind(*ops, *vals[n:], jaxpr=jaxpr, consts=consts,
                                **insert_unit(geometry, 0, WINDOW_PARAMS))
    return outs, [0] * n


reduce_window_p.def_impl(_window_impl)
reduce_window_p.def_abstract_eval(_window_aval)
reduce_window_p.def_jvp(_window_jvp)
reduce_window_p.def_batch(_window_batch)
reduce_window_p.mark_absent(
    "transpose", "reduce_window's JVP is a reduce_window of (primal, tangent) pairs, which is "
    "not linear in the tangents: a general reduce_window has no reverse mode (nor in JAX)")


def bind_reduce_window(operands, init_values, computation, tree, geometry):
    """`lax.reduce_window` of a general computation: one reduce_window equation."""
    closed = trace_computation("reduce_window", computation, tree,
                               [get_aval(x) for x in operands])
    return reduce_window_p.bind(*operands, *init_values, jaxpr=closed.jaxpr,
                                consts=tuple(closed.consts), **geometry)


__all__ = ["reduce_p", "reduce_window_p"]
