"""The `pmap` call primitive: a per-shard jaxpr applied to slices of its operands, each shard
on its own device's worker (see shards.py), all at once, and the results stacked.

Parameters: `jaxpr` (one shard's function), `axis_name`, `axis_size` (the shards in this
process), `global_axis_size` (in all processes: the size collectives see), `in_axes` and
`out_axes` (one int or None per operand and result: where the mapped axis is; None for an
operand given whole to every shard, or for a result taken from the first shard), `devices`
(the local devices' indices, or None) and `donated_invars`.

Like the jit call, every rule transforms the per-shard jaxpr and maps it again, so that
`grad`, `jvp` and `vmap` of a pmapped function run in parallel too: the JVP maps the JVP'd
jaxpr with tangents mapped as their primals; partial evaluation splits it into a known and
an unknown map whose residuals are mapped per shard; the transpose maps the transposed
jaxpr (a cotangent of a result taken from the first shard goes to that shard, and an
operand given whole to every shard receives the psum of its shards' cotangents); under
vmap, it maps the batched jaxpr with the batch dimension inside the shards.
"""
from __future__ import annotations

import numpy as np

from didax._src import axis_env, core
from didax._src.base_prims import instantiate
from didax._src.compiler.native.tier import tiered_executable
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.partial_eval import partial_eval_jaxpr
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, transpose_jaxpr
from didax._src.ir import derived, eval_jaxpr
from didax._src.lax.elementwise import eq, select_n, zeros_like
from didax._src.lax.parallel import axis_index_p, psum_p
from didax._src.parallel import device, shards

pmap_p = core.primitive("pmap", multiple_results=True)
pmap_p.pp_first = ("name",)
pmap_p.pp_hidden = {"donated_invars": lambda d: not any(d), "devices": None}


def _without(shape, axis):
    return shape if axis is None else shape[:axis] + shape[axis + 1:]


def _with(shape, axis, size):
    return shape if axis is None else shape[:axis] + (size,) + shape[axis:]


def _pmap_aval(*avals, jaxpr, name, axis_name, axis_size, global_axis_size, in_axes, out_axes,
               devices, donated_invars):
    if len(avals) != len(jaxpr.in_avals):
        raise TypeError(f"pmap of {name} takes {len(jaxpr.in_avals)} operands, got {len(avals)}")
    for i, (a, ax, inner) in enumerate(zip(avals, in_axes, jaxpr.in_avals)):
        if ax is not None and (a.ndim <= ax or a.shape[ax] != axis_size):
            raise TypeError(f"pmap of {name}: operand {i} of type {a.str_short()} has no axis "
                            f"{ax} of size {axis_size} to map")
        if _without(a.shape, ax) != inner.shape or a.dtype != inner.dtype:
            raise TypeError(f"pmap of {name}: operand {i} of type {a.str_short()} (mapped along "
                            f"{ax}) does not give its shards the type {inner.str_short()}")
    return [ShapedArray(_with(a.shape, o, axis_size), a.dtype, a.weak_type and o is None)
            for a, o in zip(jaxpr.out_avals, out_axes)]


def _shard(v, axis, k):
    return v if axis is None else v[(slice(None),) * axis + (k,)]


def _nested(vals, jaxpr, axis_name, axis_size, in_axes, out_axes):
    """A pmap evaluated inside a shard of another: its map runs in the shard, as a vmap
    with the same axis name (the same values: its collectives reduce over the inner axis,
    and those over outer axes reach the other shards). Only the outer map runs in
    parallel."""
    outs = batching.vmap_flat(lambda *args: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args),
                              list(vals), list(in_axes), axis_size, axis_name)
    return [np.asarray(v)[0] if o is None else np.moveaxis(np.asarray(v), 0, o)
            for v, o in zip(outs, out_axes)]


def _pmap_impl(*vals, jaxpr, name, axis_name, axis_size, global_axis_size, in_axes, out_axes,
               devices, donated_invars):
    if axis_env.running_shard():
        return _nested(vals, jaxpr, axis_name, axis_size, in_axes, out_axes)
    # jit's tiers: native code once it is built (its long loops and products release the
    # GIL, so shards run side by side), the NumPy tier until then; the same bits either way
    exe = tiered_executable(jaxpr, name)
    link = device.process_link() if global_axis_size != axis_size else None
    offset = 0 if link is None else device.process_index() * axis_size
    args = [[_shard(v, ax, k) for v, ax in zip(vals, in_axes)] for k in range(axis_size)]
    results = shards.run_shards(exe.run, args, axis_name, global_axis_size, offset, link,
                                devices)
    outs = []
    for i, o in enumerate(out_axes):
        if o is None:
            outs.append(results[0][i])
        else:
            outs.append(np.stack([np.asarray(r[i]) for r in results], axis=o))
    return outs


pmap_p.def_impl(_pmap_impl)
pmap_p.def_abstract_eval(_pmap_aval)


def _bound(params):
    """Binds the pmap's axis while one of its jaxprs is transformed or traced."""
    return axis_env.binding(axis_env.MappedAxis(params["axis_name"],
                                                params["global_axis_size"]))


def bind_pmap(args, **params):
    return pmap_p.bind(*args, **params)


def _remap(params, jaxpr, in_axes, out_axes):
    return {**params, "jaxpr": jaxpr, "in_axes": tuple(in_axes), "out_axes": tuple(out_axes),
            "donated_invars": (False,) * len(in_axes)}


