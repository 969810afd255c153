"""Batching: the interpreter behind `vmap`.

A batch tracer carries a value with one extra dimension, `bdim` (or `None` when the value
does not vary over the batch). Each primitive's batching rule maps batched operands to a
batched result, moving batch dimensions only when it has to; helpers cover the common
families (elementwise, reductions). Values of other interpreters are unbatched constants.

A `vmap` with an `axis_name` binds that name for collectives (`lax.psum`, `axis_index`...):
its interpreter runs a collective's batch rule even when the operand is unbatched, and so
too for a primitive whose sub-jaxprs (a jit call, a loop body) apply one, so that the
collective meets the axis it names. Rules learn the name from `rule_axis_name()`.
"""
from __future__ import annotations

import threading

from didax._src import axis_env, core
from didax._src.base_prims import (
    broadcast,
    broadcast_in_dim,
    broadcast_to_rank,
    convert_element_type,
    reshape,
    transpose,
)
from didax._src.core import Tracer, get_aval
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import eval_jaxpr, subjaxprs

not_mapped = None


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")
    abstract_kind = "batched"

    def __init__(self, interp, val, bdim):
        self._interp = interp
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        aval = get_aval(self.val)
        if self.bdim is None:
            return aval
        shape = aval.shape[:self.bdim] + aval.shape[self.bdim + 1:]
        if type(aval) is not core.ShapedArray:  # a mutable array reference's type
            return aval.update(shape=shape)
        return core.ShapedArray(shape, aval.dtype, aval.weak_type)

    def to_concrete_value(self):
        return None  # one value per batch element: Python cannot branch on it

    def creation_site(self):
        v = self.val
        return v.creation_site() if isinstance(v, Tracer) else ""


class BatchInterpreter(core.Interpreter):
    def __init__(self, axis_size: int, axis_name=None):
        self.axis_size = axis_size
        self.axis_name = axis_name

    def describe(self):
        return "vmap"

    def process_primitive(self, prim, args, params):
        vals = []
        dims = []
        batched = False
        for x in args:
            if type(x) is BatchTracer and x._interp is self:
                vals.append(x.val)
                dims.append(x.bdim)
                batched = batched or x.bdim is not None
            else:
                if isinstance(x, Tracer):
                    self.check_foreign(x)
                vals.append(x)
                dims.append(None)
        ctx = core._ctx
        prev = ctx.interp
        ctx.interp = self.parent
        try:
            if not batched and not prim.traits.refs and (
                    self.axis_name is None or not uses_axis_name(prim, params, self.axis_name)):
                return prim.bind(*vals, **params)
            rule = prim.get_rule("batch")
            named = _rule_axis.name
            if named is self.axis_name:  # (the common case: both None)
                out, out_dim = rule(self.axis_size, vals, dims, **params)
            else:
                _rule_axis.name = self.axis_name
                try:
                    out, out_dim = rule(self.axis_size, vals, dims, **params)
                finally:
                    _rule_axis.name = named
        finally:
            ctx.interp = prev
        if prim.multiple_results:
            return [self.pack(o, d) for o, d in zip(out, out_dim)]
        return self.pack(out, out_dim)

    def pack(self, val, bdim):
        if bdim is None:
            return val
        return BatchTracer(self, val, bdim)

    def unpack(self, x):
        if type(x) is BatchTracer and x._interp is self:
            return x.val, x.bdim
        if isinstance(x, Tracer):
            self.check_foreign(x)
        return x, None


# --------------------------------------------------------------------------------------
# Named axes: what collectives see


class _RuleAxis(threading.local):
    name = None  # the axis name of the vmap whose batch rule is running


_rule_axis = _RuleAxis()


def rule_axis_name():
    """The axis name (or None) of the vmap running the current batch rule; rules that
    batch a sub-jaxpr batch it under the same name, so its collectives resolve."""
    return _rule_axis.name


def uses_axis_name(prim, params, name) -> bool:
    """Whether an application of `prim` acts over the named axis `name`, itself or in a
    sub-jaxpr (a jit call or loop body whose collectives must meet this vmap)."""
    key = prim.traits.axis_name_param
    if key is not None:
        names = params[key]
        return name in names if type(names) is tuple else names == name
    return any(_jaxpr_uses_axis_name(j, name) for j in subjaxprs(params))


def _jaxpr_uses_axis_name(jaxpr, name) -> bool:
    return any(uses_axis_name(e.primitive, e.params, name) for e in jaxpr.eqns)


def axis_frames():
    """The named axes bound where this is called, innermost first: (name, size) pairs,
    from the vmaps enclosing the current interpreter, then the device axes (pmap)."""
    frames = []
    interp = core.current_interpreter()
    while interp is not None:
        if isinstance(interp, BatchInterpreter) and interp.axis_name is not None:
            frames.append((interp.axis_name, interp.axis_size))
        interp = interp.parent
    for axis in reversed(axis_env.mapped_axes()):
        frames.append((axis.name, axis.size))
    return frames


# --------------------------------------------------------------------------------------
# Moving batch dimensions


def moveaxis(x, src: int, dst: int):
    """`x` with dimension `src` moved to position `dst` (a transpose, or nothing)."""
    ndim = get_aval(x).ndim
    src, dst = src % ndim, dst % ndim
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def bdim_at_front(x, bdim, size):
    """`x` with its batch dimension first, broadcasting unbatched values to `size`."""
    if bdim is None:
        return broadcast(x, (size,))
    return moveaxis(x, bdim, 0)


