"""How long each example takes as a user runs it: `python examples/NAME.py` on one pinned core,
one thread, default settings (the native tier in the background, as for users). Each example
must finish within the budget; the exit status is 1 when one does not.

    python benchmarks/examples_time.py              # every example, 3 runs each
    python benchmarks/examples_time.py --runs 1 cnn_digits

Wall time of the whole process (interpreter start, imports, data, training, printing).
The median of the runs is reported: the machines are shared and one run can be unlucky.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUDGET_SECONDS = 10.0


def time_example(name: str, core: int | None) -> float:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    command = [sys.executable, str(ROOT / "examples" / f"{name}.py")]
    if core is not None and shutil.which("taskset"):
        command = ["taskset", "-c", str(core), *command]
    with tempfile.TemporaryDirectory() as cwd:  # examples may write files (pictures)
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="examples to time (default: all)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--core", type=int, default=0, help="CPU to pin to (-1: no pinning)")
    args = parser.parse_args()
    names = args.names or sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
    core = None if args.core < 0 else args.core
    print(f"| example | median of {args.runs} (s) | runs (s) |")
    print("|---|---|---|")
    over = []
    for name in names:
        runs = [time_example(name, core) for _ in range(args.runs)]
        median = statistics.median(runs)
        print(f"| {name} | {median:.1f} | {', '.join(f'{r:.1f}' for r in runs)} |", flush=True)
        if median > BUDGET_SECONDS:
            over.append(name)
    if over:
        print(f"over the {BUDGET_SECONDS:.0f} s budget: {', '.join(over)}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
