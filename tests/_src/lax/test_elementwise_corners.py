"""Elementwise primitives in the corners, against JAX (the same program run by both, didax
eagerly and under jit): integer overflow, division by zero, shifts by the width or more,
casts past the limits, bit counts; float16 and bfloat16 derivatives."""
import warnings

import numpy as np
import pytest
from jax_testing import INT_DTYPES, assert_as_jax, both_x64, integer_edge_pairs, integer_edges


def _shift_counts(dtype):
    """Every edge value against counts 0, 1, 3, the width - 1, the width and beyond, and
    negative counts."""
    bits = 8 * np.dtype(dtype).itemsize
    counts = [0, 1, 3, bits - 1, bits, bits + 1, 2 * bits]
    if np.iinfo(dtype).min < 0:
        counts += [-1, -bits, -100]
    return [a.ravel() for a in np.meshgrid(integer_edges(dtype), np.array(counts, dtype))]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_arithmetic_matches_jax(dtype):
    """XLA's integer semantics: x / 0 is -1 (all bits set), x % 0 is x, INT_MIN / -1 wraps
    to INT_MIN and INT_MIN % -1 is 0; add, sub, mul, neg wrap."""
    def program(jax, jnp, lax, x, y):
        return dict(div=lax.div(x, y), rem=lax.rem(x, y), add=lax.add(x, y),
                    sub=lax.sub(x, y), mul=lax.mul(x, y), neg=lax.neg(x), max=lax.max(x, y),
                    min=lax.min(x, y), sign=lax.sign(x), square=lax.square(x),
                    pow3=lax.integer_pow(x, 3), pow8=lax.integer_pow(x, 8))

    with both_x64():
        assert_as_jax(program, *integer_edge_pairs(dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_shifts_and_bit_counts_match_jax(dtype):
    """Counts are read as unsigned: by the width or more (or negative) shift_left and
    shift_right_logical give 0 and shift_right_arithmetic the sign bit everywhere (also on
    unsigned operands, whose bits it shifts as signed); bit counts of two's complement."""
    def program(jax, jnp, lax, x, s):
        return dict(left=lax.shift_left(x, s), logical=lax.shift_right_logical(x, s),
                    arithmetic=lax.shift_right_arithmetic(x, s),
                    popcount=lax.population_count(x), clz=lax.clz(x), not_=lax.bitwise_not(x))

    with both_x64():
        assert_as_jax(program, *_shift_counts(dtype))


def test_the_reported_integer_cases():
    def program(jax, jnp, lax, x, zero, u):
        return (lax.div(x, zero), lax.rem(x, zero), x // 0, u // 0,
                lax.population_count(jnp.array([-1, -8], jnp.int32)))

    assert_as_jax(program, np.array([7, -7, 0], np.int32), np.zeros(3, np.int32),
                  np.array([7], np.uint32))


def test_lax_abs_rejects_unsigned_as_jax():
    import jax

    import didax
    x = np.array([1, 2], np.uint8)
    for lib in (jax, didax):
        with pytest.raises(TypeError):
            lib.lax.abs(x)


CAST_VALUES = [np.inf, -np.inf, np.nan, 0.0, -0.0, 0.9, -0.9, -1.5, 2.5, 127.5, 128.0, -129.0,
               255.9, 256.0, 32767.9, 65504.0, 65535.5, 2147483520.0, 2.0 ** 31,
               -2.0 ** 31 - 1e3, 3e9, -3e9, 4294967040.0, 2.0 ** 32, 9.2e18, 2.0 ** 63,
               -2.0 ** 63, 1.8e19, 2.0 ** 64, 1e20, -1e20]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("src", FLOAT_DTYPES)
def test_float_to_integer_casts_saturate_as_jax(src):
    """Truncation towards zero, saturating at the integer type's extremes (infinities too,
    negative values of unsigned types at 0), NaN to 0; to bool, a test against zero."""
    import ml_dtypes

    dtype = getattr(ml_dtypes, src) if src == "bfloat16" else np.dtype(src)
    x = np.array(CAST_VALUES).astype(dtype)

    def program(jax, jnp, lax, x):
        return ([lax.convert_element_type(x, d) for d in INT_DTYPES + [np.bool_]]
                + [x.astype(d) for d in INT_DTYPES])

    with both_x64():
        assert_as_jax(program, x)
    with warnings.catch_warnings():  # (64-bit types requested, 32-bit ones given)
        warnings.simplefilter("ignore")
        assert_as_jax(program, x)


@pytest.mark.parametrize("src", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_casts_wrap_as_jax(src):
    def program(jax, jnp, lax, x):
        return [lax.convert_element_type(x, d)
                for d in INT_DTYPES + [np.bool_, np.float16, np.float32, np.float64]]

    with both_x64():
        assert_as_jax(program, integer_edges(src))


# Unary primitives and the domain their derivatives are drawn on. (Left out: exp2, which XLA
# computes as exp(log(2) * x), and expm1, cbrt, erf_inv, lgamma, digamma, whose float16
# values XLA rounds differently from NumPy in a few places: their derivatives read them.)
LOW_UNARY = {
    "exp": (-3, 3), "log": (0.1, 5), "log1p": (-0.5, 3), "tanh": (-3, 3),
    "logistic": (-4, 4), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2),
    "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-3, 3), "sinh": (-3, 3),
    "cosh": (-3, 3), "asinh": (-3, 3), "acosh": (1.1, 4), "atanh": (-0.9, 0.9),
    "sqrt": (0.1, 5), "rsqrt": (0.1, 5), "abs": (-3, 3), "erf": (-2, 2),
    "erfc": (-2, 2), "square": (-3, 3), "neg": (-3, 3)}
LOW_BINARY = {
    "add": ((-3, 3), (-3, 3)), "sub": ((-3, 3), (-3, 3)), "mul": ((-3, 3), (-3, 3)),
    "div": ((-3, 3), (0.5, 3)), "rem": ((0.5, 5), (0.5, 3)), "pow": ((0.5, 3), (-2, 2)),
    "max": ((-3, 3), (-3, 3)), "min": ((-3, 3), (-3, 3)), "atan2": ((-3, 3), (0.5, 3))}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_derivatives_round_as_jax(dtype):
    """JVPs in float16 and bfloat16 are JAX's expressions evaluated operation by operation
    (as JAX evaluates them eagerly), e.g. tanh's (g + g * ans) * (1 - ans): the same bits."""
    import ml_dtypes

    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    rng = np.random.default_rng(0)
    n = 200
    unary = {k: (rng.uniform(*d, n).astype(dt), rng.normal(size=n).astype(dt))
             for k, d in LOW_UNARY.items()}
    binary = {k: [rng.uniform(*d, n).astype(dt) for d in ds]
              + [rng.normal(size=n).astype(dt) for d in ds] for k, ds in LOW_BINARY.items()}
    names = sorted(unary) + sorted(binary)
    args = [a for k in sorted(unary) for a in unary[k]]
    args += [a for k in sorted(binary) for a in binary[k]]
    args.append(rng.uniform(-3, 3, n).astype(dt))  # integer_pow

    def program(jax, jnp, lax, *args):
        out, args = [], list(args)
        for name in names:
            k = 1 if name in unary else 2
            primals, tangents = args[:k], args[k:2 * k]
            del args[:2 * k]
            out.append(jax.jvp(getattr(lax, name), primals, tangents)[1])
        x = args[0]
        out += [jax.jvp(lambda x, y=y: lax.integer_pow(x, y), (x,), (x,))[1]
                for y in (2, 3, -2)]
        out.append(jax.grad(lambda x: jnp.sum(lax.tanh(x)))(x))
        return out

    assert_as_jax(program, *args, jax_jit=False)
