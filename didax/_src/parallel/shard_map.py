"""`shard_map` over a one-dimensional mesh, as a `pmap` over the mesh's devices (meshes of
several axes: at the end).

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

from didax._src.core import get_aval
from didax._src.lax.shape import reshape, transpose
from didax._src.parallel import device
from didax._src.parallel.pmap import pmap
from didax._src.parallel.sharding import Mesh, PartitionSpec
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
        return tree_unflatten(out_tree, joined)

    return mapped


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
# Meshes of several axes (in one process): a pmap over the first axis, running its shards
# side by side, of nested pmaps over the others, which run inside each shard as vmaps of the
# same axis names (pmap_call._nested). Collectives over any axis or tuple of axes see the
# same values as on devices of their own.


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


def _to_blocks(x, parts, mesh, i):
    """x with each mesh axis it is split over as a leading dimension (in the mesh's order),
    then the block's dimensions; and the mesh axes it is split over."""
    aval = get_aval(x)
    if len(parts) > aval.ndim:
        raise ValueError(f"shard_map: argument {i} of type {aval.str_short()} has fewer "
                         f"dimensions than its in_specs name ({len(parts)})")
    sizes = mesh.shape
    shape, where = [], {}  # (new shape, mesh axis -> its dimension in the new shape)
    for d, n in enumerate(aval.shape):
        names = parts[d] if d < len(parts) else ()
        count = 1
        for name in names:
            count *= sizes[name]
        if n % count:
            raise ValueError(f"shard_map: argument {i} of type {aval.str_short()} is split "
                             f"along dimension {d} into {count} blocks (mesh axes {names}), "
                             f"but its size {n} is not a multiple of {count}")
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


def _shard_map_nd(f, mesh, in_specs, out_specs):
    if device.process_count() > 1:
        raise NotImplementedError(f"shard_map over a mesh of {len(mesh.axis_names)} axes "
                                  f"({mesh}) across processes: only one-dimensional meshes "
                                  "span processes; use one process, or a 1-D mesh")
    _check_devices(mesh.devices.flat)
    axes, sizes = mesh.axis_names, mesh.shape
    out_leaves, out_tree = tree_flatten(out_specs, is_leaf=_is_spec)
    out_parts = [_spec_axes(spec, mesh, "out_specs") for spec in out_leaves]
    out_split = [[a for a in axes if any(a in names for names in parts)] for parts in out_parts]
    first_devices = list(mesh.devices.reshape(sizes[axes[0]], -1)[:, 0])
    cache: dict = {}  # (argument tree, axes each argument is split over) -> the nested pmaps

    def nested(in_tree, splits):
        def body(*flat_blocks):
            return f(*tree_unflatten(in_tree, list(flat_blocks)))

        fn = body
        for k in reversed(range(len(axes))):
            a = axes[k]
            in_axes = tuple(0 if a in split else None for split in splits)
            out_axes = tree_unflatten(out_tree, [0 if a in split else None
                                                 for split in out_split])
            fn = pmap(fn, axis_name=a, in_axes=in_axes, out_axes=out_axes,
                      axis_size=sizes[a], devices=first_devices if k == 0 else None)
        return fn

    @functools.wraps(f)
    def mapped(*args):
        flat_specs = broadcast_prefix(in_specs, args, is_leaf=_is_spec)
        flat, in_tree = tree_flatten(args)
        blocks, splits = [], []
        for i, (x, spec) in enumerate(zip(flat, flat_specs)):
            b, split = _to_blocks(x, _spec_axes(spec, mesh, "in_specs"), mesh, i)
            blocks.append(b)
            splits.append(tuple(split))
        key = (in_tree, tuple(splits))
        fn = cache.get(key)
        if fn is None:
            fn = cache[key] = nested(in_tree, splits)
        outs = fn(*blocks)
        leaves, tree = tree_flatten(outs)
        dims = broadcast_prefix(tree_unflatten(out_tree, list(range(len(out_leaves)))), outs,
                                is_leaf=lambda x: isinstance(x, int))
        return tree_unflatten(tree, [_from_blocks(v, out_parts[k], out_split[k])
                                     for v, k in zip(leaves, dims)])

    return mapped