def broadcast_front(x, shape):
    """A per-example value (shape (size,)) broadcast along a batch-first `shape`."""
    return broadcast_in_dim(x, shape, (0,))


def matchaxis(x, src, dst, size):
    """`x` with its batch dimension at `dst` (broadcast there if `x` is unbatched)."""
    if src is None:
        aval = get_aval(x)
        shape = list(aval.shape)
        shape.insert(dst, size)
        dims = tuple(i for i in range(len(shape)) if i != dst)
        return broadcast_in_dim(x, shape, dims)
    return moveaxis(x, src, dst)


# --------------------------------------------------------------------------------------
# Rule helpers for families of primitives


def defvectorized(prim):
    """Elementwise in its one operand: the batch dimension stays where it is."""

    def rule(size, vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **params), d

    prim.def_batch(rule)


def defbroadcasting(prim):
    """Elementwise over several operands (lax broadcasting: equal ranks, or rank 0)."""

    def rule(size, vals, dims, **params):
        ranks = [get_aval(v).ndim - (d is not None) for v, d in zip(vals, dims)]
        rank = max(ranks)
        out_dim = next(d for d in dims if d is not None)
        if all(d == out_dim for d in dims if d is not None) and all(
                r == rank for r, d in zip(ranks, dims) if d is not None):
            target = out_dim
        else:
            target = 0
        args = []
        for v, d, r in zip(vals, dims, ranks):
            if d is None:
                if r == 0:  # a scalar broadcasts against anything
                    args.append(v)
                    continue
                v = _expand_to_rank(v, rank)
                args.append(_insert_unit_dim(v, target))
            else:
                v = moveaxis(v, d, target) if r == rank else _expand_batched(v, d, rank, target)
                args.append(v)
        return prim.bind(*args, **params), target

    prim.def_batch(rule)


def _expand_to_rank(v, rank):
    return broadcast_to_rank(v, rank)


def _insert_unit_dim(v, pos):
    shape = list(get_aval(v).shape)
    shape.insert(pos, 1)
    return reshape(v, shape)


def _expand_batched(v, d, rank, target):
    """A batched operand of lower (nonzero) rank: leading unit dims, batch dim at target."""
    v = moveaxis(v, d, 0)
    shape = get_aval(v).shape
    return moveaxis(reshape(v, (shape[0],) + (1,) * (rank - len(shape) + 1) + shape[1:]), 0,
                    target)


def defreducer(prim, axes_param: str = "axes"):
    """Reduces over `axes`: shift them past the batch dimension, which stays in place."""

    def rule(size, vals, dims, **params):
        (x,), (d,) = vals, dims
        axes = params[axes_param]
        new_axes = tuple(a + (a >= d) for a in axes)
        out = prim.bind(x, **{**params, axes_param: new_axes})
        out_dim = d - sum(a < d for a in axes)
        return out, out_dim

    prim.def_batch(rule)


def batch_jaxpr(closed, axis_size: int, in_dims):
    """A jaxpr for `closed` batched over `axis_size` examples: inputs batched along
    `in_dims` (None: not batched); every output batched along axis 0."""
    return batch_jaxpr_outs(closed, axis_size, in_dims, True)[0]


def batch_jaxpr_outs(closed, axis_size: int, in_dims, force_out=False):
    """Like `batch_jaxpr`, but outputs that do not depend on a batched input stay unbatched
    unless forced (`force_out`: a bool, or one per output). Returns the jaxpr and which
    outputs are batched (along axis 0). Called from a batch rule, the jaxpr is batched
    under that vmap's axis name."""
    in_avals = []
    for a, d in zip(closed.in_avals, in_dims):
        shape = list(a.shape)
        if d is not None:
            shape.insert(d, axis_size)
        in_avals.append(core.ShapedArray(shape, a.dtype, a.weak_type))

    n_out = len(closed.out_avals)
    force = list(force_out) if isinstance(force_out, (list, tuple)) else [force_out] * n_out
    out_batched = []

    def fun(*args):
        interp = core.new_level(BatchInterpreter(axis_size, _rule_axis.name))
        with core.transformation(interp):
            outs = eval_jaxpr(closed.jaxpr, closed.consts,
                              *[interp.pack(x, d) for x, d in zip(args, in_dims)])
            outs = [interp.unpack(o) for o in outs]
        out_batched[:] = [d is not None or f for (_, d), f in zip(outs, force)]
        return [matchaxis(v, d, 0, axis_size) if b else v
                for (v, d), b in zip(outs, out_batched)]

    return trace_to_jaxpr(fun, in_avals)[0], list(out_batched)


def vmap_flat(fun, args, in_dims, axis_size: int, axis_name=None) -> list:
    """`fun` (flat arguments in, a flat list out) over `axis_size` examples: `args` batched
    along `in_dims` (None: not batched). Outputs come batched along axis 0 and strongly
    typed, as `vmap`'s; rules that batch a function they hold (custom rules, remat) use it."""
    interp = core.new_level(BatchInterpreter(axis_size, axis_name))
    with core.transformation(interp):
        outs = fun(*[interp.pack(x, d) for x, d in zip(args, in_dims)])
        outs = [interp.unpack(o) for o in outs]
    results = []
    for val, bdim in outs:
        val = matchaxis(core.asarray_value(val), bdim, 0, axis_size)
        if get_aval(val).weak_type:
            val = convert_element_type(val, get_aval(val).dtype, False)
        results.append(val)
    return results

