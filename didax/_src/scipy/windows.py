"""Window functions for spectral analysis, as NumPy constants (they depend only on the
segment length): the periodic form SciPy's `get_window` gives for FFT use, that is the
symmetric window of M + 1 points without its last point."""
from __future__ import annotations

import operator

import numpy as np

__all__ = ["get_window"]


def _hann(m):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(m) / (m - 1))


def _hamming(m):
    return 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(m) / (m - 1))


def _blackman(m):
    t = 2 * np.pi * np.arange(m) / (m - 1)
    return 0.42 - 0.5 * np.cos(t) + 0.08 * np.cos(2 * t)


def _bartlett(m):
    n = np.arange(m)
    return np.where(n <= (m - 1) / 2, 2 * n / (m - 1), 2 - 2 * n / (m - 1))


def _triang(m):
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        half = (2 * n - 1.0) / m
        return np.concatenate([half, half[::-1]])
    half = 2 * n / (m + 1.0)
    return np.concatenate([half, half[-2::-1]])


def _boxcar(m):
    return np.ones(m)


def _cosine(m):
    return np.sin(np.pi / m * (np.arange(m) + 0.5))


def _tukey(m, alpha=0.5):
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1:
        return _hann(m)
    n = np.arange(m)
    width = int(np.floor(alpha * (m - 1) / 2.0))
    rise = n[:width + 1]
    fall = n[m - width - 1:]
    w_rise = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * rise / alpha / (m - 1))))
    w_fall = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * fall / alpha / (m - 1))))
    return np.concatenate([w_rise, np.ones(m - 2 * width - 2), w_fall])


_WINDOWS = {
    "hann": _hann, "hanning": _hann, "han": _hann,
    "hamming": _hamming, "hamm": _hamming, "ham": _hamming,
    "blackman": _blackman, "black": _blackman, "blk": _blackman,
    "bartlett": _bartlett, "bart": _bartlett, "brt": _bartlett,
    "triang": _triang, "triangle": _triang, "tri": _triang,
    "boxcar": _boxcar, "box": _boxcar, "ones": _boxcar, "rect": _boxcar,
    "rectangular": _boxcar,
    "cosine": _cosine, "halfcosine": _cosine,
    "tukey": _tukey, "tuk": _tukey,
}


def get_window(window, nx):
    """The periodic window named by `window` (a name, or a tuple (name, *parameters)) with
    nx points, in float64."""
    nx = operator.index(nx)
    name, params = (window[0], window[1:]) if isinstance(window, tuple) else (window, ())
    if not isinstance(name, str) or name.lower() not in _WINDOWS:
        raise NotImplementedError(f"window {window!r} is not supported; the supported "
                                  f"windows are {sorted(set(_WINDOWS))}, or pass the window "
                                  f"as an array")
    if nx <= 0:
        raise ValueError(f"window length must be positive, got {nx}")
    if nx == 1:
        return np.ones(1)
    if name.lower() in ("cosine", "halfcosine"):
        # defined without the (M - 1) denominator; its periodic form is its own on M + 1
        return _cosine(nx + 1)[:-1]
    return _WINDOWS[name.lower()](nx + 1, *params)[:-1]
