"""NumPy's BLAS threads, shared out among the threads and processes that call it at once.

NumPy's wheels ship OpenBLAS, whose products start one thread per core and keep them
spinning between calls. While n of pmap's shards run products side by side, each product
asking for every core oversubscribes them: a 2x2 mesh's Transformer step measured 77 ms
with OpenBLAS's two threads per product on two cores, 42 ms with one. So while shards run,
OpenBLAS uses 1/n of its threads; and processes started together on one host by `mpiexec`
share the host's cores the same way (`share_among_processes`). A BLAS that is not OpenBLAS
is left alone.

OpenBLAS's products split their work by its thread count, and their last bits depend on it
(as they depend on OPENBLAS_NUM_THREADS and the core count anyway): a count chosen here is
the same on every call of one configuration, so a run repeats its bits.
"""
from __future__ import annotations

import ctypes
import glob
import os
import threading

import numpy as np

_lock = threading.Lock()
_found: list = []  # [(get, set)] or [None], once looked for


def _openblas():
    """OpenBLAS's get and set functions for its thread count in NumPy's own library, or
    None."""
    with _lock:
        if not _found:
            _found.append(_look())
        return _found[0]


def _look():
    libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""),
                               ("openblas", "64_"), ("openblas", "")):
            get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                put.argtypes = [ctypes.c_int]
                return get, put
    return None


def count() -> int | None:
    """OpenBLAS's thread count now (None without OpenBLAS)."""
    fns = _openblas()
    return None if fns is None else int(fns[0]())


def set_count(n: int) -> None:
    fns = _openblas()
    if fns is not None:
        fns[1](max(1, int(n)))


class shared_by:
    """While in it, `n` threads (pmap's shards) may run BLAS products at once: each product
    takes 1/n of OpenBLAS's threads."""

    __slots__ = ("n", "previous")

    def __init__(self, n: int):
        self.n = max(1, int(n))
        self.previous = None

    def __enter__(self):
        if self.n > 1:
            self.previous = count()
            if self.previous is not None and self.previous > 1:
                set_count(self.previous // self.n)
        return self

    def __exit__(self, *exc):
        if self.previous is not None and self.previous > 1:
            set_count(self.previous)


def share_among_processes(processes_on_this_host: int) -> None:
    """Processes of one host share its cores: each one's OpenBLAS takes its part of them."""
    now = count()
    if now is not None and processes_on_this_host > 1:
        set_count(now // processes_on_this_host)
