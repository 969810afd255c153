"""CPU devices and processes: the placement functions JAX programs call, and `typeof`.

A device is a name for a worker that runs one shard of a `pmap`; all of them share the
host's memory, so placing an array on one only records where it is said to live. This
process has `didax_num_cpu_devices` of them (the `DIDAX_NUM_CPU_DEVICES` environment
variable, as XLA's `--xla_force_host_platform_device_count`; 1 by default). After
`didax.distributed.initialize()`, each of `process_count()` processes has as many, and the
global device ids run process by process.
"""
from __future__ import annotations

import numpy as np

from didax._src import caches, core
from didax._src.config import config
from didax._src.lax import device_put as device_put_rules
from didax._src.lax.device_put import copy_semantics_of, device_put_p
from didax._src.transforms.jit import activate_placement
from didax._src.tree_util import tree_flatten, tree_map, tree_unflatten


def _device_count(value) -> int:
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
        raise ValueError(f"didax_num_cpu_devices (DIDAX_NUM_CPU_DEVICES) must be a positive "
                         f"integer, got {value!r}")
    return int(text)


config.define("didax_num_cpu_devices", 1, _device_count)


class CpuDevice:
    """One CPU device: `id` is global (over processes), `process_index` its process's."""

    platform = "cpu"
    device_kind = "cpu"
    client = None

    def __init__(self, id: int, process_index: int = 0, local_hardware_id: int = 0):
        self.id = id
        self.process_index = process_index
        self.local_hardware_id = local_hardware_id

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __str__(self):
        return f"cpu:{self.id}"

    def __eq__(self, other):
        return (type(other) is CpuDevice and other.id == self.id
                and other.process_index == self.process_index)

    def __hash__(self):
        return hash(("cpu", self.id))


Device = CpuDevice


class _Processes:
    """This process's place among the processes of a distributed run, and the link
    (`didax.distributed`) through which its collectives reach the others."""

    def __init__(self):
        self.index = 0
        self.count = 1
        self.link = None


_processes = _Processes()
_cache = caches.memo("device.lists")  # (local count, process, process count) -> devices


def set_processes(index: int, count: int, link) -> None:
    """Called by `didax.distributed` once the processes know each other (or are parted)."""
    _processes.index, _processes.count, _processes.link = index, count, link


def process_link():
    """The link to the other processes, or None in a single-process run."""
    return _processes.link


def process_index(backend=None) -> int:
    """This process's index among the processes of a distributed run (0 when alone)."""
    return _processes.index


def process_count(backend=None) -> int:
    """The number of processes in a distributed run (1 when alone)."""
    return _processes.count


def local_device_count(backend=None) -> int:
    """The devices of this process: `didax_num_cpu_devices`."""
    return config.read("didax_num_cpu_devices")


def devices(backend=None) -> list:
    """Every device of every process, by id."""
    _check_backend(backend)
    local = local_device_count()
    key = (local, _processes.index, _processes.count)
    found = _cache.get(key)
    if found is None:
        found = caches.add(_cache, key, [CpuDevice(p * local + k, p, k)
                                         for p in range(_processes.count)
                                         for k in range(local)])
    return list(found)


def local_devices(process_index: int | None = None, backend=None, host_id=None) -> list:
    """The devices of one process (this one by default)."""
    p = _processes.index if process_index is None else process_index
    if host_id is not None:
        p = host_id
    if not 0 <= p < _processes.count:
        raise ValueError(f"local_devices: process_index {p} is out of range for "
                         f"{_processes.count} process(es)")
    return [d for d in devices(backend) if d.process_index == p]


def device_count(backend=None) -> int:
    """The number of devices over all processes."""
    return local_device_count() * _processes.count


