"""W7, the 4th derivative of tanh(x) * sin(x) by nested grad, eager and jitted
(`jit(grad(grad(grad(grad(f)))))`, didax and JAX)."""
from __future__ import annotations

X = 0.7
EAGER = "W7 4th derivative by nested grad, eager"
JIT = "W7 jit of the 4th derivative"


def _nest(grad, f, n=4):
    for _ in range(n):
        f = grad(f)
    return f


def cases(frameworks, didax_jit) -> dict:
    """{(label, column): call}; the jitted didax row is `didax_jit` itself when that is
    Unavailable."""
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        d4 = _nest(didax.grad, lambda x: dnp.tanh(x) * dnp.sin(x))
        out[EAGER, "didax"] = lambda d4=d4: d4(X)
        if callable(didax_jit):
            d4_jit = didax_jit(d4)
            out[JIT, "didax"] = lambda d4=d4_jit: d4(X)
        else:
            out[JIT, "didax"] = didax_jit
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        d4 = _nest(jax.grad, lambda x: jnp.tanh(x) * jnp.sin(x))
        out[EAGER, "jax"] = lambda d4=d4: jax.block_until_ready(d4(X))
        d4_jit = jax.jit(d4)
        out[JIT, "jax"] = lambda d4=d4_jit: jax.block_until_ready(d4(X))
    if "autograd" in frameworks:
        import autograd
        import autograd.numpy as anp

        d4 = _nest(autograd.grad, lambda x: anp.tanh(x) * anp.sin(x))
        out[EAGER, "autograd"] = lambda d4=d4: d4(X)
    if "torch" in frameworks:
        import torch

        def torch_d4():
            x = torch.tensor(X, dtype=torch.float32, requires_grad=True)
            y = torch.tanh(x) * torch.sin(x)
            for _ in range(4):
                (y,) = torch.autograd.grad(y, x, create_graph=True)
            return y

        out[EAGER, "torch"] = torch_d4
    return out


def check(frameworks) -> None:
    from harness import assert_same_numbers, didax_jit, jit_or_eager

    results = {f"{column} {label}": f()
               for (label, column), f in cases(frameworks, jit_or_eager(didax_jit())).items()}
    assert_same_numbers(results, "W7 4th derivative", rtol=1e-4)


def run(frameworks, rounds) -> list:
    from harness import didax_jit, rows, time_interleaved

    check(frameworks)
    return rows(time_interleaved(cases(frameworks, didax_jit()), rounds=rounds))
