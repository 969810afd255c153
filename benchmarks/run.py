"""Runs the benchmark workloads on didax and every installed comparison framework.

    python benchmarks/run.py                  # all workloads, all installed frameworks
    python benchmarks/run.py W1 --rounds 25   # one workload
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402,F401 - sets single-thread environment before NumPy loads

WORKLOADS = {"W1": "w1_dispatch", "W2": "w2_eager_mlp_grad", "W5": "w5_per_example_grads",
             "W7": "w7_nested_grad"}
FRAMEWORKS = ["didax", "numpy", "jax", "autograd", "torch"]


def installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--frameworks", nargs="*", default=FRAMEWORKS)
    args = parser.parse_args()
    frameworks = [f for f in args.frameworks if installed(f)]
    skipped = [f for f in args.frameworks if f not in frameworks]
    print(f"frameworks: {', '.join(frameworks)}" +
          (f" (not installed: {', '.join(skipped)})" if skipped else ""))
    for w in args.workloads:
        module = importlib.import_module(WORKLOADS[w])
        for block in module.run(frameworks, args.rounds):
            print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
