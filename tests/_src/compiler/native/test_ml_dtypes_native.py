"""The native tier and the ml_dtypes types: it has no C type for bfloat16 or the narrow
ints, so their equations stay on the NumPy tier while float32 ones around them go native."""
import ml_dtypes
import numpy as np

import didax.numpy as jnp

from .conftest import Tiers, assert_native, executable, have_compiler


def test_bfloat16_equations_fall_back_and_float32_ones_go_native():
    def f(x, y):
        x = jnp.asarray(x)  # (eager, NumPy's own promotion would apply to a NumPy array)
        a = jnp.tanh(y) * 3.0 + 1.0                     # float32: native
        h = jnp.sin(x) * x + 1                          # bfloat16: NumPy tier
        return jnp.sum(h, axis=0), a * 2.0 - jnp.exp(-a), (x + 3).astype(jnp.int4) * 2
    x = np.linspace(-2, 3, 12, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(3, 4)
    y = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    tiers = Tiers(f)
    native, numpy_, eager = tiers(x, y)
    assert_native(tiers.native, x, y)
    if have_compiler():
        assert executable(tiers.native, x, y).native.plan.python_segments
    assert native[0].dtype == ml_dtypes.bfloat16 and native[2].dtype == ml_dtypes.int4
    for a, b, c in zip(native, numpy_, eager):
        assert a.dtype == b.dtype == c.dtype
        np.testing.assert_array_equal(b.view(np.uint8), c.view(np.uint8))
        np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=1e-6)
