"""didax.numpy.fft: NumPy's FFT functions over the `fft` primitive of `lax`, as JAX has them.

The primitive transforms the trailing axes, so the requested axes are moved there and back;
`n`/`s` crop or zero-pad the input first; `norm` scales the unnormalised forward and
1/N-normalised inverse transforms the primitive computes.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import dtypes
from didax._src.lax import fft as lax_fft
from didax._src.lax import shape as lax_shape
from didax._src.lax.fft import FftType
from didax._src.numpy import ufuncs
from didax._src.numpy.creation import arange
from didax._src.numpy.shape_ops import moveaxis, roll
from didax._src.numpy.util import array, asarray, check_arraylike, to_inexact_dtype

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _norm_scale(name: str, norm, s) -> float | None:
    """The factor `norm` puts on a transform of lengths `s` (None: leave it as it is).
    Transforms named i... are inverses, the others forward (hfft is forward, as in JAX)."""
    if norm is None or norm == "backward":
        return None
    if norm not in ("ortho", "forward"):
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    n = float(math.prod(s))
    if n == 0:  # an empty result
        return None
    scale = math.sqrt(n) if norm == "ortho" else n
    return scale if name.startswith("i") else 1 / scale


def _resize(arr, shape):
    """`arr` cropped or zero-padded at the end of each axis to `shape`."""
    old = arr.shape
    if tuple(shape) == old:
        return arr
    return lax_shape.pad(arr, 0, [(0, new - cur, 0) for new, cur in zip(shape, old)])


def _axes_and_lengths(full_name, arr, s, axes):
    """The transformed axes (JAX's defaults: all, or the last len(s)) and the lengths given."""
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
        if axes is not None and len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        if axes is None and len(s) > arr.ndim:  # (JAX would transform an axis twice)
            raise ValueError(f"{full_name}: s={s} has more entries than the array of shape "
                             f"{arr.shape} has dimensions; pass one length per transformed "
                             "axis")
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    axes = tuple(axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    return axes, s


def _fit(arr, fft_type, s, axes):
    """`arr` cropped or padded to the lengths `s` (for IRFFT: to the half spectrum of the
    last), and the FFT lengths: `s`, by default the input's (2 (m - 1) for IRFFT's last)."""
    if s is not None:
        shape = list(arr.shape)
        for axis, n in zip(axes, s):
            shape[axis] = n
        if fft_type == FftType.IRFFT:
            shape[-1] = shape[-1] // 2 + 1
        return _resize(arr, shape), s
    s = tuple(arr.shape[ax] for ax in axes)
    if fft_type == FftType.IRFFT and axes:
        s = s[:-1] + (max(0, 2 * (s[-1] - 1)),)
        if arr.shape[-1] == 0:  # an empty half spectrum: n = 0 needs one entry
            arr = _resize(arr, arr.shape[:-1] + (1,))
    return arr, s


def _fft_core(name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{name}"
    check_arraylike(full_name, a)
    arr = asarray(a)
    given_axes = axes
    axes, s = _axes_and_lengths(full_name, arr, s, axes)
    if given_axes is not None:  # the primitive transforms the trailing axes
        trailing = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = moveaxis(arr, axes, trailing)
        axes = trailing
    arr, s = _fit(arr, fft_type, s, axes)
    out = lax_fft.fft(arr, fft_type, s)
    scale = _norm_scale(name, norm, s)
    if scale is not None:
        out = ufuncs.multiply(out, scale)
    if given_axes is not None:
        out = moveaxis(out, axes, given_axes)
    return out


def _one_axis(name, axis):
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use "
                         f"{full_name}n. Got axis = {axis!r}.")
    return None if axis is None else [axis]


def _fft_core_1d(name, fft_type, a, n, axis, norm):
    return _fft_core(name, fft_type, a, None if n is None else [n], _one_axis(name, axis), norm)


def _fft_core_2d(name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(name, fft_type, a, s, axes, norm)


def fft(a, n=None, axis=-1, norm=None):
    """The discrete Fourier transform along `axis`."""
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """The inverse discrete Fourier transform along `axis`."""
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """The non-negative frequencies of the transform of a real array along `axis`."""
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """The real signal of length `n` (default 2 * (m - 1)) with half spectrum `a`."""
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The (real) transform of a signal with Hermitian symmetry, given its first half."""
    check_arraylike("jax.numpy.fft.hfft", a)
    conj_a = ufuncs.conj(asarray(a))
    _one_axis("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return ufuncs.multiply(_fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm), nn)


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of `hfft`: half the Hermitian spectrum of a real signal."""
    check_arraylike("jax.numpy.fft.ihfft", a)
    arr = asarray(a)
    _one_axis("ihfft", axis)
    nn = arr.shape[axis] if n is None else n
    out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return ufuncs.multiply(ufuncs.conj(out), 1 / nn if nn else 0.0)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional discrete Fourier transform over `axes`."""
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional inverse discrete Fourier transform over `axes`."""
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional transform of a real array (half spectrum along axes[-1])."""
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """The real two-dimensional inverse of `rfft2`."""
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    """The n-dimensional discrete Fourier transform over `axes` (default: all, or the last
    len(s))."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """The n-dimensional inverse discrete Fourier transform."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """The n-dimensional transform of a real array (half spectrum along the last axis)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """The real n-dimensional inverse of `rfftn`."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. "
                         f"Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The frequencies of the bins of an FFT of length `n` with sample spacing `d`: 0, 1,
    ..., then the negative ones, over d * n."""
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtypes.default_float_dtype() if dtype is None else dtype
    work = to_inexact_dtype(dtypes.canonicalize_dtype(out_dtype))
    if dtypes.kind(work) == "c":  # computed in the real dtype of the same precision
        work = np.dtype(np.float64 if work.itemsize == 16 else np.float32)
    i = arange(n, dtype=work)
    k = ufuncs.subtract(ufuncs.remainder(ufuncs.add(i, n // 2), n), n // 2)
    result = ufuncs.true_divide(k, array(d * n, dtype=work))
    return result.astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The frequencies of the bins of an RFFT of length `n`: 0, 1, ..., n // 2, over d * n."""
    _check_freq_args("rfftfreq", n, d)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    k = arange(0, n // 2 + 1, dtype=dtype)
    return ufuncs.true_divide(k, array(d * n, dtype=dtype))


def _shift(name, x, axes, sign):
    """`x` rolled by `sign` * half the length along each of `axes` (default: all)."""
    check_arraylike(name, x)
    x = asarray(x)
    if axes is None:
        if x.ndim == 0:
            return x
        axes = tuple(range(x.ndim))
        return roll(x, [sign * (dim // 2) for dim in x.shape], axes)
    if isinstance(axes, int):
        return roll(x, sign * (x.shape[axes] // 2), axes)
    return roll(x, [sign * (x.shape[ax] // 2) for ax in axes], axes)


def fftshift(x, axes=None):
    """`x` rolled so that the zero frequency is in the middle of each of `axes`."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of `fftshift` (they differ for odd lengths)."""
    return _shift("ifftshift", x, axes, -1)
