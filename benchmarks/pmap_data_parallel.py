"""Data-parallel speed-up of `pmap`: one compute-bound training step (MLP 128-512-512-10,
tanh, softmax cross-entropy, global batch 2048, gradients averaged by `pmean`, SGD) on
2 devices against 1 device, BLAS on one thread per device.

    python benchmarks/pmap_data_parallel.py [--rounds N] [--raw]

Both configurations run the same pmapped step (1 device: one shard of 2048, 2 devices: two
shards of 1024), interleaved round by round; the figures are medians over rounds. `--raw`
also times the design question behind pmap's workers, on the same step written in NumPy:
two threads against two processes sharing memory (multiprocessing.shared_memory).
"""
from __future__ import annotations

import os
import sys

os.environ["DIDAX_NUM_CPU_DEVICES"] = "2"
import multiprocessing  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from multiprocessing import shared_memory  # noqa: E402

import harness  # noqa: E402, F401 - one BLAS thread per worker, before NumPy loads
import numpy as np  # noqa: E402

import didax as jax  # noqa: E402
import didax.numpy as jnp  # noqa: E402
from didax import lax, nn  # noqa: E402

SIZES = (128, 512, 512, 10)
BATCH = 2048
STEPS_PER_ROUND = 3


def init(seed=0):
    rng = np.random.default_rng(seed)
    params = [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
               np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH).astype(np.int32)
    return params, x, y


def loss_fn(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    logp = nn.log_softmax(x @ w + b)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    loss, grads = lax.pmean((loss, grads), "d")
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


def didax_steps(devices: int):
    params, x, y = init()
    f = jax.pmap(step, axis_name="d", in_axes=(None, 0, 0), out_axes=None,
                 devices=jax.devices()[:devices])
    xs, ys = x.reshape(devices, BATCH // devices, -1), y.reshape(devices, -1)

    def run():
        nonlocal params
        for _ in range(STEPS_PER_ROUND):
            params, loss = f(params, xs, ys)
        return float(loss)

    return run


# --------------------------------------------------------------------------------------
# The raw design question: the same step in NumPy, split over threads or processes


def numpy_grads(params, x, y):
    """Forward and backward pass of the MLP by hand."""
    acts, h = [x], x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
        acts.append(h)
    w, b = params[-1]
    z = h @ w + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(y)), y] -= 1
    g = p / len(y)
    grads = []
    for i in range(len(params) - 1, -1, -1):
        w, _ = params[i]
        grads.append((acts[i].T @ g, g.sum(0)))
        if i:
            g = (g @ w.T) * (1 - acts[i] ** 2)
    return grads[::-1]


def _process_worker(names, shapes, half, conn):
    mems = [shared_memory.SharedMemory(name=n) for n in names]
    arrays = [np.ndarray(s, np.float32, buffer=m.buf) for s, m in zip(shapes, mems)]
    x, y = arrays[0][half], arrays[1][half].astype(np.int32)
    params = list(zip(arrays[2::2], arrays[3::2]))
    while conn.recv():
        grads = numpy_grads(params, x, y)
        conn.send(sum(float(np.abs(g).sum()) for pair in grads for g in pair))
    for m in mems:
        m.close()


def raw_cases():
    params, x, y = init()
    halves = [slice(0, BATCH // 2), slice(BATCH // 2, BATCH)]

    def one_thread():
        for _ in range(STEPS_PER_ROUND):
            numpy_grads(params, x, y)

    def two_threads():
        def work(h):
            for _ in range(STEPS_PER_ROUND):
                numpy_grads(params, x[h], y[h])
        threads = [threading.Thread(target=work, args=(h,)) for h in halves]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    arrays = [x, y.astype(np.float32)] + [a for pair in params for a in pair]
    mems = [shared_memory.SharedMemory(create=True, size=a.nbytes) for a in arrays]
    for a, m in zip(arrays, mems):
        np.ndarray(a.shape, np.float32, buffer=m.buf)[...] = a
    ctx = multiprocessing.get_context("fork")
    pipes, procs = [], []
    for h in halves:
        ours, theirs = ctx.Pipe()
        p = ctx.Process(target=_process_worker, args=([m.name for m in mems],
                                                      [a.shape for a in arrays], h, theirs))
        p.start()
        pipes.append(ours)
        procs.append(p)

    def two_processes():
        for _ in range(STEPS_PER_ROUND):
            for c in pipes:
                c.send(True)
            for c in pipes:
                c.recv()

    def close():
        for c in pipes:
            c.send(False)
        for p in procs:
            p.join()
        for m in mems:
            m.close()
            m.unlink()

    return {"NumPy, 1 thread": one_thread, "NumPy, 2 threads": two_threads,
            "NumPy, 2 processes (shared memory)": two_processes}, close


def measure(cases: dict, rounds: int):
    """Median wall time per step of each case, and the CPU time this process used per step
    (all its threads; worker processes' time is not counted)."""
    wall = {k: [] for k in cases}
    cpu = {k: [] for k in cases}
    for f in cases.values():
        f()  # warm-up: trace, compile
    for _ in range(rounds):
        for k, f in cases.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            f()
            wall[k].append((time.perf_counter() - start) / STEPS_PER_ROUND)
            cpu[k].append((time.process_time() - start_cpu) / STEPS_PER_ROUND)
    return ({k: statistics.median(v) for k, v in wall.items()},
            {k: statistics.median(v) for k, v in cpu.items()})


def main(argv):
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 9
    one, two = didax_steps(1), didax_steps(2)
    a, b = one(), two()
    if not np.isclose(a, b, rtol=1e-4):
        raise SystemExit(f"1 and 2 devices disagree: loss {a} vs {b}")
    cases = {"didax pmap, 1 device": one, "didax pmap, 2 devices": two}
    close = None
    if "--raw" in argv:
        raw, close = raw_cases()
        cases.update(raw)
    try:
        medians, cpu = measure(cases, rounds)
    finally:
        if close is not None:
            close()
    load = os.getloadavg()[0]
    print(f"MLP {'-'.join(map(str, SIZES))}, global batch {BATCH}, {os.cpu_count()} cores "
          f"(load average {load:.1f}), median of {rounds} rounds of {STEPS_PER_ROUND} steps\n")
    print("| configuration | ms per step | CPU ms per step (this process) | CPU / wall |")
    print("|---|---|---|---|")
    for k, t in medians.items():
        c = "n/a" if "processes" in k else f"{cpu[k] * 1e3:.1f}"
        ratio = "n/a" if "processes" in k else f"{cpu[k] / t:.2f}"
        print(f"| {k} | {t * 1e3:.1f} | {c} | {ratio} |")
    print(f"\npmap speed-up, 2 devices over 1: "
          f"{medians['didax pmap, 1 device'] / medians['didax pmap, 2 devices']:.2f}x")
    if "--raw" in argv:
        base = medians["NumPy, 1 thread"]
        print(f"NumPy speed-up, 2 threads: {base / medians['NumPy, 2 threads']:.2f}x, "
              f"2 processes: {base / medians['NumPy, 2 processes (shared memory)']:.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
