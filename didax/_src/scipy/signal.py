"""didax.scipy.signal: convolution (direct and by FFT), detrending, and the short-time
Fourier transform with the spectral estimates built on it (Welch's PSD, the cross spectral
density), following SciPy's conventions and JAX's dtype rules (inputs become inexact).

Direct convolution is one `conv_general_dilated` with the kernel reversed; correlation is
convolution with the reversed conjugate. Spectral estimates cut the signal into overlapping
frames with one gather, window them and take one FFT per frame.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from didax._src.lax import conv as lax_conv
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from didax._src.scipy.windows import get_window

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve", "detrend",
           "stft", "istft", "welch", "csd"]

_MODES = ("full", "same", "valid")


def _check_mode(name, mode):
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {list(_MODES)}, got {mode!r}")


def _valid_order(name, in1, in2):
    """(in1, in2) with the larger first, as 'valid' needs; each must contain the other."""
    if all(a >= b for a, b in zip(in1.shape, in2.shape)):
        return in1, in2
    if all(a <= b for a, b in zip(in1.shape, in2.shape)):
        return in2, in1
    raise ValueError(f"{name}: in 'valid' mode one input must be at least as large as the "
                     f"other in every dimension, got shapes {in1.shape} and {in2.shape}")


def _direct(name, in1, in2, mode, precision, early=False):
    """N-d convolution of in1 with in2 by one windowed product (the kernel reversed).

    'same' takes in1's shape from the full result, starting (k - 1) // 2 in for a kernel of
    length k, or k // 2 in when `early` (SciPy's 2-d correlation)."""
    _check_mode(name, mode)
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError(f"{name}: in1 and in2 must have the same number of dimensions, got "
                         f"shapes {in1.shape} and {in2.shape}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {in1.shape} and "
                         f"{in2.shape}")
    if in1.ndim == 0:
        return in1 * in2
    if mode == "valid":
        in1, in2 = _valid_order(name, in1, in2)
    if mode == "full":
        pads = [(k - 1, k - 1) for k in in2.shape]
    elif mode == "same":
        starts = [k // 2 if early else (k - 1) // 2 for k in in2.shape]
        pads = [(k - 1 - s, s) for k, s in zip(in2.shape, starts)]
    else:
        pads = [(0, 0)] * in1.ndim
    kernel = jnp.flip(in2)
    out = lax_conv.conv_general_dilated(in1[None, None], kernel[None, None],
                                        (1,) * in1.ndim, pads, precision=precision)
    return out[0, 0]


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-d convolution of in1 and in2; 'fft' computes it through fftconvolve."""
    check_arraylike("convolve", in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"convolve: method must be 'auto', 'direct' or 'fft', got "
                         f"{method!r}")
    return _direct("convolve", in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-d cross-correlation: convolution with the reversed conjugate of in2."""
    check_arraylike("correlate", in1, in2)
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode=mode, method=method,
                    precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or not (isinstance(fillvalue, (int, float)) and fillvalue == 0):
        raise NotImplementedError(f"{name}: only boundary='fill' with fillvalue=0 is "
                                  f"supported, got boundary={boundary!r}, "
                                  f"fillvalue={fillvalue!r}")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}: inputs must be 2-dimensional, got shapes "
                         f"{np.shape(in1)} and {np.shape(in2)}")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-d convolution, zero-filled at the borders."""
    check_arraylike("convolve2d", in1, in2)
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _direct("convolve2d", in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-d cross-correlation, zero-filled at the borders."""
    check_arraylike("correlate2d", in1, in2)
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    return _direct("correlate2d", in1, jnp.flip(jnp.conj(in2)), mode, precision, early=True)


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolution along `axes` (all by default) as a product of spectra; the other axes
    are matched one to one."""
    check_arraylike("fftconvolve", in1, in2)
    _check_mode("fftconvolve", mode)
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError(f"fftconvolve: in1 and in2 must have the same number of "
                         f"dimensions, got shapes {in1.shape} and {in2.shape}")
    if in1.ndim == 0:
        return in1 * in2
    axes = tuple(range(in1.ndim)) if axes is None else (
        (axes,) if isinstance(axes, int) else tuple(axes))
    axes = tuple(sorted({operator.index(a) % in1.ndim for a in axes}))
    for d in range(in1.ndim):
        if d not in axes and in1.shape[d] != in2.shape[d]:
            raise ValueError(f"fftconvolve: shapes {in1.shape} and {in2.shape} must match "
                             f"outside the convolved axes {axes}")
    if mode == "valid":
        s1 = [in1.shape[a] for a in axes]
        s2 = [in2.shape[a] for a in axes]
        if not all(a >= b for a, b in zip(s1, s2)):
            if all(a <= b for a, b in zip(s1, s2)):
                in1, in2 = in2, in1
            else:
                raise ValueError(f"fftconvolve: in 'valid' mode one input must be at least "
                                 f"as large as the other along every axis, got shapes "
                                 f"{in1.shape} and {in2.shape}")
    full = [in1.shape[a] + in2.shape[a] - 1 for a in axes]
    if jnp.iscomplexobj(in1) or jnp.iscomplexobj(in2):
        out = jnp.fft.ifftn(jnp.fft.fftn(in1, full, axes) * jnp.fft.fftn(in2, full, axes),
                            full, axes)
    else:
        out = jnp.fft.irfftn(jnp.fft.rfftn(in1, full, axes) * jnp.fft.rfftn(in2, full, axes),
                             full, axes)
    if mode == "full":
        return out
    index = [slice(None)] * out.ndim
    for a, n in zip(axes, full):
        keep = in1.shape[a] if mode == "same" else in1.shape[a] - in2.shape[a] + 1
        start = (n - keep) // 2
        index[a] = slice(start, start + keep)
    return out[tuple(index)]


def _detrend_last(x, kind, bp):
    """Detrend along the last axis: subtract the mean, or a least-squares line per piece
    between breakpoints."""
    if kind in ("constant", "c"):
        return x - jnp.mean(x, axis=-1, keepdims=True)
    n = x.shape[-1]
    edges = sorted({0, n, *(int(b) for b in np.atleast_1d(bp))})
    if edges[0] < 0 or edges[-1] > n:
        raise ValueError(f"detrend: breakpoints must lie in [0, {n}], got {bp!r}")
    pieces = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        seg = x[..., lo:hi]
        t = np.arange(hi - lo, dtype=np.float64)
        t = jnp.asarray(t - t.mean(), dtype=x.real.dtype)
        centred = seg - jnp.mean(seg, axis=-1, keepdims=True)
        denom = jnp.sum(t * t)
        slope = jnp.sum(centred * t, axis=-1, keepdims=True) / jnp.where(denom > 0, denom, 1)
        pieces.append(centred - slope * t)
    return jnp.concatenate(pieces, axis=-1)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """data without its mean ('constant') or its least-squares line ('linear'), piecewise
    between the breakpoints bp."""
    del overwrite_data
    check_arraylike("detrend", data)
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {type!r}")
    (data,) = promote_dtypes_inexact(jnp.asarray(data))
    x = jnp.moveaxis(data, axis, -1)
    return jnp.moveaxis(_detrend_last(x, type, bp), -1, axis)


# -- the short-time Fourier transform and spectral estimates --------------------------------

def _frames(x, nperseg, step):
    """x (..., n) as overlapping frames (..., count, nperseg), each step samples on."""
    count = (x.shape[-1] - nperseg) // step + 1
    idx = np.arange(count)[:, None] * step + np.arange(nperseg)[None, :]
    return x[..., idx]


def _extend(x, width, boundary):
    """x extended at both ends of its last axis by `width` samples."""
    if boundary == "zeros":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(width, width)])
    if boundary == "constant":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(width, width)], mode="edge")
    if boundary in ("even", "odd"):
        head = jnp.flip(x[..., 1:width + 1], -1)
        tail = jnp.flip(x[..., -width - 1:-1], -1)
        if boundary == "odd":
            head = 2 * x[..., :1] - head
            tail = 2 * x[..., -1:] - tail
        return jnp.concatenate([head, x, tail], axis=-1)
    raise ValueError(f"boundary must be one of None, 'zeros', 'even', 'odd', 'constant', "
                     f"got {boundary!r}")


def _segment_detrend(detrend_, frames):
    if detrend_ is False or detrend_ is None:
        return frames
    if callable(detrend_):
        return detrend_(frames)
    return _detrend_last(frames, detrend_, 0)


def _spectral(name, x, y, fs, window, nperseg, noverlap, nfft, detrend_, return_onesided,
              scaling, axis, mode, boundary, padded):
    """(freqs, times, result (..., freq, segment)) for mode 'psd' (conj(X) Y, scaled) or
    'stft' (X / sum(window))."""
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"{name}: scaling must be 'density' or 'spectrum', got {scaling!r}")
    same = y is None
    if same:
        (x,) = promote_dtypes_inexact(jnp.asarray(x))
    else:
        x, y = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(y))
        if x.ndim != y.ndim and (x.ndim == 0 or y.ndim == 0):
            raise ValueError(f"{name}: x and y must both be arrays, got shapes {x.shape} and "
                             f"{y.shape}")
    axis = operator.index(axis) % max(x.ndim, 1)
    x = jnp.moveaxis(x, axis, -1)
    if not same:
        y = jnp.moveaxis(y, axis, -1)
        if x.shape[-1] != y.shape[-1]:  # the shorter one is zero-padded
            n = max(x.shape[-1], y.shape[-1])
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])
            y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, n - y.shape[-1])])
        batch = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        x = jnp.broadcast_to(x, batch + x.shape[-1:])
        y = jnp.broadcast_to(y, batch + y.shape[-1:])
    length = x.shape[-1]
    real_dtype = jnp.finfo(x.dtype).dtype
    win_given = not isinstance(window, (str, tuple))
    if nperseg is not None:
        nperseg = operator.index(nperseg)
        if nperseg < 1:
            raise ValueError(f"{name}: nperseg must be a positive integer, got {nperseg}")
    if win_given:
        win = np.asarray(window)
        if win.ndim != 1:
            raise ValueError(f"{name}: window must be 1-D, got shape {win.shape}")
        if nperseg is None:
            nperseg = win.shape[0]
        elif nperseg != win.shape[0]:
            raise ValueError(f"{name}: nperseg={nperseg} differs from the window's length "
                             f"{win.shape[0]}")
        if win.shape[0] > length:
            raise ValueError(f"{name}: the window ({win.shape[0]}) is longer than the "
                             f"input ({length})")
    else:
        if nperseg is None:
            nperseg = 256
        if nperseg > length:
            warnings.warn(f"nperseg={nperseg} is greater than the input length={length}, "
                          f"using nperseg={length}", stacklevel=3)
            nperseg = length
        win = get_window(window, nperseg)
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"{name}: noverlap ({noverlap}) must be less than nperseg "
                         f"({nperseg})")
    nfft = nperseg if nfft is None else operator.index(nfft)
    if nfft < nperseg:
        raise ValueError(f"{name}: nfft ({nfft}) must be at least nperseg ({nperseg})")
    step = nperseg - noverlap
    if boundary is not None:
        x = _extend(x, nperseg // 2, boundary)
        if not same:
            y = _extend(y, nperseg // 2, boundary)
    if padded:
        extra = (-(x.shape[-1] - nperseg) % step) % nperseg
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, extra)])
        if not same:
            y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, extra)])
    complex_input = jnp.iscomplexobj(x)
    if return_onesided and complex_input:
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      stacklevel=3)
        return_onesided = False
    win_j = jnp.asarray(win, dtype=real_dtype)
    if mode == "stft":
        scale = 1.0 / win.sum()
    elif scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    else:
        scale = 1.0 / win.sum() ** 2

    def spectrum(v):
        frames = _segment_detrend(detrend_, _frames(v, nperseg, step)) * win_j
        if return_onesided:
            return jnp.fft.rfft(frames, n=nfft, axis=-1)
        return jnp.fft.fft(frames, n=nfft, axis=-1)

    sx = spectrum(x)
    if mode == "stft":
        result = sx * jnp.asarray(scale, dtype=real_dtype)
    else:
        sy = sx if same else spectrum(y)
        result = jnp.conj(sx) * sy * jnp.asarray(scale, dtype=real_dtype)
        if return_onesided:
            last = -1 if nfft % 2 == 0 else None
            doubled = result[..., 1:last] * 2
            result = jnp.concatenate([result[..., :1], doubled]
                                     + ([result[..., last:]] if last else []), axis=-1)
    if return_onesided:
        freqs = np.fft.rfftfreq(nfft, 1.0)
    else:
        freqs = np.fft.fftfreq(nfft, 1.0)
    freqs = jnp.asarray(freqs, dtype=real_dtype) * fs
    count = result.shape[-2]
    times = np.arange(count) * step + nperseg / 2
    if boundary is not None:
        times = times - nperseg / 2
    times = jnp.asarray(times, dtype=real_dtype) / fs
    # frequencies take the place of the signal's axis; segments come last
    return freqs, times, jnp.moveaxis(jnp.swapaxes(result, -1, -2), -2, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """(frequencies, segment times, STFT (..., freq, time)) scaled by 1 / sum(window)."""
    check_arraylike("stft", x)
    return _spectral("stft", x, None, fs, window, nperseg, noverlap, nfft, detrend,
                     return_onesided, "spectrum", axis, "stft", boundary, padded)


def _average(name, pxy, average):
    """The mean or the bias-corrected median over the segments (last axis)."""
    if pxy.shape[-1] == 1:
        return pxy[..., 0]
    if average == "mean":
        return jnp.mean(pxy, axis=-1)
    if average == "median":
        k = pxy.shape[-1]
        ii = np.arange(1, (k - 1) // 2 + 1)
        bias = 1 + np.sum(1.0 / (ii * 2 + 1) - 1.0 / (ii * 2))
        if jnp.iscomplexobj(pxy):
            med = jnp.median(pxy.real, axis=-1) + 1j * jnp.median(pxy.imag, axis=-1)
        else:
            med = jnp.median(pxy, axis=-1)
        return med / jnp.asarray(bias, dtype=pxy.real.dtype)
    raise ValueError(f"{name}: average must be 'mean' or 'median', got {average!r}")


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """(frequencies, cross spectral density of x and y) by Welch's averaged periodograms;
    y=None gives x's power spectral density."""
    check_arraylike("csd", x)
    if y is not None:
        check_arraylike("csd", y)
    freqs, _, pxy = _spectral("csd", x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd", None, False)
    if y is None:
        pxy = pxy.real
    if pxy.ndim >= 2 and pxy.size > 0:
        pxy = _average("csd", pxy, average)
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """(frequencies, power spectral density) by Welch's averaged periodograms."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, pxx.real


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,  # noqa: N803
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """(times, signal): the inverse STFT by weighted overlap-add, exact for windows meeting
    the nonzero overlap-add condition."""
    check_arraylike("istft", Zxx)
    (Z,) = promote_dtypes_inexact(jnp.asarray(Zxx))
    if Z.ndim < 2:
        raise ValueError(f"istft: Zxx must have at least two dimensions, got shape {Z.shape}")
    time_axis = time_axis % Z.ndim
    freq_axis = freq_axis % Z.ndim
    if time_axis == freq_axis:
        raise ValueError("istft: time_axis and freq_axis must differ")
    Z = jnp.moveaxis(Z, (freq_axis, time_axis), (-2, -1))
    nfreq, count = Z.shape[-2], Z.shape[-1]
    default_n = 2 * (nfreq - 1) if input_onesided else nfreq
    if nperseg is None:
        nperseg = default_n
    nperseg = operator.index(nperseg)
    if nperseg < 1:
        raise ValueError(f"istft: nperseg must be a positive integer, got {nperseg}")
    if nfft is None:
        if input_onesided and nperseg == default_n + 1:
            nfft = nperseg  # an odd segment length, one-sided
        else:
            nfft = default_n
    nfft = operator.index(nfft)
    if nfft < nperseg:
        raise ValueError(f"istft: nfft ({nfft}) must be at least nperseg ({nperseg})")
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"istft: noverlap ({noverlap}) must be less than nperseg "
                         f"({nperseg})")
    step = nperseg - noverlap
    real_dtype = jnp.finfo(Z.dtype).dtype
    if isinstance(window, (str, tuple)):
        win = get_window(window, nperseg)
    else:
        win = np.asarray(window)
        if win.shape != (nperseg,):
            raise ValueError(f"istft: window must have shape ({nperseg},), got {win.shape}")
    frames = jnp.swapaxes(Z, -1, -2)  # (..., count, freq)
    if input_onesided:
        seg = jnp.fft.irfft(frames, n=nfft, axis=-1)
    else:
        seg = jnp.fft.ifft(frames, n=nfft, axis=-1)
    seg = seg[..., :nperseg] * jnp.asarray(win * win.sum(), dtype=real_dtype)
    length = nperseg + (count - 1) * step
    idx = (np.arange(count)[:, None] * step + np.arange(nperseg)[None, :]).reshape(-1)
    flat = seg.reshape(seg.shape[:-2] + (count * nperseg,))
    x = jnp.zeros(seg.shape[:-2] + (length,), seg.dtype).at[..., idx].add(flat)
    norm = np.zeros(length)
    np.add.at(norm, idx, np.tile(win * win, count))
    if boundary:
        half = nperseg // 2
        x = x[..., half:length - half]
        norm = norm[half:length - half]
    norm = np.where(norm > 1e-10, norm, 1.0)
    x = x / jnp.asarray(norm, dtype=real_dtype)
    x = jnp.moveaxis(x, -1, min(time_axis, freq_axis))
    # as in SciPy (and JAX), the times count along the first axis of the result
    times = jnp.asarray(np.arange(x.shape[0]), dtype=real_dtype) / fs
    return times, x

