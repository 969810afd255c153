"""`--all-cores`: a benchmark's frameworks on every core instead of one thread each.

Imported before `harness` (which otherwise sets one thread for every framework): with
`--all-cores` on the command line, each framework gets its own default, every core
(didax's native loops: DIDAX_NUM_THREADS unset; OpenBLAS, OpenMP and XLA: theirs). Run
such a benchmark unpinned (no taskset): all frameworks in the same run.

On every core, each framework is timed in a process of its own (`separately`): in one
process, the threads one framework leaves spinning after its call (XLA's, PyTorch's
OpenMP pool) take the cores from the next framework's (a CNN step of didax's measured 18 ms
beside them, 7 ms alone). The processes take turns, a few rounds each, several times, and
each framework's figure is the median of its rounds. The numbers are checked against each
other by the one-thread run, not here.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
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


CHILD = "--timing-child"  # (what the parent passes its children: print the rows as JSON)
TURNS = 3  # how many times each framework's process is run, in turns


def child_output(rows) -> str:
    return json.dumps([[r.label, r.seconds, r.notes] for r in rows])


def separately(script: str, frameworks, rounds: int):
    """The rows of `script` run with `--all-cores` once per framework and turn, each in a
    process of its own; a cell is the median of its turns' medians."""
    import harness

    per_turn = max(3, rounds // TURNS)
    seconds: dict = {}
    notes: dict = {}
    order: list = []
    for _ in range(TURNS):
        for framework in frameworks:
            out = subprocess.run(
                [sys.executable, script, "--all-cores", CHILD, "--frameworks", framework,
                 "--rounds", str(per_turn)], capture_output=True, text=True, check=True)
            for label, cells, why in json.loads(out.stdout.strip().splitlines()[-1]):
                if label not in order:
                    order.append(label)
                for column, value in cells.items():
                    seconds.setdefault((label, column), []).append(value)
                for column, reason in why.items():
                    notes[label, column] = reason
    rows = []
    for label in order:
        row = harness.Row(label, {})
        for (lab, column), values in seconds.items():
            if lab == label:
                row.seconds[column] = statistics.median(values)
        for (lab, column), reason in notes.items():
            if lab == label:
                row.notes[column] = reason
        rows.append(row)
    return rows


def add_arguments(parser) -> None:
    """`--all-cores` (and the hidden flag its children get) on a benchmark's parser."""
    parser.add_argument("--all-cores", action="store_true",
                        help="every framework on every core (run unpinned)")
    parser.add_argument(CHILD, action="store_true", help=argparse.SUPPRESS)


def report(args, script: str, run) -> None:
    """Prints the table of `run(frameworks, rounds)` for the installed ones of
    `args.frameworks`: in this process, or with --all-cores each framework in its own (and
    as a child, its rows for the parent)."""
    frameworks = [f for f in args.frameworks if importlib.util.find_spec(f) is not None]
    import harness

    if args.all_cores and not args.timing_child:
        print(harness.table(separately(script, frameworks, args.rounds)))
        return
    rows = run(frameworks, args.rounds)
    print(child_output(rows) if args.timing_child else harness.table(rows))
