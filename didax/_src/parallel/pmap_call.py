"""The `pmap` call primitive: a per-shard jaxpr applied to slices of its operands, each shard
on its own device's worker (see shards.py), all at once, and the results stacked.

Parameters: `jaxpr` (one shard's function), `axis_name`, `axis_size` (the shards in this
process), `global_axis_size` (in all processes: the size collectives see), `in_axes` and
`out_axes` (one int or None per operand and result: where the mapped axis is; None for an
operand given whole to every shard, or for a result taken from the first shard), `devices`
(the local devices' indices, or None), `donated_invars`, and `mesh_axes`: None, or, for
`shard_map` over a mesh of several axes, the mesh laid over the shards row-major ((name,
size) pairs; `axis_name` is then the tuple of their names), whose axes collectives name.
Over a mesh, an operand's or result's entry of `in_axes` or `out_axes` is the tuple of mesh
axes it is split over (its leading dimension holds one block per coordinate on them, row-major;
the shards that differ only on the other axes share the block), or None for none.

Like the jit call, every rule transforms the per-shard jaxpr and maps it again, so that
`grad`, `jvp` and `vmap` of a pmapped function run in parallel too: the JVP maps the JVP'd
jaxpr with tangents mapped as their primals; partial evaluation splits it into a known and
an unknown map whose residuals are mapped per shard; the transpose maps the transposed
jaxpr (a cotangent of a result taken from the first shard goes to that shard, and an
operand given whole to every shard receives the psum of its shards' cotangents); under
vmap, it maps the batched jaxpr with the batch dimension inside the shards.
"""
from __future__ import annotations

import functools
import math

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
from didax._src.ir import DropVar, JaxprEqn, Literal, Var, derived, eval_jaxpr
from didax._src.lax.elementwise import (
    bitwise_and,
    convert_element_type,
    eq,
    select_n,
    zeros_like,
)
from didax._src.lax.parallel import axis_index, psum_p
from didax._src.lax.shape import concatenate, reshape, slice_in_dim, squeeze
from didax._src.parallel import device, shards

pmap_p = core.primitive("pmap", multiple_results=True)
pmap_p.pp_first = ("name",)
pmap_p.pp_hidden = {"donated_invars": lambda d: not any(d), "devices": None}


def _without(shape, axis):
    return shape if axis is None else shape[:axis] + shape[axis + 1:]


def _with(shape, axis, size):
    return shape if axis is None else shape[:axis] + (size,) + shape[axis:]


