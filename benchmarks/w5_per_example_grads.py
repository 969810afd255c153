"""W5, per-example gradients of the logistic loss, batch 256, dim 100: `vmap(grad)` eager,
against a Python loop of `grad` calls, and jitted; and a Hessian-vector product of the mean
loss, forward over reverse (`jvp` of `grad`), eager and jitted.

PyTorch's eager rows use torch.func (vmap, grad, jvp); its jitted rows torch.compile them.
"""
from __future__ import annotations

import numpy as np

BATCH, DIM = 256, 100
VMAP = "W5 vmap(grad), batch 256, eager"
LOOP = "W5 loop of 256 grad calls, eager"
VMAP_JIT = "W5 jit(vmap(grad))"
HVP = "W5 Hessian-vector product jvp(grad), eager"
HVP_JIT = "W5 jit(jvp(grad)) Hessian-vector product"


def _data():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal(DIM) / 10).astype(np.float32)
    x = rng.standard_normal((BATCH, DIM)).astype(np.float32)
    y = rng.integers(0, 2, BATCH).astype(np.float32)
    v = rng.standard_normal(DIM).astype(np.float32)
    return w, x, y, v


def _loss(np_like):
    def loss(w, x, y):
        z = np_like.dot(x, w)
        return np_like.logaddexp(0.0, z) - y * z  # logistic loss of one example

    return loss


def _add_cases(out, column, api, np_like, jit, data, block=lambda r: r):
    """The rows of `didax` or `jax` (`api`, with its numpy and `jit`, which may be
    Unavailable) on `data` (w, x, y, v) converted to its arrays."""
    loss = _loss(np_like)
    g = api.grad(loss)
    per_example = api.vmap(g, in_axes=(None, 0, 0))

    def mean_loss(w, x, y):
        return np_like.mean(loss(w, x, y))

    def hvp(w, v, x, y):
        return api.jvp(lambda w: api.grad(mean_loss)(w, x, y), (w,), (v,))[1]

    w, x, y, v = data
    out[VMAP, column] = lambda: block(per_example(w, x, y))
    if column == "didax":
        out[LOOP, column] = lambda: [g(w, x[i], y[i]) for i in range(BATCH)]
    out[HVP, column] = lambda: block(hvp(w, v, x, y))
    if callable(jit):
        per_example_jit, hvp_jit = jit(per_example), jit(hvp)
        out[VMAP_JIT, column] = lambda: block(per_example_jit(w, x, y))
        out[HVP_JIT, column] = lambda: block(hvp_jit(w, v, x, y))
    else:
        out[VMAP_JIT, column] = out[HVP_JIT, column] = jit


def _torch_cases(out):
    import torch
    from harness import torch_compiled

    def loss(w, x, y):
        z = x @ w
        return torch.logaddexp(torch.zeros(()), z) - y * z

    def hvp(w, v, x, y):
        grad = torch.func.grad(lambda w: loss(w, x, y).mean())
        return torch.func.jvp(grad, (w,), (v,))[1]

    per_example = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    w, x, y, v = (torch.from_numpy(a) for a in _data())
    out[VMAP, "torch"] = lambda: per_example(w, x, y)
    out[HVP, "torch"] = lambda: hvp(w, v, x, y)
    for label, f, args in [(VMAP_JIT, per_example, (w, x, y)), (HVP_JIT, hvp, (w, v, x, y))]:
        compiled = torch_compiled(f, *args)
        out[label, "torch.compile"] = compiled if not callable(compiled) else \
            (lambda compiled=compiled, args=args: compiled(*args))


def cases(frameworks, didax_jit) -> dict:
    """{(label, column): call}; the jitted didax rows are `didax_jit` itself when that is
    Unavailable."""
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        _add_cases(out, "didax", didax, dnp, didax_jit, [dnp.asarray(a) for a in _data()])
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        _add_cases(out, "jax", jax, jnp, jax.jit, jax.device_put(_data()),
                   block=jax.block_until_ready)
    if "torch" in frameworks:
        _torch_cases(out)
    return out


def check(frameworks) -> None:
    """All per-example gradients agree (vmap, the loop, jitted), and so do all HVPs."""
    from harness import Unavailable, assert_same_numbers, didax_jit, jit_or_eager, to_numpy

    per_example, hvps = {}, {}
    for (label, column), f in cases(frameworks, jit_or_eager(didax_jit())).items():
        if isinstance(f, Unavailable):
            continue
        if label == LOOP:
            per_example[f"{column} {label}"] = np.stack([to_numpy(g) for g in f()])
        elif label in (VMAP, VMAP_JIT):
            per_example[f"{column} {label}"] = f()
        else:
            hvps[f"{column} {label}"] = f()
    assert_same_numbers(per_example, "W5 per-example gradients", rtol=1e-4, atol=1e-6)
    assert_same_numbers(hvps, "W5 Hessian-vector products", rtol=1e-4, atol=1e-6)


def run(frameworks, rounds) -> list:
    from harness import didax_jit, rows, time_interleaved

    check(frameworks)
    return rows(time_interleaved(cases(frameworks, didax_jit()), rounds=rounds))
