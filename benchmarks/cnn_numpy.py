"""The CNN SGD step of cnn_step.py written by hand in NumPy: forward pass, backward pass and
update, as a NumPy user who cares for speed writes it. Convolutions are products of im2col
matrices (`sliding_window_view` copied once per convolution) with the HWIO kernel read as a
matrix; their input gradient is the product with the kernel's transpose, added back window
offset by window offset; max pooling routes each window's gradient to its first largest
value, average pooling spreads it over the window."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _im2col(x):
    """The 3x3 windows of `x` (N, H, W, C) padded by one ('SAME'), as rows (kh, kw, c) of a
    (N * H * W, 9 * C) matrix: the HWIO kernel reshaped to (9 * C, O) multiplies it."""
    n, h, w, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = sliding_window_view(padded, (3, 3), axis=(1, 2))  # (N, H, W, C, 3, 3)
    return windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * w, 9 * c)


def _col2im(cols, shape):
    """The gradient of `_im2col`: each window offset's rows added back where they came from."""
    n, h, w, c = shape
    cols = cols.reshape(n, h, w, 3, 3, c)
    padded = np.zeros((n, h + 2, w + 2, c), cols.dtype)
    for i in range(3):
        for j in range(3):
            padded[:, i:i + h, j:j + w] += cols[:, :, :, i, j]
    return padded[:, 1:-1, 1:-1]


def _conv(x, w, b):
    """'SAME' 3x3 convolution plus bias, and the im2col matrix (for the backward pass)."""
    n, h, width, _ = x.shape
    cols = _im2col(x)
    out = cols @ w.reshape(-1, w.shape[-1]) + b
    return out.reshape(n, h, width, -1), cols


def _max_pool(x):
    """2x2 max pooling; the flat index of each window's first largest value."""
    n, h, w, c = x.shape
    windows = x.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4)
    windows = windows.reshape(n, h // 2, w // 2, c, 4)
    index = windows.argmax(axis=-1)
    return np.take_along_axis(windows, index[..., None], -1)[..., 0], index


def _max_pool_grad(g, index, shape):
    n, h, w, c = shape
    windows = np.zeros((n, h // 2, w // 2, c, 4), g.dtype)
    np.put_along_axis(windows, index[..., None], g[..., None], -1)
    windows = windows.reshape(n, h // 2, w // 2, c, 2, 2).transpose(0, 1, 4, 2, 5, 3)
    return windows.reshape(shape)


def step(params, x, y, lr):
    """One SGD step: (updated params, loss), params [w1, b1, w2, b2, w3, b3] as cnn_step's."""
    w1, b1, w2, b2, w3, b3 = params
    n = x.shape[0]
    h1, cols1 = _conv(x, w1, b1)
    r1 = np.maximum(h1, 0.0)
    p1, index = _max_pool(r1)
    h2, cols2 = _conv(p1, w2, b2)
    r2 = np.maximum(h2, 0.0)
    _, hp, wp, c2 = r2.shape
    p2 = r2.reshape(n, hp // 2, 2, wp // 2, 2, c2).sum(axis=(2, 4)) * np.float32(0.25)
    flat = p2.reshape(n, -1)
    logits = flat @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    total = exp.sum(axis=1, keepdims=True)
    logp = shifted - np.log(total)
    loss = -np.mean(logp[np.arange(n), y])

    g_logits = exp / total
    g_logits[np.arange(n), y] -= 1.0
    g_logits /= np.float32(n)
    g_w3 = flat.T @ g_logits
    g_b3 = g_logits.sum(axis=0)
    g_p2 = (g_logits @ w3.T).reshape(p2.shape) * np.float32(0.25)
    g_h2 = np.broadcast_to(g_p2[:, :, None, :, None], (n, hp // 2, 2, wp // 2, 2, c2))
    g_h2 = g_h2.reshape(r2.shape) * (h2 > 0)
    g_h2 = g_h2.reshape(-1, c2)
    g_w2 = (cols2.T @ g_h2).reshape(w2.shape)
    g_b2 = g_h2.sum(axis=0)
    g_p1 = _col2im(g_h2 @ w2.reshape(-1, c2).T, p1.shape)
    g_h1 = _max_pool_grad(g_p1, index, r1.shape) * (h1 > 0)
    g_h1 = g_h1.reshape(-1, w1.shape[-1])
    g_w1 = (cols1.T @ g_h1).reshape(w1.shape)
    g_b1 = g_h1.sum(axis=0)
    grads = [g_w1, g_b1, g_w2, g_b2, g_w3, g_b3]
    return [p - np.float32(lr) * g for p, g in zip(params, grads)], loss
