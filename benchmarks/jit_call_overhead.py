"""The fixed cost of calling a jitted function eagerly on a signature it has cached: the time
of the call less the time of its compiled code alone, on float32 (8,) arrays, for one
argument, three arguments, pytree (tuple and dict) arguments, a Python scalar argument and a
static argument; on didax's NumPy tier and native tier, beside NumPy running the same
function on ndarrays and `jax.jit`'s whole call. Run pinned to one core:

    taskset -c 0 python benchmarks/jit_call_overhead.py [--rounds N]

Every figure is the minimum over rounds of the mean of a block of calls; the rounds go
through all cases and columns in turn (interleaved), so a noisy moment on a shared machine
touches every column alike. didax and NumPy are timed in thread CPU time
(`time.thread_time`); JAX with `time.perf_counter` and `block_until_ready()`, as its
computation may run on another thread.
"""
from __future__ import annotations

import argparse
import time
import timeit

import harness  # noqa: F401  (one thread per framework, before NumPy is imported)
import numpy as np

import didax
from didax._src.config import flag_context
from didax._src.tree_util import tree_leaves

try:
    import jax
except ImportError:  # the JAX column reads n/a
    jax = None

CASES = {
    "x -> x": (lambda x: x, "x"),
    "x -> x + 1": (lambda x: x + 1, "x"),
    "(x, y, z) -> x * y + z": (lambda x, y, z: x * y + z, "xyz"),
    "tuple t -> t[0] * t[1] + t[2]": (lambda t: t[0] * t[1] + t[2], "tuple"),
    "dict d -> d['a'] * d['b'] + d['c']": (lambda d: d["a"] * d["b"] + d["c"], "dict"),
    "(x, 2.0) -> x * s, s a Python float": (lambda x, s: x * s, "x, float"),
    "(x, 2) -> x * n, n static": (lambda x, n: x * n, "x, static"),
}
STATIC = {"x, static": (1,)}  # static_argnums

COLUMNS = ["NumPy tier: call", "NumPy tier: code", "NumPy tier: overhead",
           "native tier: call", "native tier: code", "native tier: overhead",
           "NumPy, same function", "jax.jit call"]


def arguments(kind, asarray):
    x, y, z = (asarray(np.full((8,), v, np.float32)) for v in (1.5, 2.0, 0.5))
    return {"x": (x,), "xyz": (x, y, z), "tuple": ((x, y, z),),
            "dict": ({"a": x, "b": y, "c": z},), "x, float": (x, 2.0), "x, static": (x, 2)}[kind]


def block_time(fn, number, timer):
    return timeit.timeit(fn, number=number, timer=timer) / number


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--number", type=int, default=20000, help="calls per timed block")
    opts = parser.parse_args()

    timed = {}  # (case, column) -> (zero-argument callable, timer)
    for name, (fun, kind) in CASES.items():
        args = arguments(kind, didax.numpy.asarray)
        for tier, label in (("off", "NumPy tier"), ("sync", "native tier")):
            with flag_context("didax_native_tier", tier):
                f = didax.jit(fun, static_argnums=STATIC.get(kind))
                f(*args)
                f(*args)
            entry, = f._cache.values()
            run = entry.executable.run
            vals = [np.asarray(a, np.float32) if type(a) is float else a._value
                    for a in tree_leaves(args[:1] if kind == "x, static" else args)]
            timed[name, f"{label}: call"] = (lambda f=f, a=args: f(*a), time.thread_time)
            timed[name, f"{label}: code"] = (lambda r=run, v=vals: r(*v), time.thread_time)
        np_args = arguments(kind, np.asarray)
        timed[name, "NumPy, same function"] = (lambda a=np_args, f=fun: f(*a), time.thread_time)
        if jax is not None:
            jf = jax.jit(fun, static_argnums=STATIC.get(kind))
            j_args = arguments(kind, jax.numpy.asarray)
            jf(*j_args).block_until_ready()
            timed[name, "jax.jit call"] = (lambda f=jf, a=j_args: f(*a).block_until_ready(),
                                           time.perf_counter)

    best = {}
    for _ in range(opts.rounds):
        for key, (fn, timer) in timed.items():
            number = opts.number if timer is time.thread_time else opts.number // 10
            t = block_time(fn, number, timer)
            best[key] = min(best.get(key, t), t)
    for name in CASES:
        for label in ("NumPy tier", "native tier"):
            best[name, f"{label}: overhead"] = (best[name, f"{label}: call"]
                                               - best[name, f"{label}: code"])

    print("| function, float32 (8,) | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for name in CASES:
        cells = [f"{best[name, c] * 1e6:.2f} us" if (name, c) in best else "n/a"
                 for c in COLUMNS]
        print(f"| `{name}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
