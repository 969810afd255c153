"""W2, eager grad of a small MLP loss: 64-128-10, tanh, softmax cross-entropy, batch 32."""
from __future__ import annotations

import numpy as np

LABEL = "W2 eager grad, MLP 64-128-10"


def _data():
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((64, 128)) / 8).astype(np.float32)
    b1 = np.zeros(128, np.float32)
    w2 = (rng.standard_normal((128, 10)) / 11).astype(np.float32)
    b2 = np.zeros(10, np.float32)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    labels = rng.integers(0, 10, 32)
    y = np.eye(10, dtype=np.float32)[labels]
    return (w1, b1, w2, b2), x, y


def _loss_fn(np_like, logsumexp):
    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = np_like.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        return -np_like.mean(np_like.sum(y * (logits - logsumexp(logits)), axis=1))

    return loss


def cases(frameworks) -> dict:
    params, x, y = _data()
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        def lse(z):
            m = dnp.max(z, axis=1, keepdims=True)
            return m + dnp.log(dnp.sum(dnp.exp(z - m), axis=1, keepdims=True))

        g = didax.grad(_loss_fn(dnp, lse))
        p = tuple(dnp.asarray(a) for a in params)
        xd, yd = dnp.asarray(x), dnp.asarray(y)
        out[LABEL, "didax"] = lambda g=g, p=p: g(p, xd, yd)
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        def lse(z):
            return jax.nn.logsumexp(z, axis=1, keepdims=True)

        g = jax.grad(_loss_fn(jnp, lse))
        p = tuple(jnp.asarray(a) for a in params)
        xj, yj = jnp.asarray(x), jnp.asarray(y)
        out[LABEL, "jax"] = lambda g=g, p=p: jax.block_until_ready(g(p, xj, yj))
    if "autograd" in frameworks:
        import autograd
        import autograd.numpy as anp
        from autograd.scipy.special import logsumexp

        g = autograd.grad(_loss_fn(anp, lambda z: logsumexp(z, axis=1, keepdims=True)))
        out[LABEL, "autograd"] = lambda g=g: g(params, x, y)
    if "torch" in frameworks:
        import torch

        tp = [torch.tensor(a, requires_grad=True) for a in params]
        xt, yt = torch.tensor(x), torch.tensor(y)

        def torch_grad():
            w1, b1, w2, b2 = tp
            h = torch.tanh(xt @ w1 + b1)
            logits = h @ w2 + b2
            loss = -(yt * torch.log_softmax(logits, dim=1)).sum(1).mean()
            return torch.autograd.grad(loss, tp)

        out[LABEL, "torch"] = torch_grad
    return out


def check(frameworks) -> None:
    from harness import assert_same_numbers

    results = {column: fn() for (_, column), fn in cases(frameworks).items()}
    assert_same_numbers(results, "W2 gradients", rtol=2e-4, atol=2e-6)


def run(frameworks, rounds) -> list:
    from harness import rows, time_interleaved

    check(frameworks)
    return rows(time_interleaved(cases(frameworks), rounds=rounds))
