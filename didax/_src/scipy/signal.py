"""didax.scipy.signal: convolutions, correlations and detrending, as JAX has them.

`convolve`, `correlate`, `convolve2d` and `correlate2d` are direct n-dimensional
convolutions (`lax.conv_general_dilated` with one batch and one feature), with JAX's padding
for the modes 'full', 'same' and 'valid' (which differs from `jnp.convolve`'s for 'same');
`fftconvolve` multiplies real (or complex) n-dimensional FFTs of the full size and slices
the mode's window, mapping with `vmap` over the axes not named in `axes`. `detrend` removes
the mean ('constant') or a least-squares line fitted on each piece between the breakpoints
('linear'); the fit is by projection on the centred abscissa, where JAX calls `lstsq` (the
same line, up to rounding). The spectral functions (stft, istft, welch, csd) are not
provided yet.
"""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

import didax.numpy as jnp
from didax._src import api
from didax._src.lax import conv as lax_conv
from didax._src.lax import indexing as lax_indexing
from didax._src.numpy.util import check_arraylike, promote_dtypes_inexact

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]

_MODES = ("full", "same", "valid")


def _canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolves n-dimensional arrays through FFTs; `axes` (default all) are convolved, the
    others mapped over (and must agree in size)."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    fn = partial(_fftconvolve_unbatched, mode=mode)
    if axes is None:
        return fn(in1, in2)
    axes = (axes,) if np.ndim(axes) == 0 else tuple(axes)
    axes = tuple(_canonicalize_axis(ax, in1.ndim) for ax in axes)
    mapped_axes = set(range(in1.ndim)) - set(axes)
    if any(in1.shape[i] != in2.shape[i] for i in mapped_axes):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    for ax in sorted(mapped_axes):
        fn = api.vmap(fn, in_axes=ax, out_axes=ax)
    return fn(in1, in2)


def _fftconvolve_unbatched(in1, in2, mode):
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        conv = in1 * in2
    else:
        if jnp.iscomplexobj(in1):
            fft, ifft = jnp.fft.fftn, jnp.fft.ifftn
        else:
            fft, ifft = jnp.fft.rfftn, jnp.fft.irfftn
        conv = ifft(fft(in1, full_shape) * fft(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    start = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape))
    return lax_indexing.dynamic_slice(conv, start, out_shape)


def _convolve_nd(in1, in2, mode, *, precision):
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    shape = in2.shape
    in2 = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2)
                   for s, s_o in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    result = lax_conv.conv_general_dilated(in1[None, None], in2[None, None], (1,) * len(shape),
                                           padding, precision=precision)
    return result[0, 0]


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The n-dimensional convolution of `in1` and `in2` ('direct'/'auto', or 'fft')."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _convolve_nd(in1, in2, mode, precision=precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The two-dimensional convolution (only boundary='fill' with fillvalue 0, as JAX)."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("convolve2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("convolve2d() only supports 2-dimensional inputs.")
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The n-dimensional cross-correlation: `convolve` with `in2` flipped and conjugated."""
    return convolve(in1, jnp.flip(jnp.conj(jnp.asarray(in2))), mode, precision=precision,
                    method=method)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The two-dimensional cross-correlation, with SciPy's (and JAX's) orientation rules."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("correlate2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("correlate2d() only supports 2-dimensional inputs.")
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    same_shape = all(s1 == s2 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "same":
        return jnp.flip(_convolve_nd(jnp.flip(in1), in2.conj(), mode, precision=precision))
    if mode == "valid":
        if swap and not same_shape:
            return _convolve_nd(jnp.flip(in2), in1.conj(), mode, precision=precision)
        return jnp.flip(_convolve_nd(jnp.flip(in1), in2.conj(), mode, precision=precision))
    if swap:
        return _convolve_nd(jnp.flip(in2), in1.conj(), mode, precision=precision).conj()
    return jnp.flip(_convolve_nd(jnp.flip(in1), in2.conj(), mode, precision=precision))


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """Removes the mean ('constant') or the piecewise least-squares line ('linear', pieces
    split at the static breakpoints `bp`) along `axis`."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (data,) = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return data - data.mean(axis, keepdims=True)
    n = data.shape[axis]
    bps = np.sort(np.unique(np.r_[0, bp, n]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along "
                         "given axis.")
    data = jnp.moveaxis(data, axis, 0)
    shape = data.shape
    data = data.reshape(n, -1)
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        y = data[lo:hi]
        t = np.arange(1, hi - lo + 1, dtype=np.float64) / (hi - lo)
        tc = jnp.asarray(t - t.mean(), data.real.dtype)[:, None]
        denom = float(np.sum((t - t.mean()) ** 2))
        slope = jnp.sum(tc * y, axis=0) / denom if denom > 0 else jnp.zeros_like(y[0])
        pieces.append(y - y.mean(0) - tc * slope)
    data = jnp.concatenate(pieces, axis=0) if pieces else data
    return jnp.moveaxis(data.reshape(shape), 0, axis)
