"""didax.numpy.fft against jax.numpy.fft 0.10.2 (values, dtypes and weak types, in both x64
modes, and the exception types of its errors) and against np.fft (values in float64);
normalisations, round trips, derivatives, vmap and jit through the functions."""

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest
from jax_testing import both_x64
from numpy_testing import X64

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

_RNG = np.random.default_rng(0)
R = _RNG.standard_normal((3, 4, 5))
C = R + 1j * _RNG.standard_normal((3, 4, 5))
INTS = np.arange(24, dtype=np.int32).reshape(4, 6) % 7


# Cases as functions of the module (`np`, `didax.numpy` or `jax.numpy`): fft(m) -> result.
CASES = {
    "fft": lambda m: m.fft.fft(C),
    "fft_n_crop": lambda m: m.fft.fft(C, n=3),
    "fft_n_pad_axis0": lambda m: m.fft.fft(R, n=6, axis=0),
    "fft_int": lambda m: m.fft.fft(INTS),
    "fft_ortho": lambda m: m.fft.fft(C, norm="ortho"),
    "fft_forward": lambda m: m.fft.fft(R, axis=1, norm="forward"),
    "fft_backward": lambda m: m.fft.fft(R, norm="backward"),
    "fft_axis_none": lambda m: m.fft.fft(INTS, axis=None),
    "ifft": lambda m: m.fft.ifft(C, n=7, axis=-2),
    "ifft_ortho": lambda m: m.fft.ifft(C, norm="ortho"),
    "ifft_forward": lambda m: m.fft.ifft(R, norm="forward"),
    "rfft": lambda m: m.fft.rfft(R),
    "rfft_n_odd": lambda m: m.fft.rfft(R, n=7, axis=0),
    "rfft_int_ortho": lambda m: m.fft.rfft(INTS, norm="ortho"),
    "irfft": lambda m: m.fft.irfft(C),
    "irfft_n_odd": lambda m: m.fft.irfft(C, n=9),
    "irfft_n_small_axis0": lambda m: m.fft.irfft(C, n=2, axis=0, norm="forward"),
    "irfft_int": lambda m: m.fft.irfft(INTS, norm="ortho"),
    "hfft": lambda m: m.fft.hfft(C),
    "hfft_n": lambda m: m.fft.hfft(C, n=5, axis=1, norm="ortho"),
    "hfft_forward": lambda m: m.fft.hfft(R, norm="forward"),
    "ihfft": lambda m: m.fft.ihfft(R),
    "ihfft_n": lambda m: m.fft.ihfft(R, n=6, axis=0, norm="forward"),
    "ihfft_ortho": lambda m: m.fft.ihfft(INTS, norm="ortho"),
    "fft2": lambda m: m.fft.fft2(C),
    "fft2_s_axes": lambda m: m.fft.fft2(R, s=(2, 6), axes=(0, 2)),
    "ifft2": lambda m: m.fft.ifft2(C, axes=(2, 0), norm="ortho"),
    "rfft2": lambda m: m.fft.rfft2(R, s=(3, 3)),
    "irfft2": lambda m: m.fft.irfft2(C, s=(4, 7), norm="forward"),
    "fftn": lambda m: m.fft.fftn(C),
    "fftn_s": lambda m: m.fft.fftn(R, s=(2, 6), axes=(1, 2)),
    "fftn_s_last_axes": lambda m: m.fft.fftn(R, s=(2, 6)),
    "fftn_axes": lambda m: m.fft.fftn(C, axes=(1, 0), norm="ortho"),
    "ifftn": lambda m: m.fft.ifftn(C, s=(5, 3, 2), axes=(0, 1, 2)),
    "rfftn": lambda m: m.fft.rfftn(R),
    "rfftn_axes": lambda m: m.fft.rfftn(R, s=(4, 4), axes=(2, 0), norm="forward"),
    "irfftn": lambda m: m.fft.irfftn(C),
    "irfftn_s": lambda m: m.fft.irfftn(C, s=(3, 5), axes=(0, 1), norm="ortho"),
    "fftn_4d": lambda m: m.fft.fftn(np.stack([C, C[::-1]]), norm="ortho"),
    "irfftn_4d": lambda m: m.fft.irfftn(np.stack([C, 2 * C]), s=(2, 3, 4, 6),
                                        axes=(0, 1, 2, 3)),
    "fftfreq": lambda m: m.fft.fftfreq(7),
    "fftfreq_d": lambda m: m.fft.fftfreq(8, d=0.25),
    "rfftfreq": lambda m: m.fft.rfftfreq(7, 2.0),
    "rfftfreq_even": lambda m: m.fft.rfftfreq(8),
    "fftshift": lambda m: m.fft.fftshift(INTS),
    "fftshift_axis": lambda m: m.fft.fftshift(R, axes=1),
    "ifftshift": lambda m: m.fft.ifftshift(R, axes=(0, 2)),
    "ifftshift_all": lambda m: m.fft.ifftshift(INTS),
}


