"""W6, an LSTM by `lax.scan`: hidden 128, input 32, batch 32, 100 steps, float32; the
gradient of a squared-error loss on a linear read-out of every step's hidden state.

`jit(grad(loss))` on didax and JAX; the same cell in a Python loop with PyTorch eager
autograd; and backpropagation through time written by hand in NumPy.
"""
from __future__ import annotations

import numpy as np

HIDDEN, INPUT, BATCH, STEPS = 128, 32, 32, 100
LABEL = "W6 jit(grad) LSTM by scan, 100 steps"


def _data():
    """Parameters (wx, wh, b, w_out) with gates in the order input, forget, cell, output;
    inputs (steps, batch, input) and targets (steps, batch)."""
    rng = np.random.default_rng(0)
    wx = (rng.standard_normal((INPUT, 4 * HIDDEN)) / np.sqrt(INPUT)).astype(np.float32)
    wh = (rng.standard_normal((HIDDEN, 4 * HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
    b = np.zeros(4 * HIDDEN, np.float32)
    w_out = (rng.standard_normal(HIDDEN) / np.sqrt(HIDDEN)).astype(np.float32)
    xs = rng.standard_normal((STEPS, BATCH, INPUT)).astype(np.float32)
    ys = rng.standard_normal((STEPS, BATCH)).astype(np.float32)
    return (wx, wh, b, w_out), xs, ys


def _loss(np_like, lax):
    """The loss for `didax` or `jax`, given their numpy and lax modules."""
    H = HIDDEN
    sigmoid = lax.logistic

    def loss(params, xs, ys):
        wx, wh, b, w_out = params

        def cell(carry, x):
            h, c = carry
            gates = x @ wx + h @ wh + b
            i, f = sigmoid(gates[:, :H]), sigmoid(gates[:, H:2 * H])
            g, o = np_like.tanh(gates[:, 2 * H:3 * H]), sigmoid(gates[:, 3 * H:])
            c = f * c + i * g
            h = o * np_like.tanh(c)
            return (h, c), h

        zeros = np_like.zeros((BATCH, H), np_like.float32)
        _, hs = lax.scan(cell, (zeros, zeros), xs)
        return np_like.mean((hs @ w_out - ys) ** 2)

    return loss


def _torch_loss(params, xs, ys):
    import torch

    wx, wh, b, w_out = params
    H = HIDDEN
    h = c = torch.zeros(BATCH, H)
    hs = []
    for x in xs:
        gates = x @ wx + h @ wh + b
        i, f = torch.sigmoid(gates[:, :H]), torch.sigmoid(gates[:, H:2 * H])
        g, o = torch.tanh(gates[:, 2 * H:3 * H]), torch.sigmoid(gates[:, 3 * H:])
        c = f * c + i * g
        h = o * torch.tanh(c)
        hs.append(h)
    return ((torch.stack(hs) @ w_out - ys) ** 2).mean()


def _sigmoid(z, out):
    np.negative(z, out=out)
    np.exp(out, out=out)
    out += 1.0
    np.reciprocal(out, out=out)


class NumpyLSTM:
    """Forward pass storing the gate activations, then backpropagation through time.

    The input projections of all steps are one matrix product before the loop, and the
    weight gradients one product each after it; only the recurrence is a Python loop.
    """

    def __init__(self):
        T, B, H = STEPS, BATCH, HIDDEN
        self.acts = np.empty((T, B, 4 * H), np.float32)  # i, f, g, o after nonlinearity
        self.hs = np.zeros((T + 1, B, H), np.float32)  # hs[t + 1] is the state after step t
        self.cs = np.zeros((T + 1, B, H), np.float32)
        self.tanh_cs = np.empty((T, B, H), np.float32)
        self.d_gates = np.empty((T, B, 4 * H), np.float32)
        self.tmp = np.empty((B, H), np.float32)

    def value_and_grad(self, params, xs, ys):
        wx, wh, b, w_out = params
        T, B, H = STEPS, BATCH, HIDDEN
        acts, hs, cs, tanh_cs, tmp = self.acts, self.hs, self.cs, self.tanh_cs, self.tmp
        np.matmul(xs.reshape(T * B, INPUT), wx, out=acts.reshape(T * B, 4 * H))
        acts += b
        for t in range(T):
            a = acts[t]
            a += hs[t] @ wh
            _sigmoid(a[:, :2 * H], a[:, :2 * H])
            np.tanh(a[:, 2 * H:3 * H], out=a[:, 2 * H:3 * H])
            _sigmoid(a[:, 3 * H:], a[:, 3 * H:])
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            np.multiply(f, cs[t], out=cs[t + 1])
            np.multiply(i, g, out=tmp)
            cs[t + 1] += tmp
            np.tanh(cs[t + 1], out=tanh_cs[t])
            np.multiply(o, tanh_cs[t], out=hs[t + 1])
        h_all = hs[1:].reshape(T * B, H)
        residual = h_all @ w_out - ys.reshape(T * B)
        value = np.mean(residual ** 2)

        d_pred = residual * np.float32(2.0 / (T * B))
        d_w_out = d_pred @ h_all
        d_hs = np.multiply.outer(d_pred, w_out).reshape(T, B, H)  # from the read-out
        dh, dc = np.zeros((B, H), np.float32), np.zeros((B, H), np.float32)
        for t in reversed(range(T)):
            a, d = acts[t], self.d_gates[t]
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            dh += d_hs[t]
            # output gate: d o_pre = dh * tanh(c) * o * (1 - o)
            np.multiply(dh, tanh_cs[t], out=d[:, 3 * H:])
            d[:, 3 * H:] *= o * (1.0 - o)
            # cell: dc += dh * o * (1 - tanh(c)^2)
            dc += dh * o * (1.0 - tanh_cs[t] ** 2)
            np.multiply(dc, g * i * (1.0 - i), out=d[:, :H])
            np.multiply(dc, cs[t] * f * (1.0 - f), out=d[:, H:2 * H])
            np.multiply(dc, i * (1.0 - g ** 2), out=d[:, 2 * H:3 * H])
            dc *= f
            np.matmul(d, wh.T, out=dh)
        d_flat = self.d_gates.reshape(T * B, 4 * H)
        d_wx = xs.reshape(T * B, INPUT).T @ d_flat
        d_wh = hs[:-1].reshape(T * B, H).T @ d_flat
        d_b = d_flat.sum(axis=0)
        return value, (d_wx, d_wh, d_b, d_w_out)


def _functions(frameworks, didax_jit) -> dict:
    """{column: a call returning the gradient}."""
    params, xs, ys = _data()
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        if callable(didax_jit):
            g = didax_jit(didax.grad(_loss(dnp, didax.lax)))
            pd = tuple(dnp.asarray(a) for a in params)
            xd, yd = dnp.asarray(xs), dnp.asarray(ys)
            out["didax"] = lambda: g(pd, xd, yd)
        else:
            out["didax"] = didax_jit
    if "numpy" in frameworks:
        model = NumpyLSTM()
        out["numpy"] = lambda: model.value_and_grad(params, xs, ys)[1]
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        gj = jax.jit(jax.grad(_loss(jnp, jax.lax)))
        pj, xj, yj = jax.device_put((params, xs, ys))
        out["jax"] = lambda: jax.block_until_ready(gj(pj, xj, yj))
    if "torch" in frameworks:
        import torch

        pt = tuple(torch.tensor(a, requires_grad=True) for a in params)
        xt, yt = torch.from_numpy(xs), torch.from_numpy(ys)
        out["torch"] = lambda: torch.autograd.grad(_torch_loss(pt, xt, yt), pt)
    return out


def cases(frameworks) -> dict:
    from harness import didax_jit

    return {(LABEL, c): f for c, f in _functions(frameworks, didax_jit()).items()}


def check(frameworks) -> None:
    from harness import assert_same_numbers, didax_jit, jit_or_eager

    results = {c: f() for c, f in _functions(frameworks, jit_or_eager(didax_jit())).items()}
    assert_same_numbers(results, "W6 LSTM gradients", rtol=1e-4, scaled_atol=1e-5)


def run(frameworks, rounds) -> list:
    from harness import rows, time_interleaved

    check(frameworks)
    return rows(time_interleaved(cases(frameworks), rounds=rounds))
