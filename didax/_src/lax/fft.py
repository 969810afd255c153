"""The `fft` primitive: discrete Fourier transforms over the trailing axes, as `lax.fft`.

One primitive with four kinds (`FftType`), as in JAX, so each rule is written once. It is
linear. The complex transforms are symmetric matrices, so each is its own transpose. The
real ones keep only the non-negative half of a Hermitian spectrum along the last axis, in
which every bin but the zero and Nyquist frequencies stands for two: their transposes
weight those bins by 2 (see `_half_spectrum_weights`). NumPy's pocketfft computes them; the
results have JAX's dtypes (complex64 from float32, float64 from complex128, ...).
"""
from __future__ import annotations

import enum
import math
import operator

import numpy as np

from didax._src import core, dtypes
from didax._src.compiler.codegen import codegen_rule
from didax._src.core import ShapedArray, get_aval
from didax._src.interpreters.batching import moveaxis
from didax._src.interpreters.jvp import deflinear
from didax._src.lax import elementwise as ew
from didax._src.lax import shape as lax_shape


class FftType(enum.IntEnum):
    """Which transform `lax.fft` computes (JAX's enum: the printed parameter is its value)."""

    FFT = 0  # complex to complex, forward
    IFFT = 1  # complex to complex, inverse (scaled by 1/N)
    RFFT = 2  # real to the half spectrum
    IRFFT = 3  # half spectrum to real, inverse (scaled by 1/N)

    __str__ = int.__repr__  # the value, as Python 3.11's IntEnum prints (3.10's: the name)


def _fft_type(fft_type) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        for t in FftType:
            if fft_type in (t.name, t.name.lower()):
                return t
        raise ValueError(f"Unknown FFT type '{fft_type}': use one of FFT, IFFT, RFFT, IRFFT "
                         "(or lax.FftType)")
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


_REAL = (np.dtype(np.float32), np.dtype(np.float64))
_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
            np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX.items()}


def _inexact_dtype(dtype) -> np.dtype:
    """JAX's `to_inexact_dtype`: 64-bit integers to float64, other integers and bools to
    float32 (float64 only where x64 allows it)."""
    dtype = np.dtype(dtype)
    if dtypes.kind(dtype) in "fc":
        return dtype
    return dtypes.canonicalize_dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def _complex_dtype(dtype) -> np.dtype:
    """JAX's `to_complex_dtype`: complex128 for 64-bit values, complex64 otherwise."""
    inexact = _inexact_dtype(dtype)
    wide = inexact in (np.dtype(np.float64), np.dtype(np.complex128))
    return dtypes.canonicalize_dtype(np.complex128 if wide else np.complex64)


# --------------------------------------------------------------------------------------
# fft


fft_p = core.primitive("fft")
_NUMPY = {FftType.FFT: np.fft.fftn, FftType.IFFT: np.fft.ifftn, FftType.RFFT: np.fft.rfftn,
          FftType.IRFFT: np.fft.irfftn}


def _out_dtype(fft_type, dtype) -> np.dtype:
    if fft_type == FftType.RFFT:
        return _COMPLEX[dtype]
    if fft_type == FftType.IRFFT:
        return _REAL_OF[dtype]
    return dtype


def _out_shape(fft_type, shape, fft_lengths) -> tuple:
    batch = shape[:len(shape) - len(fft_lengths)]
    if fft_type == FftType.RFFT:
        return batch + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
    return batch + fft_lengths


def _fft_impl(x, *, fft_type, fft_lengths):
    shape = _out_shape(fft_type, x.shape, fft_lengths)
    dtype = _out_dtype(fft_type, x.dtype)
    if x.size == 0 or 0 in shape:  # pocketfft refuses zero lengths; the sums are empty
        return np.zeros(shape, dtype)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.IRFFT:
        out = np.fft.irfftn(x, fft_lengths, axes)
    else:
        out = _NUMPY[fft_type](x, axes=axes)
    return out.astype(dtype, copy=False)


def _fft_aval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    kind = f"fft_type={fft_type.name}"
    if not 1 <= k <= x.ndim:
        raise ValueError(f"fft ({kind}): fft_lengths {fft_lengths} must name between 1 and "
                         f"x.ndim={x.ndim} trailing axes of the input of shape {x.shape}")
    if min(fft_lengths) < 0:
        raise ValueError(f"fft ({kind}): fft_lengths {fft_lengths} must not be negative")
    trailing = x.shape[x.ndim - k:]
    if fft_type == FftType.RFFT:
        if x.dtype not in _REAL:
            raise ValueError(f"fft ({kind}): the input must be float32 or float64, got "
                             f"{x.dtype.name}; convert it to one of them first (lax.fft converts "
                             "only integers and bools)")
    elif x.dtype not in _REAL_OF:
        raise ValueError(f"fft ({kind}): the input must be complex64 or complex128, got "
                         f"{x.dtype.name}; convert it first (lax.fft does)")
    if fft_type == FftType.IRFFT:
        expected = fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        if trailing != expected:
            raise ValueError(
                f"fft ({kind}): the input's trailing dimensions {trailing} must be "
                f"{expected}: fft_lengths {fft_lengths} but n // 2 + 1 = {expected[-1]} "
                "entries of the half spectrum along the last axis (pad or crop it, as "
                "jnp.fft.irfftn does)")
    elif trailing != fft_lengths:
        raise ValueError(f"fft ({kind}): the input's trailing dimensions {trailing} must equal "
                         f"fft_lengths {fft_lengths} (pad or crop it, as jnp.fft does)")
    return ShapedArray(_out_shape(fft_type, x.shape, fft_lengths),
                       _out_dtype(fft_type, x.dtype), x.weak_type)


