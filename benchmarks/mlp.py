"""The relu MLP with softmax cross-entropy of W3 and W4, in each framework, and its forward
and backward pass written by hand in NumPy (the baseline a NumPy user would write)."""
from __future__ import annotations

import numpy as np


def data(sizes, batch, seed=0):
    """He-initialised float32 parameters `[(w, b), ...]`, inputs and one-hot labels."""
    rng = np.random.default_rng(seed)
    params = [((rng.standard_normal((m, n)) * np.sqrt(2.0 / m)).astype(np.float32),
               np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    return params, x, y


def loss_fn(np_like, stop_gradient):
    """Mean softmax cross-entropy of the MLP, for `didax.numpy` or `jax.numpy`."""
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = np_like.maximum(h @ w + b, 0.0)
        w, b = params[-1]
        logits = h @ w + b
        m = stop_gradient(np_like.max(logits, axis=1, keepdims=True))
        lse = m + np_like.log(np_like.sum(np_like.exp(logits - m), axis=1, keepdims=True))
        return np_like.mean(np_like.sum(y * (lse - logits), axis=1))

    return loss


def torch_loss(params, x, y):
    import torch

    h = x
    for w, b in params[:-1]:
        h = torch.relu(h @ w + b)
    w, b = params[-1]
    return -(y * torch.log_softmax(h @ w + b, dim=1)).sum(1).mean()


def torch_data(params, x, y):
    """PyTorch copies of `data`'s parameters (requiring gradients; also as one flat list),
    inputs and labels."""
    import torch

    params = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
              for w, b in params]
    flat = [p for layer in params for p in layer]
    return params, flat, torch.from_numpy(x), torch.from_numpy(y)


def torch_sgd_trainer(sizes, batch, lr):
    """A PyTorch eager SGD step on fresh parameters, updated in place: () -> (params, loss)."""
    import torch

    params, flat, x, y = torch_data(*data(sizes, batch))

    def step():
        value = torch_loss(params, x, y)
        grads = torch.autograd.grad(value, flat)
        with torch.no_grad():
            for p, g in zip(flat, grads):
                p.sub_(g, alpha=lr)
        return params, value.detach()

    return step


def sgd_step_fn(value_and_grad, loss, lr):
    """A fresh SGD step function object (so nothing keyed on the function is cached):
    (params, x, y) -> (updated params, loss)."""
    def step(params, x, y):
        value, grads = value_and_grad(loss)(params, x, y)
        return sgd(params, grads, lr), value

    return step


def training(step, params, x, y, block=lambda out: out):
    """A call that advances its own copy of the parameters by one step: (params, loss)."""
    state = [params]

    def advance():
        state[0], _ = out = block(step(state[0], x, y))
        return out

    return advance


def sgd(params, grads, lr):
    return [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]


class NumpyMLP:
    """Forward and backward pass by hand into buffers allocated once, for one batch size.

    Labels must be one-hot (rows summing to one), which makes the logits' gradient
    `softmax - y`. The scale of the gradient (1 / batch, times the learning rate for an SGD
    step) is applied once, to that small array, and flows through the backward pass.
    """

    def __init__(self, params, batch):
        self.z = [np.empty((batch, w.shape[1]), np.float32) for w, _ in params]
        self.dz = [np.empty_like(z) for z in self.z]
        self.active = [np.empty(z.shape, bool) for z in self.z[:-1]]
        self.grads = [(np.empty_like(w), np.empty_like(b)) for w, b in params]
        self.row_max = np.empty((batch, 1), np.float32)
        self.row_sum = np.empty((batch, 1), np.float32)
        self.log_sum = np.empty((batch, 1), np.float32)

    def _forward(self, params, x, y) -> np.float32:
        """The loss; leaves the activations in `z` and exp(logits - max) in `dz[-1]`."""
        a = x
        for z, (w, b) in zip(self.z, params):
            np.matmul(a, w, out=z)
            z += b
            if z is not self.z[-1]:
                np.maximum(z, 0.0, out=z)
            a = z
        logits, e = self.z[-1], self.dz[-1]
        np.max(logits, axis=1, keepdims=True, out=self.row_max)
        np.subtract(logits, self.row_max, out=e)
        np.exp(e, out=e)
        np.sum(e, axis=1, keepdims=True, out=self.row_sum)
        np.log(self.row_sum, out=self.log_sum)
        total = self.row_max.sum() + self.log_sum.sum() - np.vdot(y, logits)
        return total / np.float32(len(x))

    def _backward(self, params, x, y, scale) -> None:
        """`grads` := scale * gradient of the summed loss."""
        d = self.dz[-1]
        d /= self.row_sum
        d -= y
        d *= scale
        for i in reversed(range(len(params))):
            a_prev = x if i == 0 else self.z[i - 1]
            gw, gb = self.grads[i]
            np.matmul(a_prev.T, d, out=gw)
            np.sum(d, axis=0, out=gb)
            if i > 0:
                d_prev = self.dz[i - 1]
                np.matmul(d, params[i][0].T, out=d_prev)
                np.greater(a_prev, 0.0, out=self.active[i - 1])
                np.multiply(d_prev, self.active[i - 1], out=d_prev)
                d = d_prev

    def value_and_grad(self, params, x, y):
        """The loss and its gradient (the gradient lives in buffers reused by the next call)."""
        loss = self._forward(params, x, y)
        self._backward(params, x, y, np.float32(1.0 / len(x)))
        return loss, self.grads

    def sgd_step(self, params, x, y, lr) -> np.float32:
        """One SGD step on `params` in place; returns the loss before the step."""
        loss = self._forward(params, x, y)
        self._backward(params, x, y, np.float32(lr / len(x)))
        for (w, b), (gw, gb) in zip(params, self.grads):
            w -= gw
            b -= gb
        return loss
