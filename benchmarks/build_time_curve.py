"""How the native tier's build time grows with the program: jitted SGD steps of MLPs of L
layers (32 wide, batch 16: tanh and relu branches per layer, so each layer is products and
fused loops), from ~100 to ~5000 equations. For each, with nothing cached: didax's trace
(make_jaxpr), code generation (emit.plan: optimisation passes and C source) and the C
compiler's build of the module (into an empty cache directory: large modules are several
translation units, compiled in parallel on the cores the process may use), and JAX's
trace, lowering and XLA compile of the same step (run pinned for one core's figures).

    taskset -c 0 python benchmarks/build_time_curve.py [--layers 3 8 27 64 128]

prints a Markdown table: equations, each phase's seconds, didax's total per 1000 equations,
and didax's total over JAX's.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402, F401 - one thread each before NumPy loads
import numpy as np  # noqa: E402

WIDTH, BATCH = 32, 16


def _step(api, np_like):
    def loss(params, x, y):
        h = x
        for w, b in params:
            z = h @ w + b
            h = np_like.tanh(z) * 0.5 + np_like.maximum(z, 0.0) * 0.5
        return np_like.mean((h - y) ** 2)

    def step(params, x, y):
        grads = api.grad(loss)(params, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]

    return step


def _data(layers):
    rng = np.random.default_rng(0)
    params = [((rng.standard_normal((WIDTH, WIDTH)) * 0.1).astype(np.float32),
               np.zeros(WIDTH, np.float32)) for _ in range(layers)]
    x = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    return params, x, x


def didax_phases(layers) -> dict:
    import didax
    import didax.numpy as dnp
    from didax._src.compiler.native import cache, emit, toolchain

    args = _data(layers)
    start = time.perf_counter()
    closed = didax.make_jaxpr(_step(didax, dnp))(*args)
    traced = time.perf_counter()
    plan = emit.plan(closed)
    generated = time.perf_counter()
    tc = toolchain.toolchain()
    with tempfile.TemporaryDirectory(prefix="didax-build-curve-") as tmp:
        for unit in (False, True):  # (the precompiled preludes: once per machine, not timed)
            toolchain.precompiled_prelude(tc, tmp, unit)
        building = time.perf_counter()
        cache.load_or_build(plan.source, tc, tmp)
        built = time.perf_counter()
    return {"equations": len(closed.jaxpr.eqns), "trace": traced - start,
            "generate": generated - traced, "build": built - building}


def jax_seconds(layers) -> float:
    import jax
    import jax.numpy as jnp

    args = _data(layers)
    start = time.perf_counter()
    jax.jit(_step(jax, jnp)).lower(*args).compile()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, nargs="*", default=[3, 8, 27, 64, 128])
    parser.add_argument("--no-jax", action="store_true")
    args = parser.parse_args()
    import importlib.util

    with_jax = not args.no_jax and importlib.util.find_spec("jax") is not None
    print("| equations | trace | generate C | C build | didax total | per 1000 equations "
          "| JAX trace + compile | didax / JAX |")
    print("|---|---|---|---|---|---|---|---|")
    for layers in args.layers:
        d = didax_phases(layers)
        total = d["trace"] + d["generate"] + d["build"]
        jax_total = jax_seconds(layers) if with_jax else None
        ratio = f"{total / jax_total:.2f}" if jax_total else ""
        print(f"| {d['equations']} | {d['trace']:.2f} s | {d['generate']:.2f} s | "
              f"{d['build']:.2f} s | {total:.2f} s | {1000 * total / d['equations']:.2f} s | "
              f"{f'{jax_total:.2f} s' if jax_total else ''} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
