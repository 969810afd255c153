"""didax.scipy.fft (type-2 DCTs) against jax.scipy.fft 0.10.2 (values, dtypes, weak types,
exception types) and scipy.fft (values in float64): lengths n/s, axes, norms, complex and
integer inputs, round trips, derivatives of order 2 in both modes, vmap and jit."""

import jax
import jax.scipy.fft as jsf_ref
import numpy as np
import pytest
import scipy.fft as sfft
from jax_testing import both_x64
from numpy_testing import X64

import didax
import didax.scipy.fft as dsf
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads

_RNG = np.random.default_rng(0)
R = _RNG.standard_normal((3, 4, 5))
C = R + 1j * _RNG.standard_normal((3, 4, 5))
INTS = np.arange(20, dtype=np.int32).reshape(4, 5) % 7


# Cases as functions of the module (`scipy.fft`, `didax.scipy.fft` or `jax.scipy.fft`).
CASES = {
    "dct": lambda m: m.dct(R),
    "dct_ortho_axis0": lambda m: m.dct(R, axis=0, norm="ortho"),
    "dct_n_pad": lambda m: m.dct(R, n=8, axis=1),
    "dct_n_crop_backward": lambda m: m.dct(R, n=2, norm="backward"),
    "dct_length1": lambda m: m.dct(R[..., :1]),
    "dct_complex": lambda m: m.dct(C, norm="ortho"),
    "dct_int": lambda m: m.dct(INTS),
    "idct": lambda m: m.idct(R),
    "idct_ortho_axis1": lambda m: m.idct(R, axis=1, norm="ortho"),
    "idct_n": lambda m: m.idct(R, n=7),
    "idct_odd_even": lambda m: m.idct(R[..., :4], axis=-1, norm="ortho"),
    "idct_complex": lambda m: m.idct(C, axis=0),
    "idct_int": lambda m: m.idct(INTS, norm="ortho"),
    "dctn": lambda m: m.dctn(R),
    "dctn_ortho_axes": lambda m: m.dctn(R, axes=(0, 2), norm="ortho"),
    "dctn_s": lambda m: m.dctn(R, s=(3, 6)),
    "dctn_s_axes": lambda m: m.dctn(R, s=(2, 7), axes=(2, 0), norm="ortho"),
    "dctn_one_axis": lambda m: m.dctn(C, axes=(1,)),
    "idctn": lambda m: m.idctn(R),
    "idctn_ortho": lambda m: m.idctn(C, axes=(0, 1), norm="ortho"),
    "idctn_s": lambda m: m.idctn(R, s=(5, 3), axes=(1, 2)),
    "idctn_int": lambda m: m.idctn(INTS),
}


def _tol(x):
    return 1e-10 if np.asarray(x).dtype in (np.float64, np.complex128) else 1e-4


def _check_like_jax(got, want):
    got_np, want_np = np.asarray(got), np.asarray(want)
    assert (got_np.shape, got_np.dtype, got.weak_type) == (want_np.shape, want_np.dtype,
                                                           want.weak_type)
    np.testing.assert_allclose(got_np, want_np, rtol=_tol(want_np), atol=_tol(want_np))


# JAX compiles its DCTs slowly: these cases cover its dtypes, norms, lengths and axes (scipy
# checks the values of all of them).
JAX_CASES = ["dct_n_crop_backward", "dct_complex", "dct_int", "idct_ortho_axis1", "idct_n",
             "idct_int", "dctn_s_axes", "idctn_s"]


@X64
@pytest.mark.parametrize("name", JAX_CASES)
def test_against_jax(name, x64):
    case = CASES[name]
    with both_x64(x64):
        _check_like_jax(case(dsf), jax.jit(lambda: case(jsf_ref))())


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_scipy(name):
    case = CASES[name]
    with enable_x64(True):
        got = np.asarray(case(dsf))
    np.testing.assert_allclose(got, case(sfft), rtol=_tol(got) / 100, atol=_tol(got) / 100)


@X64
@pytest.mark.parametrize("arg", [np.arange(6, dtype=np.float16), np.arange(6) > 2, 3.0,
                                 np.ones((2, 3), np.complex64)],
                         ids=["float16", "bool", "py_float", "complex64"])
