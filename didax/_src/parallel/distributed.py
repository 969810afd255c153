"""Many processes over MPI: `initialize()` joins the processes `mpiexec` started (mpi4py,
the `didax[mpi]` extra), after which `pmap` maps over every process's devices and its
collectives reach the other processes through the link defined here.

Each process's shards first combine among themselves (shards.py); the first shard then
meets the other processes: sums, maxima and minima by `Allreduce`, gathers by `allgather`,
permutations by point-to-point sends. Before each exchange the processes compare a short
signature (the collective, shapes and dtypes): processes that diverged (different shapes,
or different collectives) get an error naming what each one had, rather than a hang or a
wrong result.

That comparison (and the small collectives' whole exchange) is point-to-point messages
polled against a deadline, `peer_timeout` seconds (`initialize(peer_timeout=...)`, or
DIDAX_PEER_TIMEOUT; default 60): a process that exited, raised or stopped answering makes
the others raise `PeerLostError` naming it, instead of waiting forever. (A peer lost in the
middle of a large reduction, after the signatures agreed, can still hang it.)
"""
from __future__ import annotations

import functools
import importlib
import os
import time

import numpy as np

from didax._src.compiler.native import blas_threads
from didax._src.parallel import device

try:  # (the package only: importing mpi4py.MPI starts MPI, which waits for initialize())
    import mpi4py
except ImportError:  # everything but distributed runs works without it
    mpi4py = None

_INSTALL = ('didax.distributed needs mpi4py and an MPI library: pip install "didax[mpi]" '
            "(it brings mpi4py and MPICH's wheel, with `mpiexec`), then launch the processes "
            "with `mpiexec -n <processes> python program.py`.")


# Collectives on arrays up to this size go in one exchange with their signature (each
# exchange is a synchronisation, costly when processes share cores); larger ones are
# reduced by MPI's Allreduce after the signatures agree.
SMALL_MESSAGE = 1 << 16
_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


class DivergedProcessesError(RuntimeError):
    """The processes of a distributed run reached different collectives or shapes."""


class PeerLostError(RuntimeError):
    """Another process of a distributed run did not reach a collective in time: it exited,
    raised, or stopped answering."""


PEER_TIMEOUT = 60.0  # seconds (DIDAX_PEER_TIMEOUT, initialize(peer_timeout=...))


