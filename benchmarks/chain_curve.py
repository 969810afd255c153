"""A jitted chain of N elementwise operations on float32 (8, 8), N = 10 ... 5000: the
steady-state time of a call on didax (its native tier, built before the first call returns)
and on JAX, interleaved, one thread each. Run pinned:

    taskset -c 0 python benchmarks/chain_curve.py [--rounds N] [--lengths 10 30 ...]
        [--numpy-tier] [--wall]

The chain cycles through four operations on the running value `y`: `y * 1.5`, `y - x`,
`tanh(y)`, `maximum(y, -0.5)` (one primitive each; `x` is the input), so no pass can
simplify it away. On an (8, 8) value the data are 64 floats: what is timed is a call's
fixed cost and the cost per operation, not memory traffic. `--numpy-tier` adds didax with
its native tier off (each operation one NumPy call).

Times are medians over rounds of the process's CPU time (time.process_time), each round
rotating which case runs first: the machine is shared, and JAX runs a call on a thread of
its runtime, which the calling thread's CPU time (time.thread_time) would not count. The
script only needs `didax.jit` and `didax.numpy`, so it also runs on older checkouts (copy it
into their benchmarks/ directory).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")
import harness  # noqa: E402 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

SHAPE = (8, 8)
LENGTHS = (10, 30, 100, 300, 1000, 3000, 5000)


def chain(np_like, n):
    """`n` elementwise operations, one primitive each, cycling through four kinds."""
    ops = (lambda y, x: y * 1.5, lambda y, x: y - x, lambda y, x: np_like.tanh(y),
           lambda y, x: np_like.maximum(y, -0.5))

    def f(x):
        y = x
        for i in range(n):
            y = ops[i % len(ops)](y, x)
        return y
    return f


def numpy_tier(didax, f, x):
    """`didax.jit(f)` compiled (by a first call on `x`) with the native tier off, so it
    stays on the NumPy tier; None where the option does not exist."""
    try:
        from didax._src.config import flag_context
        context = flag_context("didax_native_tier", "off")
        context.__enter__()
    except (ImportError, KeyError, ValueError, AttributeError):
        return None
    try:
        jitted = didax.jit(f)
        jitted(x)
    finally:
        context.__exit__(None, None, None)
    return jitted


def cases(lengths, with_numpy_tier):
    import jax
    import jax.numpy as jnp

    import didax
    import didax.numpy as dnp

    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    xd, xj = dnp.asarray(x), jax.device_put(x)
    out = {}
    for n in lengths:
        fd = didax.jit(chain(dnp, n))
        fj = jax.jit(chain(jnp, n))
        row = {"didax": lambda fd=fd: fd(xd)}
        fo = numpy_tier(didax, chain(dnp, n), xd) if with_numpy_tier else None
        if fo is not None:
            row["didax NumPy tier"] = lambda fo=fo: fo(xd)
        row["JAX"] = lambda fj=fj: jax.block_until_ready(fj(xj))
        results = {k: f() for k, f in row.items()}  # (also compiles each)
        harness.assert_same_numbers(results, f"chain of {n}", rtol=1e-4, atol=1e-5)
        out.update({(n, k): f for k, f in row.items()})
    return out


def interleaved(cases_, rounds, clock, target_seconds=0.05):
    """Median seconds of `clock` per call of each case, round-robin, the order rotated each
    round (none always runs first)."""
    counts = {}
    for key, fn in cases_.items():
        start = clock()
        fn()
        counts[key] = max(1, int(target_seconds / max(clock() - start, 1e-6)))
    samples = {k: [] for k in cases_}
    keys = list(cases_)
    for r in range(rounds):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            fn = cases_[key]
            start = clock()
            for _ in range(counts[key]):
                fn()
            samples[key].append((clock() - start) / counts[key])
    return {k: statistics.median(v) for k, v in samples.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--lengths", type=int, nargs="*", default=list(LENGTHS))
    parser.add_argument("--numpy-tier", action="store_true",
                        help="also time didax with its native tier off")
    parser.add_argument("--wall", action="store_true",
                        help="time by wall clock (time.perf_counter) instead of CPU time")
    args = parser.parse_args()
    all_cases = cases(args.lengths, args.numpy_tier)
    clock = time.perf_counter if args.wall else time.process_time
    medians = interleaved(all_cases, args.rounds, clock)
    columns = list(dict.fromkeys(k[1] for k in all_cases))
    others = [c for c in columns if c != "JAX"]
    print("| N | " + " | ".join(columns) + " | " +
          " | ".join(f"{c} / JAX" for c in others) + " |")
    print("|---" * (1 + len(columns) + len(others)) + "|")
    for n in args.lengths:
        t = {c: medians[(n, c)] for c in columns}
        print(f"| {n} | " + " | ".join(harness.fmt_time(t[c]) for c in columns) + " | " +
              " | ".join(f"{t[c] / t['JAX']:.3g}" for c in others) + " |", flush=True)


if __name__ == "__main__":
    main()