def _local_mesh(mesh_axes, axis_size) -> tuple:
    """The names and sizes of this process's part of the mesh (whole rows of its first
    axis)."""
    names = tuple(a for a, _ in mesh_axes)
    rest = math.prod(s for _, s in mesh_axes[1:])
    return names, (axis_size // rest,) + tuple(s for _, s in mesh_axes[1:])


def _mapped_dim(kind, mesh_axes, axis_size):
    """(position, size) of the mapped dimension of an operand or result of this kind, or
    None: an int position of size axis_size; over a mesh, the leading dimension, of a block
    per coordinate on the axes `kind` names."""
    if kind is None:
        return None
    if mesh_axes is None:
        return kind, axis_size
    names, shape = _local_mesh(mesh_axes, axis_size)
    return 0, math.prod(shape[names.index(a)] for a in kind)


def _pmap_aval(*avals, jaxpr, name, axis_name, axis_size, global_axis_size, in_axes, out_axes,
               devices, donated_invars, mesh_axes=None):
    if len(avals) != len(jaxpr.in_avals):
        raise TypeError(f"pmap of {name} takes {len(jaxpr.in_avals)} operands, got {len(avals)}")
    for i, (a, ax, inner) in enumerate(zip(avals, in_axes, jaxpr.in_avals)):
        dim = _mapped_dim(ax, mesh_axes, axis_size)
        pos = None if dim is None else dim[0]
        if dim is not None and (a.ndim <= pos or a.shape[pos] != dim[1]):
            raise TypeError(f"pmap of {name}: operand {i} of type {a.str_short()} has no axis "
                            f"{pos} of size {dim[1]} to map")
        if _without(a.shape, pos) != inner.shape or a.dtype != inner.dtype:
            raise TypeError(f"pmap of {name}: operand {i} of type {a.str_short()} (mapped along "
                            f"{pos}) does not give its shards the type {inner.str_short()}")
    outs = []
    for a, o in zip(jaxpr.out_avals, out_axes):
        dim = _mapped_dim(o, mesh_axes, axis_size)
        shape = a.shape if dim is None else _with(a.shape, *dim)
        outs.append(ShapedArray(shape, a.dtype, a.weak_type and o is None))
    return outs


def _shard(v, axis, k):
    return v if axis is None else v[(slice(None),) * axis + (k,)]


@functools.lru_cache(maxsize=4096)
def _blocks(kind, mesh_axes, axis_size) -> list:
    """For each shard, the index of its block along the mapped dimension of kind `kind`
    (its place among the shards that differ from it only on the axes `kind` names)."""
    names, shape = _local_mesh(mesh_axes, axis_size)
    axes = tuple(names.index(a) for a in kind)
    return [shards.mesh_members(shape, k, axes).index(k) for k in range(axis_size)]


def _holders(kind, mesh_axes, axis_size) -> tuple:
    """The shards whose results make up a result of kind `kind`: those at coordinate 0 on
    the axes it is not split over, in order of their block."""
    names, shape = _local_mesh(mesh_axes, axis_size)
    return shards.mesh_members(shape, 0, tuple(names.index(a) for a in kind))


def replicated_over(kind, axis_name, mesh_axes) -> tuple:
    """The axes along which an operand or result of this kind is the same on every shard."""
    if mesh_axes is None:
        return (axis_name,) if kind is None else ()
    return tuple(a for a, _ in mesh_axes if kind is None or a not in kind)


def per_shard(params):
    """The kind of an operand or result with a value of each shard's own (residuals)."""
    mesh_axes = params.get("mesh_axes")
    return 0 if mesh_axes is None else tuple(a for a, _ in mesh_axes)


def nested_map(vals, jaxpr, axis_name, axis_size, in_axes, out_axes):
    """A pmap inside another's shards (traced inside its function, or called while a shard
    runs): its map runs in the shard, as a vmap with the same axis name (the same values:
    its collectives reduce over the inner axis, and those over outer axes reach the other
    shards). Traced, it is part of the shard's jaxpr, which jit's tiers compile whole. Only
    the outer map runs in parallel."""
    outs = batching.vmap_flat(lambda *args: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args),
                              list(vals), list(in_axes), axis_size, axis_name)
    results = []
    for v, o, aval in zip(outs, out_axes, jaxpr.out_avals):
        if o is None:  # (the first shard's value, weakly typed as the map's own result)
            v = convert_element_type(squeeze(slice_in_dim(v, 0, 1), (0,)), aval.dtype,
                                     aval.weak_type)
        else:
            v = batching.moveaxis(v, 0, o)
        results.append(v)
    return results


def _pmap_impl(*vals, jaxpr, name, axis_name, axis_size, global_axis_size, in_axes, out_axes,
               devices, donated_invars, mesh_axes=None):
    if axis_env.running_shard():
        return [np.asarray(v) for v in
                nested_map(vals, jaxpr, axis_name, axis_size, in_axes, out_axes)]
    # jit's tiers: native code once it is built (its long loops and products release the
    # GIL, so shards run side by side), the NumPy tier until then; the same bits either way
    exe = tiered_executable(jaxpr, name)
    link = device.process_link() if global_axis_size != axis_size else None
    offset = 0 if link is None else device.process_index() * axis_size
    if mesh_axes is None:
        args = [[_shard(v, ax, k) for v, ax in zip(vals, in_axes)] for k in range(axis_size)]
    else:
        blocks = [None if ax is None else _blocks(ax, mesh_axes, axis_size) for ax in in_axes]
        args = [[v if b is None else v[b[k]] for v, b in zip(vals, blocks)]
                for k in range(axis_size)]
    results = shards.run_shards(exe.run, args, axis_name, global_axis_size, offset, link,
                                devices, mesh_axes)
    outs = []
    for i, o in enumerate(out_axes):
        if o is None:
            outs.append(results[0][i])
        elif mesh_axes is None:
            outs.append(np.stack([np.asarray(r[i]) for r in results], axis=o))
        else:
            held = [np.asarray(results[k][i]) for k in _holders(o, mesh_axes, axis_size)]
            outs.append(held[0][None] if len(held) == 1 else np.stack(held))
    return outs


pmap_p.def_impl(_pmap_impl)
pmap_p.def_abstract_eval(_pmap_aval)


def _bound(params):
    """Binds the pmap's axis (or its mesh's axes) while one of its jaxprs is transformed or
    traced."""
    return axis_env.binding(*bound_axes(params["axis_name"], params["global_axis_size"],
                                        params.get("mesh_axes")))


