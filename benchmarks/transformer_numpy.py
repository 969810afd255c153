"""The Transformer Adam step of transformer_step.py written by hand in NumPy (float32):
forward pass, backward pass and Adam update, as a NumPy user who cares for speed writes it.

Every layer works on the (batch * seq, d_model) matrix of token vectors. The query, key and
value projections are one product with the three matrices side by side, and the heads are
(batch, heads, seq, head) views of it, so attention is batched matmuls with no loop over
batch or heads, and the three projections' gradients are written into one matrix the
weight gradient is one product with. The forward pass keeps what the backward pass needs
(normalised inputs and reciprocal deviations of the layer norms, attention probabilities,
the gelu's tanh), and softmax and exponentials run in place on arrays nothing else reads.
"""
from __future__ import annotations

import numpy as np

GELU_C, GELU_A = 0.7978845608028654, 0.044715  # tanh-gelu: sqrt(2 / pi), cubic coefficient


def _layer_norm(x, gain, bias, eps):
    """The normalised rows, with the normalised input and reciprocal deviation kept for the
    backward pass."""
    centred = x - x.mean(axis=-1, keepdims=True)
    rstd = np.square(centred).mean(axis=-1, keepdims=True)
    rstd += eps
    np.sqrt(rstd, out=rstd)
    np.reciprocal(rstd, out=rstd)
    centred *= rstd
    return centred * gain + bias, centred, rstd


def _layer_norm_grad(dy, normed, rstd, gain):
    """(input gradient, gain gradient, bias gradient); the input's mean and deviation depend
    on every entry of its row, hence the two row means."""
    d_normed = dy * gain
    dx = d_normed - d_normed.mean(axis=-1, keepdims=True)
    dx -= normed * np.einsum("nd,nd->n", d_normed, normed)[:, None] * (1.0 / dy.shape[-1])
    dx *= rstd
    return dx, np.einsum("nd,nd->d", dy, normed), dy.sum(axis=0)