def _pmap_jvp(primals, tangents, **params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    with _bound(params):
        new, out_nz = derived(jaxpr, ("pmap_jvp", nonzeros),
                              lambda: jvp_interp.jvp_jaxpr(jaxpr, list(nonzeros)))
    t_in = [t for t in tangents if type(t) is not Zero]
    new_in = list(in_axes) + [ax for ax, nz in zip(in_axes, nonzeros) if nz]
    new_out = list(out_axes) + [o for o, nz in zip(out_axes, out_nz) if nz]
    outs = pmap_p.bind(*primals, *t_in, **_remap(params, new, new_in, new_out))
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    avals = _pmap_aval(*[get_aval(p) for p in primals], **params)
    t_out = [next(it) if nz else Zero(a.to_tangent_aval()) for a, nz in zip(avals, out_nz)]
    return outs[:n], t_out


pmap_p.def_jvp(_pmap_jvp)


def _pmap_partial_eval(self, args, params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    unknowns = tuple(type(x) is StagingTracer and x._interp is self for x in args)
    with _bound(params):
        known, unknown, out_u, nres = derived(
            jaxpr, ("pmap_pe", unknowns), lambda: partial_eval_jaxpr(jaxpr, list(unknowns)))
    k_in = [ax for ax, u in zip(in_axes, unknowns) if not u]
    k_out = [o for o, u in zip(out_axes, out_u) if not u] + [0] * nres  # residuals: per shard
    with core.interpreter_context(self.parent):
        k_outs = pmap_p.bind(*[x for x, u in zip(args, unknowns) if not u],
                             **_remap(params, known, k_in, k_out))
    num_known = len(k_outs) - nres
    u_in = [0] * nres + [ax for ax, u in zip(in_axes, unknowns) if u]
    u_out = [o for o, u in zip(out_axes, out_u) if u]
    u_args = list(k_outs[num_known:]) + [x for x, u in zip(args, unknowns) if u]
    u_outs = StagingInterpreter.process_primitive(self, pmap_p, u_args,
                                                  _remap(params, unknown, u_in, u_out))
    k_it, u_it = iter(k_outs[:num_known]), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_u]


pmap_p.def_rule("partial_eval", _pmap_partial_eval)


def _transposed_shard(jaxpr, linear, in_axes, out_axes, axis_name):
    """The per-shard transpose: cotangents of results taken from the first shard go to that
    shard only, and the cotangents of operands every shard received whole are summed over
    the shards (the exact transpose of what the map does)."""
    new = transpose_jaxpr(jaxpr, list(linear))
    nonlin = [a for a, lin in zip(jaxpr.in_avals, linear) if not lin]
    ct_avals = [a.to_tangent_aval() for a in jaxpr.out_avals]
    n_nonlin = len(nonlin)

    def fun(*ops):
        cts = list(ops[n_nonlin:])
        if any(o is None for o in out_axes):
            first = eq(axis_index_p.bind(axis_name=axis_name), np.int32(0))
            cts = [select_n(first, zeros_like(c), c) if o is None else c
                   for c, o in zip(cts, out_axes)]
        outs = eval_jaxpr(new.jaxpr, new.consts, *ops[:n_nonlin], *cts)
        lin_axes = [ax for ax, lin in zip(in_axes, linear) if lin]
        return [psum_p.bind(instantiate(o), axes=(axis_name,), axis_index_groups=None)
                if ax is None else o for o, ax in zip(outs, lin_axes)]

    return trace_to_jaxpr(fun, nonlin + ct_avals)[0]


def _pmap_transpose(cts, *args, **params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    linear = tuple(is_undefined(x) for x in args)
    with _bound(params):
        new = derived(jaxpr, ("pmap_transpose", linear), lambda: _transposed_shard(
            jaxpr, linear, in_axes, out_axes, params["axis_name"]))
    cts = [instantiate(c) for c in cts]
    t_in = [ax for ax, lin in zip(in_axes, linear) if not lin] + list(out_axes)
    t_out = [ax for ax, lin in zip(in_axes, linear) if lin]
    outs = iter(pmap_p.bind(*[x for x in args if not is_undefined(x)], *cts,
                            **_remap(params, new, t_in, t_out)))
    return [next(outs) if lin else None for lin in linear]


pmap_p.def_transpose(_pmap_transpose)


def _pmap_batch(size, vals, dims, **params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    new_vals, new_in, inner = [], [], []
    for v, d, ax in zip(vals, dims, in_axes):
        if d is None:
            new_vals.append(v)
            new_in.append(ax)
            inner.append(None)
        else:  # the batch dimension first, inside each shard too
            new_vals.append(batching.moveaxis(v, d, 0))
            new_in.append(None if ax is None else ax + 1)
            inner.append(0)
    key = ("pmap_batch", size, tuple(inner), batching.rule_axis_name())
    with _bound(params):
        new, out_b = derived(jaxpr, key,
                             lambda: batching.batch_jaxpr_outs(jaxpr, size, list(inner)))
    new_out = [(None if o is None else o + 1) if b else o for o, b in zip(out_axes, out_b)]
    outs = pmap_p.bind(*new_vals, **_remap(params, new, new_in, new_out))
    return outs, [0 if b else None for b in out_b]


pmap_p.def_batch(_pmap_batch)
