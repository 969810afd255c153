"""Meshes of devices and the shardings that name them: `Mesh`, `AbstractMesh` (a mesh's axes
without devices), `AxisType`, `PartitionSpec`, `NamedSharding`, `SingleDeviceSharding`, and
`make_mesh`.

Every device shares the host's memory, so a sharding only describes how `shard_map` splits
and joins arrays (and what `device_put` records); nothing is moved.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from didax._src import core
from didax._src.parallel import device


class PartitionSpec:
    """For each dimension of an array, the mesh axis (or tuple of axes) it is split over, or
    None; dimensions past the end are not split."""

    __slots__ = ("_parts",)

    def __init__(self, *parts):
        self._parts = tuple(tuple(p) if isinstance(p, list) else p for p in parts)

    def __iter__(self):
        return iter(self._parts)

    def __len__(self):
        return len(self._parts)

    def __getitem__(self, i):
        return self._parts[i]

    def __eq__(self, other):
        if isinstance(other, PartitionSpec):
            return self._parts == other._parts
        return isinstance(other, tuple) and self._parts == other

    def __hash__(self):
        return hash(self._parts)

    def __repr__(self):
        inner = ", ".join(repr(p) for p in self._parts)
        return f"P({inner}{',' if len(self._parts) == 1 else ''})"


P = PartitionSpec

_EMPTY_SPEC = PartitionSpec()  # NamedSharding's default spec (immutable): nothing split


class AxisType(enum.Enum):
    """How a mesh axis is sharded: by the compiler (Auto), as types say (Explicit), or by
    the program (Manual, inside shard_map). didax records it; every device shares memory."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


class AbstractMesh:
    """A mesh's axis names and sizes without its devices: what tracing needs to know."""

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"AbstractMesh: {len(self.axis_sizes)} axis sizes "
                             f"{self.axis_sizes} for {len(self.axis_names)} axis names "
                             f"{self.axis_names}")
        if axis_types is None:
            axis_types = (AxisType.Auto,) * len(self.axis_names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,) * len(self.axis_names)
        self.axis_types = tuple(axis_types)

    @property
    def shape(self) -> dict:
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def __eq__(self, other):
        return (isinstance(other, AbstractMesh) and self.axis_sizes == other.axis_sizes
                and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types)

    def __hash__(self):
        return hash((self.axis_sizes, self.axis_names, self.axis_types))

    def __repr__(self):
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"AbstractMesh({axes}{', ' if axes else ''}axis_types={self.axis_types})"


class Mesh:
    """Devices laid out in an array whose axes have names."""

    def __init__(self, devices, axis_names, axis_types=None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        devs = np.array(devices, dtype=object)
        if devs.ndim == 0:
            devs = devs.reshape(1)
        axis_names = tuple(axis_names)
        if devs.ndim != len(axis_names):
            raise ValueError(f"Mesh: the device array has {devs.ndim} dimension(s) (shape "
                             f"{devs.shape}) but {len(axis_names)} axis names {axis_names} "
                             "were given")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh: axis names must be unique, got {axis_names}")
        if axis_types is None:  # (as JAX's Mesh; make_mesh's are Explicit)
            axis_types = (AxisType.Auto,) * len(axis_names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,) * len(axis_names)
        self.devices = devs
        self.axis_names = axis_names
        self.axis_types = tuple(axis_types)

    @property
    def shape(self) -> dict:
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple:
        return self.devices.shape

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.devices.size == 0 or not self.axis_names

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return AbstractMesh(self.devices.shape, self.axis_names, self.axis_types)

    @property
    def device_set(self) -> set:
        return set(self.devices.flat)

    @property
    def local_devices(self) -> list:
        p = device.process_index()
        return [d for d in self.devices.flat if d.process_index == p]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types
                and self.devices.shape == other.devices.shape
                and all(a == b for a, b in zip(self.devices.flat, other.devices.flat)))

    def __hash__(self):
        return hash((self.axis_names, tuple(d.id for d in self.devices.flat)))

    def __repr__(self):
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={self.axis_types})")

    def __str__(self):
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({axes}, axis_types={self.axis_types})"


class Sharding:
    """How an array is laid out over devices."""

    device_set: set = set()

    @property
    def is_fully_addressable(self) -> bool:
        return all(d.process_index == device.process_index() for d in self.device_set)


class SingleDeviceSharding(Sharding):
    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self.memory_kind = memory_kind

    @property
    def device_set(self) -> set:
        return {self._device}

    def shard_shape(self, global_shape) -> tuple:
        return tuple(global_shape)

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(self._device)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r})"


class NamedSharding(Sharding):
    """An array split over a mesh as a PartitionSpec says."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec = _EMPTY_SPEC, *, memory_kind=None):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: expected a Mesh, got {type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec) if isinstance(spec, tuple) else spec
        for part in spec:
            for name in (part if isinstance(part, tuple) else (part,)):
                if name is not None and name not in mesh.axis_names:
                    raise ValueError(f"NamedSharding: {spec} names the axis {name!r}, which "
                                     f"is not one of the mesh's {mesh.axis_names}")
        self.mesh = mesh
        self.spec = spec
        self.memory_kind = memory_kind

    @property
    def device_set(self) -> set:
        return self.mesh.device_set

    def shard_shape(self, global_shape) -> tuple:
        shape = list(global_shape)
        for d, part in enumerate(self.spec):
            names = part if isinstance(part, tuple) else (part,)
            n = math.prod(self.mesh.shape[a] for a in names if a is not None)
            if shape[d] % n:
                raise ValueError(f"{self} implies that array axis {d} is partitioned {n} "
                                 f"times, but the dimension size is {shape[d]} (full shape: "
                                 f"{tuple(global_shape)})")
            shape[d] //= n
        return tuple(shape)

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh
                and other.spec == self.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        return (f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, "
                f"memory_kind={self.memory_kind or 'device'})")


def device_mesh(mesh_shape, devices=None, what: str = "make_mesh") -> np.ndarray:
    """`devices` (all by default, in id order) as an array of `mesh_shape`: every device
    shares the host's memory, so no order is closer than another."""
    devs = list(device.devices() if devices is None else devices)
    mesh_shape = tuple(int(s) for s in mesh_shape)
    if math.prod(mesh_shape) != len(devs):
        raise ValueError(f"{what}: the mesh shape {mesh_shape} needs "
                         f"{math.prod(mesh_shape)} devices, but {len(devs)} are available "
                         f"({devs}); set DIDAX_NUM_CPU_DEVICES for more")
    arr = np.empty(len(devs), dtype=object)
    arr[:] = devs
    return arr.reshape(mesh_shape)


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
    """A mesh of `axis_shapes` over `devices` (all devices by default), in id order; its
    axes Explicit unless `axis_types` says otherwise, as in JAX."""
    if axis_types is None:
        axis_types = AxisType.Explicit
    return Mesh(device_mesh(axis_shapes, devices), axis_names, axis_types)


def _sharding(self):
    placement = getattr(self, "_placement", None)
    if placement is not None and type(placement) is not tuple:
        return placement  # (the sharding device_put or with_sharding_constraint gave it)
    devs = device.array_devices(self)
    return SingleDeviceSharding(devs[0]) if len(devs) == 1 else NamedSharding(
        Mesh(np.array(devs, dtype=object), ("devices",)), PartitionSpec("devices"))


core.Array.sharding = property(_sharding)  # (installed here, with the shardings)