def _device_or_platform(value):
    if value is None:
        return None
    if isinstance(value, str):
        if value != "cpu":
            raise RuntimeError(f"Unknown backend {value!r}: didax has only the 'cpu' backend")
        return value
    if type(value) is CpuDevice:
        if value not in devices():
            raise ValueError(f"jax.default_device: {value!r} is not one of the devices "
                             f"{devices()}")
        return value
    raise ValueError("jax.default_device must be passed either a Device object (e.g. "
                     f"`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                     f"'gpu', got: {value!r}")


# Set with `didax.default_device` (its context manager is in config_states.py).
config.define("jax_default_device", None, _device_or_platform)


def default_device() -> CpuDevice:
    chosen = config.read("jax_default_device")  # (didax.default_device sets it)
    return chosen if type(chosen) is CpuDevice else local_devices()[0]


def _check_backend(backend):
    if backend is not None and str(backend) != "cpu":
        raise RuntimeError(f"Unknown backend {backend!r}: didax has only the 'cpu' backend")


def _check_device(device) -> None:
    if type(device) is not CpuDevice:
        raise TypeError(f"device_put: expected a device (an element of didax.devices()) or a "
                        f"sharding, got {device!r} of type {type(device).__name__}")
    if device not in devices():
        raise ValueError(f"device_put: {device!r} is not one of the {device_count()} devices "
                         f"{devices()}; set DIDAX_NUM_CPU_DEVICES (or the didax_num_cpu_devices "
                         "option) for more")


def placed(value: core.Array, where) -> core.Array:
    """`value` said to live on `where`: devices (a tuple), or a sharding (what `.sharding`
    reports then, its devices those `devices()` gives); the buffer is shared."""
    out = core.Array.from_numpy(value._value, value.aval)
    if isinstance(where, (tuple, list)):
        out._placement = tuple(where)
    else:
        out._placement = where
        if len(where.device_set) > 1:  # (jit calls place their results from now on)
            activate_placement()
    return out


def _sharding_devices(sharding) -> tuple:
    return tuple(sorted(sharding.device_set, key=lambda d: d.id))


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Converts the leaves of `x` to didax arrays placed on `device` (a device or a
    sharding: every device shares the host's memory, so nothing is copied). Where a leaf is
    traced, all the leaves go through one `device_put` equation (lax/device_put.py), as in
    JAX."""
    semantics = copy_semantics_of(donate, may_alias)
    if device is not None and getattr(device, "device_set", None) is None:
        _check_device(device)  # (a sharding is taken as it is)
    leaves, tree = tree_flatten(x)
    if any(isinstance(v, core.Tracer) for v in leaves):
        n = len(leaves)
        return tree_unflatten(tree, device_put_p.bind(
            *leaves, devices=(device,) * n, srcs=(src,) * n, copy_semantics=(semantics,) * n))
    values = map(core.asarray_value, leaves)
    return tree_unflatten(tree, [_placed_by_put(v, device) if type(v) is core.Array else v
                                 for v in values])


def device_get(x):
    """Converts didax arrays in a pytree to NumPy arrays."""
    return tree_map(lambda v: np.asarray(v) if isinstance(v, core.ArrayBase) else v, x)


def block_until_ready(x):
    """Computation is synchronous here; returns `x`."""
    return x


def typeof(x):
    """The abstract value (shape, dtype, weak type) of `x`."""
    return core.get_aval(x)


def array_devices(x: core.Array) -> tuple:
    """The devices `x` lives on: where `device_put` or a `pmap` put it, else the default."""
    try:
        placement = x._placement
    except AttributeError:
        return (default_device(),)
    return placement if type(placement) is tuple else _sharding_devices(placement)


def _devices_method(self):
    return set(array_devices(self))


def _device_property(self):
    devs = array_devices(self)
    if len(devs) != 1:
        raise ValueError("Length of devices is greater than 1. Please use `.devices()`.")
    return devs[0]


# An Array's placement is a device matter, so its methods are installed from here.
core.Array.devices = _devices_method
core.Array.device = property(_device_property)


def _placed_by_put(x: core.Array, device) -> core.Array:
    """`x` put on `device` (a device, a sharding or None): what `device_put` of a concrete
    value records, called or bound (lax/device_put.py)."""
    if type(device) is CpuDevice:
        return placed(x, (device,))
    if getattr(device, "device_set", None) is not None:  # a sharding
        return placed(x, device)
    return x  # (None, or a memory space: one memory here)


device_put_rules.place = _placed_by_put
