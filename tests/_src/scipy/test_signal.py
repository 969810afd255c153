"""didax.scipy.signal against jax.scipy.signal 0.10.2 (values, shapes, dtypes, exception
types) and scipy.signal where JAX leaves something out; derivatives of order 2 in both modes,
vmap against a loop, and errors."""
import warnings

import jax.scipy.signal as jss
import numpy as np
import pytest
import scipy.signal as ss
from jax_testing import assert_same as _same

import didax
import didax.numpy as jnp
import didax.scipy.signal as dss
from didax._src.config import enable_x64
from didax._src.scipy.windows import get_window
from didax._src.transforms.public_test_util import check_grads

_RNG = np.random.default_rng(0)
X1 = _RNG.standard_normal(7).astype(np.float32)
K1 = _RNG.standard_normal(3).astype(np.float32)
X2 = _RNG.standard_normal((5, 6)).astype(np.float32)
K2 = _RNG.standard_normal((2, 3)).astype(np.float32)
XC = (_RNG.standard_normal(6) + 1j * _RNG.standard_normal(6)).astype(np.complex64)
SIG = _RNG.standard_normal((2, 50)).astype(np.float32)
SIG3 = _RNG.standard_normal((4, 50, 3)).astype(np.float32)


def _both(fn):
    """fn(module) for didax and JAX, with SciPy's warnings (nperseg, complex input) quiet."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(dss), fn(jss)


def _vs_scipy(fn, tol=1e-10):
    """fn(module) for didax in 64-bit and for SciPy: the bulk of the cases (JAX compiles each
    one, SciPy does not; the cases against JAX below check its dtypes on the same code)."""
    with warnings.catch_warnings(), enable_x64(True):
        warnings.simplefilter("ignore")
        _same(fn(dss), fn(ss), tol)


D1, DK, D2, DK2 = (a.astype(np.float64) for a in (X1, K1, X2, K2))
DC = XC.astype(np.complex128)
PAIRS = [(D1, DK), (DK, D1), (D2, DK2), (DK2, D2), (DC, DK), (D1, DC), (D2, D2[:4, :4])]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
def test_convolutions_match_scipy(name, mode):
    for a, b in PAIRS:
        if name.endswith("2d") and a.ndim != 2:
            continue
        _vs_scipy(lambda m, a=a, b=b: getattr(m, name)(a, b, mode))
        if not name.endswith("2d"):
            _vs_scipy(lambda m, a=a, b=b: getattr(m, name)(a, b, mode, method="fft"), 1e-9)
            _vs_scipy(lambda m, a=a, b=b: m.fftconvolve(a, b, mode), 1e-9)
    _vs_scipy(lambda m: m.fftconvolve(D2, np.repeat(DK2[:1], 5, 0), mode, axes=1), 1e-9)


def test_convolution_dtypes_match_jax():
    for a, b in [(X1, K1), (XC, K1), (np.arange(5), np.arange(3)),
                 (np.array([True, False]), np.array([True, True]))]:
        _same(*_both(lambda m, a=a, b=b: m.convolve(a, b, "same")))
    _same(*_both(lambda m: m.correlate2d(X2, K2, "same")))
    _same(*_both(lambda m: m.fftconvolve(X2, K2, "valid")), tol=1e-5)


def test_convolution_errors():
    with pytest.raises(ValueError, match="mode"):
        dss.convolve(X1, K1, "middle")
    with pytest.raises(ValueError, match="same number of dimensions"):
        dss.convolve(X1, K2)
    with pytest.raises(ValueError, match="at least as large"):
        dss.convolve(np.ones((2, 5)), np.ones((3, 2)), "valid")
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        dss.convolve2d(X2, K2, boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional"):
        dss.correlate2d(X1, K1)
    with pytest.raises(ValueError, match="outside the convolved axes"):
        dss.fftconvolve(X2, K2[:1], axes=1)
    with pytest.raises(ValueError, match="method"):
        dss.convolve(X1, K1, method="fast")


@pytest.mark.parametrize("kind", ["linear", "constant"])
def test_detrend(kind):
    _vs_scipy(lambda m: m.detrend(D2, axis=0, type=kind))
    _vs_scipy(lambda m: m.detrend(D2, type=kind, bp=[2, 4]))
    with pytest.raises(ValueError, match="type"):
        dss.detrend(X2, type="cubic")


S64, S364 = SIG.astype(np.float64), SIG3.astype(np.float64)
STFT_CASES = [dict(), dict(boundary=None), dict(boundary="even"), dict(boundary="odd"),
              dict(boundary="constant"), dict(padded=False), dict(nfft=20),
              dict(return_onesided=False), dict(detrend="linear"),
              dict(window="hamming", noverlap=10), dict(fs=3.0), dict(nperseg=15),
              dict(window=("tukey", 0.3)), dict(window=np.hanning(16)), dict(nperseg=80)]


def test_stft_matches_scipy():
    for kw in STFT_CASES:
        kw = {"nperseg": 16, **kw}
        _vs_scipy(lambda m, kw=kw: m.stft(S64, **kw))
    _vs_scipy(lambda m: m.stft(S364, nperseg=16, axis=1))
    _vs_scipy(lambda m: m.stft(S64 + 1j * S64[::-1], nperseg=16))


WELCH_CASES = [dict(), dict(average="median"), dict(scaling="spectrum"), dict(detrend="linear"),
               dict(return_onesided=False), dict(window="blackman"), dict(nperseg=100),
               dict(nfft=33), dict(fs=10.0), dict(detrend=False), dict(nperseg=15)]


def test_welch_and_csd_match_scipy():
    for kw in WELCH_CASES:
        kw = {"nperseg": 16, **kw}
        _vs_scipy(lambda m, kw=kw: m.welch(S64, **kw))
        _vs_scipy(lambda m, kw=kw: m.csd(S64, 2 * S64[::-1], **kw))
    _vs_scipy(lambda m: m.welch(S364, nperseg=16, axis=1))
    _vs_scipy(lambda m: m.csd(S364, 2 * S364, nperseg=3, axis=0))
    _vs_scipy(lambda m: m.welch(S64 + 1j * S64[::-1], nperseg=16))


def test_spectral_dtypes_match_jax():
    _same(*_both(lambda m: m.stft(SIG, nperseg=16)))
    _same(*_both(lambda m: m.welch(SIG, nperseg=16, average="median")))
    _same(*_both(lambda m: m.csd(SIG, 2 * SIG[::-1], nperseg=16)))
    _same(*_both(lambda m: m.csd(SIG, None, nperseg=16)))  # real, as in JAX
    z = np.asarray(dss.stft(SIG, nperseg=16)[2])
    _same(*_both(lambda m: m.istft(z, nperseg=16)), tol=1e-4)


ISTFT_CASES = [dict(), dict(boundary=False), dict(nperseg=15),
               dict(input_onesided=False), dict(window="hamming", noverlap=12), dict(nfft=20)]


def test_istft_matches_scipy_and_inverts():
    for kw in ISTFT_CASES:
        kw = {"nperseg": 16, **kw}
        fwd = {k: v for k, v in kw.items() if k in ("nperseg", "nfft", "window", "noverlap")}
        fwd["return_onesided"] = kw.get("input_onesided", True)
        fwd["boundary"] = "zeros" if kw.get("boundary", True) else None
        z = ss.stft(S64[0], **fwd)[2]
        _vs_scipy(lambda m, z=z, kw=kw: m.istft(z, **kw))
        if kw.get("boundary", True):
            with enable_x64(True):
                np.testing.assert_allclose(np.asarray(dss.istft(z, **kw)[1])[:50].real,
                                           S64[0], atol=1e-12)
    z = ss.stft(S64, nperseg=16)[2]
    _vs_scipy(lambda m: m.istft(z, nperseg=16))  # times count along the first axis
    zt = np.ascontiguousarray(np.moveaxis(z, 0, -1))
    _vs_scipy(lambda m: m.istft(zt, nperseg=16, time_axis=1, freq_axis=0))


def test_windows_match_scipy():
    for w in ["hann", "hamming", "blackman", "bartlett", "triang", "boxcar", "cosine",
              ("tukey", 0.3), "tukey"]:
        for n in (1, 2, 7, 16):
            np.testing.assert_allclose(get_window(w, n), ss.get_window(w, n), atol=1e-14)
    with pytest.raises(NotImplementedError, match="kaiser"):
        dss.stft(SIG, window=("kaiser", 4.0), nperseg=16)


def test_spectral_errors():
    with pytest.raises(ValueError, match="noverlap"):
        dss.welch(SIG, nperseg=16, noverlap=16)
    with pytest.raises(ValueError, match="nfft"):
        dss.stft(SIG, nperseg=16, nfft=8)
    with pytest.raises(ValueError, match="scaling"):
        dss.welch(SIG, nperseg=16, scaling="power")
    with pytest.raises(ValueError, match="average"):
        dss.welch(SIG, nperseg=16, average="max")
    with pytest.raises(ValueError, match="window's length"):
        dss.stft(SIG, window=np.ones(8), nperseg=16)


def test_derivatives():
    with enable_x64(True):
        x, k = X1.astype(np.float64), K1.astype(np.float64)
        for mode in ("full", "same", "valid"):
            check_grads(lambda a, b, mode=mode: dss.convolve(a, b, mode), (x, k), 2)
            check_grads(lambda a, b, mode=mode: dss.fftconvolve(a, b, mode), (x, k), 2)
        check_grads(lambda a, b: dss.correlate2d(a, b, "same"),
                    (X2.astype(np.float64), K2.astype(np.float64)), 2)
        s = SIG[0].astype(np.float64)
        check_grads(lambda v: dss.welch(v, nperseg=16)[1], (s,), 2)
        check_grads(lambda v: dss.stft(v, nperseg=16)[2], (s,), 2)
        check_grads(lambda v: dss.detrend(v, bp=[10]), (s,), 2)
        z = np.asarray(dss.stft(s, nperseg=16)[2])
        check_grads(lambda v: dss.istft(v, nperseg=16)[1], (z,), 2)


def test_vmap_matches_a_loop():
    f = didax.vmap(lambda v: dss.welch(v, nperseg=16)[1])
    _same(f(SIG), jnp.stack([dss.welch(v, nperseg=16)[1] for v in SIG]))
    g = didax.vmap(lambda a: dss.convolve2d(a, K2, "same"))
    stack = np.stack([X2, 2 * X2])
    _same(g(stack), jnp.stack([dss.convolve2d(a, K2, "same") for a in stack]))
    h = didax.jit(lambda v: dss.csd(v, 2 * v, nperseg=16)[1])
    _same(h(SIG), dss.csd(SIG, 2 * SIG, nperseg=16)[1])
