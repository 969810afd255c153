"""The threefry2x32 primitive and the key operations on it: known-answer vectors, an
independent scalar reference, every rule (types, broadcasting, vmap, JVP, staging), seeds,
splits, fold_in and bits equal to jax.random's (values recorded from JAX 0.10.2), and typed
keys."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax
import didax.numpy as jnp
import didax.random
from didax._src import core, dtypes, ir
from didax._src.config import enable_x64
from didax._src.primitives import prng

U32 = np.uint32
M32 = 0xFFFFFFFF


def _reference_threefry(k1, k2, x0, x1):
    """Threefry-2x32, 20 rounds, on Python ints (Salmon et al., SC 2011)."""
    rotl = lambda v, r: ((v << r) | (v >> (32 - r))) & M32  # noqa: E731
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    x0, x1 = (x0 + k1) & M32, (x1 + k2) & M32
    for i in range(5):
        for r in ((13, 15, 26, 6), (17, 29, 16, 24))[i % 2]:
            x0 = (x0 + x1) & M32
            x1 = rotl(x1, r) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & M32
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & M32
    return x0, x1


def _hash(*words):
    return tuple(int(w) for w in prng.threefry2x32(*(U32(w) for w in words)))


# --------------------------------------------------------------------------------------
# The primitive


@pytest.mark.parametrize("key, counter, expected", [
    # Random123's known-answer vectors for threefry2x32_20.
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((M32, M32), (M32, M32), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
])
def test_known_answer_vectors(key, counter, expected):
    assert _hash(*key, *counter) == expected
    assert _reference_threefry(*key, *counter) == expected
    # Past a few elements the kernel switches from Python ints to NumPy arrays.
    size = prng._SCALAR_PATH_MAX_SIZE + 1
    words = prng.threefry2x32(U32(key[0]), U32(key[1]), np.full(size, counter[0], U32),
                              np.full(size, counter[1], U32))
    assert [np.asarray(w).tolist() for w in words] == [[e] * size for e in expected]


@settings(max_examples=25)
@given(st.lists(st.tuples(*[st.integers(0, M32)] * 4), min_size=1, max_size=20))
def test_vectorized_impl_matches_scalar_reference(rows):
    k1, k2, x0, x1 = (np.array(col, U32) for col in zip(*rows))
    out0, out1 = prng.threefry2x32(k1, k2, x0, x1)
    expected = [_reference_threefry(*map(int, row)) for row in rows]
    np.testing.assert_array_equal(np.asarray(out0), [e[0] for e in expected])
    np.testing.assert_array_equal(np.asarray(out1), [e[1] for e in expected])


def test_operands_broadcast_like_lax():
    counters = np.arange(6, dtype=U32).reshape(2, 3)
    out0, out1 = prng.threefry2x32(U32(7), U32(9), np.zeros((1, 3), U32), counters)
    assert out0.shape == out1.shape == (2, 3) and out0.dtype == np.uint32
    assert (int(out0[1, 2]), int(out1[1, 2])) == _reference_threefry(7, 9, 0, 5)


def test_abstract_eval_rejects_other_dtypes_and_shapes():
    with pytest.raises(TypeError, match="threefry2x32 requires uint32 operands"):
        prng.threefry2x32_p.bind(np.int32(1), U32(2), U32(3), U32(4))
    with pytest.raises(TypeError, match="threefry2x32"):
        prng.threefry2x32_p.bind(U32(1), U32(2), np.zeros(3, U32), np.zeros(4, U32))


@pytest.mark.parametrize("in_axes, shapes", [
    ((0, 0, 0, 0), [(4,), (4,), (4,), (4,)]),
    ((None, None, 0, 0), [(), (), (4, 3), (4, 3)]),
    ((0, 0, None, 1), [(4,), (4,), (3,), (3, 4)]),  # per example: one key, 3 counters
    ((None, 0, None, None), [(), (4,), (3,), (3,)]),
])
def test_vmap_equals_loop(in_axes, shapes):
    rng = np.random.default_rng(0)
    args = [rng.integers(0, 2 ** 32, size=shape, dtype=U32) for shape in shapes]
    outs = didax.vmap(lambda *a: prng.threefry2x32(*a), in_axes=in_axes)(*args)
    for b in range(4):
        per = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)]
        for out, expected in zip(outs, prng.threefry2x32(*per)):
            np.testing.assert_array_equal(np.asarray(out)[b], np.asarray(expected))


def test_jvp_gives_zero_tangents():
    key = didax.random.PRNGKey(3)
    float0_tangent = np.zeros((2,), dtypes.float0)
    out, tangent = didax.jvp(lambda k: prng.random_bits(k, 32, (3,)), (key,), (float0_tangent,))
    np.testing.assert_array_equal(out, prng.random_bits(key, 32, (3,)))
    assert tangent.dtype == dtypes.float0 and tangent.shape == (3,)


def test_staged_with_one_equation_and_type_checks():
    closed = didax.make_jaxpr(lambda k: prng.random_bits(k, 32, (2, 3)))(didax.random.PRNGKey(0))
    assert [e.primitive.name for e in closed.eqns].count("threefry2x32") == 1
    assert "h:u32[2,3] i:u32[2,3] = threefry2x32 c e 0:u32[] g" in str(closed)
    ir.check_jaxpr(closed.jaxpr)


def test_transpose_rule_is_marked_absent():
    with pytest.raises(NotImplementedError, match="transpose rule for 'threefry2x32'"):
        prng.threefry2x32_p.get_rule("transpose")


# --------------------------------------------------------------------------------------
# Seeds, split, fold_in, bits (values from jax.random)


@pytest.mark.parametrize("seed, expected", [
    (0, [0, 0]), (42, [0, 42]), (-1, [0, 4294967295]), (2 ** 31, [0, 2147483648]),
    (2 ** 32 + 5, [0, 5]), (2 ** 40, [0, 0]), (np.int32(-5), [0, 4294967291]),
    (np.uint32(7), [0, 7]),
])
def test_seed_without_x64_keeps_the_low_32_bits(seed, expected):
    key = didax.random.PRNGKey(seed)
    assert key.dtype == np.uint32 and key.tolist() == expected


@pytest.mark.parametrize("seed, expected", [
    (-1, [4294967295, 4294967295]), (2 ** 32 + 5, [1, 5]), (2 ** 40, [256, 0]),
    (-2 ** 40, [4294967040, 0]), (2 ** 63 - 1, [2147483647, 4294967295]),
    (np.int32(-5), [0, 4294967291]),
])
def test_seed_with_x64_uses_both_words(seed, expected):
    with enable_x64(True):
        assert didax.random.PRNGKey(seed).tolist() == expected


def test_seed_errors():
    with pytest.raises(TypeError, match="integer"):
        didax.random.PRNGKey(1.5)
    with pytest.raises(TypeError, match="scalar seed"):
        didax.random.PRNGKey(np.arange(2))
    with pytest.raises(OverflowError):
        didax.random.PRNGKey(2 ** 64)


def test_seed_under_vmap_and_staging():
    keys = didax.vmap(didax.random.PRNGKey)(jnp.arange(3))
    np.testing.assert_array_equal(keys, [[0, 0], [0, 1], [0, 2]])
    closed = didax.make_jaxpr(didax.random.PRNGKey)(np.int32(-5))
    np.testing.assert_array_equal(closed(np.int32(-5))[0], [0, 4294967291])


K1 = [0, 1234]
SPLIT_K1_4 = [[1264997412, 2518116175], [2877103387, 1697627890], [2113592192, 603280156],
              [3512017511, 140093922]]


def test_split_matches_jax():
    key = didax.random.PRNGKey(1234)
    assert key.tolist() == K1
    assert didax.random.split(key, 4).tolist() == SPLIT_K1_4
    assert didax.random.split(key, (2, 2)).tolist() == [SPLIT_K1_4[:2], SPLIT_K1_4[2:]]
    assert didax.random.split(didax.random.PRNGKey(0)).tolist() == [
        [1797259609, 2579123966], [928981903, 3453687069]]


def test_fold_in_matches_jax_and_equals_split_for_small_data():
    key = didax.random.PRNGKey(1234)
    assert didax.random.fold_in(key, 5).tolist() == [3899778567, 1232842604]
    assert didax.random.fold_in(key, 2 ** 32 - 1).tolist() == [127439262, 1781514768]
    assert didax.random.fold_in(key, jnp.int32(-1)).tolist() == [127439262, 1781514768]
    folded = didax.vmap(lambda d: didax.random.fold_in(key, d))(jnp.arange(3))
    assert folded.tolist() == SPLIT_K1_4[:3]
    with pytest.raises(OverflowError):
        didax.random.fold_in(key, -1)  # as in JAX: a negative Python int is not a uint32


def test_bits_match_jax():
    key = didax.random.PRNGKey(1234)
    expected = [3715183467, 3461522409, 1578076316, 3641478021, 607760917, 2701805931]
    assert didax.random.bits(key, (6,)).tolist() == expected
    assert didax.random.bits(key, (2, 3)).tolist() == [expected[:3], expected[3:]]
    assert int(didax.random.bits(key)) == expected[0]
    u8 = didax.random.bits(key, (6,), np.uint8)
    assert u8.dtype == np.uint8 and u8.tolist() == [107, 233, 156, 133, 21, 107]
    assert didax.random.bits(key, (6,), np.uint16).tolist() == [13163, 41961, 34972, 35717,
                                                                 45589, 18795]
    with pytest.raises(ValueError, match="unsigned int dtype"):
        didax.random.bits(key, (2,), np.int32)


def test_bits_64_with_x64():
    with enable_x64(True):
        key = didax.random.PRNGKey(2 ** 40 + 7)
        assert key.tolist() == [256, 7]
        out = didax.random.bits(key, (4,))
        assert out.dtype == np.uint64
        assert out.tolist() == [11921392564426150491, 4462027852737886281,
                                4212004369957800783, 8035997017941587625]


@pytest.mark.parametrize("fn", [
    lambda k: prng.random_bits(k, 32, (5,)),
    lambda k: prng.random_bits(k, 8, (2, 3)),
    lambda k: prng.split_key_data(k, (3,)),
    lambda k: prng.fold_in_key_data(k, np.uint32(77)),
])
def test_eager_kernels_equal_the_primitive_path(fn):
    key = didax.random.PRNGKey(99)
    closed = didax.make_jaxpr(fn)(key)  # binds threefry2x32 at evaluation
    eager = fn(key)
    staged = closed(key)[0]
    assert eager.dtype == staged.dtype
    np.testing.assert_array_equal(eager, staged)


def test_vmap_over_split_keys_matches_jax():
    keys = didax.random.split(didax.random.PRNGKey(0), 3)
    out = didax.vmap(lambda k: didax.random.split(k, 2))(keys)
    assert out.tolist() == [[[4165894930, 804218099], [1353695780, 2116000888]],
                            [[346279018, 360566543], [3968330031, 3923691647]],
                            [[2799984767, 1105366846], [3777617834, 145086855]]]


def test_draws_of_2_to_the_32_elements_are_refused():
    with pytest.raises(NotImplementedError, match="2\\*\\*32"):
        prng.iota_2x32((2 ** 16, 2 ** 16))


# --------------------------------------------------------------------------------------
# Typed keys


def test_typed_key_looks_like_jax():
    key = didax.random.key(0)
    assert type(key) is prng.PRNGKeyArray
    assert key.shape == () and key.ndim == 0 and key.size == 1
    assert str(key.dtype) == "key<fry>" and key.dtype == prng.key_dtype
    assert repr(key) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    keys = didax.random.split(key, 3)
    assert type(keys) is prng.PRNGKeyArray and keys.shape == (3,) and len(keys) == 3
    np.testing.assert_array_equal(didax.random.key_data(keys[1]),
                                  [928981903, 3453687069])
    assert [didax.random.key_data(k).tolist() for k in keys][2] == [4146024105, 2718843009]
    assert keys.reshape(3, 1).shape == (3, 1) and keys.reshape(-1, 1)[2, 0].shape == ()
    assert keys[..., 1:].shape == (2,)


def test_typed_key_equality_and_data_round_trip():
    keys = didax.random.split(didax.random.key(5), 3)
    np.testing.assert_array_equal(keys == keys, [True, True, True])
    np.testing.assert_array_equal(keys[0] == keys, [True, False, False])
    np.testing.assert_array_equal(keys[0] != keys, [False, True, True])
    data = didax.random.key_data(keys)
    assert data.shape == (3, 2) and data.dtype == np.uint32
    again = didax.random.wrap_key_data(data)
    assert bool(jnp.all(again == keys))
    assert didax.random.key_impl(keys) == "threefry2x32"


def test_typed_key_is_a_pytree_of_its_data():
    key = didax.random.key(3)
    leaves, tree = didax.tree_util.tree_flatten(key)
    assert len(leaves) == 1 and leaves[0].dtype == np.uint32 and leaves[0].shape == (2,)
    rebuilt = didax.tree_util.tree_unflatten(tree, leaves)
    assert type(rebuilt) is prng.PRNGKeyArray and bool(rebuilt == key)


def test_wrap_key_data_checks_the_data():
    with pytest.raises(TypeError, match="uint32"):
        didax.random.wrap_key_data(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match=r"ending in \(2,\)"):
        didax.random.wrap_key_data(np.zeros(3, np.uint32))
    assert core.get_aval(didax.random.key_data(didax.random.key(1))).shape == (2,)