def bound_axes(axis_name, size, mesh_axes) -> list:
    if mesh_axes is None:
        return [axis_env.MappedAxis(axis_name, size)]
    return [axis_env.MappedAxis(a, s) for a, s in mesh_axes]


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
    k_out = [o for o, u in zip(out_axes, out_u) if not u] + [per_shard(params)] * nres
    with core.interpreter_context(self.parent):
        k_outs = pmap_p.bind(*[x for x, u in zip(args, unknowns) if not u],
                             **_remap(params, known, k_in, k_out))
    num_known = len(k_outs) - nres
    u_in = [per_shard(params)] * nres + [ax for ax, u in zip(in_axes, unknowns) if u]
    u_out = [o for o, u in zip(out_axes, out_u) if u]
    u_args = list(k_outs[num_known:]) + [x for x, u in zip(args, unknowns) if u]
    u_outs = StagingInterpreter.process_primitive(self, pmap_p, u_args,
                                                  _remap(params, unknown, u_in, u_out))
    k_it, u_it = iter(k_outs[:num_known]), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_u]


pmap_p.def_rule("partial_eval", _pmap_partial_eval)


def _transposed_shard(jaxpr, linear, in_axes, out_axes, axis_name, mesh_axes):
    """The per-shard transpose: the cotangent of a result taken from the first shard along
    some axes goes to those shards only, and the cotangent of an operand every shard along
    some axes received alike is summed over them (the exact transpose of what the map
    does)."""
    new = transpose_jaxpr(jaxpr, list(linear))
    nonlin = [a for a, lin in zip(jaxpr.in_avals, linear) if not lin]
    ct_avals = [a.to_tangent_aval() for a in jaxpr.out_avals]
    n_nonlin = len(nonlin)

    def first_along(names):
        return functools.reduce(bitwise_and, [eq(axis_index(a), np.int32(0)) for a in names])

    def fun(*ops):
        cts = list(ops[n_nonlin:])
        for i, o in enumerate(out_axes):
            names = replicated_over(o, axis_name, mesh_axes)
            if names:
                cts[i] = select_n(first_along(names), zeros_like(cts[i]), cts[i])
        outs = [instantiate(o) for o in eval_jaxpr(new.jaxpr, new.consts, *ops[:n_nonlin],
                                                     *cts)]
        lin_axes = [ax for ax, lin in zip(in_axes, linear) if lin]
        groups: dict = {}  # (axes, dtype) -> the cotangents summed over those axes
        for i, ax in enumerate(lin_axes):
            names = replicated_over(ax, axis_name, mesh_axes)
            if names:
                groups.setdefault((names, get_aval(outs[i]).dtype), []).append(i)
        for (names, _), members in groups.items():
            for i, total in zip(members, _psum_together([outs[i] for i in members], names)):
                outs[i] = total
        return outs

    return trace_to_jaxpr(fun, nonlin + ct_avals)[0]


def _psum_together(values, names) -> list:
    """The psums of values of one dtype, in one exchange (a shard's collectives each wait
    for every shard: one exchange rather than one per parameter's cotangent)."""
    if len(values) == 1:
        return [psum_p.bind(values[0], axes=names, axis_index_groups=None)]
    shapes = [get_aval(v).shape for v in values]
    flat = concatenate([reshape(v, (math.prod(s),)) for v, s in zip(values, shapes)], 0)
    total = psum_p.bind(flat, axes=names, axis_index_groups=None)
    out, start = [], 0
    for s in shapes:
        out.append(reshape(slice_in_dim(total, start, start + math.prod(s)), s))
        start += math.prod(s)
    return out


