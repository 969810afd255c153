"""The shardings of results, as JAX reports them: of jitted calls and of eager operations.

A jitted call's result has the function's `out_shardings` where it names one; otherwise its
sharding follows from the arguments' (`in_shardings`, or each argument's own) through the
jaxpr by the primitives' sharding rules (interpreters/sharding.py), on the mesh of the first
argument that has one (or of a sharding constraint inside). An eager operation on sharded
arrays applies its primitive's rule. Results of unsharded arguments are on one device, as
in JAX. The values are the same whatever the shardings: every device shares the host's
memory, and the sharding says how `shard_map` and `.addressable_shards` split them. None of
this runs until some array has a sharding of several devices (jit.activate_placement).

A deliberate difference from JAX: arguments split in ways that disagree (a product whose
contracted dimensions are split over different axes) give whole dimensions, where JAX's
explicit-sharding mode raises.
"""
from __future__ import annotations

from didax._src import core
from didax._src.interpreters import sharding as rules
from didax._src.ir import derived
from didax._src.parallel import device
from didax._src.parallel.mesh_context import get_mesh
from didax._src.parallel.sharding import NamedSharding, PartitionSpec, Sharding
from didax._src.transforms import jit as jit_api
from didax._src.tree_util import broadcast_prefix, tree_unflatten


def _is_leaf(x) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def _resolved(s, what: str):
    """A NamedSharding for a PartitionSpec (on the mesh `set_mesh` gave), else `s`."""
    if isinstance(s, PartitionSpec):
        mesh = get_mesh()
        if mesh.empty:
            raise RuntimeError(
                f"jit {what}: a PartitionSpec {s} needs a mesh; set one with "
                "`jax.set_mesh(mesh)`, or give a NamedSharding(mesh, spec)")
        return NamedSharding(mesh, s)
    return s


def _per_leaf(shardings, tree_value, what: str) -> list:
    try:
        leaves = broadcast_prefix(shardings, tree_value, is_leaf=_is_leaf)
    except ValueError as e:
        raise ValueError(f"jit {what} must be a tree prefix of the corresponding value "
                         f"(or one sharding for all): {e}") from None
    return [_resolved(s, what) for s in leaves]


def _partition_spec(spec: tuple) -> PartitionSpec:
    return PartitionSpec(*[None if not names else names[0] if len(names) == 1 else names
                           for names in spec])


def _arguments_shardings(jitted, entry, flat) -> list:
    """Each argument leaf's sharding: the function's in_shardings, else its own."""
    own = [getattr(x, "_placement", None) if type(x) is core.Array else None for x in flat]
    own = [s if isinstance(s, Sharding) else None for s in own]
    if jitted.in_shardings is None:
        return own
    args, kwargs = tree_unflatten(entry.in_tree, list(flat))
    given = _per_leaf(jitted.in_shardings, args, "in_shardings")
    given += [None] * (len(flat) - len(given))  # (keyword arguments: their own)
    return [g if g is not None else o for g, o in zip(given, own)]


def _on_one_mesh(shardings):
    """The mesh of the first NamedSharding among `shardings` (or None), and the spec of each
    on it (whole for the others)."""
    mesh = next((s.mesh for s in shardings if isinstance(s, NamedSharding)), None)
    return mesh, tuple(rules.spec_names(s.spec) if isinstance(s, NamedSharding)
                       and s.mesh == mesh else () for s in shardings)


def place(jitted, entry, flat, outs) -> list:
    mesh, specs = _on_one_mesh(_arguments_shardings(jitted, entry, flat))
    if jitted.out_shardings is not None:
        values = tree_unflatten(entry.out_tree, list(outs))
        wanted = _per_leaf(jitted.out_shardings, values, "out_shardings")
    else:
        wanted = [None] * len(outs)
    if mesh is None:
        mesh = derived(entry.jaxpr, "constraint mesh",
                       lambda: _constraint_mesh(entry.jaxpr.jaxpr))
    if mesh is not None and not all(wanted):
        found = derived(entry.jaxpr, ("shardings", specs, tuple(mesh.shape.items())),
                        lambda: rules.propagate(entry.jaxpr, specs, mesh.shape))
        wanted = [w if w is not None else NamedSharding(mesh, _partition_spec(s))
                  for w, s in zip(wanted, found)]
    return [device.placed(o, w) if w is not None and type(o) is core.Array else o
            for o, w in zip(outs, wanted)]


def _constraint_mesh(jaxpr):
    """The mesh of the first sharding constraint in `jaxpr` (or a jaxpr it calls), or None."""
    for eqn in jaxpr.eqns:
        s = eqn.params.get("sharding")
        if isinstance(s, NamedSharding) and rules.splits_whole(eqn.primitive):
            return s.mesh
        for p in eqn.params.values():
            inner = getattr(p, "jaxpr", None)
            if inner is not None and hasattr(inner, "eqns"):
                found = _constraint_mesh(inner)
                if found is not None:
                    return found
    return None


jit_api.placement.place = place


class _Eqn:
    """What a sharding rule reads of an equation, for an eager application."""
    __slots__ = ("primitive", "params", "invars", "outvars")

    def __init__(self, prim, params, args, outs):
        self.primitive, self.params = prim, params
        self.invars = [_Typed(core.get_aval(a)) for a in args]
        self.outvars = [_Typed(core.get_aval(o)) for o in outs]


class _Typed:
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


def _eager_process(prim, args, params):
    out = core.EvalInterpreter.process_primitive(core.eval_interpreter, prim, args, params)
    mesh, specs = _on_one_mesh([getattr(a, "_placement", None) if type(a) is core.Array
                                else None for a in args])
    call = prim.traits.call_jaxpr_param
    follows = call is not None and hasattr(params.get(call), "jaxpr")  # (a closed jaxpr)
    if mesh is None or not (follows or "sharding" in prim.rules):
        return out  # (without a rule: on one device)
    outs = out if prim.multiple_results else [out]
    found = rules.rule_outputs(_Eqn(prim, params, args, outs), list(specs), mesh.shape)
    placed = [device.placed(o, NamedSharding(mesh, _partition_spec(s)))
              if type(o) is core.Array else o for o, s in zip(outs, found)]
    return placed if prim.multiple_results else placed[0]


def _place_eager_results():
    """From now on, eager operations on sharded arrays give sharded results."""
    interp = core.eval_interpreter
    interp.process_primitive = _eager_process
    interp.process_pair = lambda prim, x, y: _eager_process(prim, (x, y), {})
    interp.process_one = lambda prim, x: _eager_process(prim, (x,), {})


jit_api.placement.on_activate.append(_place_eager_results)
