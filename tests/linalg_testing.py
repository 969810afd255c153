"""Shared helpers of the tests of the matrix decompositions (lax.linalg, scipy.linalg)."""
import numpy as np

LAPACK_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def draw(rng, shape, dtype=np.float64):
    """Standard normal entries (real and imaginary parts) of `dtype`."""
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def tol(dtype):
    """The tolerance of a decomposition's results in `dtype` (one of the LAPACK types)."""
    return 1e-12 if np.finfo(dtype).bits == 64 else 3e-5


def close(got, want, tol):
    """Same shape and dtype, values within `tol`."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
