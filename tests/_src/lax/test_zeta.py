"""lax.zeta (the Hurwitz zeta function) against values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def test_zeta_matches_jax():
    x = jnp.float32([2.0, 3.0, 1.0, 0.5, 4.5, 2.0])
    q = jnp.float32([1.0, 2.0, 1.0, 1.0, 1.5, -2.0])
    out = lax.zeta(x, q)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [1.644934058189392, 0.2020569145679474, np.inf, np.nan,
                                     0.18318215012550354, np.inf], rtol=2e-7)
    with pytest.raises(TypeError, match="zeta does not accept dtype int32"):
        lax.zeta(jnp.int32(2), jnp.int32(1))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.zeta(jnp.float32(2), jnp.float64(1))
