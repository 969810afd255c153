"""Loops on the native tier: `jit(grad)` of a gated RNN by `lax.scan` over T = 10 ... 10000
steps, and W6 (the LSTM), each on didax with its loops compiled whole to C ("native
loops"), on didax with the loop left on the NumPy tier (its body a Python function per
step, as before loops had native rules: the control-flow primitives' native rules are
withheld while building), and on JAX; interleaved, one thread each. Run pinned:

    taskset -c 0 python benchmarks/scan_curve.py [--rounds N] [--steps 10 100 ...]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")
import harness  # noqa: E402 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

HIDDEN, INPUT, BATCH = 32, 8, 8
CONTROL_FLOW = ("scan", "while", "cond")


def gated_rnn_loss(np_like, lax):
    """A minimal gated recurrent cell (an update gate mixing the state with a candidate);
    the loss is the mean square of every step's state."""
    def loss(params, xs):
        wz, uz, wc, uc = params

        def cell(h, x):
            z = lax.logistic(x @ wz + h @ uz)
            c = np_like.tanh(x @ wc + h @ uc)
            h = z * h + (1.0 - z) * c
            return h, h

        _, hs = lax.scan(cell, np_like.zeros((BATCH, HIDDEN), np_like.float32), xs)
        return np_like.mean(hs ** 2)
    return loss


def gated_rnn_data(steps):
    rng = np.random.default_rng(0)
    params = tuple((rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
                   for s in [(INPUT, HIDDEN), (HIDDEN, HIDDEN)] * 2)
    xs = rng.standard_normal((steps, BATCH, INPUT)).astype(np.float32)
    return params, xs


@contextlib.contextmanager
def loops_on_numpy_tier():
    """The control-flow primitives without their native rules (what the native tier did
    before it compiled loops): functions built inside run their loops on the NumPy tier."""
    from didax._src import core

    saved = {n: core.all_primitives[n].rules.pop("native", None) for n in CONTROL_FLOW}
    try:
        yield
    finally:
        for n, rule in saved.items():
            if rule is not None:
                core.all_primitives[n].rules["native"] = rule


def cases(label, didax_loss, jax_loss, args):
    import jax

    import didax

    dargs = jax.tree_util.tree_map(didax.numpy.asarray, args)
    after = didax.jit(didax.grad(didax_loss))
    after(*dargs)
    with loops_on_numpy_tier():
        before = didax.jit(didax.grad(didax_loss))
        before(*dargs)
    gj = jax.jit(jax.grad(jax_loss))
    jargs = jax.device_put(args)
    out = {(label, "native loops"): lambda: after(*dargs),
           (label, "NumPy-tier loops"): lambda: before(*dargs),
           (label, "JAX"): lambda: jax.block_until_ready(gj(*jargs))}
    results = {k[1]: f() for k, f in out.items()}
    harness.assert_same_numbers(results, label, rtol=2e-4, scaled_atol=1e-5)
    return out


def cpu_interleaved(cases_, rounds, target_seconds=0.05):
    """Median CPU seconds per call of each case, round-robin (as harness.time_interleaved,
    with the process's CPU time as the clock, and the order rotated each round: the case
    after another's large working set starts with a cold cache)."""
    counts = {}
    for key, fn in cases_.items():
        start = time.process_time()
        fn()
        counts[key] = max(1, int(target_seconds / max(time.process_time() - start, 1e-6)))
    samples = {k: [] for k in cases_}
    keys = list(cases_)
    for r in range(rounds):  # each round starts one case later: none always runs first
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            fn = cases_[key]
            start = time.process_time()
            for _ in range(counts[key]):
                fn()
            samples[key].append((time.process_time() - start) / counts[key])
    return {k: statistics.median(v) for k, v in samples.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, nargs="*", default=[10, 100, 1000, 10000])
    parser.add_argument("--no-w6", action="store_true")
    parser.add_argument("--cpu", action="store_true",
                        help="time by process CPU time (time.process_time) instead of wall "
                             "time: steadier on a machine other jobs load")
    args = parser.parse_args()
    import jax.numpy as jnp
    import w6_lstm_scan as w6
    from jax import lax as jlax

    import didax.numpy as dnp
    from didax import lax as dlax

    all_cases = {}
    for t in args.steps:
        all_cases.update(cases(f"gated RNN scan jit(grad), T={t}", gated_rnn_loss(dnp, dlax),
                               gated_rnn_loss(jnp, jlax), gated_rnn_data(t)))
    if not args.no_w6:
        params, xs, ys = w6._data()
        all_cases.update(cases(w6.LABEL, w6._loss(dnp, dlax), w6._loss(jnp, jlax),
                               (params, xs, ys)))
    medians = (cpu_interleaved(all_cases, args.rounds) if args.cpu else
               harness.time_interleaved(all_cases, rounds=args.rounds, warm=True))
    labels = list(dict.fromkeys(k[0] for k in all_cases))
    print("| workload | native loops | NumPy-tier loops | JAX | native / JAX | "
          "NumPy-tier / JAX |")
    print("|---|---|---|---|---|---|")
    for label in labels:
        n, p, j = (medians[(label, c)] for c in ("native loops", "NumPy-tier loops", "JAX"))
        print(f"| {label} | {harness.fmt_time(n)} | {harness.fmt_time(p)} | "
              f"{harness.fmt_time(j)} | {n / j:.3g} | {p / j:.3g} |", flush=True)


if __name__ == "__main__":
    main()