def _tol(x):
    """Integers transform in single precision even with x64 (JAX's conversion)."""
    return 1e-10 if np.asarray(x).dtype in (np.float64, np.complex128) else 1e-4


def _check_like_jax(got, want, tol=None):
    got_np, want_np = np.asarray(got), np.asarray(want)
    assert (got_np.shape, got_np.dtype, got.weak_type) == (want_np.shape, want_np.dtype,
                                                           want.weak_type)
    tol = _tol(want_np) if tol is None else tol
    np.testing.assert_allclose(got_np, want_np, rtol=tol, atol=tol)


@X64
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_jax(name, x64):
    case = CASES[name]
    with both_x64(x64):  # (JAX compiles the whole case once: much faster than op by op)
        _check_like_jax(case(jnp), jax.jit(lambda: case(jnp_ref))())


# NumPy's fft needs an axis (JAX's transforms all of them); NumPy deprecates s without axes
NOT_IN_NUMPY = {"fft_axis_none", "fftn_s_last_axes"}


@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_IN_NUMPY))
def test_against_numpy(name):
    case = CASES[name]
    with enable_x64(True):
        got = np.asarray(case(jnp))
    tol = _tol(got) / 100
    np.testing.assert_allclose(got, case(np), rtol=tol, atol=tol)


@X64
@pytest.mark.parametrize("args", [
    (np.arange(6.0, dtype=np.float32),), (np.arange(6),), (3.0,), (np.float32(2),),
    (np.ones((0, 4)),), (np.ones((2, 1), np.complex64),),
], ids=["f32", "int", "py_float", "np_scalar", "empty", "length1"])
@pytest.mark.parametrize("fn", ["fft", "irfft", "hfft", "ifftn", "irfftn", "fftshift"])
def test_dtypes_and_edge_shapes_as_jax(fn, args, x64):
    """Where JAX returns something (0-d inputs of the n-dimensional functions, empty arrays),
    didax returns the same; where JAX raises, didax raises the same exception type."""
    with both_x64(x64):
        try:
            want = getattr(jnp_ref.fft, fn)(*args)
        except Exception as e:  # noqa: BLE001 - whatever JAX raises, didax raises too
            with pytest.raises(type(e)):
                getattr(jnp.fft, fn)(*args)
            return
        _check_like_jax(getattr(jnp.fft, fn)(*args), want)


@pytest.mark.parametrize("dtype", [None, np.float32, np.int32, np.float16, np.complex64])
@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
def test_frequency_dtypes_as_jax(fn, dtype):
    for n in (1, 5, 10):
        got = getattr(jnp.fft, fn)(n, 0.5, dtype=dtype)
        want = jax.jit(lambda n=n: getattr(jnp_ref.fft, fn)(n, 0.5, dtype=dtype))()
        # (JAX's float16 division is not correctly rounded: a last-bit difference there)
        _check_like_jax(got, want, 1e-3 if dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.fft.fft(C, norm="bad"), ValueError),
    (lambda m: m.fft.fft(C, n=0), ValueError),
    (lambda m: m.fft.fft(C, axis=[0]), ValueError),
    (lambda m: m.fft.fft(C, axis=3), ValueError),
    (lambda m: m.fft.fft([1.0, 2.0]), TypeError),
    (lambda m: m.fft.fftn(C, axes=(0, 0)), ValueError),
    (lambda m: m.fft.fftn(C, s=(2,), axes=(0, 1)), ValueError),
    (lambda m: m.fft.fft2(C, axes=(0,)), ValueError),
    (lambda m: m.fft.rfft(C), ValueError),
    (lambda m: m.fft.rfft(R.astype(np.float16)), ValueError),
    (lambda m: m.fft.ihfft(C), ValueError),
    (lambda m: m.fft.fftfreq([4]), ValueError),
    (lambda m: m.fft.rfftfreq(4, d=[1.0]), ValueError),
    (lambda m: m.fft.fftshift([1, 2]), TypeError),
], ids=["norm", "n0", "axis_list", "axis_range", "list", "repeated_axes", "s_axes_lengths",
        "fft2_axes", "rfft_complex", "rfft_f16", "ihfft_complex", "fftfreq_n", "rfftfreq_d",
        "fftshift_list"])