@pytest.mark.parametrize("fn", ["dct", "idctn"])
def test_dtypes_and_scalars_as_jax(fn, arg, x64):
    """float16 and bool inputs transform in float32; the n-dimensional transforms of a 0-d
    value return it unchanged (no axes), the one-dimensional ones raise."""
    with both_x64(x64):
        try:
            want = jax.jit(lambda: getattr(jsf_ref, fn)(arg))()
        except ValueError:
            with pytest.raises(ValueError, match="out of bounds"):
                getattr(dsf, fn)(arg)
            return
        got = getattr(dsf, fn)(arg)
        assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, want.weak_type)
        tol = 2e-3 if np.asarray(arg).dtype == np.float16 else 1e-5  # (JAX scales in float16)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.dct(R, type=1), NotImplementedError),
    (lambda m: m.idct(R, type=3), NotImplementedError),
    (lambda m: m.dctn(R, type=4), NotImplementedError),
    (lambda m: m.idctn(R, type=1), NotImplementedError),
    (lambda m: m.dct(R, norm="forward"), ValueError),
    (lambda m: m.idctn(R, norm="forward"), ValueError),
    (lambda m: m.dct(R, axis=3), ValueError),
    (lambda m: m.dctn(R, s=(1, 2, 3, 4)), ValueError),
    (lambda m: m.dct([1.0, 2.0]), TypeError),
], ids=["dct_type", "idct_type", "dctn_type", "idctn_type", "dct_norm", "idctn_norm",
        "axis", "s_too_long", "list"])
def test_errors_as_jax(call, exc):
    with pytest.raises(exc):
        call(jsf_ref)
    with pytest.raises(exc):
        call(dsf)


def test_error_messages():
    with pytest.raises(NotImplementedError, match="Only DCT type 2 is implemented."):
        dsf.dct(R, type=3)
    with pytest.raises(ValueError, match="jax.scipy.fft.idct: norm='forward' is not implemented"):
        dsf.idct(R, norm="forward")
    with pytest.raises(ValueError, match="n=0 must be positive"):
        dsf.dct(R, n=0)
    with pytest.raises(ValueError, match=r"axis 0 of the input of shape \(0, 4\) is empty"):
        dsf.idct(np.ones((0, 4)), axis=0)  # (JAX fails with an internal slicing TypeError)


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("size", [1, 2, 5, 6])
def test_round_trips(size, norm):
    x = _RNG.standard_normal((2, size))
    with enable_x64(True):
        np.testing.assert_allclose(dsf.idct(dsf.dct(x, norm=norm), norm=norm), x, atol=1e-12)
        np.testing.assert_allclose(dsf.dctn(dsf.idctn(x, norm=norm), norm=norm), x, atol=1e-12)


@pytest.mark.parametrize("fn,arg,kwargs", [
    ("dct", R[0], {}), ("dct", R[0], {"n": 6, "norm": "ortho", "axis": 0}),
    ("idct", R[0], {}), ("idct", C[0], {"norm": "ortho"}),
    ("dctn", R[0], {"s": (3, 3)}), ("idctn", R[0], {"axes": (0,), "norm": "ortho"}),
], ids=["dct", "dct_ortho_n", "idct", "idct_complex_ortho", "dctn_s", "idctn_ortho"])
def test_grads(fn, arg, kwargs):
    with enable_x64(True):
        check_grads(lambda a: getattr(dsf, fn)(a, **kwargs), (arg,), order=2,
                    modes=("fwd", "rev"))


def test_vmap_and_jit():
    with enable_x64(True):
        def f(x):
            return dsf.idctn(dsf.dct(x, axis=0, norm="ortho"), axes=(1,))

        want = np.stack([np.asarray(f(r)) for r in R])
        np.testing.assert_allclose(didax.vmap(f)(R), want, atol=1e-12)
        np.testing.assert_allclose(didax.vmap(f, in_axes=2, out_axes=2)(R),
                                   np.stack([np.asarray(f(R[..., i])) for i in range(5)], 2),
                                   atol=1e-12)
        np.testing.assert_allclose(didax.jit(didax.vmap(f))(R), want, atol=1e-12)


def test_public_module():
    import didax.scipy

    assert didax.scipy.fft is dsf
    assert {"dct", "dctn", "idct", "idctn"} <= set(dir(dsf)) & set(dir(jsf_ref))
