"""Reverse mode through a `while_loop` inside `jit` (issue: bounded memory): `jit(grad)` of
100,000 iterations of a carry of 1000 float32, the backward pass keeping every carry against
keeping at most 100 (`snapshots=100`); peak traced memory (tracemalloc) and median time,
interleaved, on one thread. JAX refuses reverse mode through while_loop, so there is nothing to
compare with. Run pinned:

    taskset -c 0 python benchmarks/while_reverse.py [--steps N] [--rounds R] [--snapshots S]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402,F401 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

import didax as jax  # noqa: E402
import didax.numpy as jnp  # noqa: E402
from didax import lax  # noqa: E402


def gradient(steps, snapshots):
    def loss(x, w):
        def body(s):
            i, v = s
            return i + 1, jnp.tanh(v * w) + 1e-3 * v
        return jnp.sum(lax.while_loop(lambda s: s[0] < steps, body, (0, x),
                                      snapshots=snapshots)[1])
    return jax.jit(jax.grad(loss, argnums=(0, 1)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--width", type=int, default=1000)
    ap.add_argument("--snapshots", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    x = np.linspace(-1, 1, args.width).astype(np.float32)
    w = np.float32(0.9)
    variants = {"every carry": gradient(args.steps, None),
                f"{args.snapshots} snapshots": gradient(args.steps, args.snapshots)}
    times = {k: [] for k in variants}
    peaks, results = {}, {}
    for g in variants.values():
        g(x, w)  # traced and compiled
    for _ in range(args.rounds):
        for name, g in variants.items():
            tracemalloc.start()
            start = time.perf_counter()
            results[name] = g(x, w)
            times[name].append(time.perf_counter() - start)
            peaks[name] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    base, bounded = variants
    same = all(np.asarray(a).tobytes() == np.asarray(b).tobytes()
               for a, b in zip(results[base], results[bounded]))
    for name in variants:
        print(f"{name:>16}: median {statistics.median(times[name]):.2f} s, "
              f"peak {peaks[name] / 1e6:.1f} MB")
    print(f"memory ratio {peaks[bounded] / peaks[base]:.4f}, time ratio "
          f"{statistics.median(times[bounded]) / statistics.median(times[base]):.2f}, "
          f"same bits: {same}")


if __name__ == "__main__":
    main()
