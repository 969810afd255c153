"""A fused reduction: `sum(tanh(x) * exp(-x**2) + 0.5 * x)` over 2^22 float32.

didax and JAX jit the same function (didax on the native tier: DIDAX_NATIVE_TIER=sync
unless set, so the steady state is measured); NumPy evaluates the expression (its
temporaries included); PyTorch runs it eagerly and under `torch.compile`. Every framework's
sum is first checked against a float64 reference.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
    intra_op_parallelism_threads=1" taskset -c 0 python benchmarks/fused_reduction.py
    python benchmarks/fused_reduction.py --all-cores     # every core, unpinned

prints the Markdown table of `run.py` (medians; didax's time over each other's).
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")  # measure the native tier's steady state
import cores  # noqa: E402 - before harness: one thread each, or every core
import harness  # noqa: E402 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

N = 1 << 22


def _x():
    return np.random.default_rng(0).standard_normal(N).astype(np.float32)


def _fn(np_like):
    def f(x):
        return np_like.sum(np_like.tanh(x) * np_like.exp(-x ** 2) + 0.5 * x)
    return f


def cases(frameworks) -> dict:
    x = _x()
    timed = {}
    row = cores.label("fused reduction, 2^22 float32")
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        f, dx = didax.jit(_fn(dnp)), dnp.asarray(x)
        timed[row, "didax"] = lambda: f(dx).block_until_ready()
    if "numpy" in frameworks:
        timed[row, "numpy"] = lambda: _fn(np)(x)
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        g, jx = jax.jit(_fn(jnp)), jax.device_put(x)
        timed[row, "jax"] = lambda: g(jx).block_until_ready()
    if "torch" in frameworks:
        import torch

        tx = torch.from_numpy(x)
        timed[row, "torch"] = lambda: _fn(torch)(tx)
        compiled = harness.torch_compiled(_fn(torch), tx)
        timed[row, "torch.compile"] = (compiled if isinstance(compiled, harness.Unavailable)
                                       else lambda: compiled(tx))
    return timed


def check(timed) -> None:
    x = _x().astype(np.float64)
    want = float(np.sum(np.tanh(x) * np.exp(-x ** 2) + 0.5 * x))
    for key, call in timed.items():
        if callable(call):
            got = float(np.asarray(call()))
            assert abs(got - want) <= 1e-4 * np.sqrt(N), (key, got, want)


def run(frameworks, rounds) -> list:
    timed = cases(frameworks)
    check(timed)
    return harness.rows(harness.time_interleaved(timed, rounds=rounds, warm=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--frameworks", nargs="*",
                        default=["didax", "numpy", "jax", "torch"])
    cores.add_arguments(parser)
    args = parser.parse_args()
    cores.report(args, __file__, run)


if __name__ == "__main__":
    main()
