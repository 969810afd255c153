"""didax.scipy.integrate.trapezoid against jax 0.10.2 and SciPy: values, dtypes, gradients."""
import jax
import numpy as np
import pytest
import scipy.integrate

import didax
import didax.scipy.integrate as dint
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("with_x", [False, True])
def test_trapezoid_values(axis, with_x):
    rng = np.random.default_rng(0)
    y = rng.standard_normal((4, 5)).astype(np.float32)
    x = np.sort(rng.random(y.shape[axis])).astype(np.float32) if with_x else None
    got = dint.trapezoid(y, x, dx=0.5, axis=axis)
    want = jax.scipy.integrate.trapezoid(y, x, dx=0.5, axis=axis)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, scipy.integrate.trapezoid(y, x, dx=0.5, axis=axis),
                               rtol=1e-5, atol=1e-6)


def test_trapezoid_int_dtype_and_jit():
    y = np.arange(6)
    assert dint.trapezoid(y).dtype == jax.scipy.integrate.trapezoid(y).dtype
    np.testing.assert_allclose(didax.jit(dint.trapezoid)(y * 1.0), dint.trapezoid(y * 1.0))


def test_trapezoid_grads():
    with enable_x64(True):
        rng = np.random.default_rng(1)
        y, x = rng.standard_normal(5), np.sort(rng.random(5))
        check_grads(dint.trapezoid, (y, x), order=2)