class MpiLink:
    """Collectives among the processes of an MPI communicator (called by one thread per
    process: its first shard)."""

    def __init__(self, comm, mpi, timeout: float = PEER_TIMEOUT):
        self.comm = comm
        self._mpi = mpi
        self._ops = {"sum": mpi.SUM, "max": mpi.MAX, "min": mpi.MIN}
        self._bool_ops = {"sum": mpi.LOR, "max": mpi.LOR, "min": mpi.LAND}
        self.timeout = timeout
        # (the exchanges' own communicator: their messages never match permute's, whose
        # tags are device numbers, nor anything else sent on `comm`; from each process they
        # arrive in the order sent, MPI's non-overtaking rule, so one exchange's messages
        # are the next ones to receive)
        self._exchange_comm = comm.Dup()

    def _gather(self, obj, what: str) -> list:
        """`comm.allgather(obj)`, by messages to and from every other process, waiting for
        each at most `timeout` seconds."""
        comm = self._exchange_comm
        rank, size = comm.Get_rank(), comm.Get_size()
        sends = [comm.isend(obj, dest=q) for q in range(size) if q != rank]
        got = {rank: obj}
        waiting = [q for q in range(size) if q != rank]
        deadline = time.monotonic() + self.timeout
        pause = 0.0
        while waiting:
            arrived = [q for q in waiting if comm.iprobe(source=q)]
            for q in arrived:
                got[q] = comm.recv(source=q)
            waiting = [q for q in waiting if q not in got]
            if not waiting:
                break
            if time.monotonic() > deadline:
                for request in sends:
                    request.Cancel()
                names = ", ".join(map(str, waiting))
                raise PeerLostError(
                    f"process {rank} of this distributed run waited {self.timeout:g} s at {what} "
                    f"for process{'es' if len(waiting) > 1 else ''} {names}, which did not "
                    "reach it: it exited, raised or stopped answering (see its output). "
                    "Every process must run the same collectives; the wait is "
                    "initialize(peer_timeout=...) or DIDAX_PEER_TIMEOUT seconds.")
            pause = 0.0 if arrived else min(0.001, pause + 1e-5)  # (spin, then sleep)
            if pause:
                time.sleep(pause)
        for request in sends:
            request.wait()
        return [got[q] for q in range(size)]

    def _agree(self, signatures: list, mine) -> None:
        if any(s != mine for s in signatures):
            lines = "\n".join(f"  process {p}: {s}" for p, s in enumerate(signatures))
            raise DivergedProcessesError(
                "the processes of this distributed run diverged: each must run the same "
                f"collectives on arrays of the same shapes and dtypes, but they reached\n{lines}")

    def allreduce(self, x, op: str, what: str):
        x = np.array(x, order="C")
        sig = f"{what} of {x.dtype.name}{list(x.shape)}"
        if x.nbytes <= SMALL_MESSAGE:  # one exchange, then the same reduction everywhere
            parts = self._gather((sig, x), sig)
            self._agree([s for s, _ in parts], sig)
            return functools.reduce(_REDUCE[op], [p for _, p in parts])
        self._agree(self._gather(sig, sig), sig)
        ops = self._bool_ops if x.dtype == np.bool_ else self._ops
        self.comm.Allreduce(self._mpi.IN_PLACE, x, op=ops[op])
        return x

    def allgather(self, stacked, what: str) -> list:
        sig = f"{what} of {stacked.dtype.name}{list(stacked.shape)}"
        parts = self._gather((sig, np.array(stacked, order="C")), sig)
        self._agree([s for s, _ in parts], sig)
        return [p for _, p in parts]

    def permute(self, stacked, offset: int, perm, what: str) -> list:
        sig = f"{what} of {stacked.dtype.name}{list(stacked.shape)} with {list(perm)}"
        self._agree(self._gather(sig, sig), sig)
        n = stacked.shape[0]
        sends = [self.comm.isend(np.array(stacked[src - offset], order="C"), dest=dst // n,
                                 tag=dst)
                 for src, dst in perm if offset <= src < offset + n]
        got = [None] * n
        for src, dst in perm:
            if offset <= dst < offset + n:
                got[dst - offset] = self.comm.recv(source=src // n, tag=dst)
        for request in sends:
            request.wait()
        return got


def _mpi():
    if mpi4py is None:
        raise RuntimeError(_INSTALL)
    # Imported here, not with the module: importing mpi4py.MPI initialises MPI.
    return importlib.import_module("mpi4py.MPI")


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, cluster_detection_method=None, initialization_timeout=300,
               coordinator_bind_address=None, peer_timeout=None, **kwargs) -> None:
    """Joins the processes started by `mpiexec` (MPI's COMM_WORLD): `process_index()` is
    this process's rank, `devices()` lists every process's devices. `peer_timeout` (didax's
    own; default DIDAX_PEER_TIMEOUT or 60): how many seconds a collective waits for the
    other processes before raising PeerLostError."""
    if peer_timeout is None:
        peer_timeout = float(os.environ.get("DIDAX_PEER_TIMEOUT", "") or PEER_TIMEOUT)
    if not peer_timeout > 0:
        raise ValueError(f"distributed.initialize: peer_timeout must be > 0 seconds, got "
                         f"{peer_timeout}")
    if device.process_link() is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    mpi = _mpi()
    comm = mpi.COMM_WORLD
    if num_processes is not None and num_processes != comm.Get_size():
        raise ValueError(f"distributed.initialize: num_processes={num_processes}, but MPI "
                         f"started {comm.Get_size()} processes (mpiexec -n)")
    if process_id is not None and process_id != comm.Get_rank():
        raise ValueError(f"distributed.initialize: process_id={process_id}, but this is MPI "
                         f"rank {comm.Get_rank()}")
    if local_device_ids is not None:
        raise NotImplementedError("distributed.initialize: local_device_ids is not supported; "
                                  "set DIDAX_NUM_CPU_DEVICES in every process")
    counts = comm.allgather(device.local_device_count())
    if len(set(counts)) != 1:
        raise ValueError(f"distributed.initialize: every process needs the same number of "
                         f"devices, but they have {counts} (DIDAX_NUM_CPU_DEVICES)")
    device.set_processes(comm.Get_rank(), comm.Get_size(), MpiLink(comm, mpi, peer_timeout))
    host = comm.Split_type(mpi.COMM_TYPE_SHARED)  # (the processes on this host)
    _blas_before[:] = [blas_threads.count()]
    blas_threads.share_among_processes(host.Get_size())
    host.Free()


_blas_before: list = []  # OpenBLAS's thread count before initialize() shared the host's cores


def is_initialized() -> bool:
    return device.process_link() is not None


def shutdown() -> None:
    """Leaves the distributed run: this process is alone again."""
    link = device.process_link()
    if link is not None:
        link.comm.Barrier()
    device.set_processes(0, 1, None)
    if _blas_before and _blas_before[0] is not None:
        blas_threads.set_count(_blas_before.pop())
