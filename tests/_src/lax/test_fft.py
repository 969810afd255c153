"""lax.fft, the `fft` primitive: values and dtypes against JAX 0.10.2 and np.fft, the input
conversions and errors of lax.fft, derivatives of order 2 in both modes for every FFT type,
transposes against the adjoint identity and against JAX's, vmap against a loop (the batch
dimension before, among or after the transformed axes), jit against eager evaluation, and
the printed equation."""

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest
from jax_testing import both_x64 as x64
from vmap_testing import assert_same, loop

import didax
from didax import lax
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

FftType = lax.FftType
TYPES = list(FftType)
LENGTHS = [(1,), (4,), (5,), (2, 3), (3, 4), (2, 2, 5), (1, 2, 3, 2)]


def _input_shape(fft_type, lengths, batch=(2,)):
    if fft_type == FftType.IRFFT:
        return batch + lengths[:-1] + (lengths[-1] // 2 + 1,)
    return batch + lengths


def _input(fft_type, lengths, batch=(2,), seed=0, double=True):
    """A float input for RFFT, a complex one for the others."""
    rng = np.random.default_rng(seed)
    shape = _input_shape(fft_type, lengths, batch)
    x = rng.standard_normal(shape)
    if fft_type != FftType.RFFT:
        x = x + 1j * rng.standard_normal(shape)
    return x if double else x.astype(np.complex64 if x.dtype.kind == "c" else np.float32)


def _numpy_fft(x, fft_type, lengths):
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if fft_type == FftType.IRFFT:
        return np.fft.irfftn(x, lengths, axes)
    fn = {FftType.FFT: np.fft.fftn, FftType.IFFT: np.fft.ifftn, FftType.RFFT: np.fft.rfftn}
    return fn[fft_type](x, axes=axes)


def _jax_fft(x, fft_type, lengths):
    """JAX's transform: its lax.fft takes at most three axes (XLA's limit; didax has none),
    beyond which jnp.fft.*n composes several."""
    if len(lengths) <= 3:
        return jax.lax.fft(x, fft_type.name, lengths)
    fn = getattr(jnp_ref.fft, fft_type.name.lower() + "n")
    return fn(x, s=lengths, axes=tuple(range(x.ndim - len(lengths), x.ndim)))


def _same_as_jax(got, want, tol):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# --------------------------------------------------------------------------------------
# Values and dtypes


@pytest.mark.parametrize("double", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("lengths", LENGTHS, ids=str)
@pytest.mark.parametrize("fft_type", TYPES, ids=lambda t: t.name)
def test_values_against_numpy(fft_type, lengths, double):
    x = _input(fft_type, lengths, double=double)
    with enable_x64(double):
        got = lax.fft(x, fft_type, lengths)
    want = _numpy_fft(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), fft_type,
                      lengths)
    real = fft_type == FftType.IRFFT
    assert got.dtype == {(False, False): np.complex64, (False, True): np.complex128,
                         (True, False): np.float32, (True, True): np.float64}[real, double]
    tol = 1e-13 if double else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("lengths", [(5,), (2, 3), (2, 2, 4), (1, 2, 3, 2)], ids=str)
@pytest.mark.parametrize("fft_type", TYPES, ids=lambda t: t.name)
def test_values_against_jax(fft_type, lengths):
    x = _input(fft_type, lengths, double=False)
    _same_as_jax(lax.fft(x, fft_type, lengths), _jax_fft(x, fft_type, lengths), 2e-5)
    x = _input(fft_type, lengths)
    with x64():
        _same_as_jax(lax.fft(x, fft_type, lengths), _jax_fft(x, fft_type, lengths), 1e-12)


@pytest.mark.parametrize("on", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("fft_type", TYPES, ids=lambda t: t.name)
def test_input_conversions_as_jax(fft_type, dtype, on):
    """lax.fft converts integers and bools (and, except for RFFT, floats) as JAX does, and
    rejects what JAX rejects with the same exception type."""
    lengths = (4,)
    shape = _input_shape(fft_type, lengths)
    x = (np.arange(np.prod(shape)) % 5).reshape(shape).astype(dtype)
    with x64(on):
        try:
            want = jax.lax.fft(x, fft_type.name, lengths)
        except ValueError:
            with pytest.raises(ValueError):
                lax.fft(x, fft_type, lengths)
            return
        got = lax.fft(x, fft_type, lengths)
        _same_as_jax(got, want, 1e-5)
        assert got.weak_type == want.weak_type


def test_types_by_name_and_empty_lengths():
    assert [t.name for t in FftType] == ["FFT", "IFFT", "RFFT", "IRFFT"]
    assert [int(t) for t in FftType] == [0, 1, 2, 3]  # JAX's values (its jaxprs print them)
    x = np.arange(4.0, dtype=np.float32)
    for spelling in ("fft", "FFT", FftType.FFT):
        np.testing.assert_array_equal(lax.fft(x, spelling, (4,)), np.fft.fft(x))
    out = lax.fft(x, "ifft", ())  # no axes: only the conversion, as in JAX
    assert out.dtype == np.complex64 and out.shape == (4,)
    np.testing.assert_array_equal(out, x)
    assert lax.fft(x, "rfft", ()).dtype == np.float32


def test_empty_arrays_and_zero_lengths():
    """pocketfft refuses zero lengths; the transforms of empty arrays are empty (JAX's
    shapes), and a zero-length FFT of a non-empty batch is empty too."""
    for x, fft_type, lengths, shape in [
            (np.ones((0, 4), np.complex64), "FFT", (4,), (0, 4)),
            (np.ones((2, 0), np.complex64), "IFFT", (0,), (2, 0)),
            (np.ones((0, 4), np.float32), "RFFT", (4,), (0, 3)),
            (np.ones((0, 3), np.complex64), "IRFFT", (0, 4), (0, 4)),
            (np.ones((3, 1), np.complex64), "IRFFT", (0,), (3, 0))]:
        out = lax.fft(x, fft_type, lengths)
        want = jax.lax.fft(x, fft_type, lengths)
        assert out.shape == want.shape == shape and out.dtype == want.dtype
        jitted = didax.jit(lambda a, t=fft_type, n=lengths: lax.fft(a, t, n))
        assert jitted(x).shape == shape


# --------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("x,fft_type,lengths,exc,match", [
    (np.ones(3, np.complex64), "FFT", (3, 3), ValueError, "between 1 and x.ndim=1"),
    (np.ones(3, np.complex64), "FFT", (4,), ValueError, r"\(3,\) must equal fft_lengths \(4,\)"),
    (np.ones((2, 3), np.complex64), "IFFT", (3, 3), ValueError, "must equal fft_lengths"),
    (np.ones(4, np.complex64), "IRFFT", (4,), ValueError, r"must be \(3,\).*n // 2 \+ 1"),
    (np.ones((2, 3), np.complex64), "IRFFT", (3, 4), ValueError, r"must be \(3, 3\)"),
    (np.ones(3, np.float16), "RFFT", (3,), ValueError, "float32 or float64, got float16"),
    (np.ones(3, np.complex64), "RFFT", (3,), ValueError, "only real valued inputs"),
    (np.ones(3, np.complex64), "fourier", (3,), ValueError, "Unknown FFT type 'fourier'"),
    (np.ones(3, np.complex64), 5, (3,), TypeError, "Unknown FFT type value '5'"),
])
def test_errors(x, fft_type, lengths, exc, match):
    with pytest.raises(exc, match=match):
        lax.fft(x, fft_type, lengths)
    if fft_type == "IRFFT" and x.shape[-1] != lengths[-1] // 2 + 1:
        return  # JAX's abstract evaluation misses this; XLA refuses it (an MLIRError)
    with pytest.raises(exc):  # JAX raises the same type
        jax.lax.fft(x, fft_type, lengths)


