"""jnp's elementwise functions in the corners, against JAX (the same program run by both,
didax eagerly and under jit): integer division and remainders by zero, integer powers,
Python scalars out of an integer type's range, derivatives at ties."""
import numpy as np
import pytest
from jax_testing import assert_as_jax, both_x64

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _edges(dtype):
    info = np.iinfo(dtype)
    values = {0, 1, 2, 3, 7, 100, info.max, info.max - 1, info.min, info.min + 1}
    if info.min < 0:
        values |= {-1, -2, -3, -7}
    return np.array(sorted(values), dtype)


def _pairs(dtype):
    """Every pair of edge values, as two flat arrays."""
    v = _edges(dtype)
    return [a.ravel() for a in np.meshgrid(v, v)]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_jnp_integer_division_matches_jax(dtype):
    """jnp's floor division and remainders: x // 0 follows lax.div (-1 adjusted to the floor,
    the largest unsigned value), but jnp's remainders of x by 0 are 0."""
    def program(jax, jnp, lax, x, y):
        q, r = jnp.divmod(x, y)
        return dict(floor_divide=x // y, remainder=x % y, fmod=jnp.fmod(x, y), q=q, r=r,
                    right_shift=x >> y, bitwise_count=jnp.bitwise_count(x))

    with both_x64():
        assert_as_jax(program, *_pairs(dtype))


def test_logaddexp2_derivative_at_ties_as_jax():
    """JAX's custom rule: t1 2**(x1 - out) + t2 2**(x2 - out), (0.5, 0.5) at a tie."""
    def program(jax, jnp, lax, x, y):
        return [jax.grad(jnp.logaddexp2, (0, 1))(a, b) for a, b in zip(x, y)]

    x = np.array([1.0, 1.0, -np.inf, np.inf, 3.0, -np.inf], np.float32)
    y = np.array([1.0, 3.0, -np.inf, np.inf, np.inf, 2.0], np.float32)
    assert_as_jax(program, x, y, rtol=1e-6)
