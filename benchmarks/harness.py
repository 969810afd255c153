"""Timing harness: every framework in the same run, interleaved, one thread each.

Import this module before NumPy, JAX or PyTorch so that the single-thread settings
take effect. Results are medians over rounds; ratios are reported against didax.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import statistics  # noqa: E402
import time  # noqa: E402
from typing import Callable  # noqa: E402


def calls_per_round(fn: Callable[[], object], target_seconds: float) -> int:
    """How many calls fill about `target_seconds` (at least one)."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(target_seconds / once))


def time_interleaved(cases: dict[str, Callable[[], object]], rounds: int = 15,
                     target_seconds: float = 0.02) -> dict[str, float]:
    """Median seconds per call of each case, timing the cases round-robin."""
    counts = {name: calls_per_round(fn, target_seconds) for name, fn in cases.items()}
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            n = counts[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:9.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:9.2f} ms"
    return f"{seconds:9.2f} s "


def report(title: str, medians: dict[str, float], baseline: str = "didax") -> str:
    lines = [title]
    base = medians.get(baseline)
    for name, t in medians.items():
        ratio = f"{t / base:7.2f}x {baseline}" if base else ""
        lines.append(f"  {name:18s} {fmt_time(t)}   {ratio}")
    if base:
        others = ", ".join(f"{baseline} / {n} = {base / t:.3f}" for n, t in medians.items()
                           if n != baseline)
        lines.append(f"  ratios: {others}")
    return "\n".join(lines)
