"""Running the shards of a mapped function side by side, one worker thread per device, and
the group through which their collectives exchange values.

Why threads and not processes: the shards' work is NumPy's, which releases the GIL in BLAS
products and in ufuncs over large arrays, so threads run the compute of a data-parallel step
on several cores (measured 1.5-2x for an MLP step on 2 quiet cores; processes with shared
memory did no better on a loaded machine: see benchmarks/README.md). Threads share the
traced jaxpr, its compiled code, its constants and the arguments without copying or
pickling anything, and a collective is an exchange of references under a barrier;
processes would need every jaxpr and argument shipped to them. Across machines, processes
are MPI's (`didax.distributed`), and the group forwards the exchange to them. Shards run
jit's tiers, the NumPy tier and then native code, whose long loops and products release the
GIL too; while n shards run, each one's native loops use 1/n of the native threads, and
each one's BLAS products 1/n of OpenBLAS's (compiler/native/blas_threads.py).

Each device has one long-lived worker thread; the caller's thread runs shard 0. One mapped
function runs at a time in a process (a lock), so shards of two calls never wait on each
other.
"""
from __future__ import annotations

import functools
import queue
import threading

import numpy as np

from didax._src import axis_env, profiler
from didax._src.compiler.native import blas_threads
from didax._src.compiler.native import threads as native_threads

_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


class ShardAborted(RuntimeError):
    """A shard stopped waiting for the others because one of them failed."""


class ShardGroup:
    """The shards of one call of a mapped function in this process (`local_size` of them,
    at global indices offset..offset+local_size-1 of `size`), exchanging values: every shard
    deposits its value, the first combines them (reaching the other processes through
    `link`, if any), and every shard reads the combination. Two barriers per exchange:
    a shard writes its next deposit only after it has read the last combination."""

    def __init__(self, local_size: int, size: int, offset: int, link=None):
        self.local_size = local_size
        self.size = size
        self.offset = offset
        self.link = link
        self._barrier = threading.Barrier(local_size) if local_size > 1 else None
        self._slots = [None] * local_size
        self._shared = None

    def abort(self):
        if self._barrier is not None:
            self._barrier.abort()

    def _wait(self):
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise ShardAborted("another shard failed") from None

    def _exchange(self, index: int, value, combine, what: str):
        if profiler.recording:  # a trace runs: this shard's collective is a span on its thread
            with profiler.TraceAnnotation(what, shard=index):
                return self._exchange_now(index, value, combine)
        return self._exchange_now(index, value, combine)

    def _exchange_now(self, index: int, value, combine):
        k = index - self.offset
        if self._barrier is None:
            return combine([value])
        self._slots[k] = value
        self._wait()
        if k == 0:
            try:
                self._shared = combine(list(self._slots))
            except BaseException as e:  # every shard raises it, rather than wait forever
                self._shared = _Failed(e)
        self._wait()
        out = self._shared
        if type(out) is _Failed:
            raise out.error
        return out

    def gather_here(self, index: int, x, what: str) -> list:
        """Every shard's `x` in this process, in order (read-only: copy before keeping)."""
        return self._exchange(index, x, list, what)

    def _sig(self, what: str) -> str:
        return f"{what} over {self.size} devices"

    # the operations collectives are made of; each returns a value of the caller's own

    def allreduce(self, index: int, x, op: str, what: str):
        """The reduction (`op`: sum, max or min) of every shard's `x`."""
        def combine(vals):
            local = functools.reduce(_REDUCE[op], vals)
            if self.link is not None:
                local = self.link.allreduce(np.asarray(local), op, self._sig(what))
            return local

        return np.array(self._exchange(index, x, combine, what), copy=True)

    def allgather(self, index: int, x, what: str) -> list:
        """Every shard's `x`, in order of global index (read-only: copy before keeping)."""
        def combine(vals):
            if self.link is not None:
                parts = self.link.allgather(np.stack(vals), self._sig(what))
                return [v for part in parts for v in part]
            return vals

        return self._exchange(index, x, combine, what)

    def permute(self, index: int, x, perm, what: str):
        """The `x` of the shard that sends to this one under `perm` ((source, destination)
        pairs of global indices), or zeros if none does."""
        if self.link is not None:  # (the link returns what each local shard receives)
            def combine(vals):
                return self.link.permute(np.stack(vals), self.offset, perm, self._sig(what))

            got = self._exchange(index, x, combine, what)[index - self.offset]
        else:
            vals = self._exchange(index, x, list, what)
            source = next((src for src, dst in perm if dst == index), None)
            got = None if source is None else vals[source - self.offset]
        return np.zeros_like(x) if got is None else np.array(got, copy=True)


