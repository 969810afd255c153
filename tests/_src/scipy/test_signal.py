"""didax.scipy.signal (convolve, correlate, convolve2d, correlate2d, fftconvolve, detrend)
against jax 0.10.2 (values, shapes, dtypes) and scipy.signal, every mode and orientation,
complex inputs, derivatives of order 2 in float64, jit, and errors."""
import jax
import jax.scipy.signal as js
import numpy as np
import pytest
import scipy.signal as ss

import didax
import didax.scipy.signal as ds
from didax._src.config import enable_x64
from didax._src.public_test_util import check_grads

MODES = ["full", "same", "valid"]
SHAPES_1D = [((7,), (3,)), ((3,), (7,)), ((6,), (6,)), ((4,), (5,))]
SHAPES_2D = [((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4, 4), (4, 4))]


def _data(shape, seed, complex_=False, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    return x + 1j * rng.standard_normal(shape).astype(dtype) if complex_ else x


def _same(name, *args, tol=1e-4, scipy_name=None, **kw):
    got = getattr(ds, name)(*args, **kw)
    want = getattr(js, name)(*args, **kw)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    if scipy_name:
        np.testing.assert_allclose(got, getattr(ss, scipy_name)(*args, **kw), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPES_1D)
@pytest.mark.parametrize("name", ["convolve", "correlate", "fftconvolve"])
def test_1d(name, shapes, mode):
    a, b = _data(shapes[0], 0), _data(shapes[1], 1)
    # SciPy's correlate swaps a smaller in1 in 'valid' mode; JAX (the specification) does not
    swapped = name == "correlate" and mode == "valid" and shapes[0] < shapes[1]
    _same(name, a, b, mode=mode, scipy_name=None if swapped else name)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPES_1D[:3])
def test_1d_complex_and_fft_method(shapes, mode):
    a, b = _data(shapes[0], 0, True), _data(shapes[1], 1, True)
    _same("convolve", a, b, mode=mode)
    _same("correlate", a, b, mode=mode)
    _same("fftconvolve", a, b, mode=mode)
    _same("convolve", a.real, b.real, mode=mode, method="fft")
    _same("correlate", a.real, b.real, mode=mode, method="fft")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPES_2D)
@pytest.mark.parametrize("complex_", [False, True])
def test_2d(shapes, mode, complex_):
    a, b = _data(shapes[0], 2, complex_), _data(shapes[1], 3, complex_)
    for name in ["convolve2d", "correlate2d"]:
        _same(name, a, b, mode=mode, scipy_name=name)
    _same("convolve", a, b, mode=mode, scipy_name="convolve")
    _same("fftconvolve", a, b, mode=mode, scipy_name="fftconvolve")


def test_fftconvolve_axes():
    a, b = _data((3, 8), 0), _data((3, 4), 1)
    for axes in (1, [-1], (1,)):
        for mode in MODES:
            _same("fftconvolve", a, b, mode=mode, axes=axes, scipy_name="fftconvolve")


@pytest.mark.parametrize("type", ["linear", "constant"])
@pytest.mark.parametrize("bp", [0, [3, 7], 5, [11]])
@pytest.mark.parametrize("axis", [-1, 0])
def test_detrend(type, bp, axis):
    x = _data((12, 12), 4)
    _same("detrend", x, axis=axis, type=type, bp=bp, scipy_name="detrend")
    _same("detrend", np.arange(10), type=type)  # integers become floats


def test_grads_and_jit():
    with enable_x64(True):
        a, b = _data((6,), 0, dtype=np.float64), _data((3,), 1, dtype=np.float64)
        a2, b2 = _data((4, 5), 0, dtype=np.float64), _data((2, 3), 1, dtype=np.float64)
        for mode in MODES:
            for fn in (ds.convolve, ds.correlate, ds.fftconvolve):
                check_grads(lambda x, y: fn(x, y, mode=mode), (a, b), order=2)
                np.testing.assert_allclose(didax.jit(lambda x, y: fn(x, y, mode=mode))(a, b),
                                           fn(a, b, mode=mode), rtol=1e-12, atol=1e-12)
            for fn in (ds.convolve2d, ds.correlate2d):
                check_grads(lambda x, y: fn(x, y, mode=mode), (a2, b2), order=2)
        check_grads(lambda x: ds.detrend(x, bp=[2]), (a,), order=2)
        check_grads(lambda x: ds.detrend(x, type="constant"), (a,), order=1)