def test_direct_binds_check_dtypes():
    from didax._src.lax.fft import fft_p

    with pytest.raises(ValueError, match="complex64 or complex128, got float32"):
        fft_p.bind(np.ones(4, np.float32), fft_type=FftType.FFT, fft_lengths=(4,))
    with pytest.raises(ValueError, match="between 1 and"):
        fft_p.bind(np.ones(4, np.complex64), fft_type=FftType.FFT, fft_lengths=())
    with pytest.raises(ValueError, match="must not be negative"):
        fft_p.bind(np.ones(0, np.complex64), fft_type=FftType.IRFFT, fft_lengths=(-2,))


# --------------------------------------------------------------------------------------
# Derivatives and transposes (float64)


@pytest.mark.parametrize("lengths", [(5,), (4,), (3, 4), (2, 2, 3)], ids=str)
@pytest.mark.parametrize("fft_type", TYPES, ids=lambda t: t.name)
def test_grads(fft_type, lengths):
    x = _input(fft_type, lengths)
    with enable_x64(True):
        check_grads(lambda a: lax.fft(a, fft_type, lengths), (x,), order=2,
                    modes=("fwd", "rev"))


def _pair(a, b):
    """Re sum(a * b): the real bilinear pairing of JAX's transposes (complex numbers as pairs of
    reals, no conjugation)."""
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


