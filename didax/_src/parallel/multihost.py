"""Collectives among the processes of a distributed run, outside any mapped function
(`jax.experimental.multihost_utils`), and the old host-named process queries.

Alone, a process is every process: gathering stacks its own values, broadcasting returns
them. After `didax.distributed.initialize()` the values travel over the MPI link
(`distributed.MpiLink`), which first checks that every process passed the same shapes.

didax holds an array of a distributed run as each process's own part of it (as `pmap`
and `shard_map` take and return them), so converting between host-local and global arrays
changes nothing but the type of the leaves.
"""
from __future__ import annotations

import contextlib
import warnings

import numpy as np

from didax._src import core
from didax._src.parallel import device
from didax._src.parallel.sharding import Mesh
from didax._src.tree_util import tree_flatten, tree_map


def _host_value(x) -> np.ndarray:
    return np.asarray(x._value if type(x) is core.Array else x)


def _gathered(x, what: str) -> list[np.ndarray]:
    """Each process's value of `x`, by process index."""
    value = _host_value(x)
    link = device.process_link()
    if link is None:
        return [value]
    return link.allgather(value, what)


def process_allgather(in_tree, tiled: bool = False):
    """Every process's value of each leaf (NumPy arrays): stacked along a new leading axis,
    or with `tiled`, concatenated along the first axis (0-d values are stacked)."""
    def gather(x):
        parts = _gathered(x, "process_allgather")
        if tiled and parts[0].ndim:
            return np.concatenate(parts)
        if tiled and len(parts) == 1:
            return parts[0]
        return np.stack(parts)
    return tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree, is_source: bool | None = None):
    """The source process's value of each leaf, in every process (NumPy arrays). The source
    is process 0 unless `is_source` says which process is (exactly one must be)."""
    link = device.process_link()
    if is_source is None:
        is_source = device.process_index() == 0
    if link is None:
        if not is_source:
            raise ValueError("broadcast_one_to_all: the only process is not the source")
        return tree_map(_host_value, in_tree)
    sources = [p for p, s in enumerate(link.comm.allgather(bool(is_source))) if s]
    if len(sources) != 1:
        raise ValueError(f"broadcast_one_to_all: exactly one process must be the source, "
                         f"but processes {sources} are")
    return tree_map(lambda x: _gathered(x, "broadcast_one_to_all")[sources[0]], in_tree)


def sync_global_devices(name: str) -> None:
    """Waits until every process has reached the barrier called `name`; raises
    AssertionError if they reached barriers of different names."""
    link = device.process_link()
    if link is None:
        return
    names = link.comm.allgather(str(name))
    if any(n != names[0] for n in names):
        raise AssertionError(f"sync_global_devices: the processes reached different "
                             f"barriers: {names}")


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Raises AssertionError unless every process passed the same pytree of values."""
    leaves, treedef = tree_flatten(in_tree)
    structures = ([str(treedef)] if device.process_link() is None
                  else device.process_link().comm.allgather(str(treedef)))
    if any(s != structures[0] for s in structures):
        raise AssertionError(f"{fail_message} The processes passed different pytree "
                             f"structures: {structures}")
    for i, leaf in enumerate(leaves):
        parts = _gathered(leaf, "assert_equal")
        if not all(np.array_equal(parts[0], p) for p in parts[1:]):
            raise AssertionError(f"{fail_message} Expected: {parts[0]}; got: {parts[1:]} "
                                 f"(leaf {i} differs between processes).")


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """The global arrays whose process-local parts are `local_inputs`: didax holds an array
    of a distributed run as its local part already, so these are the inputs as arrays."""
    _check_mesh(global_mesh, "host_local_array_to_global_array")
    return tree_map(core.asarray_value, local_inputs)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """The process-local parts of `global_inputs` (the inputs themselves: see
    `host_local_array_to_global_array`)."""
    _check_mesh(global_mesh, "global_array_to_host_local_array")
    return tree_map(core.asarray_value, global_inputs)


def _check_mesh(mesh, name):
    if not isinstance(mesh, Mesh):
        raise TypeError(f"{name}: expected a Mesh, got {type(mesh).__name__}")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether the processes agreed to stop at `step_id` after a preemption notice: never,
    since didax receives no preemption notices."""
    return False


@contextlib.contextmanager
def live_devices(devices):
    """Runs a block on the live devices among `devices`: all of them (didax's processes
    do not fail independently). Needs a distributed run, as in JAX."""
    if device.process_link() is None:
        raise RuntimeError("Distributed JAX not initialized.")
    yield list(devices)


# ---- host_* names (JAX renamed hosts to processes) -----------------------------------------


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"jax.{old} has been renamed to jax.{new}. This alias will eventually be "
                  "removed; please update your code.", UserWarning, stacklevel=3)


def host_count(backend=None) -> int:
    """`process_count()` under its old name (warns)."""
    _renamed("host_count", "process_count")
    return device.process_count(backend)


def host_id(backend=None) -> int:
    """`process_index()` under its old name (warns)."""
    _renamed("host_id", "process_index")
    return device.process_index(backend)


def host_ids(backend=None) -> list[int]:
    """`process_indices()` under its old name (warns)."""
    _renamed("host_ids", "process_indices")
    return process_indices(backend)


def process_indices(backend=None) -> list[int]:
    """The indices of every process of the run."""
    return list(range(device.process_count(backend)))


def effects_barrier() -> None:
    """Waits for side effects of earlier computations: didax runs them synchronously, so
    they are done already."""


def copy_to_host_async(x):
    """Starts copying the arrays in `x` to the host: didax's arrays live there, so there is
    nothing to copy. Returns `x`."""
    return x


__all__ = ["assert_equal", "broadcast_one_to_all", "global_array_to_host_local_array",
           "host_local_array_to_global_array", "live_devices", "process_allgather",
           "reached_preemption_sync_point", "sync_global_devices"]