class Step:
    """One Adam step of the Transformer: (params, m, v, count, tokens) -> (params, m, v,
    count, loss), the parameters and moments dicts of float32 arrays as transformer_step's.

    The causal mask is added to the scores (0 or `masked`) rather than selected with
    `where`: the sum rounds to `masked` exactly where it applies, and the add is in place.
    """

    def __init__(self, heads, ln_eps, masked, lr, b1, b2, eps):
        self.heads, self.ln_eps, self.masked = heads, ln_eps, masked
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self._mask = np.zeros((0, 0), np.float32)

    def _causal(self, seq):
        if self._mask.shape != (seq, seq):
            self._mask = np.triu(np.full((seq, seq), self.masked, np.float32), 1)
        return self._mask

    def _heads(self, qkv, batch, seq):
        """(3, batch, heads, seq, head) views of the (batch * seq, 3 * d) projections."""
        head = qkv.shape[-1] // (3 * self.heads)
        return qkv.reshape(batch, seq, 3, self.heads, head).transpose(2, 0, 3, 1, 4)

    def _attention(self, h, p, layer, batch, seq):
        wqkv = np.concatenate([p[layer + "wq"], p[layer + "wk"], p[layer + "wv"]], axis=1)
        qkv = h @ wqkv
        q, k, v = self._heads(qkv, batch, seq)
        probs = q @ k.swapaxes(-1, -2)
        probs *= q.shape[-1] ** -0.5
        probs += self._causal(seq)
        probs -= probs.max(axis=-1, keepdims=True)
        np.exp(probs, out=probs)
        probs /= probs.sum(axis=-1, keepdims=True)
        mixed = (probs @ v).transpose(0, 2, 1, 3).reshape(h.shape)
        return mixed @ p[layer + "wo"], (wqkv, qkv, probs, mixed)

    def _attention_grad(self, dy, h, p, layer, saved, grads, batch, seq):
        """The gradient of the attention block's input; its weights' gradients into `grads`."""
        wqkv, qkv, probs, mixed = saved
        q, k, v = self._heads(qkv, batch, seq)
        grads[layer + "wo"] = mixed.T @ dy
        d_mixed = (dy @ p[layer + "wo"].T).reshape(batch, seq, self.heads, -1)
        d_mixed = d_mixed.transpose(0, 2, 1, 3)
        d_qkv = np.empty_like(qkv)
        dq, dk, dv = self._heads(d_qkv, batch, seq)
        np.matmul(probs.swapaxes(-1, -2), d_mixed, out=dv)
        d_scores = d_mixed @ v.swapaxes(-1, -2)
        d_scores -= np.einsum("bhij,bhij->bhi", d_scores, probs)[..., None]
        d_scores *= probs  # (zero where masked: those probabilities are zero)
        d_scores *= q.shape[-1] ** -0.5
        np.matmul(d_scores, k, out=dq)
        np.matmul(d_scores.swapaxes(-1, -2), q, out=dk)
        d_wqkv = h.T @ d_qkv
        for name, part in zip(("wq", "wk", "wv"), np.split(d_wqkv, 3, axis=1)):
            grads[layer + name] = part
        return d_qkv @ wqkv.T

    def _adam(self, params, grads, m, v, count):
        t = count + 1
        step = self.lr / (1 - self.b1 ** float(t))
        bc2 = 1 - self.b2 ** float(t)
        new_p, new_m, new_v = {}, {}, {}
        for k, g in grads.items():
            mk = g * (1 - self.b1)
            mk += self.b1 * m[k]
            vk = np.square(g)
            vk *= 1 - self.b2
            vk += self.b2 * v[k]
            denom = vk / bc2
            np.sqrt(denom, out=denom)
            denom += self.eps
            update = mk * step
            update /= denom
            new_p[k], new_m[k], new_v[k] = params[k] - update, mk, vk
        return new_p, new_m, new_v, np.float32(t)

    def __call__(self, params, m, v, count, tokens):
        p = params
        inputs, targets = tokens[:, :-1], tokens[:, 1:].reshape(-1)
        batch, seq = inputs.shape
        d = p["pos"].shape[1]
        n = batch * seq
        layers = [f"layer{i}." for i in range(sum(k.endswith(".wq") for k in p))]

        # forward
        x = (p["embed"][inputs] + p["pos"]).reshape(n, d)
        saved = []
        for layer in layers:
            h1, normed1, rstd1 = _layer_norm(x, p[layer + "ln1.g"], p[layer + "ln1.b"],
                                             self.ln_eps)
            out, attention = self._attention(h1, p, layer, batch, seq)
            x = x + out
            h2, normed2, rstd2 = _layer_norm(x, p[layer + "ln2.g"], p[layer + "ln2.b"],
                                             self.ln_eps)
            u = h2 @ p[layer + "mlp.w1"]
            u += p[layer + "mlp.b1"]
            tanh = u * u
            tanh *= GELU_A
            tanh += 1.0
            tanh *= u
            tanh *= GELU_C
            np.tanh(tanh, out=tanh)
            gelu = tanh + 1.0
            gelu *= u
            gelu *= 0.5
            x = x + gelu @ p[layer + "mlp.w2"]
            x += p[layer + "mlp.b2"]
            saved.append((h1, normed1, rstd1, attention, h2, normed2, rstd2, u, tanh, gelu))
        hf, normed_f, rstd_f = _layer_norm(x, p["final_ln.g"], p["final_ln.b"], self.ln_eps)
        logits = hf @ p["head.w"]
        logits += p["head.b"]
        logits -= logits.max(axis=-1, keepdims=True)
        rows = np.arange(n)
        picked = logits[rows, targets]
        np.exp(logits, out=logits)
        total = logits.sum(axis=-1)
        loss = (np.log(total) - picked).mean(dtype=np.float32)

        # backward: the softmax's gradient is computed in the exponentials' array
        grads = {}
        d_logits = logits
        d_logits *= (1.0 / n / total)[:, None]
        d_logits[rows, targets] -= 1.0 / n
        grads["head.w"] = hf.T @ d_logits
        grads["head.b"] = d_logits.sum(axis=0)
        dx, grads["final_ln.g"], grads["final_ln.b"] = _layer_norm_grad(
            d_logits @ p["head.w"].T, normed_f, rstd_f, p["final_ln.g"])
        for layer, (h1, normed1, rstd1, attention, h2, normed2, rstd2, u, tanh,
                    gelu) in zip(reversed(layers), reversed(saved)):
            grads[layer + "mlp.w2"] = gelu.T @ dx
            grads[layer + "mlp.b2"] = dx.sum(axis=0)
            # gelu'(u) = (1 + tanh) / 2 + u (1 - tanh^2) c (1 + 3 a u^2) / 2
            slope = u * u
            slope *= 3 * GELU_A * GELU_C
            slope += GELU_C
            slope *= u
            slope *= 1.0 - np.square(tanh)
            slope += tanh
            slope += 1.0
            slope *= 0.5
            du = dx @ p[layer + "mlp.w2"].T
            du *= slope
            grads[layer + "mlp.w1"] = h2.T @ du
            grads[layer + "mlp.b1"] = du.sum(axis=0)
            dh, grads[layer + "ln2.g"], grads[layer + "ln2.b"] = _layer_norm_grad(
                du @ p[layer + "mlp.w1"].T, normed2, rstd2, p[layer + "ln2.g"])
            dx += dh
            dh = self._attention_grad(dx, h1, p, layer, attention, grads, batch, seq)
            dh, grads[layer + "ln1.g"], grads[layer + "ln1.b"] = _layer_norm_grad(
                dh, normed1, rstd1, p[layer + "ln1.g"])
            dx += dh
        grads["pos"] = dx.reshape(batch, seq, d).sum(axis=0)
        # embedding rows repeat: a 1-d add.at over flat indices is the fast unbuffered sum
        embed = np.zeros(p["embed"].size, np.float32)
        flat = (inputs.reshape(-1, 1) * d + np.arange(d)).reshape(-1)
        np.add.at(embed, flat, dx.reshape(-1))
        grads["embed"] = embed.reshape(p["embed"].shape)
        return (*self._adam(params, grads, m, v, count), loss)