def _pmap_transpose(cts, *args, **params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    linear = tuple(is_undefined(x) for x in args)
    with _bound(params):
        new = derived(jaxpr, ("pmap_transpose", linear, tuple(in_axes), tuple(out_axes)),
                      lambda: _transposed_shard(
            jaxpr, linear, in_axes, out_axes, params["axis_name"], params.get("mesh_axes")))
    cts = [instantiate(c) for c in cts]
    t_in = [ax for ax, lin in zip(in_axes, linear) if not lin] + list(out_axes)
    t_out = [ax for ax, lin in zip(in_axes, linear) if lin]
    outs = iter(pmap_p.bind(*[x for x in args if not is_undefined(x)], *cts,
                            **_remap(params, new, t_in, t_out)))
    return [next(outs) if lin else None for lin in linear]


pmap_p.def_transpose(_pmap_transpose)


def _pmap_batch(size, vals, dims, **params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    mesh = params.get("mesh_axes") is not None  # (a mesh's mapped dimension stays leading)
    new_vals, new_in, inner = [], [], []
    for v, d, ax in zip(vals, dims, in_axes):
        if d is None:
            new_vals.append(v)
            new_in.append(ax)
            inner.append(None)
        elif mesh:  # the batch dimension after the mapped one, first inside each shard
            new_vals.append(batching.moveaxis(v, d, 0 if ax is None else 1))
            new_in.append(ax)
            inner.append(0)
        else:  # the batch dimension first, inside each shard too
            new_vals.append(batching.moveaxis(v, d, 0))
            new_in.append(None if ax is None else ax + 1)
            inner.append(0)
    key = ("pmap_batch", size, tuple(inner), batching.rule_axis_name())
    with _bound(params):
        new, out_b = derived(jaxpr, key,
                             lambda: batching.batch_jaxpr_outs(jaxpr, size, list(inner)))
    if mesh:
        outs = pmap_p.bind(*new_vals, **_remap(params, new, new_in, out_axes))
        return outs, [(0 if o is None else 1) if b else None for o, b in zip(out_axes, out_b)]
    new_out = [(None if o is None else o + 1) if b else o for o, b in zip(out_axes, out_b)]
    outs = pmap_p.bind(*new_vals, **_remap(params, new, new_in, new_out))
    return outs, [0 if b else None for b in out_b]


pmap_p.def_batch(_pmap_batch)


# --------------------------------------------------------------------------------------
# jit: a map whose operands come from the map just before it, shard by shard, runs with it
# as one map (the forward and backward maps of a gradient: the residuals stay in each shard
# instead of being stacked into arrays between the two calls)

_SAME_MAP = ("axis_name", "axis_size", "global_axis_size", "devices", "mesh_axes")


def _per_shard_kind(kind, params) -> bool:
    """Whether an operand or result of this kind holds a value of each shard's own."""
    return kind is not None and not replicated_over(kind, params["axis_name"],
                                                    params.get("mesh_axes"))


def _fuse_with_producer(eqn, program):
    params = eqn.params
    sources = {id(program.producer.get(v)): program.producer.get(v) for v in eqn.invars
               if not isinstance(v, Literal) and program.producer.get(v) is not None}
    first = [e for e in sources.values() if e.primitive is pmap_p and e is not eqn
             and all(e.params.get(k) == params.get(k) for k in _SAME_MAP)]
    if len(first) != 1:
        return None
    (first,) = first
    order = {}  # (the equations before this one, in order)
    for e in program.producer.values():
        order.setdefault(id(e), len(order))
    at = order[id(first)]
    later = [e for e in program.producer.values() if order[id(e)] > at]
    made = {v: j for j, v in enumerate(first.outvars)}
    if any(v in made for e in later for v in e.invars if not isinstance(v, Literal)):
        return None  # (something between the two maps reads the first's results)
    links = []  # for each operand: the first map's result it is, or None
    for v, ax in zip(eqn.invars, params["in_axes"]):
        j = None if isinstance(v, Literal) else made.get(v)
        if j is not None:
            if not (ax == first.params["out_axes"][j] and _per_shard_kind(ax, params)):
                return None
        elif not isinstance(v, Literal) and order.get(id(program.producer.get(v)), -1) > at:
            return None  # (computed after the first map)
        links.append(j)
    uses_here = {}
    for v in eqn.invars:
        if v in made:
            uses_here[v] = uses_here.get(v, 0) + 1
    kept = [j for j, v in enumerate(first.outvars)
            if not isinstance(v, DropVar) and program.uses.get(v, 0) > uses_here.get(v, 0)]
    extra = [i for i, j in enumerate(links) if j is None]
    j1, j2 = first.params["jaxpr"], params["jaxpr"]
    n1 = len(j1.in_avals)

    def both(*vals):
        outs1 = eval_jaxpr(j1.jaxpr, j1.consts, *vals[:n1])
        it = iter(vals[n1:])
        ins2 = [next(it) if j is None else outs1[j] for j in links]
        outs2 = eval_jaxpr(j2.jaxpr, j2.consts, *ins2)
        return [outs1[j] for j in kept] + list(outs2)

    with _bound(params):
        fused = trace_to_jaxpr(both, list(j1.in_avals) + [j2.in_avals[i] for i in extra])[0]
    operands = list(first.invars) + [eqn.invars[i] for i in extra]
    in_axes = tuple(first.params["in_axes"]) + tuple(params["in_axes"][i] for i in extra)
    out_axes = (tuple(first.params["out_axes"][j] for j in kept) + tuple(params["out_axes"]))
    fresh = [Var(first.outvars[j].aval) for j in kept]
    for j, v in zip(kept, fresh):  # (read where the first map's results were, and nowhere
        old = first.outvars[j]  # else: a map after this one may fuse with it in turn)
        program.uses[v] = program.uses.get(old, 0) - uses_here.get(old, 0)
    new = JaxprEqn(pmap_p, operands, fresh + list(eqn.outvars),
                   {**params, "jaxpr": fused, "in_axes": in_axes, "out_axes": out_axes,
                    "name": f"{first.params['name']}+{params['name']}",
                    "donated_invars": (False,) * len(operands)},
                   eqn.source_info, eqn.phase)
    return [new], {first.outvars[j]: v for j, v in zip(kept, fresh)}


pmap_p.def_rule("rewrite", _fuse_with_producer)