@pytest.mark.parametrize("lengths", [(1,), (4,), (5,), (2, 3), (3, 4), (2, 2, 5)], ids=str)
@pytest.mark.parametrize("fft_type", TYPES, ids=lambda t: t.name)
def test_transposes_are_adjoints(fft_type, lengths):
    """<w, J u> == <J^T w, u>, and J^T w is JAX's (checked for two axes; its rule is the same
    for any number). The half spectra u are arbitrary (their zero and Nyquist bins need not be
    real), so IRFFT's transpose must ignore what IRFFT ignores."""
    u = _input(fft_type, lengths, seed=1)
    with x64():
        def f(a):
            return lax.fft(a, fft_type, lengths)

        out = np.asarray(f(u))
        rng = np.random.default_rng(2)
        w = rng.standard_normal(out.shape)
        if out.dtype.kind == "c":
            w = w + 1j * rng.standard_normal(out.shape)
        (ct,) = didax.linear_transpose(f, u)(w)
        assert ct.shape == u.shape and ct.dtype == u.dtype
        np.testing.assert_allclose(_pair(ct, u), _pair(w, out), rtol=1e-12, atol=1e-12)
        if len(lengths) == 2:  # the same numbers as JAX's transpose
            (want,) = jax.linear_transpose(lambda a: jax.lax.fft(a, fft_type.name, lengths),
                                           u)(w)
            _same_as_jax(ct, want, 1e-12)


def test_vjp_of_rfft_matches_jax():
    x = np.arange(6.0)
    with x64():
        def loss(lib, a):
            y = lib.lax.fft(a, "RFFT", (6,))
            return lib.numpy.sum(lib.numpy.abs(y) ** 2 + y.real * y.imag)

        _same_as_jax(didax.grad(lambda a: loss(didax, a))(x),
                     jax.grad(lambda a: loss(jax, a))(x), 1e-12)


# --------------------------------------------------------------------------------------
# vmap, jit, printing


@pytest.mark.parametrize("in_axis", [0, 1, 2, -1])
@pytest.mark.parametrize("fft_type", TYPES, ids=lambda t: t.name)
def test_vmap_against_a_loop(fft_type, in_axis):
    """The batch dimension of 5 examples transformed over (3, 4): before the transformed axes
    or among them; and a second vmap around the first."""
    lengths = (3, 4)
    x = np.moveaxis(_input(fft_type, lengths, batch=(5,)), 0, in_axis)

    def f(a):
        return lax.fft(a, fft_type, lengths)

    with enable_x64(True):
        want = loop(f, (in_axis,), 5, x)
        assert_same(didax.vmap(f, in_axes=in_axis)(x), want)
        nested = didax.vmap(didax.vmap(f, in_axes=in_axis), in_axes=1)
        assert_same(nested(np.stack([x, 2 * x], 1)), np.stack([want, 2 * want]))


def test_vmap_keeps_a_leading_batch_dimension_in_place():
    """A batch dimension before the transformed axes needs no transposition."""
    x = _input(FftType.FFT, (4,), batch=(3, 2))
    f = didax.vmap(lambda a: lax.fft(a, "FFT", (4,)), in_axes=1, out_axes=1)
    assert [e.primitive.name for e in didax.make_jaxpr(f)(x).jaxpr.eqns] == ["fft"]
    with enable_x64(True):
        np.testing.assert_allclose(f(x), np.fft.fft(x), atol=1e-12)


@pytest.mark.parametrize("fft_type", TYPES, ids=lambda t: t.name)
def test_jit_against_eager(fft_type):
    lengths = (3, 4)
    x = _input(fft_type, lengths, batch=(2,), double=False)

    def f(a):
        return lax.fft(a, fft_type, lengths)

    jitted = didax.jit(f)
    got, want = jitted(x), f(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    source = jitted.lower(x).compile().as_text()
    name = {FftType.FFT: "fftn", FftType.IFFT: "ifftn", FftType.RFFT: "rfftn",
            FftType.IRFFT: "irfftn"}[fft_type]
    assert f"np.fft.{name}(" in source and "axes=(1, 2)" in source


def test_jit_of_grad_and_vmap():
    x = _input(FftType.RFFT, (6,), batch=(3,))
    with x64():
        def loss(a):
            return didax.numpy.sum(didax.numpy.abs(lax.fft(a, "RFFT", (6,))) ** 2)

        g = didax.jit(didax.vmap(didax.grad(loss)))(x)
        np.testing.assert_allclose(g, didax.vmap(didax.grad(loss))(x), rtol=1e-12)
        want = jax.vmap(jax.grad(lambda a: jnp_ref.sum(jnp_ref.abs(
            jax.lax.fft(a, "RFFT", (6,))) ** 2)))(x)
        _same_as_jax(g, want, 1e-10)


def test_printed_equation_matches_jax():
    x = np.ones((3, 4), np.float32)
    text = str(didax.make_jaxpr(lambda a: lax.fft(a, "RFFT", (4,)))(x))
    assert "b:c64[3,3] = fft[fft_lengths=(4,) fft_type=2] a" in text
    assert "fft[fft_lengths=(4,) fft_type=2] a" in str(
        jax.make_jaxpr(lambda a: jax.lax.fft(a, "RFFT", (4,)))(x))
