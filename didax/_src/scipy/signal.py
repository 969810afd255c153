"""didax.scipy.signal: convolutions, correlations and detrending, as JAX has them.

`convolve`, `correlate`, `convolve2d` and `correlate2d` are direct n-dimensional
convolutions (`lax.conv_general_dilated` with one batch and one feature), with JAX's padding
for the modes 'full', 'same' and 'valid' (which differs from `jnp.convolve`'s for 'same');
`fftconvolve` multiplies real (or complex) n-dimensional FFTs of the full size and slices
the mode's window, mapping with `vmap` over the axes not named in `axes`. `detrend` removes
the mean ('constant') or a least-squares line fitted on each piece between the breakpoints
('linear'); the fit is by projection on the centred abscissa, where JAX calls `lstsq` (the
same line, up to rounding). The spectral functions `stft`, `istft`, `csd` and `welch` are
JAX's port of SciPy's windowed-FFT helpers: segments cut by `vmap`ped dynamic slices,
detrended, windowed ('hann' built in, other named windows from scipy.signal.get_window, as
JAX), transformed, scaled, averaged (mean or bias-corrected median); `istft` inverts by
overlap-add normalized by the summed squared window.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import didax.numpy as jnp
from didax._src import api
from didax._src.core import Array
from didax._src.lax import conv as lax_conv
from didax._src.lax import indexing as lax_indexing
from didax._src.lax import shape as lax_shape
from didax._src.numpy.util import check_arraylike, concrete_or_error, promote_dtypes_inexact

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]

_MODES = ("full", "same", "valid")
ArrayLike = DTypeLike = Any


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
        raise ValueError(
            f"mapped axes must have same shape; got in1.shape={in1.shape} "
            f"in2.shape={in2.shape} axes={axes}"
        )
    for ax in sorted(mapped_axes):
        fn = api.vmap(fn, in_axes=ax, out_axes=ax)
    return fn(in1, in2)


def _fftconvolve_unbatched(in1, in2, mode):
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError(
                "For 'valid' mode, One input must be at least as large as the "
                "other in every dimension."
            )
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
        raise ValueError(
            "zero-size arrays not supported in convolutions, got shapes "
            f"{in1.shape} and {in2.shape}."
        )
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
        padding = [
            (s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2) for s, s_o in zip(shape, shape_o)
        ]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    result = lax_conv.conv_general_dilated(
        in1[None, None], in2[None, None], (1,) * len(shape), padding, precision=precision
    )
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
    return convolve(
        in1, jnp.flip(jnp.conj(jnp.asarray(in2))), mode, precision=precision, method=method
    )


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
        raise ValueError(
            "Breakpoints must be non-negative and less than length of data along given axis."
        )
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


# -- spectral analysis (JAX's port of scipy.signal's helpers) -------------------------------


def _to_complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _promote_dtypes_complex(*args):
    dtype = _to_complex_dtype(jnp.result_type(*args))
    return [jnp.asarray(a, dtype) for a in args]


def _concrete_int(x, what):
    return int(concrete_or_error(x, what))


def _tuple_delete(t, idx):
    return t[:idx] + t[idx + 1 :]


def _tuple_insert(t, idx, val):
    return t[:idx] + (val,) + t[idx:]


def _triage_segments(
    window: ArrayLike | str | tuple[Any, ...],
    nperseg: int | None,
    input_length: int,
    dtype: DTypeLike,
) -> tuple[Array, int]:
    if isinstance(window, (str, tuple)):
        nperseg_int = input_length if nperseg is None else int(nperseg)
        if nperseg_int > input_length:
            warnings.warn(
                f"nperseg={nperseg_int} is greater than {input_length=},"
                f" using nperseg={input_length}"
            )
            nperseg_int = input_length
        if window == "hann":
            win = (
                jnp.array([1.0])
                if nperseg_int == 1
                else jnp.sin(jnp.linspace(0, np.pi, nperseg_int, endpoint=False)) ** 2
            )
        else:
            try:
                from scipy.signal import get_window  # pyrefly: ignore[missing-import]
            except ImportError as err:
                raise ImportError(f"scipy must be available to use {window=}") from err
            win = get_window(window, nperseg_int)
        win = jnp.array(win, dtype=dtype)
    else:
        win = jnp.asarray(window, dtype=dtype)
        nperseg_int = win.size if nperseg is None else int(nperseg)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if input_length < win.size:
            raise ValueError("window is longer than input signal")
        if nperseg_int != win.size:
            raise ValueError("value specified for nperseg is different from length of window")
    return win, nperseg_int


def _median_bias(n: int) -> Array:
    ii_2 = jnp.arange(2.0, n, 2)
    return 1 + jnp.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)


def _fft_helper(
    x: Array,
    win: Array,
    detrend_func: Callable[[Array], Array],
    nperseg: int,
    noverlap: int,
    nfft: int | None,
    sides: str,
) -> Array:
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)

    *batch_shape, signal_length = x.shape
    if nperseg == 1 and noverlap == 0:
        result = x[..., np.newaxis]
    else:
        step = nperseg - noverlap
        starts = jnp.arange(signal_length - nperseg + 1, step=step)
        slice_func = partial(
            lax_indexing.dynamic_slice_in_dim, operand=x, slice_size=nperseg, axis=-1
        )
        result = api.vmap(slice_func, out_axes=-2)(start_index=starts)

    result = detrend_func(result)

    if jnp.iscomplexobj(win):
        (result,) = _promote_dtypes_complex(result)
    result = win.reshape((1,) * len(batch_shape) + (1, nperseg)) * result

    if sides == "twosided":
        return jnp.fft.fft(result, n=nfft)
    else:
        return jnp.fft.rfft(result.real, n=nfft)


def odd_ext(x: Array, n: int, axis: int = -1) -> Array:
    if n < 1:
        return x
    if n > x.shape[axis] - 1:
        raise ValueError(
            f"The extension length n ({n}) is too big. "
            f"It must not exceed x.shape[axis]-1, which is {x.shape[axis] - 1}."
        )
    left_end = lax_shape.slice_in_dim(x, 0, 1, axis=axis)
    left_ext = jnp.flip(lax_shape.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right_end = lax_shape.slice_in_dim(x, -1, None, axis=axis)
    right_ext = jnp.flip(lax_shape.slice_in_dim(x, -(n + 1), -1, axis=axis), axis=axis)
    ext = jnp.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext), axis=axis)
    return ext


def _spectral_helper(
    x: Array,
    y: ArrayLike | None,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend_type: bool | str | Callable[[Array], Array] = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    mode: str = "psd",
    boundary: str | None = None,
    padded: bool = False,
) -> tuple[Array, Array, Array]:
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")

    def make_pad(mode, **kwargs):
        def pad(x, n, axis=-1):
            pad_width = [(0, 0) for unused_n in range(x.ndim)]
            pad_width[axis] = (n, n)
            return jnp.pad(x, pad_width, mode, **kwargs)

        return pad

    boundary_funcs = {
        "even": make_pad("reflect"),
        "odd": odd_ext,
        "constant": make_pad("edge"),
        "zeros": make_pad("constant", constant_values=0.0),
        None: lambda x, *args, **kwargs: x,
    }

    if boundary not in boundary_funcs:
        raise ValueError(
            f"Unknown boundary option '{boundary}', must be one of: {list(boundary_funcs.keys())}"
        )

    axis = operator.index(axis)
    axis = _canonicalize_axis(axis, x.ndim)

    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(x)
        y_arr = x  # place-holder for type checking
        outershape = _tuple_delete(x.shape, axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y_arr = promote_dtypes_inexact(x, y)
        if x.ndim != y_arr.ndim:
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outershape = jnp.broadcast_shapes(
                _tuple_delete(x.shape, axis), _tuple_delete(y_arr.shape, axis)
            )
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err

    result_dtype = _to_complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype

    nperseg_int: int = 0
    nfft_int: int = 0
    noverlap_int: int = 0

    if nperseg is not None:  # if specified by user
        nperseg_int = _concrete_int(nperseg, "nperseg of windowed-FFT")
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg_int = _triage_segments(
        window,
        nperseg if nperseg is None else nperseg_int,
        input_length=x.shape[axis],
        dtype=x.dtype,
    )

    if noverlap is None:
        noverlap_int = nperseg_int // 2
    else:
        noverlap_int = _concrete_int(noverlap, "noverlap of windowed-FFT")

    if nfft is None:
        nfft_int = nperseg_int
    else:
        nfft_int = _concrete_int(nfft, "nfft of windowed-FFT")

    if y is None:
        if x.size == 0:
            return (
                jnp.zeros(x.shape, freq_dtype),
                jnp.zeros(x.shape, freq_dtype),
                jnp.zeros(x.shape, result_dtype),
            )
    else:
        if x.size == 0 or y_arr.size == 0:
            shape = _tuple_insert(outershape, min(x.shape[axis], y_arr.shape[axis]), axis)
            return (
                jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype),
            )

    x = jnp.moveaxis(x, axis, -1)
    if y is not None and y_arr.ndim > 1:
        y_arr = jnp.moveaxis(y_arr, axis, -1)

    if y is not None and x.shape[-1] != y_arr.shape[-1]:
        if x.shape[-1] < y_arr.shape[-1]:
            pad_shape = list(x.shape)
            pad_shape[-1] = y_arr.shape[-1] - x.shape[-1]
            x = jnp.concatenate((x, jnp.zeros_like(x, shape=pad_shape)), -1)
        else:
            pad_shape = list(y_arr.shape)
            pad_shape[-1] = x.shape[-1] - y_arr.shape[-1]
            y_arr = jnp.concatenate((y_arr, jnp.zeros_like(x, shape=pad_shape)), -1)

    if nfft_int < nperseg_int:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if boundary is not None:
        ext_func = boundary_funcs[boundary]
        x = ext_func(x, nperseg_int // 2, axis=-1)
        if y is not None:
            y_arr = ext_func(y_arr, nperseg_int // 2, axis=-1)

    if padded:
        nadd = (-(x.shape[-1] - nperseg_int) % nstep) % nperseg_int
        x = jnp.concatenate((x, jnp.zeros_like(x, shape=(*x.shape[:-1], nadd))), axis=-1)
        if y is not None:
            y_arr = jnp.concatenate(
                (y_arr, jnp.zeros_like(x, shape=(*y_arr.shape[:-1], nadd))), axis=-1
            )

    detrend_func: Any
    if isinstance(detrend_type, str):
        detrend_func = partial(detrend, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        if axis != -1:

            def detrend_func(d):
                d = jnp.moveaxis(d, axis, -1)
                d = detrend_type(d)
                return jnp.moveaxis(d, -1, axis)
        else:
            detrend_func = detrend_type
    elif not detrend_type:
        detrend_func = lambda d: d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")

    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    (scale,) = _promote_dtypes_complex(scale)

    if return_onesided:
        sides = "onesided"
        if jnp.iscomplexobj(x) or (y is not None and jnp.iscomplexobj(y)):
            sides = "twosided"
            warnings.warn("Input data is complex, switching to return_onesided=False")
    else:
        sides = "twosided"

    if sides == "twosided":
        freqs = jnp.fft.fftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    elif sides == "onesided":
        freqs = jnp.fft.rfftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    else:
        raise ValueError(f"incorrect value of sides {sides}")

    result = _fft_helper(x, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides)

    if y is not None:
        result_y = _fft_helper(y_arr, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides)
        result = jnp.conjugate(result) * result_y
    elif mode == "psd":
        result = jnp.conjugate(result) * result

    result *= scale

    if sides == "onesided" and mode == "psd":
        end = None if nfft_int % 2 else -1
        result = result.at[..., 1:end].mul(2)

    time = (
        jnp.arange(
            nperseg_int / 2,
            x.shape[-1] - nperseg_int / 2 + 1,
            nperseg_int - noverlap_int,
            dtype=freq_dtype,
        )
        / fs
    )
    if boundary is not None:
        time -= (nperseg_int / 2) / fs

    result = result.astype(result_dtype)

    if y is None and mode != "stft":
        result = result.real

    result = jnp.moveaxis(result, -1, axis)

    return freqs, time, result


def stft(
    x: Array,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int = 256,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: bool = False,
    return_onesided: bool = True,
    boundary: str | None = "zeros",
    padded: bool = True,
    axis: int = -1,
) -> tuple[Array, Array, Array]:
    return _spectral_helper(
        x,
        None,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling="spectrum",
        axis=axis,
        mode="stft",
        boundary=boundary,
        padded=padded,
    )


def csd(
    x: Array,
    y: ArrayLike | None,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: str = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Array, Array]:
    freqs, _, Pxy = _spectral_helper(
        x,
        y,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling,
        axis,
        mode="psd",
    )
    if y is not None:
        Pxy = Pxy + 0j  # Ensure complex output when x is not y

    if Pxy.ndim >= 2 and Pxy.size > 0:
        if Pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(Pxy.shape[-1]).astype(Pxy.dtype)
                if jnp.iscomplexobj(Pxy):
                    Pxy = jnp.median(jnp.real(Pxy), axis=-1) + 1j * jnp.median(
                        jnp.imag(Pxy), axis=-1
                    )
                else:
                    Pxy = jnp.median(Pxy, axis=-1)
                Pxy /= bias
            elif average == "mean":
                Pxy = Pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            Pxy = jnp.reshape(Pxy, Pxy.shape[:-1])

    return freqs, Pxy


def welch(
    x: Array,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: str = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Array, Array]:
    freqs, Pxx = csd(
        x,
        None,
        fs=fs,
        window=window,
        nperseg=nperseg,
        noverlap=noverlap,
        nfft=nfft,
        detrend=detrend,
        return_onesided=return_onesided,
        scaling=scaling,
        axis=axis,
        average=average,
    )

    return freqs, Pxx.real


def _overlap_and_add(x: Array, step_size: int) -> Array:
    check_arraylike("_overlap_and_add", x)
    step_size = _concrete_int(step_size, "step_size for overlap_and_add")
    if x.ndim < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")

    *batch_shape, nframes, segment_len = x.shape
    flat_batchsize = math.prod(batch_shape)
    x = x.reshape((flat_batchsize, nframes, segment_len))
    output_size = step_size * (nframes - 1) + segment_len
    nstep_per_segment = 1 + (segment_len - 1) // step_size

    padded_segment_len = nstep_per_segment * step_size
    x = jnp.pad(x, ((0, 0), (0, 0), (0, padded_segment_len - segment_len)))
    x = x.reshape((flat_batchsize, nframes, nstep_per_segment, step_size))

    x = x.transpose((0, 2, 1, 3))  # x: (B, S, N, T)
    x = jnp.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))  # x: (B, S, N*2, T)
    shrunken = x.shape[2] - 1
    x = x.reshape((flat_batchsize, -1))
    x = x[:, : (nstep_per_segment * shrunken * step_size)]
    x = x.reshape((flat_batchsize, nstep_per_segment, shrunken * step_size))

    x = x.sum(axis=1)[:, :output_size]
    return x.reshape(tuple(batch_shape) + (-1,))


def istft(
    Zxx: Array,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    input_onesided: bool = True,
    boundary: bool = True,
    time_axis: int = -1,
    freq_axis: int = -2,
) -> tuple[Array, Array]:
    Zxx = jnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = _canonicalize_axis(freq_axis, Zxx.ndim)
    time_axis = _canonicalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")

    Zxx = jnp.asarray(Zxx, dtype=_to_complex_dtype(Zxx.dtype))

    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]

    nperseg_int = _concrete_int(nperseg or n_default, "nperseg: segment length of STFT")
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")

    nfft_int: int = 0
    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg_int == n_default + 1:
            nfft_int += 1  # Odd nperseg, no FFT padding
    else:
        nfft_int = _concrete_int(nfft, "nfft of STFT")
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int}).")

    noverlap_int = _concrete_int(noverlap or nperseg_int // 2, "noverlap of STFT")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer_idxs = tuple(idx for idx in range(Zxx.ndim) if idx not in {time_axis, freq_axis})
        Zxx = jnp.transpose(Zxx, outer_idxs + (freq_axis, time_axis))

    ifunc = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    xsubs = ifunc(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]

    if isinstance(window, str) and window == "hann":
        win = (
            jnp.array([1.0])
            if nperseg_int == 1
            else jnp.sin(jnp.linspace(0, np.pi, nperseg_int, endpoint=False)) ** 2
        )
        win = win.astype(xsubs.dtype)
    elif isinstance(window, (str, tuple)):
        try:
            from scipy.signal import get_window  # pyrefly: ignore[missing-import]
        except ImportError as err:
            raise ImportError(f"scipy must be available to use {window=}") from err
        win = get_window(window, nperseg_int)
        win = jnp.array(win, dtype=xsubs.dtype)
    else:
        win = jnp.asarray(window)
        if len(win.shape) != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    xsubs *= win.sum()  # This takes care of the 'spectrum' scaling

    win = lax_shape.expand_dims(win, (*range(xsubs.ndim - 2), -1))
    x = _overlap_and_add((xsubs * win).swapaxes(-2, -1), nstep)
    win_squared = jnp.repeat((win * win), xsubs.shape[-1], axis=-1)
    norm = _overlap_and_add(win_squared.swapaxes(-2, -1), nstep)

    if boundary:
        x = x[..., nperseg_int // 2 : -(nperseg_int // 2)]
        norm = norm[..., nperseg_int // 2 : -(nperseg_int // 2)]
    x /= jnp.where(norm > 1e-10, norm, 1.0)

    if x.ndim > 1:
        if time_axis != Zxx.ndim - 1:
            if freq_axis < time_axis:
                time_axis -= 1
            x = jnp.moveaxis(x, -1, time_axis)

    time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
