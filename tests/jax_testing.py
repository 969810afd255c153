"""Shared helpers of the tests that run JAX (the specification) beside didax."""
import contextlib

import jax
import numpy as np

from didax._src.config import enable_x64


@contextlib.contextmanager
def both_x64(on=True):
    """64-bit types in didax and in JAX alike."""
    with enable_x64(on), jax.enable_x64(on):
        yield


def assert_same(got, want, tol=1e-5):
    """didax's result against the reference's (JAX's or SciPy's): same shapes and dtypes, values
    within `tol`; a tuple of results is compared element by element."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
