"""Timing harness: every framework in the same run, interleaved, one thread each.

Import this module before NumPy, JAX or PyTorch so that the single-thread settings
take effect. Results are medians over rounds; ratios are reported against didax.

A workload's `cases` map a key `(row label, column)` to a zero-argument callable to time,
or to `Unavailable(reason)` when that framework cannot run it here; `rows` turns the
medians into table rows, one per label, with one column per framework.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import dataclasses  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Callable, Hashable  # noqa: E402

import numpy as np  # noqa: E402

# Table columns, in order, with their headings.
COLUMNS = {"didax": "didax", "numpy": "NumPy", "jax": "JAX", "autograd": "HIPS autograd",
           "torch": "PyTorch", "torch.compile": "torch.compile"}
BASELINE = "didax"
# The clock steady states are timed by: wall time, or (run.py --cpu) the process's CPU time,
# steadier on a machine other jobs load (it counts every thread of the process, so JAX's
# runtime threads too).
CLOCK = time.perf_counter


@dataclasses.dataclass(frozen=True)
class Unavailable:
    """Stands in for a case that cannot run here, so the table says why instead of crashing."""
    reason: str


@dataclasses.dataclass
class Row:
    label: str
    seconds: dict[str, float]  # column -> median seconds per call
    notes: dict[str, str] = dataclasses.field(default_factory=dict)  # column -> why no time


def didax_jit():
    """`didax.jit`, or Unavailable while it does not exist yet."""
    import didax

    jit = getattr(didax, "jit", None)
    return jit if jit is not None else Unavailable("didax.jit not available")


def jit_or_eager(jit):
    """What a correctness check runs: the jitted function if jit exists, else the function."""
    return (lambda f: f) if isinstance(jit, Unavailable) else jit


def torch_compile_errors() -> tuple:
    """What torch.compile raises when it cannot compile here (no C++ compiler, ...)."""
    import torch._dynamo.exc
    import torch._inductor.exc

    return (torch._dynamo.exc.BackendCompilerFailed, torch._inductor.exc.InvalidCxxCompiler,
            torch._inductor.exc.CppCompileError)


def torch_compiled(f, *args):
    """`torch.compile(f, fullgraph=True)` after a first call on `args`, or Unavailable(why)
    if it cannot compile here."""
    import torch

    compiled = torch.compile(f, fullgraph=True)
    try:
        compiled(*args)
    except torch_compile_errors() as e:
        return Unavailable(f"torch.compile failed: {type(e).__name__}: "
                           f"{str(e).splitlines()[0][:200]}")
    return compiled


def calls_per_round(fn: Callable[[], object], target_seconds: float,
                    warm: bool = False) -> tuple[int, float]:
    """How many calls fill about `target_seconds` (at least one), and the time of one call;
    a call to warm up (compile) first unless `fn` is `warm` already."""
    if not warm:
        fn()
    once = float("inf")
    for _ in range(2):  # (the faster of two: the first may pay for the case before it)
        start = CLOCK()
        fn()
        once = min(once, max(CLOCK() - start, 1e-7))
    return max(1, int(target_seconds / once)), once


def time_interleaved(cases: dict[Hashable, object], rounds: int = 15,
                     target_seconds: float = 0.02, budget_seconds: float | None = None,
                     min_rounds: int = 3, warm: bool = False,
                     settle_seconds: float = 0.01) -> dict[Hashable, object]:
    """Median seconds per call of each case, timing the cases in rounds, each round in an
    order of its own.

    Before its timed calls in a round, a case is called untimed for `settle_seconds` (once
    at least): after another framework's run, the next 5 to 10 ms of calls reading large
    arrays took up to half as long again here (caches, and memory the other framework freed;
    a loop on data in L1 did not slow down), so the first calls of a round measured the
    previous case as much as their own, and a case with fewer calls a round paid more of it.

    With `budget_seconds`, rounds are cut so the timing takes about that long (slow
    workloads), but never below `min_rounds`. `warm`: the cases have been called already
    (by the correctness check), so they need no warm-up call. Unavailable cases pass through.
    """
    runnable = {k: fn for k, fn in cases.items() if not isinstance(fn, Unavailable)}
    counts, round_cost = {}, 0.0
    for key, fn in runnable.items():
        counts[key], once = calls_per_round(fn, target_seconds, warm)
        round_cost += counts[key] * once + max(once, settle_seconds)
    if budget_seconds is not None and round_cost > 0:
        rounds = min(rounds, max(min_rounds, int(budget_seconds / round_cost)))
    samples: dict[Hashable, list[float]] = {k: [] for k in runnable}
    order, shuffler = list(runnable.items()), random.Random(0)
    for _ in range(rounds):
        shuffler.shuffle(order)  # (so no case always follows the same other one)
        for key, fn in order:
            n, start = counts[key], CLOCK()
            fn()
            while CLOCK() - start < settle_seconds:
                fn()
            start = CLOCK()
            for _ in range(n):
                fn()
            samples[key].append((CLOCK() - start) / n)
    return {k: statistics.median(samples[k]) if k in samples else fn for k, fn in cases.items()}


def time_first_calls(cases: dict[Hashable, object], rounds: int = 15,
                     budget_seconds: float = 20.0, min_rounds: int = 3) -> dict[Hashable, object]:
    """Median of first-call times: each case is a callable that sets up a fresh function,
    times its first call and returns the seconds it took.

    Cases take turns; a case stops once it has `rounds` samples, or `min_rounds` samples and
    its share of `budget_seconds` spent (compilers differ by orders of magnitude).
    """
    runnable = {k: fn for k, fn in cases.items() if not isinstance(fn, Unavailable)}
    share = budget_seconds / max(1, len(runnable))
    samples: dict[Hashable, list[float]] = {k: [] for k in runnable}
    spent = dict.fromkeys(runnable, 0.0)

    def wanted(key):
        n = len(samples[key])
        return n < rounds and (n < min_rounds or spent[key] < share)

    while any(wanted(k) for k in runnable):
        for key, fn in runnable.items():
            if wanted(key):
                start = time.perf_counter()
                samples[key].append(fn())
                spent[key] += time.perf_counter() - start
    return {k: statistics.median(samples[k]) if k in samples else fn for k, fn in cases.items()}


def rows(results: dict[tuple[str, str], object]) -> list[Row]:
    """Table rows from `{(label, column): seconds or Unavailable}`, in first-seen order."""
    out: dict[str, Row] = {}
    for (label, column), value in results.items():
        row = out.setdefault(label, Row(label, {}))
        if isinstance(value, Unavailable):
            row.notes[column] = value.reason
        else:
            row.seconds[column] = value
    return list(out.values())


def to_numpy(x) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def leaves(tree) -> list[np.ndarray]:
    """The arrays of a nest of tuples, lists and dicts, without any framework's tree utilities."""
    if isinstance(tree, dict):
        return [a for k in sorted(tree) for a in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [a for t in tree for a in leaves(t)]
    return [to_numpy(tree)]


def assert_same_numbers(results: dict[str, object], what: str, rtol: float,
                        atol: float = 0.0, scaled_atol: float = 0.0,
                        torch_scaled_atol: float | None = None) -> None:
    """Every result agrees with the first one (a benchmark of wrong answers is worthless).

    `scaled_atol` adds an absolute tolerance relative to each reference array's largest
    magnitude, for sums long enough that summation order shows in the small entries.
    `torch_scaled_atol`: PyTorch's result is compared with the first other one with this
    `scaled_atol` instead (its float32 products on some CPUs are further from float64).
    """
    if torch_scaled_atol is not None and "torch" in results:
        results = dict(results)
        torch_result = results.pop("torch")
        if results:
            ref = next(iter(results))
            assert_same_numbers({ref: results[ref], "torch": torch_result}, what, rtol,
                                atol, torch_scaled_atol)
    if len(results) < 2:
        return
    (ref_name, ref), *others = results.items()
    ref_leaves = leaves(ref)
    for name, result in others:
        got = leaves(result)
        assert len(got) == len(ref_leaves), f"{what}: {name} returns {len(got)} arrays, " \
                                             f"{ref_name} {len(ref_leaves)}"
        for i, (a, b) in enumerate(zip(got, ref_leaves)):
            assert a.shape == b.shape, f"{what}: {name} array {i} has shape {a.shape}, " \
                                       f"{ref_name} {b.shape}"
            tol = atol + scaled_atol * float(np.max(np.abs(b), initial=0.0))
            np.testing.assert_allclose(a, b, rtol=rtol, atol=tol,
                                       err_msg=f"{what}: {name} vs {ref_name}, array {i}")


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def table(all_rows: list[Row]) -> str:
    """One Markdown table: medians per framework, then didax's time over each other's."""
    columns = [c for c in COLUMNS if any(c in r.seconds or c in r.notes for r in all_rows)]
    others = [c for c in columns if c != BASELINE] \
        if any(BASELINE in r.seconds for r in all_rows) else []
    head = ["workload"] + [COLUMNS[c] for c in columns] + \
        [f"{COLUMNS[BASELINE]} / {COLUMNS[c]}" for c in others]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    footnotes = []
    for r in all_rows:
        cells = [r.label]
        for c in columns:
            if c in r.seconds:
                cells.append(fmt_time(r.seconds[c]))
            elif c in r.notes:
                footnotes.append(f"{r.label}, {COLUMNS.get(c, c)}: {r.notes[c]}")
                cells.append(f"n/a [{len(footnotes)}]")
            else:
                cells.append("")
        base = r.seconds.get(BASELINE)
        for c in others:
            cells.append(f"{base / r.seconds[c]:.3g}" if base and c in r.seconds else "")
        lines.append("| " + " | ".join(cells) + " |")
    lines += [f"[{i}] {note}" for i, note in enumerate(footnotes, 1)]
    return "\n".join(lines)
