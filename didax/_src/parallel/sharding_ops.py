"""`with_sharding_constraint`: where a value should live, inside a computation.

didax's devices share the host's memory and jit computes on one of them, so the constraint
changes nothing about the values: it checks the shardings as JAX does (a tree prefix of the
value, each a Sharding, or a PartitionSpec under a mesh set with `set_mesh`, of no greater rank
than its value). Traced, it stages a `sharding_constraint` equation, as JAX does, which gives
the value its sharding in the jitted function's results (parallel/result_shardings.py); on an
array, the result reports the sharding.
"""
from __future__ import annotations

from didax._src import core
from didax._src.core import Tracer, asarray_value, get_aval
from didax._src.lax.sharding_constraint import sharding_constraint
from didax._src.parallel import device
from didax._src.parallel.mesh_context import get_abstract_mesh, get_mesh
from didax._src.parallel.sharding import NamedSharding, PartitionSpec, Sharding
from didax._src.transforms.jit import activate_placement
from didax._src.tree_util import broadcast_prefix, tree_flatten, tree_unflatten


def _is_sharding_leaf(x) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def _check(sharding, aval):
    if sharding is None:
        raise ValueError("One of with_sharding_constraint arguments got sharding None which is "
                         "not allowed. Please only pass `jax.sharding.Sharding` instances.")
    if isinstance(sharding, PartitionSpec):
        if not get_abstract_mesh().axis_names:
            raise RuntimeError(
                "with_sharding_constraint requires a non-empty mesh in context if you are "
                "passing `PartitionSpec`s to shardings. You can define a context mesh via "
                "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and "
                "then the mesh context manager is not required.")
        spec = sharding
    elif isinstance(sharding, NamedSharding):
        spec = sharding.spec
    elif isinstance(sharding, Sharding):
        return
    else:
        raise TypeError("shardings leaf specifications are expected to be PartitionSpec "
                        f"instances or None, but got {sharding}")
    if len(spec) > len(aval.shape):
        raise ValueError(f"One of with_sharding_constraint arguments is incompatible with its "
                         f"sharding annotation {sharding}: it is only valid for values of rank "
                         f"at least {len(spec)}, but was applied to a value of rank "
                         f"{len(aval.shape)} (shape {aval.shape}).")


def with_sharding_constraint(x, shardings):
    """`x` unchanged (as didax Arrays), once `shardings` is checked against it."""
    leaves, tree = tree_flatten(x)
    try:
        per_leaf = broadcast_prefix(shardings, x, is_leaf=_is_sharding_leaf)
    except ValueError as e:
        raise ValueError("with_sharding_constraint shardings specification must be a tree "
                         f"prefix of the corresponding value: {e}") from None
    for leaf, sharding in zip(leaves, per_leaf):
        _check(sharding, get_aval(leaf))
    per_leaf = [NamedSharding(get_mesh(), s) if isinstance(s, PartitionSpec) else s
                for s in per_leaf]
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        if any(isinstance(s, NamedSharding) and s.mesh.size > 1 for s in per_leaf):
            activate_placement()  # (the jitted function's results report it)
        return tree_unflatten(tree, [sharding_constraint(leaf, s) for leaf, s in
                                     zip(leaves, per_leaf)])
    out = [asarray_value(leaf) for leaf in leaves]
    return tree_unflatten(tree, [  # (a concrete array reports the sharding asked for)
        _recorded(v, s) for v, s in zip(out, per_leaf)])


def _recorded(value, sharding):
    if type(value) is not core.Array or not isinstance(sharding, Sharding):
        return value
    return device.placed(value, sharding)
