"""didax.scipy.fft: the type-2 discrete cosine transform and its inverse, as JAX has them.

Each is one complex FFT of length N (Makhoul's algorithm): the DCT reorders the input
(even entries, then the odd ones reversed) so that its spectrum, turned by a quarter-sample
phase, has the DCT as real part; the inverse runs the same steps backwards. n-dimensional
transforms apply the one-dimensional one along each axis (the DCT is separable). Like JAX,
only type 2 and the norms "backward" (None) and "ortho" are supported; complex inputs are
transformed as real and imaginary parts.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from didax._src import dtypes
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.numpy import fft as jnp_fft
from didax._src.numpy import shape_ops, ufuncs
from didax._src.numpy.util import asarray, check_arraylike, to_inexact_dtype

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, x, type, norm):
    check_arraylike(name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")
    return asarray(x)


def _complex_dtype(dtype) -> np.dtype:
    wide = to_inexact_dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if wide else np.complex64)


def _axis(name, axis, ndim) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"jax.scipy.fft.{name}: axis {axis} is out of bounds for array of "
                         f"dimension {ndim}")
    return axis % ndim


def _along_last(name, x, n, axis):
    """`x` with `axis` moved last, cropped or zero-padded there to length `n`."""
    axis = _axis(name, axis, x.ndim)
    if n is not None:
        n = operator.index(n)
        if n < 1:
            raise ValueError(f"jax.scipy.fft.{name}: n={n} must be positive")
        x = lax_shape.pad(x, 0, [(0, n - d if a == axis else 0, 0)
                                 for a, d in enumerate(x.shape)])
    if x.shape[axis] == 0:
        raise ValueError(f"jax.scipy.fft.{name}: axis {axis} of the input of shape {x.shape} "
                         "is empty; there is nothing to transform")
    return shape_ops.moveaxis(x, axis, -1), axis


def _ortho_scale(n: int) -> np.ndarray:
    """The factors of the orthonormal DCT-II: sqrt(1 / 4N) for k = 0, sqrt(1 / 2N) after."""
    scale = np.full(n, 1 / math.sqrt(2 * n))
    scale[:1] = 1 / math.sqrt(4 * n)
    return scale


def _by_complex_parts(fn, x, **kwargs):
    if dtypes.kind(x.dtype) == "c":
        return lax.complex(fn(ufuncs.real(x), **kwargs), fn(ufuncs.imag(x), **kwargs))
    return None


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The type-2 discrete cosine transform along `axis` (scipy.fft.dct):
    y_k = 2 sum_n x_n cos(pi k (2n + 1) / 2N), scaled to be orthonormal with norm="ortho"."""
    x = _check("dct", x, type, norm)
    parts = _by_complex_parts(dct, x, n=n, axis=axis, norm=norm)
    if parts is not None:
        return parts
    x, axis = _along_last("dct", x, n, axis)
    size = x.shape[-1]
    v = lax_shape.concatenate([x[..., ::2], shape_ops.flip(x[..., 1::2], -1)], x.ndim - 1)
    spectrum = jnp_fft.fft(v)
    phase = np.exp(-0.5j * np.pi * np.arange(size) / size).astype(spectrum.dtype)
    out = ufuncs.multiply(ufuncs.real(ufuncs.multiply(spectrum, phase)), 2)
    if norm == "ortho":
        out = ufuncs.multiply(out, _ortho_scale(size).astype(out.dtype))
    return shape_ops.moveaxis(out, -1, axis)


def _deinterleave(v):
    """The inverse of the DCT's reordering: entry 2m is v[m], entry 2j + 1 is v[-1 - j]."""
    size = v.shape[-1]
    half = (size + 1) // 2
    evens, odds = v[..., :half], shape_ops.flip(v[..., half:], -1)
    if size % 2:
        odds = lax_shape.pad(odds, 0, [(0, 0, 0)] * (v.ndim - 1) + [(0, 1, 0)])
    pairs = lax_shape.concatenate([evens[..., None], odds[..., None]], v.ndim)
    return lax_shape.reshape(pairs, v.shape[:-1] + (2 * half,))[..., :size]


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of `dct` along `axis` (a DCT-III, divided by 2N unless norm="ortho")."""
    x = _check("idct", x, type, norm)
    parts = _by_complex_parts(idct, x, n=n, axis=axis, norm=norm)
    if parts is not None:
        return parts
    x, axis = _along_last("idct", x, n, axis)
    size = x.shape[-1]
    # x_n = 1/N Re sum_k c_k y_k e^{i pi k (2n + 1) / 2N}, c_0 = 1/2: with the input in the
    # DCT's order, one inverse FFT of the y_k turned by a quarter-sample phase.
    weights = np.exp(0.5j * np.pi * np.arange(size) / size)
    weights[:1] *= 0.5
    if norm == "ortho":
        weights = weights / _ortho_scale(size)
    weights = weights.astype(_complex_dtype(x.dtype))
    v = ufuncs.real(jnp_fft.ifft(ufuncs.multiply(x, weights)))
    return shape_ops.moveaxis(_deinterleave(v), -1, axis)


def _nd(name, one, x, type, s, axes, norm):
    x = _check(name, x, type, norm)
    parts = _by_complex_parts(functools.partial(_nd, name, one), x, type=type, s=s, axes=axes,
                              norm=norm)
    if parts is not None:
        return parts
    if s is not None:
        s = [operator.index(s)] if np.ndim(s) == 0 else list(s)
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = tuple(_axis(name, a, x.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"jax.scipy.fft.{name}: repeated axis in axes={axes}")
    lengths = dict(zip(axes, s)) if s is not None else {}
    for axis in axes:
        x = one(x, n=lengths.get(axis), axis=axis, norm=norm)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The type-2 DCT over `axes` (default: all, or the last len(s)); `s` crops or pads."""
    return _nd("dctn", dct, x, type, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of `dctn`."""
    return _nd("idctn", idct, x, type, s, axes, norm)
