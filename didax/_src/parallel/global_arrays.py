"""Building an array from per-device pieces (`make_array_from_callback` and its kin), the
`Shard` a piece is, and `live_arrays`.

Every device shares the host's memory, so the pieces are assembled into one NumPy buffer,
which the array holds, said to live on the sharding's devices (`x.devices()`); its
`.sharding` then describes those devices, not necessarily the sharding it was built for.
"""
from __future__ import annotations

import gc
import itertools
import math

import numpy as np

from didax._src import core, dtypes
from didax._src.parallel import device
from didax._src.parallel.sharding import NamedSharding, Sharding, SingleDeviceSharding


def _sharding_devices(sharding) -> list:
    """The sharding's devices in JAX's order: the mesh's, row-major."""
    if isinstance(sharding, NamedSharding):
        return list(sharding.mesh.devices.flat)
    if isinstance(sharding, SingleDeviceSharding):
        return [sharding._device]
    raise TypeError(f"expected a NamedSharding or SingleDeviceSharding, got "
                    f"{type(sharding).__name__}")


def devices_indices_map(sharding, shape) -> dict:
    """Each device of `sharding` -> the index (a tuple of slices) of its piece of an array of
    `shape`."""
    shape = tuple(shape)
    full = (slice(None),) * len(shape)
    if isinstance(sharding, SingleDeviceSharding):
        return {sharding._device: full}
    _sharding_devices(sharding)  # (checks the type)
    mesh, spec = sharding.mesh, sharding.spec
    if len(spec) > len(shape):
        raise ValueError(f"{sharding} has {len(spec)} entries in its PartitionSpec, more "
                         f"than the {len(shape)} dimensions of shape {shape}")
    piece = sharding.shard_shape(shape)
    names = list(mesh.axis_names)
    out = {}
    for position in itertools.product(*(range(n) for n in mesh.devices.shape)):
        where = dict(zip(names, position))
        index = list(full)
        for d, part in enumerate(spec):
            axes = [a for a in (part if isinstance(part, tuple) else (part,)) if a is not None]
            if math.prod(mesh.shape[a] for a in axes) == 1:
                continue  # (not split: the whole dimension, as JAX gives it)
            block = 0
            for a in axes:  # the first axis named varies slowest
                block = block * mesh.shape[a] + where[a]
            index[d] = slice(block * piece[d], (block + 1) * piece[d])
        out[mesh.devices[position]] = tuple(index)
    return out


def _global_array(shape, sharding, piece_of, dtype, what: str) -> core.Array:
    if not isinstance(sharding, Sharding):
        raise TypeError(f"{what}: expected a sharding, got {type(sharding).__name__}")
    shape = tuple(int(s) for s in shape)
    indices = devices_indices_map(sharding, shape)
    pieces = {d: piece_of(k, d, idx) for k, (d, idx) in enumerate(indices.items())}
    if dtype is None:
        dtype = next(iter(pieces.values())).dtype if pieces else np.float32
    out = np.empty(shape, dtypes.canonicalize_dtype(dtype))
    for d, idx in indices.items():
        want = np.empty(shape)[idx].shape
        if pieces[d].shape != want:
            raise ValueError(f"{what}: the piece for {d} (index {idx}) has shape "
                             f"{pieces[d].shape}, but {sharding} puts a piece of shape {want} "
                             f"there for an array of shape {shape}")
        out[idx] = pieces[d]
    return device.placed(core.Array(out), tuple(sorted(indices, key=lambda d: d.id)))


def _host(x) -> np.ndarray:
    return np.asarray(x._value if type(x) is core.Array else x)


def make_array_from_callback(shape, sharding, data_callback, dtype=None) -> core.Array:
    """The array of `shape` whose piece on each device of `sharding` is
    `data_callback(index)`, `index` being the tuple of slices that piece covers."""
    if not callable(data_callback):
        raise TypeError(f"make_array_from_callback: data_callback must be callable, got "
                        f"{data_callback!r}")
    return _global_array(shape, sharding, lambda k, d, idx: _host(data_callback(idx)), dtype,
                         "make_array_from_callback")


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array of `shape` assembled from one array per device of `sharding` (in the order
    of the sharding's devices: the mesh's, row-major)."""
    arrays = list(arrays)
    n = len(_sharding_devices(sharding))
    if len(arrays) != n:
        raise ValueError(f"make_array_from_single_device_arrays: {sharding} has {n} devices, "
                         f"but {len(arrays)} arrays were given (one per device)")
    return _global_array(shape, sharding, lambda k, d, idx: _host(arrays[k]), dtype,
                         "make_array_from_single_device_arrays")


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The array whose part on this process's devices is `local_data`. Alone, a process's
    data is the whole array; in a distributed run didax holds an array as each process's
    part (see multihost.py), so this is `local_data` placed on the sharding's devices."""
    local = _host(local_data)
    if global_shape is not None and device.process_count() == 1 \
            and tuple(global_shape) != local.shape:
        raise ValueError(f"make_array_from_process_local_data: global_shape {global_shape} "
                         f"differs from the local data's shape {local.shape}, but this "
                         "process is the only one")
    return make_array_from_callback(local.shape, sharding, lambda idx: local[idx], local.dtype)


class Shard:
    """One device's piece of an array: `device`, `index` (the slices it covers),
    `replica_id` (which copy, when the sharding replicates the piece) and `data`."""

    def __init__(self, device, sharding, global_shape, data=None):
        self.device = device
        self._sharding = sharding
        self._global_shape = tuple(global_shape)
        self.data = data

    @property
    def index(self) -> tuple:
        return devices_indices_map(self._sharding, self._global_shape)[self.device]

    @property
    def replica_id(self) -> int:
        indices = devices_indices_map(self._sharding, self._global_shape)
        mine = _slices_key(indices[self.device])
        earlier = [d for d in _sharding_devices(self._sharding) if d != self.device
                   and _slices_key(indices[d]) == mine]
        order = _sharding_devices(self._sharding)
        return sum(order.index(d) < order.index(self.device) for d in earlier)

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


def _slices_key(index) -> tuple:
    return tuple((s.start, s.stop, s.step) for s in index)


def _addressable_shards(self) -> list:
    """This process's pieces of the array, one per device of its sharding (each piece a
    view of the one buffer)."""
    sharding = self.sharding
    indices = devices_indices_map(sharding, self.shape)
    here = set(device.local_devices())
    value = np.asarray(self._value)
    return [Shard(d, sharding, self.shape, core.asarray_value(value[indices[d]]))
            for d in _sharding_devices(sharding) if d in here]


core.Array.addressable_shards = property(_addressable_shards)
core.Array.global_shards = property(_addressable_shards)  # (one process: all of them)


def live_arrays(platform=None) -> list:
    """Every didax array alive in this process (found by the garbage collector, so it takes
    time in proportion to the objects alive)."""
    device._check_backend(platform)
    return [o for o in gc.get_objects() if type(o) is core.Array]


__all__ = ["Shard", "devices_indices_map", "live_arrays", "make_array_from_callback",
           "make_array_from_process_local_data", "make_array_from_single_device_arrays"]
