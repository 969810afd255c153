"""`--all-cores`: a benchmark's frameworks on every core instead of one thread each.

Imported before `harness` (which otherwise sets one thread for every framework): with
`--all-cores` on the command line, each framework gets its own default, every core
(didax's native loops: DIDAX_NUM_THREADS unset; OpenBLAS, OpenMP and XLA: theirs). Run
such a benchmark unpinned (no taskset): all frameworks in the same run.
"""
from __future__ import annotations

import os
import sys

ALL_CORES = "--all-cores" in sys.argv

if ALL_CORES:
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS",
                 "DIDAX_NUM_THREADS"):
        os.environ.pop(name, None)
    os.environ["XLA_FLAGS"] = ""  # (harness sets one thread only where a setting is unset)
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(os.cpu_count())
    os.environ["MKL_NUM_THREADS"] = str(os.cpu_count())
else:
    os.environ.setdefault("DIDAX_NUM_THREADS", "1")


def label(text: str) -> str:
    """A row label saying which mode it was timed in."""
    return f"{text}, all {os.cpu_count()} cores" if ALL_CORES else f"{text}, one thread"
