"""How many threads the native tier's loops over large arrays use.

`DIDAX_NUM_THREADS` sets the count (default: the cores this process may run on). Every
native module reads it through one shared cell, so `set_count` takes effect at once. The
loops split their work the same way whatever the count (see loops.py), so results do not
depend on it: one thread and many give the same bits.

Without the setting, the count follows the machine's load (Linux): each parallel loop ends
when its slowest thread does, and a thread that other processes keep off its core stalls
every loop for a scheduler's time slice (a CNN step measured 4 ms on one thread, 15 ms on
two, with another job on the second core). A daemon thread samples, twice a second, how
busy the cores were with other processes than this one (/proc/stat less this process's CPU
time), and lowers the count to the cores left free (at least one; a core others keep
less than 30 % busy counts as free).

A process forked from one that ran parallel loops inherits OpenMP's thread pool without its
threads, and would wait for them forever: a forked child runs every loop on one thread.
"""
from __future__ import annotations

import math
import os
import threading
import time

import numpy as np

_ENV = "DIDAX_NUM_THREADS"


def _default() -> int:
    setting = os.environ.get(_ENV, "").strip()
    if setting:
        try:
            count = int(setting)
        except ValueError:
            count = 0
        if count < 1:
            raise ValueError(f"{_ENV}={setting!r}: expected a whole number of threads >= 1")
        return count
    return usable_cores()


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# The cell the native modules read (its address goes to each module when it is made).
_cell = np.array([_default()], dtype=np.intc)


_sharing = 1  # how many threads (pmap's shards) run native code at once now


class shared_by:
    """While in it, `n` threads (pmap's shards) run native code side by side: each one's
    loops take 1/n of the count, so that shards and their loops' threads do not ask for more
    cores than there are. (The count changes no result.)"""

    def __init__(self, n: int):
        self.n = max(1, int(n))

    def __enter__(self):
        global _sharing
        self.previous, _sharing = _sharing, self.n
        self.base = count() * self.previous  # (the count before any sharing)
        _cell[0] = max(1, self.base // self.n)
        return self

    def __exit__(self, *exc):
        global _sharing
        _sharing = self.previous
        _cell[0] = max(1, self.base // self.previous)


def count() -> int:
    """The number of threads native loops over large arrays use now."""
    return int(_cell[0])


def set_count(n: int) -> int:
    """Sets the count (from now on, in every native module); the previous one."""
    n = int(n)
    if n < 1:
        raise ValueError(f"the number of native threads must be >= 1, got {n}")
    global _fixed
    previous = count()
    _fixed = True  # (a count chosen no longer follows the load)
    _cell[0] = n
    return previous


def address() -> int:
    """The address of the C int holding the count (and, unless DIDAX_NUM_THREADS or
    set_count fixed the count, the count follows the machine's load from now on)."""
    if not _watching and _cores > 1 and not _fixed:
        _watch()
    return _cell.__array_interface__["data"][0]


_cores = usable_cores()
_watching = False
_fixed = bool(os.environ.get(_ENV, "").strip())  # (a count chosen: it does not follow load)
_INTERVAL = 0.5  # seconds between samples


def _busy_elsewhere(previous):
    """(cores' worth of CPU time other processes used since `previous`, this sample)."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()[1:]
    except OSError:
        return None, None
    ticks = os.sysconf("SC_CLK_TCK")
    values = [int(v) for v in fields]
    busy = (sum(values) - values[3] - (values[4] if len(values) > 4 else 0)) / ticks
    t = os.times()
    sample = (time.monotonic(), busy, t.user + t.system)
    if previous is None:
        return None, sample
    elapsed = sample[0] - previous[0]
    if elapsed <= 0:
        return None, sample
    others = (sample[1] - previous[1]) - (sample[2] - previous[2])
    return max(0.0, others / elapsed), sample


def _count_for(others: float, cores: int) -> int:
    """The threads to use on `cores` when other processes keep `others` cores' worth busy
    (a core they keep less than 30 % busy counts as free)."""
    return max(1, min(cores, math.floor(cores - others + 0.3)))


def _watch():
    global _watching
    _watching = True

    def loop():
        previous = None
        while True:
            others, previous = _busy_elsewhere(previous)
            if previous is None:
                return  # (no /proc/stat: the count stays)
            if others is not None and not _fixed:
                _cell[0] = max(1, _count_for(others, _cores) // _sharing)
            time.sleep(_INTERVAL)

    threading.Thread(target=loop, name="didax-native-threads", daemon=True).start()


def _in_forked_child():
    global _cores, _watching
    _cell[0] = 1
    _cores, _watching = 1, True  # (and it stays so: the watcher did not survive the fork)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_forked_child)