fft_p.def_impl(_fft_impl)
fft_p.def_abstract_eval(_fft_aval)
deflinear(fft_p)


def fft(x, fft_type, fft_lengths):
    """The transform `fft_type` over the last len(fft_lengths) axes of `x`, converted first
    to complex (or, for RFFT, to a float), as `jax.lax.fft`."""
    fft_type = _fft_type(fft_type)
    dtype = get_aval(x).dtype
    if fft_type == FftType.RFFT:
        if dtypes.kind(dtype) == "c":
            raise ValueError("only real valued inputs supported for rfft")
        x = ew.convert_element_type(x, _inexact_dtype(dtype))
    else:
        x = ew.convert_element_type(x, _complex_dtype(dtype))
    fft_lengths = tuple(operator.index(n) for n in fft_lengths)
    if not fft_lengths:
        return x
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)


def _half_spectrum_weights(n: int, m: int) -> np.ndarray:
    """How many bins of the full spectrum of length `n` each of the `m` = n // 2 + 1 stored
    ones stands for: 1 for the zero frequency (and the Nyquist one when n is even), else 2."""
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w


def _along_last_axis(weights, like):
    """`weights` (one per entry of the last axis) broadcast to `like`'s shape and dtype."""
    aval = get_aval(like)
    return lax_shape.broadcast_in_dim(weights.astype(aval.dtype), aval.shape, (aval.ndim - 1,))


def _rfft_transpose(ct, fft_lengths):
    """RFFT^T ct = Re(sum_k ct_k e^{-2 pi i k n / N}): IRFFT (which counts bins 1..m-2 twice,
    the imaginary parts of the rest not at all, and scales by 1/N) of conj(ct) * N / w."""
    n = math.prod(fft_lengths)
    m = get_aval(ct).shape[-1]
    weights = n / _half_spectrum_weights(fft_lengths[-1], m)
    scaled = ew.mul(ew.conj(ct), _along_last_axis(weights, ct))
    return fft_p.bind(scaled, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)


def _irfft_transpose(ct, fft_lengths):
    """IRFFT is x = Re(sum_k w_k / N * X_k e^{2 pi i k n / N}) (with Hermitian weights w), so
    its transpose (JAX's convention: that of Re(a z) is a t) is w / N * conj(RFFT(ct))."""
    n = math.prod(fft_lengths)
    spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    m = get_aval(spectrum).shape[-1]
    weights = _half_spectrum_weights(fft_lengths[-1], m) / n if n else np.zeros(m)
    return ew.mul(ew.conj(spectrum), _along_last_axis(weights, spectrum))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]  # symmetric matrices


fft_p.def_transpose(_fft_transpose)


def _fft_batch(size, vals, dims, *, fft_type, fft_lengths):
    """The transform acts on trailing axes: a batch dimension among them moves to the front;
    one before them stays where it is."""
    (x,), (d,) = vals, dims
    if d >= get_aval(x).ndim - len(fft_lengths):
        x, d = moveaxis(x, d, 0), 0
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), d


fft_p.def_batch(_fft_batch)


def _nonempty(eqn) -> bool:
    return eqn.invars[0].aval.size > 0 and eqn.outvars[0].aval.size > 0


@codegen_rule(fft_p, when=_nonempty, fresh=True)
def _fft_codegen(fb, k, eqn, outs):
    """One np.fft call, readable in the generated source (empty arrays go to the impl)."""
    x = eqn.invars[0]
    fft_type, lengths = eqn.params["fft_type"], eqn.params["fft_lengths"]
    axes = tuple(range(x.aval.ndim - len(lengths), x.aval.ndim))
    size = f"{lengths}, " if fft_type == FftType.IRFFT else ""
    call = f"np.fft.{_NUMPY[fft_type].__name__}({fb.typed(x)}, {size}axes={axes})"
    dtype = eqn.outvars[0].aval.dtype
    fb.line(f"{outs[0]} = {call}.astype({fb.module.global_name(dtype, dtype.name)}, "
            "copy=False)")


__all__ = ["FftType", "fft", "fft_p"]
