"""`shard_map` over a one-dimensional mesh, as a `pmap` over the mesh's devices (meshes of
several axes, in one process or across processes: at the end).

Each argument is split into one block per device along the dimension its PartitionSpec names
the mesh axis for (or given whole, if none); the function sees blocks, collectives over the
mesh axis act across the devices, and each output's blocks are joined along the dimension
its out spec names (or the first device's block is the result, for a replicated output;
whether it really is the same on every device is not checked). In a distributed run, each
process passes and receives the part of every sharded array that its own devices hold.
"""
from __future__ import annotations

import functools
import math

from didax._src import axis_env, core
from didax._src.core import get_aval
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import hoist_consts
from didax._src.lax.shape import reshape, transpose
from didax._src.parallel import device
from didax._src.parallel.pmap import pmap
from didax._src.parallel.pmap_call import bind_pmap, bound_axes
from didax._src.parallel.sharding import Mesh, NamedSharding, PartitionSpec
from didax._src.tree_util import broadcast_prefix, tree_flatten, tree_unflatten


def _is_spec(x):
    return x is None or isinstance(x, PartitionSpec)


def _sharded_dim(spec, axis, what: str):
    """The dimension `spec` splits over the mesh axis `axis`, or None."""
    if spec is None:
        return None
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map {what}: expected a PartitionSpec, got {spec!r}")
    found = None
    for d, part in enumerate(spec):
        names = part if isinstance(part, tuple) else (part,)
        for name in names:
            if name is None:
                continue
            if name != axis:
                raise ValueError(f"shard_map {what}: {spec} names the axis {name!r}, which is "
                                 f"not the mesh's axis {axis!r}")
            if found is not None:
                raise ValueError(f"shard_map {what}: {spec} names the mesh axis {axis!r} twice")
            found = d
    return found


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None):
    """Runs `f` on one block of each argument per device of `mesh`, all at once; `in_specs`
    and `out_specs` (pytree prefixes of the arguments and results) say how arrays are split
    into blocks and joined back."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map requires a Mesh (mesh=...), got {mesh!r}")
    if in_specs is None:
        raise NotImplementedError("shard_map: in_specs must be given (they are not inferred)")
    if len(mesh.axis_names) != 1:
        return _shard_map_nd(f, mesh, in_specs, out_specs)
    (axis,) = mesh.axis_names
    local = mesh.local_devices
    _check_devices(local)
    n = len(local)
    out_axes = _out_axes(out_specs, axis)  # (a prefix of the results' tree, as pmap takes)
    cache: dict = {}  # (argument tree, split dimensions) -> the pmap of the blocks' function

    @functools.wraps(f)
    def mapped(*args):
        flat_specs = broadcast_prefix(in_specs, args, is_leaf=_is_spec)
        flat, in_tree = tree_flatten(args)
        blocks, in_axes = [], []
        for i, (x, spec) in enumerate(zip(flat, flat_specs)):
            d = _sharded_dim(spec, axis, "in_specs")
            aval = get_aval(x)
            if d is not None and (d >= aval.ndim or aval.shape[d] % n):
                raise ValueError(
                    f"shard_map: argument {i} of type {aval.str_short()} is split along "
                    f"dimension {d} by {spec} into {n} blocks (the mesh's local devices), "
                    f"but {'it has no such dimension' if d >= aval.ndim else 'its size is '}"
                    f"{'' if d >= aval.ndim else aval.shape[d]}"
                    f"{'' if d >= aval.ndim else ' is not a multiple of ' + str(n)}")
            if d is not None:
                s = aval.shape
                x = reshape(x, s[:d] + (n, s[d] // n) + s[d + 1:])
            blocks.append(x)
            in_axes.append(d)
        key = (in_tree, tuple(in_axes))
        mapped_body = cache.get(key)
        if mapped_body is None:
            def body(*flat_blocks):
                return f(*tree_unflatten(in_tree, list(flat_blocks)))

            mapped_body = cache[key] = pmap(body, axis_name=axis, in_axes=tuple(in_axes),
                                            out_axes=out_axes, devices=local)
        outs = mapped_body(*blocks)
        leaves, out_tree = tree_flatten(outs)
        dims = broadcast_prefix(out_axes, outs, is_leaf=lambda x: x is None)
        joined = []
        for v, d in zip(leaves, dims):
            if d is not None:
                s = get_aval(v).shape
                v = reshape(v, s[:d] + (s[d] * s[d + 1],) + s[d + 2:])
            joined.append(v)
        return _placed(tree_unflatten(out_tree, joined), out_specs, mesh)

    return mapped


def _placed(results, out_specs, mesh):
    """Concrete results report NamedSharding(mesh, their out spec), as in JAX (in one
    process: across processes, each holds only its part)."""
    if device.process_count() > 1:
        return results
    leaves, tree = tree_flatten(results)
    if not any(type(v) is core.Array for v in leaves):
        return results
    specs = broadcast_prefix(out_specs, results, is_leaf=_is_spec)
    return tree_unflatten(tree, [
        device.placed(v, NamedSharding(mesh, s if s is not None else PartitionSpec()))
        if type(v) is core.Array else v for v, s in zip(leaves, specs)])


def _check_devices(devices) -> None:
    for d in devices:
        if d not in device.devices():
            raise ValueError(f"shard_map: the mesh's {d!r} is not one of the devices "
                             f"{device.devices()}")


def _out_axes(out_specs, axis):
    """out_specs with each PartitionSpec replaced by the dimension it splits (or None)."""
    leaves, tree = tree_flatten(out_specs, is_leaf=_is_spec)
    return tree_unflatten(tree, [_sharded_dim(s, axis, "out_specs") for s in leaves])


# --------------------------------------------------------------------------------------
# Meshes of several axes: one shard per device, all side by side (the pmap call primitive
# with `mesh_axes`: the mesh laid over its mapped axis row-major). Each shard binds every
# mesh axis to its coordinate, and a collective over an axis or a tuple of axes exchanges
# among the shards that share its other coordinates (shards.MeshView). An argument split
# over some axes reaches each device as its block (repeated along the other axes); one split
# over none reaches every device whole. Across processes, each process holds whole rows of
# the first axis (as make_mesh lays them out) and passes and receives the part of every
# array its rows hold; exchanges within a process stay in it.


def _spec_axes(spec, mesh, what: str) -> list:
    """For each dimension `spec` names, the mesh axes it is split over, in order."""
    if spec is None:
        return []
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map {what}: expected a PartitionSpec, got {spec!r}")
    parts, seen = [], set()
    for part in spec:
        names = tuple(n for n in (part if isinstance(part, tuple) else (part,)) if n is not None)
        for name in names:
            if name not in mesh.axis_names:
                raise ValueError(f"shard_map {what}: {spec} names the axis {name!r}, which is "
                                 f"not one of the mesh's axes {mesh.axis_names}")
            if name in seen:
                raise ValueError(f"shard_map {what}: {spec} names the mesh axis {name!r} twice")
            seen.add(name)
        parts.append(names)
    return parts


def _to_blocks(x, parts, mesh, sizes, i):
    """x with each mesh axis it is split over as a leading dimension (in the mesh's order),
    then the block's dimensions; and the mesh axes it is split over. `sizes`: the axes'
    sizes in this process's part of the mesh."""
    aval = get_aval(x)
    if len(parts) > aval.ndim:
        raise ValueError(f"shard_map: argument {i} of type {aval.str_short()} has fewer "
                         f"dimensions than its in_specs name ({len(parts)})")
    shape, where = [], {}  # (new shape, mesh axis -> its dimension in the new shape)
    for d, n in enumerate(aval.shape):
        names = parts[d] if d < len(parts) else ()
        count = 1
        for name in names:
            count *= sizes[name]
        if n % count:
            held = "" if sizes == mesh.shape else " held by this process"
            raise ValueError(f"shard_map: argument {i} of type {aval.str_short()} is split "
                             f"along dimension {d} into {count} blocks{held} (mesh axes "
                             f"{names}), but its size {n} is not a multiple of {count}")
        for name in names:
            where[name] = len(shape)
            shape.append(sizes[name])
        shape.append(n // count)
    x = reshape(x, tuple(shape))
    split = [a for a in mesh.axis_names if a in where]
    lead = [where[a] for a in split]
    rest = [k for k in range(len(shape)) if k not in lead]
    return transpose(x, tuple(lead + rest)), split


def _from_blocks(v, parts, split):
    """The inverse for a result: leading dimensions for the mesh axes `split` (in the mesh's
    order), joined into the dimensions `parts` names them for."""
    shape = get_aval(v).shape
    lead, block = shape[:len(split)], shape[len(split):]
    order, new_shape = [], []
    for d, n in enumerate(block):
        names = parts[d] if d < len(parts) else ()
        order += [split.index(name) for name in names] + [len(split) + d]
        new_shape.append(n * math.prod(lead[split.index(name)] for name in names))
    return reshape(transpose(v, tuple(order)), tuple(new_shape))


def _my_rows(mesh) -> list:
    """The indices along the mesh's first axis of the rows this process holds: all of them
    in one process; across processes, whole rows, the same number each, in process order."""
    rows = mesh.devices.reshape(mesh.devices.shape[0], -1)
    count = device.process_count()
    if count == 1:
        return list(range(len(rows)))
    per = len(rows) // count
    owners = [{d.process_index for d in row} for row in rows]
    if len(rows) % count or any(o != {r // per} for r, o in enumerate(owners)):
        layout = [sorted(o) for o in owners]
        raise NotImplementedError(
            f"shard_map over {mesh} across {count} processes: each process must hold whole "
            f"rows of the mesh's first axis {mesh.axis_names[0]!r}, the same number each, in "
            f"process order, but its rows belong to processes {layout}. Put the axis that "
            "spans the processes first, with a size that is a multiple of the process count "
            "(as make_mesh does).")
    p = device.process_index()
    return list(range(p * per, (p + 1) * per))


class _Traced:
    __slots__ = ("jaxpr", "hoisted", "out_tree", "out_splits", "out_axes")


def _shard_map_nd(f, mesh, in_specs, out_specs):
    _check_devices(mesh.devices.flat)
    axes = mesh.axis_names
    mine = _my_rows(mesh)
    sizes = {**mesh.shape, axes[0]: len(mine)}  # (this process's part of the mesh)
    local = mesh.devices[mine[0]:mine[-1] + 1].reshape(-1)  # (its devices, row-major)
    workers = tuple(d.local_hardware_id for d in local)
    mesh_axes = tuple(mesh.shape.items())
    name = getattr(f, "__name__", "shard_map")
    cache: dict = {}  # (argument tree, block types, axes each is split over) -> _Traced

    def trace(in_tree, block_avals, in_axes):
        out_box = []

        def per_device(*flat_blocks):
            outs = f(*tree_unflatten(in_tree, list(flat_blocks)))
            leaves, tree = tree_flatten(outs)
            out_box.append((outs, tree))
            return leaves

        with axis_env.binding(*bound_axes(axes, mesh.size, mesh_axes)):
            closed, _ = trace_to_jaxpr(per_device, block_avals)
        t = _Traced()
        t.hoisted = []
        if any(isinstance(c, core.Tracer) for c in closed.consts):
            closed, t.hoisted = hoist_consts(closed)
        t.jaxpr = closed
        outs, t.out_tree = out_box[-1]
        specs = broadcast_prefix(out_specs, outs, is_leaf=_is_spec)
        t.out_splits = []
        for spec, aval in zip(specs, closed.out_avals):
            parts = _spec_axes(spec, mesh, "out_specs")
            if len(parts) > aval.ndim:
                raise ValueError(f"shard_map: out_specs {spec} names {len(parts)} dimensions "
                                 f"for a result of type {aval.str_short()}")
            t.out_splits.append((parts, [a for a in axes if any(a in n for n in parts)]))
        t.out_axes = tuple(tuple(split) or None for _, split in t.out_splits)
        return t

    @functools.wraps(f)
    def mapped(*args):
        flat_specs = broadcast_prefix(in_specs, args, is_leaf=_is_spec)
        flat, in_tree = tree_flatten(args)
        operands, in_axes, block_avals = [], [], []
        for i, (x, spec) in enumerate(zip(flat, flat_specs)):
            b, split = _to_blocks(x, _spec_axes(spec, mesh, "in_specs"), mesh, sizes, i)
            block = get_aval(b).shape[len(split):]
            if split:  # (its blocks along one leading dimension, row-major over the axes)
                b = reshape(b, (math.prod(sizes[a] for a in split),) + block)
            operands.append(b)
            in_axes.append(tuple(split) or None)
            block_avals.append(core.ShapedArray(block, get_aval(x).dtype, get_aval(x).weak_type))
        key = (in_tree, tuple(block_avals), tuple(in_axes))
        t = cache.get(key)
        if t is None:
            t = trace(in_tree, block_avals, in_axes)
            if not t.hoisted:
                cache[key] = t
        outs = bind_pmap([*t.hoisted, *operands], jaxpr=t.jaxpr, name=name, axis_name=axes,
                         axis_size=len(local), global_axis_size=mesh.size,
                         in_axes=(None,) * len(t.hoisted) + tuple(in_axes), out_axes=t.out_axes,
                         devices=workers,
                         donated_invars=(False,) * (len(t.hoisted) + len(operands)),
                         mesh_axes=mesh_axes)
        results = []
        for v, (parts, split) in zip(outs, t.out_splits):
            if split:
                v = reshape(v, tuple(sizes[a] for a in split) + get_aval(v).shape[1:])
                v = _from_blocks(v, parts, split)
            results.append(v)
        return _placed(tree_unflatten(t.out_tree, results), out_specs, mesh)

    return mapped