def test_errors_as_jax(call, exc):
    with pytest.raises(exc):
        call(jnp_ref)
    with pytest.raises(exc):
        call(jnp)


def test_error_messages():
    with pytest.raises(ValueError, match='Invalid norm value bad; should be "backward"'):
        jnp.fft.fft(C, norm="bad")
    with pytest.raises(ValueError, match="does not support multiple axes. Please use "
                                         "jax.numpy.fft.fftn"):
        jnp.fft.fft(C, axis=(0,))
    with pytest.raises(ValueError, match="s=.* has more entries than the array"):
        jnp.fft.fftn(R, s=(2, 2, 2, 2))  # (JAX transforms an axis twice here)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_round_trips(norm):
    with enable_x64(True):
        np.testing.assert_allclose(jnp.fft.ifftn(jnp.fft.fftn(C, norm=norm), norm=norm), C,
                                   atol=1e-12)
        np.testing.assert_allclose(jnp.fft.irfft(jnp.fft.rfft(R, norm=norm), n=5, norm=norm),
                                   R, atol=1e-12)
        np.testing.assert_allclose(jnp.fft.hfft(jnp.fft.ihfft(R, norm=norm), n=5, norm=norm),
                                   R, atol=1e-12)
        np.testing.assert_array_equal(jnp.fft.ifftshift(jnp.fft.fftshift(R)), R)


@pytest.mark.parametrize("fn,arg,kwargs", [
    ("fft", C[0], {"n": 6, "norm": "ortho"}),
    ("ifft", C[0], {"axis": 0}),
    ("rfft", R[0], {"n": 4, "norm": "forward"}),
    ("irfft", C[0], {"n": 7}),
    ("hfft", C[0], {}),
    ("ihfft", R[0], {"norm": "ortho"}),
    ("rfftn", R, {"axes": (0, 2)}),
    ("irfft2", C, {"s": (3, 4)}),
    ("fftshift", C[0], {}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_grads(fn, arg, kwargs):
    with enable_x64(True):
        check_grads(lambda a: getattr(jnp.fft, fn)(a, **kwargs), (arg,), order=2,
                    modes=("fwd", "rev"))


def test_grad_of_a_real_loss_matches_jax():
    def loss(m, x):
        spectrum = m.fft.rfft2(x, s=(4, 6), norm="ortho")
        return m.sum(m.abs(m.fft.fftshift(spectrum)) ** 3)

    with both_x64():
        _check_like_jax(didax.grad(lambda x: loss(jnp, x))(R[0]),
                        jax.grad(lambda x: loss(jnp_ref, x))(R[0]))


def test_vmap_and_jit():
    with enable_x64(True):
        def f(x):
            return jnp.fft.irfft(jnp.fft.fft2(x, axes=(1, 0)), n=6, axis=0)

        want = np.stack([np.asarray(f(c)) for c in C])
        np.testing.assert_allclose(didax.vmap(f)(C), want, atol=1e-12)
        np.testing.assert_allclose(didax.vmap(f, in_axes=2, out_axes=1)(C),
                                   np.stack([np.asarray(f(C[..., i])) for i in range(5)], 1),
                                   atol=1e-12)
        np.testing.assert_allclose(didax.jit(didax.vmap(f))(C), want, atol=1e-12)


def test_public_module():
    import didax.numpy.fft as public

    assert jnp.fft is public
    names = {"fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
             "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
             "rfftn"}
    assert names <= set(dir(jnp_ref.fft)) and names <= set(dir(public))