def test_errors():
    a = np.ones(4)
    with pytest.raises(ValueError, match="mode"):
        ds.convolve(a, a, mode="nope")
    with pytest.raises(ValueError, match="method"):
        ds.convolve(a, a, method="nope")
    with pytest.raises(NotImplementedError):
        ds.convolve2d(np.ones((2, 2)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional"):
        ds.correlate2d(a, a)
    with pytest.raises(ValueError, match="smaller"):
        ds.convolve(np.ones((2, 5)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="Trend type"):
        ds.detrend(a, type="quadratic")
    with pytest.raises(ValueError, match="mapped axes"):
        ds.fftconvolve(np.ones((2, 4)), np.ones((3, 4)), axes=1)


# -- spectral analysis ------------------------------------------------------------------------

def _same_tuple(name, *args, tol=1e-4, scipy_too=False, **kw):
    got = getattr(ds, name)(*args, **kw)
    want = getattr(js, name)(*args, **kw)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    if scipy_too:
        for g, w in zip(got, getattr(ss, name)(*args, **kw)):
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-4)


SIGNAL = _data((2, 300), 5)
OTHER = _data((2, 300), 6)


@pytest.mark.parametrize("kw", [
    {"nperseg": 64},
    {"nperseg": 32, "noverlap": 8, "nfft": 40, "boundary": "even", "padded": False},
    {"nperseg": 50, "window": "hamming", "boundary": "odd", "detrend": "linear"},
    {"nperseg": 16, "boundary": "constant", "return_onesided": False},
    {"nperseg": 20, "boundary": None, "fs": 4.0},
])
def test_stft(kw):
    _same_tuple("stft", SIGNAL, scipy_too=True, **kw)


@pytest.mark.parametrize("kw", [
    {"nperseg": 64},
    {"nperseg": 64, "average": "median", "scaling": "spectrum"},
    {"nperseg": 50, "window": "blackman", "noverlap": 10, "nfft": 64, "detrend": "linear"},
    {"nperseg": 16, "return_onesided": False, "fs": 10.0},
])
def test_welch_and_csd(kw):
    _same_tuple("welch", SIGNAL, scipy_too=True, **kw)
    _same_tuple("csd", SIGNAL, OTHER, scipy_too=True, **kw)
    _same_tuple("welch", SIGNAL.T, axis=0, **kw)


@pytest.mark.parametrize("kw", [{"nperseg": 64}, {"nperseg": 64, "boundary": False},
                                {"nperseg": 32, "noverlap": 24, "window": "hamming"}])
@pytest.mark.filterwarnings("ignore:NOLA condition failed")  # SciPy's, without the boundary
def test_istft_inverts_stft(kw):
    skw = {k: v for k, v in kw.items() if k != "boundary"}
    _, _, z = js.stft(SIGNAL, **skw)
    z = np.asarray(z)
    _same_tuple("istft", z, scipy_too=True, **kw)
    if kw.get("boundary", True):
        _, x = ds.istft(z, **skw)
        np.testing.assert_allclose(x[:, :300], SIGNAL, atol=1e-5)


def test_spectral_jit_and_grads():
    np.testing.assert_allclose(didax.jit(lambda x: ds.welch(x, nperseg=32)[1])(SIGNAL),
                               ds.welch(SIGNAL, nperseg=32)[1], rtol=1e-5, atol=1e-7)
    with enable_x64(True):
        x = _data((40,), 7, dtype=np.float64)
        check_grads(lambda x: ds.welch(x, nperseg=16)[1], (x,), order=2)
        check_grads(lambda x: ds.stft(x, nperseg=16)[2].real, (x,), order=1)


def test_spectral_errors():
    with pytest.raises(ValueError, match="noverlap"):
        ds.stft(SIGNAL, nperseg=16, noverlap=16)
    with pytest.raises(ValueError, match="boundary"):
        ds.stft(SIGNAL, nperseg=16, boundary="bogus")
    with pytest.raises(ValueError, match="average"):
        ds.welch(SIGNAL, nperseg=16, average="max")
    with pytest.raises(ValueError, match="2d"):
        ds.istft(np.ones(4))