class MeshView:
    """The shards of a mesh (one per device, numbered row-major over the mesh's axes) seen
    from one of them along some of its axes: a collective over those axes acts among the
    shards that share this one's coordinates on the others, indexed row-major over the
    axes in the collective's order. Every shard of the mesh takes part in each exchange
    (they run one program), through the group of them all; an exchange among shards of
    this process only stays in it."""

    def __init__(self, group: ShardGroup, names: tuple, shape: tuple, flat: int, axes: tuple):
        self.group, self.names, self.shape, self.flat, self.axes = group, names, shape, flat, axes
        self.members = mesh_members(shape, flat, axes)
        self.index = self.members.index(flat)
        lo, n = group.offset, group.local_size
        self.local = all(lo <= m < lo + n for m in self.members)
        self._views: dict = {}

    def over(self, names) -> axis_env.MappedAxis:
        """The axis of the mesh axes `names` together (the first major), seen from here."""
        names = tuple(names)
        view = self._views.get(names)
        if view is None:
            view = self._views[names] = MeshView(self.group, self.names, self.shape, self.flat,
                                                 tuple(self.names.index(n) for n in names))
        return axis_env.MappedAxis(names[0] if len(names) == 1 else names, len(view.members),
                                   view.index, view)

    def _values(self, x, what: str) -> list:
        if self.local:
            vals = self.group.gather_here(self.flat, x, what)
            return [vals[m - self.group.offset] for m in self.members]
        vals = self.group.allgather(self.flat, x, what)
        return [vals[m] for m in self.members]

    def allreduce(self, index: int, x, op: str, what: str):
        """The reduction of the group's values in the order of its shards (across processes
        too: so one process and several give the same bits)."""
        if not self.local:
            return np.array(functools.reduce(_REDUCE[op], self._values(x, what)), copy=True)
        group, lo = self.group, self.group.offset
        groups = _partition(self.shape, self.axes, lo, group.local_size)

        def combine(vals):  # (once, by the first shard: each group's reduction)
            return {g[0]: functools.reduce(_REDUCE[op], [vals[m - lo] for m in g])
                    for g in groups}

        return np.array(group._exchange(self.flat, x, combine, what)[self.members[0]],
                        copy=True)

    def allgather(self, index: int, x, what: str) -> list:
        return self._values(x, what)

    def permute(self, index: int, x, perm, what: str):
        vals = self._values(x, what)
        source = next((src for src, dst in perm if dst == self.index), None)
        return np.zeros_like(x) if source is None else np.array(vals[source], copy=True)


@functools.lru_cache(maxsize=4096)
def mesh_members(shape: tuple, flat: int, axes: tuple) -> tuple:
    """The shards of a mesh of `shape` (numbered row-major) that differ from shard `flat`
    only on the axes at positions `axes`, row-major over them."""
    coords = np.unravel_index(flat, shape)
    members = []
    for sub in np.ndindex(*[shape[a] for a in axes]):
        c = list(coords)
        for a, i in zip(axes, sub):
            c[a] = i
        members.append(int(np.ravel_multi_index(c, shape)))
    return tuple(members)


@functools.lru_cache(maxsize=4096)
def _partition(shape: tuple, axes: tuple, offset: int, count: int) -> tuple:
    """The groups of `mesh_members` that the shards offset..offset+count-1 fall into."""
    return tuple(sorted({mesh_members(shape, f, axes) for f in range(offset, offset + count)}))


class _Worker:
    """A device's thread, running one task at a time."""

    def __init__(self, name: str):
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self):
        while True:
            task, done = self._tasks.get()
            try:
                done.append(("ok", task()))
            except BaseException as e:
                done.append(("error", e))
            done[0].set()

    def submit(self, task):
        done = [threading.Event()]
        self._tasks.put((task, done))
        return done


_workers: dict = {}  # device number -> its worker thread (made under _run_lock)
_run_lock = threading.Lock()  # one mapped call's shards at a time


def _worker(k: int) -> _Worker:
    w = _workers.get(k)
    if w is None:
        w = _workers[k] = _Worker(f"didax-device-{k}")
    return w


def run_shards(run, shard_args: list, axis_name, size: int, offset: int, link=None,
               devices=None, mesh_axes=None) -> list:
    """`run(*args)` for each list of arguments in `shard_args`, shard k on the worker of local
    device k (or devices[k]; shard 0 on this thread), with `axis_name` bound to index
    offset + k of `size`; or, given `mesh_axes` ((name, size) pairs: a mesh laid over the
    shards row-major), each of the mesh's axes bound to the shard's coordinate on it.
    Returns each shard's outputs; an error in any shard is raised here."""
    if axis_env.running_shard():  # (pmap_call runs a nested pmap as a vmap in the shard)
        raise RuntimeError("shards cannot start shards of their own")
    n = len(shard_args)
    group = ShardGroup(n, size, offset, link)

    def task(k):
        def go():
            if mesh_axes is None:
                bound = [axis_env.MappedAxis(axis_name, size, offset + k, group)]
            else:
                names = tuple(a for a, _ in mesh_axes)
                view = MeshView(group, names, tuple(s for _, s in mesh_axes), offset + k, ())
                bound = [view.over((a,)) for a in names]
            try:
                with axis_env.binding(*bound):
                    return run(*shard_args[k])
            except BaseException:
                group.abort()
                raise
        return go

    with _run_lock, native_threads.shared_by(n), blas_threads.shared_by(n):
        pending = [_worker(k if devices is None else devices[k]).submit(task(k))
                   for k in range(1, n)]
        results = [None] * n
        errors = []
        try:
            results[0] = task(0)()
        except BaseException as e:
            errors.append(e)
        for k, done in enumerate(pending, 1):
            done[0].wait()
            status, value = done[1]
            if status == "ok":
                results[k] = value
            else:
                errors.append(value)
    if errors:
        real = [e for e in errors if not isinstance(e, ShardAborted)]
        raise (real or errors)[0]
    return results
