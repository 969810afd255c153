"""The geometry of windows over an operand (pooling, its derivatives, general window
reductions, select-and-scatter): output shapes and JAX's checks, where a dilated and padded
operand sits in its buffer, every window as a strided view, and the windows as the C loops
read them."""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from didax._src.core import ShapedArray
from didax._src.lax.conv import dilate_dim


def stride_dim(size: int, window: int, stride: int) -> int:
    return 0 if size < window else (size - window) // stride + 1


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The output shape of a windowed reduction."""
    if base_dilation is not None:
        operand_shape = map(dilate_dim, operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = map(dilate_dim, window_dimensions, window_dilation)
    padded = [n + lo + hi for n, (lo, hi) in zip(operand_shape, padding)]
    return tuple(stride_dim(p, w, s) for p, w, s in zip(padded, window_dimensions,
                                                          window_strides))


def check_positive(name: str, values, what: str) -> None:
    if any(v < 1 for v in values):
        raise TypeError(f"{name} {what} must have every element be strictly positive, got "
                        f"{tuple(values)}.")


def window_shape(name, x: ShapedArray, *, window_dimensions, window_strides, padding,
                  base_dilation, window_dilation, **_) -> tuple:
    """The output shape, after JAX's checks (errors name `name`)."""
    if x.ndim != len(window_dimensions):
        raise TypeError(f"{name} got the wrong number of window_dimensions for operand: got "
                        f"operand shape {x.shape} with window_dimensions "
                        f"{tuple(window_dimensions)}.")
    for what, values in (("window_strides", window_strides), ("padding", padding),
                         ("base_dilation", base_dilation),
                         ("window_dilation", window_dilation)):
        if len(values) != len(window_dimensions):
            raise TypeError(f"{name} got inconsistent {what} and window_dimensions: got "
                            f"{what} {tuple(values)} and window_dimensions "
                            f"{tuple(window_dimensions)}.")
    for what, values in (("window_dimensions", window_dimensions),
                         ("window_strides", window_strides), ("base_dilation", base_dilation),
                         ("window_dilation", window_dilation)):
        check_positive(name, values, what)
    return reduce_window_shape_tuple(x.shape, window_dimensions, window_strides, padding,
                                     base_dilation, window_dilation)


def placement(shape, padding, base_dilation):
    """Where a dilated, padded operand sits in a buffer: the buffer's shape (negative
    padding not applied), the slices of the buffer holding the operand, and the slices of
    the buffer that remain after negative padding crops it."""
    full, place, crop = [], [], []
    for n, (lo, hi), d in zip(shape, padding, base_dilation):
        size = dilate_dim(n, d)
        plo = max(lo, 0)
        full.append(plo + size + max(hi, 0))
        place.append(slice(plo, plo + size, d))
        crop.append(slice(max(-lo, 0), full[-1] - max(-hi, 0)))
    return tuple(full), tuple(place), tuple(crop)


def buffer(x, fill, padding, base_dilation):
    """`x` dilated and padded with `fill`: the full buffer, and its cropped view."""
    if all(p == (0, 0) for p in padding) and all(d == 1 for d in base_dilation):
        return x, x
    full, place, crop = placement(x.shape, padding, base_dilation)
    buf = np.full(full, fill, x.dtype)
    buf[place] = x
    return buf, buf[crop]


def windows(padded, window_dimensions, window_strides, window_dilation):
    """Every window of an already padded array, as a view of shape out + window."""
    extent = tuple(map(dilate_dim, window_dimensions, window_dilation))
    view = sliding_window_view(padded, extent)
    steps = tuple(slice(None, None, s) for s in window_strides)
    steps += tuple(slice(None, None, d) for d in window_dilation)
    return view[steps]


def positions(window_dimensions):
    """The window positions in XLA's visiting order (row-major), as view indices."""
    return [(Ellipsis,) + k for k in np.ndindex(*window_dimensions)]


def flat_windows(full, crop, window_dimensions, window_strides, window_dilation):
    """The windows of the C-contiguous buffer of shape `full`, cropped to `crop`, as the C
    loops read them (in elements): the steps between window starts per output dimension,
    the offsets of a window's positions in visiting order, and the first window's start."""
    strides = [math.prod(full[d + 1:]) for d in range(len(full))]
    offsets = [sum(i * r * m for i, r, m in zip(k, window_dilation, strides))
               for k in np.ndindex(*window_dimensions)]
    return ([s * m for s, m in zip(window_strides, strides)], offsets,
            sum(c.start * m for c, m in zip(crop, strides)))


def insert_unit(params: dict, at: int, names) -> dict:
    out = dict(params)
    for name in names:
        value = params[name]
        if value is None:
            continue
        unit = (0, 0) if name == "padding" else 1
        out[name] = tuple(value[:at]) + (unit,) + tuple(value[at:])
    return out


WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                  "window_dilation")
