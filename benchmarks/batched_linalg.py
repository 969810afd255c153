"""Batched linear algebra over 1024 symmetric positive definite 8 x 8 float32 matrices:
`jit(vmap(jnp.linalg.solve))`, `jit(vmap(jnp.linalg.cholesky))`, and `jit(vmap(newton))`,
five Newton steps (gradient, Hessian, solve) per problem of dimension 8 minimizing
x A x / 2 - b x + sum(log cosh x).

didax runs on the native tier (DIDAX_NATIVE_TIER=sync unless set); the decompositions
themselves are linalg_kernels' C loops on either tier. PyTorch runs `torch.linalg` batched
(and the Newton steps as `torch.func.vmap` of `torch.func.grad`/`hessian`); NumPy runs
`np.linalg` batched (Newton with the gradient and Hessian written by hand).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 taskset -c 0 python benchmarks/batched_linalg.py

prints the Markdown table of `run.py` (medians; didax's time over each other's). Each
workload is checked first: every framework computes the same numbers.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")  # measure the native tier's steady state
import harness  # noqa: E402 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

COUNT, DIM, STEPS = 1024, 8, 5
SOLVE = "jit(vmap(solve)), 1024 SPD 8x8"
CHOLESKY = "jit(vmap(cholesky)), 1024 SPD 8x8"
NEWTON = "jit(vmap(newton)), 5 steps, 1024 problems of dim 8"


def _data():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((COUNT, DIM, DIM)).astype(np.float32)
    a = m @ m.transpose(0, 2, 1) + DIM * np.eye(DIM, dtype=np.float32)
    b = rng.standard_normal((COUNT, DIM)).astype(np.float32)
    return a, b


def _newton(api, np_like):
    def objective(x, a, b):
        return 0.5 * x @ a @ x - b @ x + np_like.sum(np_like.log(np_like.cosh(x)))

    def newton(a, b):
        x = np_like.zeros_like(b)
        for _ in range(STEPS):
            g = api.grad(objective)(x, a, b)
            h = api.hessian(objective)(x, a, b)
            x = x - np_like.linalg.solve(h, g)
        return x

    return newton


def _add_cases(out, column, api, np_like, jit, data, block):
    a, b = data
    solve = jit(api.vmap(np_like.linalg.solve))
    cholesky = jit(api.vmap(np_like.linalg.cholesky))
    newton = jit(api.vmap(_newton(api, np_like)))
    out[SOLVE, column] = lambda: block(solve(a, b))
    out[CHOLESKY, column] = lambda: block(cholesky(a))
    out[NEWTON, column] = lambda: block(newton(a, b))


def _numpy_cases(out):
    a, b = _data()

    def newton():
        x = np.zeros_like(b)
        for _ in range(STEPS):
            t = np.tanh(x)
            g = np.einsum("bij,bj->bi", a, x) - b + t  # (a is symmetric)
            h = a + (1 - t * t)[:, :, None] * np.eye(DIM, dtype=np.float32)
            x = x - np.linalg.solve(h, g[..., None])[..., 0]
        return x

    out[SOLVE, "numpy"] = lambda: np.linalg.solve(a, b[..., None])[..., 0]
    out[CHOLESKY, "numpy"] = lambda: np.linalg.cholesky(a)
    out[NEWTON, "numpy"] = newton


def _torch_cases(out):
    import torch

    a, b = (torch.from_numpy(x) for x in _data())

    def objective(x, a, b):
        return 0.5 * x @ a @ x - b @ x + torch.sum(torch.log(torch.cosh(x)))

    def newton(a, b):
        x = torch.zeros_like(b)
        for _ in range(STEPS):
            g = torch.func.grad(objective)(x, a, b)
            h = torch.func.hessian(objective)(x, a, b)
            x = x - torch.linalg.solve(h, g)
        return x

    batched = torch.func.vmap(newton)
    out[SOLVE, "torch"] = lambda: torch.linalg.solve(a, b)
    out[CHOLESKY, "torch"] = lambda: torch.linalg.cholesky(a)
    out[NEWTON, "torch"] = lambda: batched(a, b)


def cases(frameworks, didax_jit) -> dict:
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        jit = didax_jit if callable(didax_jit) else (lambda f: f)
        _add_cases(out, "didax", didax, dnp, jit, [dnp.asarray(x) for x in _data()],
                   block=lambda r: r.block_until_ready())
    if "numpy" in frameworks:
        _numpy_cases(out)
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        _add_cases(out, "jax", jax, jnp, jax.jit, jax.device_put(_data()),
                   block=jax.block_until_ready)
    if "torch" in frameworks:
        _torch_cases(out)
    return out


def check(table) -> None:
    """Every framework's solutions, factors and Newton iterates agree."""
    from harness import assert_same_numbers, to_numpy

    for label in (SOLVE, CHOLESKY, NEWTON):
        results = {column: to_numpy(fn()) for (row, column), fn in table.items()
                   if row == label}
        assert_same_numbers(results, label, rtol=1e-4, atol=1e-5)


def run(frameworks, rounds) -> list:
    from harness import didax_jit, rows, time_interleaved

    table = cases(frameworks, didax_jit())
    check(table)
    return rows(time_interleaved(table, rounds=rounds, warm=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--frameworks", nargs="*", default=["didax", "numpy", "jax", "torch"])
    args = parser.parse_args()
    import importlib.util

    frameworks = [f for f in args.frameworks if importlib.util.find_spec(f) is not None]
    print(harness.table(run(frameworks, args.rounds)))


if __name__ == "__main__":
    main()
