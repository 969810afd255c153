"""W7, the 4th derivative of tanh(x) * sin(x) by nested grad, eager (no jit)."""
from __future__ import annotations

import numpy as np

X = 0.7


def _nest(grad, f, n=4):
    for _ in range(n):
        f = grad(f)
    return f


def cases(frameworks) -> dict:
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        d4 = _nest(didax.grad, lambda x: dnp.tanh(x) * dnp.sin(x))
        out["didax"] = lambda d4=d4: d4(X)
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        d4 = _nest(jax.grad, lambda x: jnp.tanh(x) * jnp.sin(x))
        out["jax"] = lambda d4=d4: jax.block_until_ready(d4(X))
    if "autograd" in frameworks:
        import autograd
        import autograd.numpy as anp

        d4 = _nest(autograd.grad, lambda x: anp.tanh(x) * anp.sin(x))
        out["autograd"] = lambda d4=d4: d4(X)
    if "torch" in frameworks:
        import torch

        def torch_d4():
            x = torch.tensor(X, dtype=torch.float32, requires_grad=True)
            y = torch.tanh(x) * torch.sin(x)
            for _ in range(4):
                (y,) = torch.autograd.grad(y, x, create_graph=True)
            return y

        out["torch"] = torch_d4
    return out


def check(frameworks) -> None:
    results = {}
    for name, fn in cases(frameworks).items():
        v = fn()
        results[name] = float(np.asarray(v.detach() if hasattr(v, "detach") else v))
    ref = results["didax"]
    for name, v in results.items():
        np.testing.assert_allclose(v, ref, rtol=1e-4, err_msg=f"W7 4th derivative: {name}")


def run(frameworks, rounds) -> list[str]:
    from harness import report, time_interleaved

    check(frameworks)
    return [report("W7 4th derivative of tanh(x) * sin(x), nested grad, eager",
                   time_interleaved(cases(frameworks), rounds=rounds))]
