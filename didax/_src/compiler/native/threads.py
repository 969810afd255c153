"""How many threads the native tier's loops over large arrays use.

`DIDAX_NUM_THREADS` sets the count (default: the cores this process may run on). Every
native module reads it through one shared cell, so `set_count` takes effect at once. The
loops split their work the same way whatever the count (see loops.py), so results do not
depend on it: one thread and many give the same bits.

A process forked from one that ran parallel loops inherits OpenMP's thread pool without its
threads, and would wait for them forever: a forked child runs every loop on one thread.
"""
from __future__ import annotations

import os

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
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# The cell the native modules read (its address goes to each module when it is made).
_cell = np.array([_default()], dtype=np.intc)


def count() -> int:
    """The number of threads native loops over large arrays use now."""
    return int(_cell[0])


def set_count(n: int) -> int:
    """Sets the count (from now on, in every native module); the previous one."""
    n = int(n)
    if n < 1:
        raise ValueError(f"the number of native threads must be >= 1, got {n}")
    previous = count()
    _cell[0] = n
    return previous


def address() -> int:
    """The address of the C int holding the count."""
    return _cell.__array_interface__["data"][0]


def _in_forked_child():
    _cell[0] = 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_forked_child)
