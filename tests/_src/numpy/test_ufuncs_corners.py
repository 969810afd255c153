"""jnp's elementwise functions in the corners, against JAX (the same program run by both,
didax eagerly and under jit): integer division and remainders by zero, integer powers,
Python scalars out of an integer type's range, derivatives at ties."""
import numpy as np
import pytest
from jax_testing import INT_DTYPES, assert_as_jax, both_x64, integer_edge_pairs


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_jnp_integer_division_matches_jax(dtype):
    """jnp's floor division and remainders: x // 0 follows lax.div (-1 adjusted to the floor,
    the largest unsigned value), but jnp's remainders of x by 0 are 0."""
    def program(jax, jnp, lax, x, y):
        q, r = jnp.divmod(x, y)
        return dict(floor_divide=x // y, remainder=x % y, fmod=jnp.fmod(x, y), q=q, r=r,
                    right_shift=x >> y, bitwise_count=jnp.bitwise_count(x))

    with both_x64():
        assert_as_jax(program, *integer_edge_pairs(dtype))


def test_logaddexp2_derivative_at_ties_as_jax():
    """JAX's custom rule: t1 2**(x1 - out) + t2 2**(x2 - out), (0.5, 0.5) at a tie."""
    def program(jax, jnp, lax, x, y):
        return [jax.grad(jnp.logaddexp2, (0, 1))(a, b) for a, b in zip(x, y)]

    x = np.array([1.0, 1.0, -np.inf, np.inf, 3.0, -np.inf], np.float32)
    y = np.array([1.0, 3.0, -np.inf, np.inf, np.inf, 2.0], np.float32)
    assert_as_jax(program, x, y, rtol=1e-6)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_power_as_jax(dtype):
    """An integer exponent array: JAX's binary exponentiation over its low 6 bits (so
    large and negative exponents give what JAX's give); pow(0, y) is 0 for y != 0."""
    def program(jax, jnp, lax, x, y):
        return jnp.power(x, y), x ** y

    with both_x64():
        assert_as_jax(program, *integer_edge_pairs(dtype))


def test_power_with_concrete_exponents_as_jax():
    """A concrete integer exponent (a Python int, a concrete 0-d integer array) is
    integer_pow, eagerly: x ** -1 of integers is a TypeError; under jit a traced 0-d array
    is an array exponent (JAX gives 0 for 2 ** -1 there)."""
    import jax

    import didax

    for lib in (jax, didax):
        for y in (-1, lib.numpy.array(-1), np.int32(-1)):
            with pytest.raises(TypeError, match="negative"):
                lib.numpy.power(lib.numpy.array(2), y)
    two, minus_one = np.array(2, np.int32), np.array(-1, np.int32)
    assert (int(didax.jit(didax.numpy.power)(two, minus_one))
            == int(jax.jit(jax.numpy.power)(two, minus_one)) == 0)

    def program(jax, jnp, lax, x, n):  # 1000 ** int8(1) is integer_pow of a weak int32
        return [1000 ** n, jnp.power(x, n), x ** 3, 2 ** n, jnp.power(x, 2.0)]

    assert_as_jax(program, np.array([1.5, -2.0], np.float32), np.int8(1), jax_jit=False,
                  didax_jit=False)


def test_power_derivative_at_zero_as_jax():
    """A float base with an integer exponent array is `pow` with the exponent left an
    integer, whose slope at 0 ** 0 is 0; with a float exponent it is NaN (0 * inf)."""
    def program(jax, jnp, lax, x, n, f):
        return (jax.grad(lambda x: jnp.sum(jnp.power(x, n)))(x),
                jax.grad(lambda x: jnp.sum(jnp.power(x, f)))(x),
                jax.grad(lambda x: jnp.sum(lax.pow(x, n)))(x),
                jax.grad(lambda x: jnp.sum(x ** 0.0))(x))

    assert_as_jax(program, np.zeros(3, np.float32), np.array([0, 1, 2], np.int32),
                  np.array([0.0, 1.0, 2.0], np.float32))


def test_python_ints_past_an_integer_type_wrap_as_jax():
    """A Python int outside the array's integer type is read through the default int type
    and wraps, as JAX does (in comparisons too: int8(1) < 1000 is False there)."""
    def program(jax, jnp, lax, x):
        return [x + 1000, 1000 + x, x - 300, x * -129, x < 1000, x == 1000, 1000 >= x,
                jnp.add(x, 1000), jnp.maximum(x, 300), jnp.where(x > 1, x, 1000)]

    for dtype in (np.int8, np.uint8, np.int16):
        assert_as_jax(program, np.array([1, 2], dtype))
        assert_as_jax(program, np.array([1, 2], dtype), jax_jit=False)


def test_integer_round_with_negative_decimals_raises_as_jax():
    import jax

    import didax

    for lib in (jax, didax):
        with pytest.raises(NotImplementedError):
            lib.numpy.round(lib.numpy.array([15, 25]), -1)
        np.testing.assert_array_equal(lib.numpy.round(lib.numpy.array([15, 25]), 1), [15, 25])


def test_shape_mismatch_error_types_as_jax():
    """Equal ranks that do not broadcast: lax's TypeError; ranks to promote: ValueError."""
    import jax

    import didax

    for lib in (jax, didax):
        jnp = lib.numpy
        with pytest.raises(TypeError, match="incompatible shapes"):
            jnp.ones(3) + jnp.ones(4)
        with pytest.raises(TypeError, match="incompatible shapes"):
            lib.jit(lambda a, b: a * b)(jnp.ones((2, 3)), jnp.ones((2, 4)))
        with pytest.raises(ValueError, match="ncompatible shapes"):
            jnp.ones(3) + jnp.ones((2, 4))


def test_nan_and_infinities_through_extrema_and_selects_as_jax():
    """NaN propagates through maximum/minimum (not fmax/fmin); derivatives at NaN, at ties
    and through the unselected side of where and clip are JAX's, eagerly and under jit."""
    x = np.array([np.nan, 1.0, -np.inf, np.inf, 0.0, -0.0, 2.0, np.nan], np.float32)
    y = np.array([1.0, np.nan, np.inf, np.inf, -0.0, 0.0, 2.0, np.nan], np.float32)

    def program(jax, jnp, lax, x, y):
        out = [jnp.maximum(x, y), jnp.minimum(x, y), jnp.fmax(x, y), jnp.fmin(x, y),
               jnp.clip(x, -1.0, 1.0), jnp.sort(x), jnp.argmax(x), jnp.max(x)]
        for f in (jnp.maximum, jnp.minimum):
            out += list(jax.vmap(jax.grad(f, (0, 1)))(x, y))
        out.append(jax.vmap(jax.grad(lambda a: jnp.clip(a, -1.0, 1.0)))(x))
        out.append(jax.grad(lambda a: jnp.sum(jnp.where(a > 0, jnp.sqrt(a), 0.0)))(
            jnp.array([-1.0, 0.0, 4.0])))
        out.append(jax.grad(lambda a: jnp.max(a))(jnp.array([1.0, 2.0, 2.0, 0.5])))
        return out

    assert_as_jax(program, x, y, jax_jit="same")
