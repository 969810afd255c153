"""W4, a big MLP: value_and_grad of MLP 1024-4096-4096-1024 relu, softmax cross-entropy,
batch 512, float32 (jitted for didax and JAX; PyTorch eager; NumPy forward and backward by
hand). A step takes about a second, so the rounds are cut to fit a time budget."""
from __future__ import annotations

from mlp import NumpyMLP, data, loss_fn, torch_data, torch_loss

SIZES, BATCH = (1024, 4096, 4096, 1024), 512
LABEL = "W4 value_and_grad, MLP 1024-4096-4096-1024"
BUDGET_SECONDS = 20.0


def _functions(frameworks, didax_jit) -> dict:
    """{column: a call returning (loss, gradients)}; didax's is `didax_jit` of its
    value_and_grad (the identity runs it eagerly)."""
    params, x, y = data(SIZES, BATCH)
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        f = didax_jit(didax.value_and_grad(loss_fn(dnp, didax.lax.stop_gradient)))
        pd = [(dnp.asarray(w), dnp.asarray(b)) for w, b in params]
        xd, yd = dnp.asarray(x), dnp.asarray(y)
        out["didax"] = lambda: f(pd, xd, yd)
    if "numpy" in frameworks:
        model = NumpyMLP(params, BATCH)
        out["numpy"] = lambda: model.value_and_grad(params, x, y)
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        fj = jax.jit(jax.value_and_grad(loss_fn(jnp, jax.lax.stop_gradient)))
        pj, xj, yj = jax.device_put((params, x, y))
        out["jax"] = lambda: jax.block_until_ready(fj(pj, xj, yj))
    if "torch" in frameworks:
        import torch

        pt, flat, xt, yt = torch_data(params, x, y)

        def torch_value_and_grad():
            value = torch_loss(pt, xt, yt)
            return value.detach(), torch.autograd.grad(value, flat)

        out["torch"] = torch_value_and_grad
    return out


def check(functions) -> None:
    """Same loss and gradients; sums over 4096 terms in different orders differ in the
    smallest entries, hence a tolerance scaled to each gradient's largest entry."""
    from harness import assert_same_numbers

    results = {column: f() for column, f in functions.items()}
    # PyTorch's float32 gradients on the Intel machine of benchmarks/README.md are up to
    # 1.7e-2 of a gradient's largest entry from float64 (its float64 ones 7e-7; didax's,
    # NumPy's and JAX's float32 ones 7e-7), hence its own tolerance, as in W8.
    assert_same_numbers(results, "W4 loss and gradients", rtol=1e-4, scaled_atol=1e-5,
                        torch_scaled_atol=5e-2)


def run(frameworks, rounds) -> list:
    """The check's calls are the timed ones, so the check warms them up (a call is slow)."""
    from harness import didax_jit, jit_or_eager, rows, time_interleaved

    jit = didax_jit()
    functions = _functions(frameworks, jit_or_eager(jit))
    check(functions)
    if not callable(jit) and "didax" in functions:
        functions["didax"] = jit
    return rows(time_interleaved({(LABEL, c): f for c, f in functions.items()}, rounds=rounds,
                                 budget_seconds=BUDGET_SECONDS, warm=True))
