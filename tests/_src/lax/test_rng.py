"""lax.rng_bit_generator against JAX 0.10.2, bit for bit: every algorithm, bit width and
a spread of shapes (even, odd, scalar, empty; the split dimension of Threefry's halves), keys
whose counters wrap; jit, vmap (each example's key alone), staging and errors. rng_uniform:
types, range and staging (its values are not JAX's: XLA's are not reproducible either)."""
import warnings

import jax
import numpy as np
import pytest
from jax_testing import both_x64

import didax
from didax import lax

KEYS = [np.array(k, np.uint32) for k in ([5, 1, 0xFFFFFFFE, 3], [9, 8, 0xFFFFFFFF, 0xFFFFFFFF],
                                         [0xDEADBEEF, 7, 0xFFFFFFF0, 0xFFFFFFFF])]
SHAPES = [(3,), (2, 3), (3, 5), (5, 3), (3, 3), (), (0,), (3, 1, 7)]


@pytest.mark.parametrize("algorithm", list(lax.RandomAlgorithm))
def test_rng_bit_generator_bits_match_jax(algorithm):
    theirs_alg = jax.lax.RandomAlgorithm(int(algorithm))
    shapes = {"RNG_THREE_FRY": SHAPES, "RNG_PHILOX": [(3,), (2, 3), (), (0,)],
              "RNG_DEFAULT": [(2, 3)]}[algorithm.name]  # (Threefry splits shapes in half)
    cases = [(np.uint32, s) for s in shapes] + [
        (np.uint8, (5,)), (np.uint16, (2, 3)), (np.uint64, (3,))][:len(shapes) - 1]
    for dtype, shape in cases:
        with both_x64(dtype == np.uint64):
            theirs = jax.jit(jax.lax.rng_bit_generator, static_argnums=(1, 2, 3))
            for key in KEYS:
                got = lax.rng_bit_generator(key, shape, dtype, algorithm)
                for g, w in zip(got, theirs(key, shape, dtype, theirs_alg)):
                    assert (g.dtype, g.shape) == (w.dtype, w.shape), (dtype, shape)
                    np.testing.assert_array_equal(g, w, err_msg=f"{dtype} {shape}")
    jitted = didax.jit(lambda k: lax.rng_bit_generator(k, (4, 3), algorithm=algorithm))
    for g, w in zip(jitted(KEYS[1]), jax.lax.rng_bit_generator(KEYS[1], (4, 3),
                                                              algorithm=theirs_alg)):
        np.testing.assert_array_equal(g, w)


def test_rng_bit_generator_vmap_staging_derivative_and_errors():
    keys = np.stack(KEYS)
    new_keys, bits = didax.vmap(lambda k: lax.rng_bit_generator(k, (2, 3)))(keys)
    for i, key in enumerate(KEYS):  # (JAX's vmap draws every example's bits from keys[0])
        k, b = jax.lax.rng_bit_generator(key, (2, 3))
        np.testing.assert_array_equal(new_keys[i], k)
        np.testing.assert_array_equal(bits[i], b)

    def f(L):
        return lambda k: L.rng_bit_generator(k, [3], dtype=np.uint8)

    assert str(didax.make_jaxpr(f(lax))(KEYS[0])) == str(jax.make_jaxpr(f(jax.lax))(KEYS[0]))
    assert str(lax.RandomAlgorithm.RNG_PHILOX) == str(jax.lax.RandomAlgorithm.RNG_PHILOX)
    _, (tk, tb) = didax.jvp(lambda k: lax.rng_bit_generator(k, (3,)), (KEYS[0],),
                            (np.zeros(4, didax.dtypes.float0),))
    assert tk.dtype == tb.dtype == didax.dtypes.float0
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(KEYS[0], (3,), np.int32)
    with pytest.raises(TypeError, match=r"must be a uint32\[4\] array, got u32\[2\]"):
        lax.rng_bit_generator(KEYS[0][:2], (3,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, b = lax.rng_bit_generator(KEYS[0], (3,), np.uint64)
    assert b.dtype == np.uint32 and "truncated to dtype uint32" in str(caught[0].message)


@pytest.mark.parametrize("low,high", [(np.float32(-2), np.float32(3)), (np.int32(4), np.int32(9)),
                                      (0.0, 1.0)])
def test_rng_uniform_types_and_range_as_jax(low, high):
    ours, theirs = lax.rng_uniform(low, high, (200,)), jax.lax.rng_uniform(low, high, (200,))
    assert (ours.dtype, ours.shape, ours.weak_type) == (theirs.dtype, theirs.shape,
                                                        theirs.weak_type)
    assert (np.asarray(ours) >= low).all() and (np.asarray(ours) < high).all()
    assert len(np.unique(np.asarray(ours))) > 3
    f = didax.jit(lambda a, b: (lax.rng_uniform(a, b, (50,)), lax.rng_uniform(a, b, (50,))))
    first, second = f(low, high)
    assert not np.array_equal(first, second)  # two draws, not one merged
    staged = didax.make_jaxpr(lambda a, b: lax.rng_uniform(a, b, (2,)))(low, high)
    assert str(staged) == str(jax.make_jaxpr(lambda a, b: jax.lax.rng_uniform(a, b, (2,)))(
        low, high))
    with pytest.raises(NotImplementedError, match="no batching rule"):
        didax.vmap(lambda a: lax.rng_uniform(a, high, (2,)))(np.array([low, low]))
