"""Runs the benchmark workloads on didax and every installed comparison framework, and
prints one Markdown table of medians and of didax's time over each other framework's.

    python benchmarks/run.py                  # all workloads, all installed frameworks
    python benchmarks/run.py W1 --rounds 25   # one workload
    python benchmarks/run.py --frameworks numpy jax torch   # without didax
    python benchmarks/run.py W8 --cpu         # CPU time, on a machine other jobs load

didax runs with DIDAX_NATIVE_TIER=sync (unless set otherwise): a jitted function's native
code is built before its first call returns, so the steady state measured is the native
tier's, not the NumPy tier's that serves calls while a background build runs.

Progress goes to stderr, the table to stdout. A workload that fails (an error, or
frameworks disagreeing on the numbers) is reported after the table and the exit status
is 1; the other workloads still run.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")  # measure the native tier's steady state
import harness  # noqa: E402 - sets single-thread environment before NumPy loads

WORKLOADS = {"W1": "w1_dispatch", "W2": "w2_eager_mlp_grad", "W3": "w3_jit_sgd_step",
             "W4": "w4_big_mlp", "W5": "w5_per_example_grads", "W6": "w6_lstm_scan",
             "W7": "w7_nested_grad", "W8": "w8_mlp_batches"}
FRAMEWORKS = ["didax", "numpy", "jax", "autograd", "torch"]


def installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS), metavar="W",
                        help=f"workloads to run (default: all of {', '.join(WORKLOADS)})")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--frameworks", nargs="*", default=FRAMEWORKS)
    parser.add_argument("--cpu", action="store_true",
                        help="time steady states by the process's CPU time instead of wall "
                             "time (first calls stay wall time)")
    args = parser.parse_args()
    if args.cpu:
        harness.CLOCK = time.process_time
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    frameworks = [f for f in args.frameworks if installed(f)]
    skipped = [f for f in args.frameworks if f not in frameworks]
    print(f"frameworks: {', '.join(frameworks)}" +
          (f" (not installed: {', '.join(skipped)})" if skipped else ""), flush=True)
    all_rows, failures = [], []
    for w in args.workloads:
        print(f"{w} ...", end=" ", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            module = importlib.import_module(WORKLOADS[w])
            all_rows += module.run(frameworks, args.rounds)
        except Exception as e:  # one broken workload should not hide the others' numbers
            print(file=sys.stderr)
            traceback.print_exc()
            failures.append(f"{w} failed: {type(e).__name__}: {e}")
        print(f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    print(harness.table(all_rows))
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
