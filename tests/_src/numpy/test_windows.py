"""didax.numpy's window functions (windows.py): values against NumPy, dtypes and weak types
against JAX 0.10.2 (the default float dtype, not weak, for every M), and JAX's errors."""
import numpy as np
import pytest
from numpy_testing import X64

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64

NAMES = ["bartlett", "blackman", "hamming", "hanning"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M", [0, 1, 2, 3, 8, 15])
@X64
def test_matches_numpy_with_jax_dtype(name, M, x64):
    with enable_x64(x64):
        got = getattr(jnp, name)(M)
    assert got.dtype == (np.float64 if x64 else np.float32) and not got.weak_type
    assert got.shape == (M,)
    np.testing.assert_allclose(np.asarray(got), getattr(np, name)(M),
                               atol=1e-14 if x64 else 1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_errors(name):
    fn = getattr(jnp, name)
    with pytest.raises(TypeError, match="nonnegative"):  # JAX's error; NumPy gives []
        fn(-1)
    with pytest.raises(didax.errors.ConcretizationTypeError, match="M argument"):
        didax.jit(fn)(3)
    assert didax.jit(fn, static_argnums=0)(3).shape == (3,)
