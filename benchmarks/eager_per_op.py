"""Eager cost per primitive: a chain of N elementwise operations on float32 (8,) arrays,
run forward and differentiated by reverse mode, without jit, on didax, HIPS autograd,
PyTorch and JAX; the time of a call divided by N. Interleaved, one thread each, medians
of each process's CPU time (the machines are shared). Run pinned:

    taskset -c 0 python benchmarks/eager_per_op.py [--rounds N] [--ops 10 100 ...]

JAX's eager grad is slow enough that it runs only up to N = 300 (its cells above read
n/a).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402,F401 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

FRAMEWORKS = ("didax", "autograd", "torch", "jax")
JAX_MAX_OPS = 300


def chain(np_like, n):
    """n operations cycling through unary, binary (array and Python-scalar operand)
    primitives; the loss sums the result."""
    def f(x, y):
        for i in range(n):
            k = i % 4
            if k == 0:
                x = np_like.sin(x)
            elif k == 1:
                x = x * y
            elif k == 2:
                x = x + 0.5
            else:
                x = np_like.tanh(x)
        return np_like.sum(x)
    return f


def cases(n, frameworks):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(8).astype(np.float32)
    y = (1.0 + 0.1 * rng.standard_normal(8)).astype(np.float32)
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp
        f = chain(dnp, n)
        g = didax.grad(f)
        xd, yd = dnp.asarray(x), dnp.asarray(y)
        out["didax"] = (lambda f=f: f(xd, yd), lambda g=g: g(xd, yd),
                        lambda g=g: np.asarray(g(xd, yd)))
    if "autograd" in frameworks:
        import autograd
        import autograd.numpy as anp
        f = chain(anp, n)
        g = autograd.grad(f)
        out["autograd"] = (lambda f=f: f(x, y), lambda g=g: g(x, y),
                           lambda g=g: np.asarray(g(x, y)))
    if "torch" in frameworks:
        import torch
        f = chain(torch, n)
        xt, yt = torch.tensor(x), torch.tensor(y)

        def tgrad(f=f):
            xr = xt.clone().requires_grad_(True)
            return torch.autograd.grad(f(xr, yt), xr)[0]

        def tfwd(f=f):
            with torch.no_grad():
                return f(xt, yt)

        out["torch"] = (tfwd, tgrad, lambda: tgrad().numpy())
    if "jax" in frameworks and n <= JAX_MAX_OPS:
        import jax
        import jax.numpy as jnp
        f = chain(jnp, n)
        g = jax.grad(f)
        xj, yj = jnp.asarray(x), jnp.asarray(y)
        out["jax"] = (lambda: jax.block_until_ready(f(xj, yj)),
                      lambda: jax.block_until_ready(g(xj, yj)), lambda: np.asarray(g(xj, yj)))
    return out


def cpu_time(fn, number):
    t = time.thread_time()
    for _ in range(number):
        fn()
    return (time.thread_time() - t) / number


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--ops", type=int, nargs="+", default=[10, 30, 100, 300, 1000, 3000])
    ap.add_argument("--frameworks", nargs="+", default=list(FRAMEWORKS))
    args = ap.parse_args()
    frameworks = []
    for name in args.frameworks:
        try:
            __import__(name)
            frameworks.append(name)
        except ImportError:
            print(f"{name} is not installed: skipped", file=sys.stderr)
    rows = []
    for n in args.ops:
        cs = cases(n, frameworks)
        ref = cs["didax"][2]() if "didax" in cs else None
        for name, (_, _, check) in cs.items():  # the same derivative everywhere
            np.testing.assert_allclose(check(), ref, rtol=2e-4, atol=1e-5,
                                       err_msg=f"{name} disagrees at N={n}")
        number = max(1, 3000 // n)
        times = {(name, kind): [] for name in cs for kind in ("fwd", "grad")}
        for r in range(args.rounds):
            order = list(cs.items())
            order = order[r % len(order):] + order[:r % len(order)]
            for name, (fwd, grad, _) in order:
                times[name, "fwd"].append(cpu_time(fwd, number))
                times[name, "grad"].append(cpu_time(grad, number))
        med = {k: statistics.median(v) / n * 1e6 for k, v in times.items()}
        rows.append((n, med))
        print(f"N={n}: " + ", ".join(f"{k[0]} {k[1]} {v:.2f} us" for k, v in med.items()),
              file=sys.stderr)
    names = [f for f in FRAMEWORKS if f in frameworks]
    head = (["N"] + [f"{f} grad" for f in names] + [f"{f} forward" for f in names]
            + ["didax / autograd grad", "didax / PyTorch grad"])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for n, med in rows:
        cells = [str(n)]
        for kind in ("grad", "fwd"):
            cells += [f"{med[f, kind]:.2f}" if (f, kind) in med else "n/a" for f in names]
        for other in ("autograd", "torch"):
            ok = (other, "grad") in med and ("didax", "grad") in med
            cells.append(f"{med['didax', 'grad'] / med[other, 'grad']:.2f}" if ok else "")
        print("| " + " | ".join(cells) + " |")
    print("\n(us per primitive: a call's CPU time divided by N)")


if __name__ == "__main__":
    main()
