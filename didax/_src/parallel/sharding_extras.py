"""The rest of `jax.sharding`: explicit-sharding helpers and the abstract device.

JAX's explicit sharding puts a sharding into each array's type; didax's types carry none
(every device shares the host's memory), so `auto_axes`/`explicit_axes` run the function
as it is and `reshard` only records where an array is said to live.
"""
from __future__ import annotations

import dataclasses
import functools

from didax._src import core
from didax._src.parallel import device
from didax._src.parallel.mesh_context import get_mesh
from didax._src.parallel.sharding import (
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
)
from didax._src.tree_util import tree_flatten, tree_unflatten


@dataclasses.dataclass(frozen=True)
class AbstractDevice:
    """A device as an abstract mesh knows it: its kind, core count and platform."""

    device_kind: str
    num_cores: int | None
    platform: str


class ManualAxisType:
    """How the values of a `shard_map` body vary over the manual mesh axes (the axis names
    over which they vary, are unreduced, or are reduced)."""

    def __init__(self, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
        self.varying = frozenset(varying)
        self.unreduced = frozenset(unreduced)
        self.reduced = frozenset(reduced)

    def __eq__(self, other):
        return (isinstance(other, ManualAxisType)
                and (self.varying, self.unreduced, self.reduced)
                == (other.varying, other.unreduced, other.reduced))

    def __hash__(self):
        return hash((self.varying, self.unreduced, self.reduced))

    def __repr__(self):
        return (f"ManualAxisType(varying={set(self.varying) or '{}'}, "
                f"unreduced={set(self.unreduced) or '{}'}, "
                f"reduced={set(self.reduced) or '{}'})")


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    """The sharding that puts a whole array on `device`."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def reshard(xs, out_shardings):
    """`xs` laid out as `out_shardings` say (one sharding, or a pytree of them matching
    `xs`; PartitionSpecs need a mesh set with `set_mesh`). Concrete arrays record the
    sharding's devices; traced values are returned as they are (didax's types carry no
    sharding)."""
    leaves, tree = tree_flatten(xs)
    if isinstance(out_shardings, Sharding) or not isinstance(out_shardings, (list, tuple,
                                                                             dict)):
        shardings = [out_shardings] * len(leaves)
    else:
        shardings, s_tree = tree_flatten(out_shardings,
                                         is_leaf=lambda s: isinstance(s, Sharding))
        if len(shardings) != len(leaves):
            raise ValueError(f"reshard: {len(leaves)} arrays but {len(shardings)} shardings "
                             f"({s_tree} for {tree})")
    out = []
    for x, s in zip(leaves, shardings):
        s = _as_sharding(s)
        if isinstance(x, core.Tracer):
            out.append(x)
        else:
            out.append(device.device_put(x, s))
    return tree_unflatten(tree, out)


def _as_sharding(s):
    if isinstance(s, Sharding):
        return s
    if isinstance(s, PartitionSpec):
        mesh = get_mesh()
        if mesh.empty:
            raise ValueError(f"reshard: the PartitionSpec {s} needs a mesh; set one with "
                             "didax.set_mesh(mesh) or pass a NamedSharding")
        return NamedSharding(mesh, s)
    raise TypeError(f"reshard: expected a Sharding or PartitionSpec, got {s!r}")


def _axes_decorator(name: str):
    def decorator(f=None, /, *, axes=None, **shardings):
        if f is None:
            return functools.partial(decorator, axes=axes, **shardings)
        if not callable(f):
            raise TypeError(f"{name}: expected a function, got {f!r}")

        @functools.wraps(f)
        def run(*args, **kwargs):
            return f(*args, **kwargs)
        return run
    decorator.__name__ = name
    decorator.__doc__ = (f"`f` with the mesh `axes` in {name.split('_')[0]} sharding mode. "
                         "didax's types carry no sharding, so `f` runs as it is.")
    return decorator


auto_axes = _axes_decorator("auto_axes")
explicit_axes = _axes_decorator("explicit_axes")


def smap(f=None, /, *, in_axes=None, out_axes, axis_name):
    """Not implemented: map `f` over one mesh axis with `didax.shard_map` (its `in_specs`
    and `out_specs` naming `axis_name` at the mapped positions) instead."""
    raise NotImplementedError("smap is not implemented in didax: use didax.shard_map(f, "
                              "mesh=..., in_specs=P(axis_name), out_specs=P(axis_name)) "
                              "instead")
