"""Eager draws as compiled steps (didax/_src/random.py) and the native rules they run on
(threefry2x32, sort, the shifts): JAX's bits eagerly on the NumPy tier and the native tier,
under jit (both tiers checked against each other) and under vmap, raw and typed keys, x64;
the table of steps: its keys, what is kept, what clearing does."""
import math

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax_testing import both_x64

import didax
import didax.random as R
from didax import lax
from didax._src import caches
from didax._src import random as random_impl
from didax._src.compiler.native import tier, toolchain
from didax._src.config import enable_x64, flag_context
from didax._src.primitives import prng

EAGER_TIERS = {"numpy tier": "off", "native tier": "sync"}
A34 = np.arange(12).reshape(3, 4)
P5 = np.array([0.1, 0.2, 0.3, 0.2, 0.2], np.float32)
LOGITS = np.array([[0.1, 2.0, -1.0], [1.0, 1.0, 1.0]], np.float32)
LOGITS5 = np.array([0.1, 2.0, -1.0, 0.5, 0.2], np.float32)
P3 = np.array([0.1, 0.5, 0.9], np.float32)


@pytest.fixture
def eager_tier(request):
    """The test with eager steps on the NumPy tier alone, or built as native code before
    their first call ("sync"): the tier its `tier` parameter names (see `_on_tiers`)."""
    with flag_context("didax_native_tier", EAGER_TIERS[request.param]):
        yield request.param


def _on_tiers(draws, native):
    """Parameters (name, eager_tier) of every draw on the NumPy tier, and of those named in
    `native` also on the native tier (each is a C build on a new machine; the two tiers'
    equality is checked program by program under jit, in check mode)."""
    assert set(native) <= set(draws)
    return pytest.mark.parametrize(("name", "eager_tier"), [
        pytest.param(n, t, id=f"{t}-{n}") for t in EAGER_TIERS for n in draws
        if t == "numpy tier" or n in native], indirect=["eager_tier"])


def _keys(seed, typed):
    if typed:
        return R.key(seed), jax.random.key(seed)
    return R.PRNGKey(seed), jax.random.PRNGKey(seed)


def _data(keys, r):
    """Key data for comparing bits (typed keys as their uint32 data)."""
    return r.key_data(keys) if keys.dtype != np.uint32 else keys


# Draws whose bits JAX's equal (r: didax.random or jax.random).
EXACT = {
    "bits": lambda r, k: r.bits(k, (7,)),
    "bits_uint16_2d": lambda r, k: r.bits(k, (3, 4), np.uint16),
    "bits_uint8": lambda r, k: r.bits(k, (5,), np.uint8),
    "bits_scalar": lambda r, k: r.bits(k),
    "uniform": lambda r, k: r.uniform(k, (9,)),
    "uniform_scalar": lambda r, k: r.uniform(k),
    "uniform_2d": lambda r, k: r.uniform(k, (4, 33)),
    "uniform_float16": lambda r, k: r.uniform(k, (9,), np.float16),
    "uniform_bfloat16": lambda r, k: r.uniform(k, (9,), jjnp.bfloat16),
    "uniform_empty": lambda r, k: r.uniform(k, (0, 3)),
    "normal_float16": lambda r, k: r.normal(k, (20,), np.float16),
    "normal_bfloat16": lambda r, k: r.normal(k, (4, 5), jjnp.bfloat16),
    "randint": lambda r, k: r.randint(k, (10,), 0, 10),
    "randint_int8": lambda r, k: r.randint(k, (8,), -128, 128, np.int8),
    "randint_uint16": lambda r, k: r.randint(k, (8,), 3, 60000, np.uint16),
    "randint_vector_bounds": lambda r, k: r.randint(k, (2, 4), np.array([0, 5, 10, 20]), 30),
    "randint_float_bound": lambda r, k: r.randint(k, (6,), 0, 10.5),
    "randint_int32_range": lambda r, k: r.randint(k, (6,), -2 ** 31, 2 ** 31 - 1),
    "split": lambda r, k: _data(r.split(k), r),
    "split_3": lambda r, k: _data(r.split(k, 3), r),
    "split_2d": lambda r, k: _data(r.split(k, (2, 3)), r),
    "fold_in": lambda r, k: _data(r.fold_in(k, 3), r),
    "fold_in_largest": lambda r, k: _data(r.fold_in(k, 2 ** 32 - 1), r),
    "fold_in_int32_array": lambda r, k: _data(r.fold_in(k, np.int32(-5)), r),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (10,)),
    "bernoulli_default": lambda r, k: r.bernoulli(k),
    "bernoulli_vector_p": lambda r, k: r.bernoulli(k, P3, (2, 3)),
    "bernoulli_high": lambda r, k: r.bernoulli(k, P3, (2, 3), mode="high"),
    "permutation": lambda r, k: r.permutation(k, 12),
    "permutation_1438": lambda r, k: r.permutation(k, 1438),
    "permutation_two_rounds": lambda r, k: r.permutation(k, 3000),
    "permutation_floats": lambda r, k: r.permutation(k, np.arange(20.0, dtype=np.float32)),
    "permutation_axis1": lambda r, k: r.permutation(k, A34, axis=1),
    "permutation_independent": lambda r, k: r.permutation(k, A34, axis=1, independent=True),
    "choice": lambda r, k: r.choice(k, 10, (5,)),
    "choice_without_replacement": lambda r, k: r.choice(k, 10, (5,), replace=False),
    "choice_p": lambda r, k: r.choice(k, np.arange(5) * 10, (7,), p=P5),
    "choice_p_without_replacement": lambda r, k: r.choice(k, 5, (3,), replace=False, p=P5),
    "choice_axis1": lambda r, k: r.choice(k, A34, (2,), axis=1),
    "rademacher": lambda r, k: r.rademacher(k, (8,)),
    "categorical": lambda r, k: r.categorical(k, LOGITS),
    "categorical_without_replacement":
        lambda r, k: r.categorical(k, LOGITS5, shape=(3,), replace=False),
}

# Draws through log, erf_inv, tan or a multiply-add, which XLA computes to within an ulp or
# two of NumPy (see test_random.py): close to JAX's, and eagerly the very bits of didax's jit.
CLOSE = {
    "normal": lambda r, k: r.normal(k, (33,)),
    "normal_2d": lambda r, k: r.normal(k, (3, 5)),
    "normal_complex": lambda r, k: r.normal(k, (4,), np.complex64),
    "exponential": lambda r, k: r.exponential(k, (6,)),
    "gumbel": lambda r, k: r.gumbel(k, (6,)),
    "gumbel_high": lambda r, k: r.gumbel(k, (6,), mode="high"),
    "laplace": lambda r, k: r.laplace(k, (6,)),
    "logistic": lambda r, k: r.logistic(k, (6,)),
    "cauchy": lambda r, k: r.cauchy(k, (6,)),
    "truncated_normal": lambda r, k: r.truncated_normal(k, -1.0, 2.0, (6,)),
    "truncated_normal_bounds":
        lambda r, k: r.truncated_normal(k, np.array([-3.0, 0.0, 1.0]), np.array([3.0, 0.5, 5.0])),
    "uniform_bounds": lambda r, k: r.uniform(k, (6,), minval=-3.3, maxval=7.1),
    "uniform_vector_bounds": lambda r, k: r.uniform(k, (2, 3), minval=np.array([0.0, 1.0, 2.0]),
                                                    maxval=5.0),
}

# Under x64 (Python scalars and default dtypes are 64-bit).
EXACT_X64 = {
    "uniform": lambda r, k: r.uniform(k, (5,)),
    "uniform_float32": lambda r, k: r.uniform(k, (5,), np.float32),
    "bits": lambda r, k: r.bits(k, (5,)),
    "randint": lambda r, k: r.randint(k, (4,), -5, 2 ** 40),
    "permutation": lambda r, k: r.permutation(k, 50),
    "choice": lambda r, k: r.choice(k, 10, (5,)),
    "split": lambda r, k: _data(r.split(k, 3), r),
    "fold_in": lambda r, k: _data(r.fold_in(k, 2 ** 31 + 5), r),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (10,)),
}
CLOSE_X64 = {"normal": lambda r, k: r.normal(k, (5,)),
             "exponential": lambda r, k: r.exponential(k, (5,))}


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    assert got.tobytes() == want.tobytes(), (got, want)


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


def _native_ready():
    """Whether native code can be built here (else "sync" leaves the NumPy tier)."""
    return toolchain.toolchain() is not None


def _steps_made():
    return set(random_impl._steps)


# --------------------------------------------------------------------------------------
# JAX's bits, eagerly


@_on_tiers(EXACT, ["bits", "uniform_float16", "normal_float16", "randint_int8", "split_3",
                   "fold_in", "bernoulli_vector_p", "permutation_1438", "choice_p",
                   "categorical"])
def test_eager_draws_are_jaxs_bits(name, eager_tier):
    draw = EXACT[name]
    for seed, typed in ((0, False), (1234, False), (0, True)):
        key, jax_key = _keys(seed, typed)
        want = draw(jax.random, jax_key)
        # (the first runs op by op, the second makes the step, the third finds it)
        for _ in range(3):
            _same_bits(draw(R, key), want)


@_on_tiers(CLOSE, ["normal", "normal_complex", "truncated_normal_bounds",
                   "uniform_vector_bounds"])
def test_eager_draws_are_jits_bits_and_close_to_jax(name, eager_tier):
    draw = CLOSE[name]
    key, jax_key = _keys(7, False)
    jitted = didax.jit(lambda k: draw(R, k))(key)
    with didax.disable_jit():  # op by op: no compiled step
        op_by_op = draw(R, key)
    for _ in range(3):
        got = draw(R, key)
        _same_bits(got, jitted)
        _same_bits(got, op_by_op)
        _close(got, draw(jax.random, jax_key))


@_on_tiers(EXACT_X64, ["uniform", "randint", "permutation"])
def test_eager_draws_under_x64_are_jaxs_bits(name, eager_tier):
    with both_x64():
        key, jax_key = _keys(2 ** 40 + 7, False)
        want = EXACT_X64[name](jax.random, jax_key)
        for _ in range(3):
            _same_bits(EXACT_X64[name](R, key), want)


@_on_tiers(CLOSE_X64, ["normal"])
def test_eager_draws_under_x64_are_close_to_jax(name, eager_tier):
    with both_x64():
        key, jax_key = _keys(3, False)
        want = CLOSE_X64[name](jax.random, jax_key)
        for _ in range(3):
            got = CLOSE_X64[name](R, key)
            assert np.asarray(got).dtype == np.float64
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-13)


def test_draws_of_the_default_background_tier_are_the_same_bits():
    """The NumPy tier serves the first calls, native code the later ones (once built): the
    same bits throughout."""
    key, jax_key = _keys(5, False)
    with flag_context("didax_native_tier", "background"):
        want = np.asarray(jax.random.permutation(jax_key, 300))
        for _ in range(4):
            _same_bits(R.permutation(key, 300), want)
        tier.wait_for_builds()
        _same_bits(R.permutation(key, 300), want)
        step = random_impl._steps[("permutation", 300, random_impl._settings)]
        assert step.exe.native.status == ("ready" if _native_ready() else "none")


# --------------------------------------------------------------------------------------
# Under jit (the NumPy tier, and both tiers checked against each other) and vmap


@pytest.mark.parametrize("name", list(EXACT))
def test_jitted_draws_are_jaxs_bits(name, jit_tier):
    key, jax_key = _keys(11, False)
    draw = EXACT[name]
    jitted = didax.jit(lambda k: draw(R, k))
    want = draw(jax.random, jax_key)
    _same_bits(jitted(key), want)
    _same_bits(jitted(key), want)


VMAPPED = ["bits", "uniform", "uniform_2d", "normal_float16", "randint", "randint_int8",
           "split_3", "fold_in", "bernoulli", "bernoulli_vector_p", "permutation",
           "permutation_axis1", "choice", "choice_p", "rademacher", "categorical"]


@pytest.mark.parametrize("name", VMAPPED)
def test_vmapped_draws_are_jaxs_bits(name):
    draw = EXACT[name]
    keys, jax_keys = R.split(R.PRNGKey(3), 4), jax.random.split(jax.random.PRNGKey(3), 4)
    before = _steps_made()
    got = didax.vmap(lambda k: draw(R, k))(keys)
    assert _steps_made() == before  # traced, as under every transformation
    _same_bits(got, jax.vmap(lambda k: draw(jax.random, k))(jax_keys))


# --------------------------------------------------------------------------------------
# The steps: compiled, native, kept per signature


def test_steps_run_native_code():
    if not _native_ready():
        pytest.skip("no C compiler: the NumPy tier only")
    key = R.PRNGKey(0)
    with flag_context("didax_native_tier", "sync"):
        R.normal(key, (32,))
        R.normal(key, (32,))
        normal = random_impl._steps[("normal", (32,), type(None), None, random_impl._settings)]
        R.permutation(key, 1438)
        R.permutation(key, 1438)
        perm = random_impl._steps[("permutation", 1438, random_impl._settings)]
    assert normal.exe.native.status == "ready"
    assert normal.exe.native.plan.python_equations == 0  # threefry, shifts, all of it
    assert normal.exe.run.__name__ == "run"
    source = perm.exe.native.source
    assert "threefry2x32, native" in source and "sort, native" in source


def test_a_signatures_first_call_runs_op_by_op_and_its_second_makes_the_step():
    didax.clear_caches()
    key = R.PRNGKey(8)
    want = didax.jit(lambda k: R.normal(k, (6,)))(key)  # (the same bits, op by op or not)
    _same_bits(R.normal(key, (6,)), want)
    assert not random_impl._steps  # (tracing costs milliseconds: a draw made once pays none)
    _same_bits(R.normal(key, (6,)), want)
    assert random_impl._steps
    didax.clear_caches()  # (the signatures seen go too)
    R.normal(key, (6,))
    assert not random_impl._steps


def test_a_step_is_made_once_per_signature():
    didax.clear_caches()
    key = R.PRNGKey(1)
    R.normal(key, (3,))
    a = R.normal(key, (3,))
    made = _steps_made()
    assert len({id(random_impl._steps[k]) for k in made}) == 1  # its two keys, one step
    R.normal(key, (3,))
    R.normal(R.key(1), (3,))  # typed keys share raw keys' steps
    assert _steps_made() == made
    for _ in range(2):
        b, c = R.normal(key, (4,)), R.normal(key, (3,), np.float16)
    assert (a.shape, b.shape, c.shape) == ((3,), (4,), (3,))
    assert (a.dtype, b.dtype, c.dtype) == (np.float32, np.float32, np.float16)
    assert len({id(s) for s in random_impl._steps.values()}) == 3
    _same_bits(R.normal(key, [3]), a)  # (a list: canonicalized, then the same step)
    assert len({id(s) for s in random_impl._steps.values()}) == 3


def test_shapes_dtypes_and_samplers_do_not_collide():
    key = R.PRNGKey(2)
    jax_key = jax.random.PRNGKey(2)
    for shape in [(2,), (3,), (2, 1), (1, 2), 2, ()]:
        for dtype in [None, np.float32, "float16", jjnp.bfloat16]:
            for sampler in ("uniform", "normal"):
                first = getattr(R, sampler)(key, shape, dtype)  # (op by op)
                got = getattr(R, sampler)(key, shape, dtype)  # (its own step)
                want = getattr(jax.random, sampler)(jax_key, shape, dtype)
                assert (got.shape, got.dtype) == (want.shape, want.dtype)
                _same_bits(got, first)
    for n in (2, 3):
        assert R.split(key, n).shape == (n, 2)
        assert R.permutation(key, n).shape == (n,)
    _same_bits(R.bits(key, (4,)), jax.random.bits(jax_key, (4,)))
    _same_bits(R.bits(key, (4,), np.uint8), jax.random.bits(jax_key, (4,), np.uint8))


def test_a_spelling_equal_to_a_kept_one_is_still_checked():
    key = R.PRNGKey(0)
    R.normal(key, (3,))
    R.uniform(key, (3,))
    with pytest.raises(TypeError):
        R.normal(key, (3.0,))  # equal to (3,) as a dict key, but not a shape
    with pytest.raises(TypeError):
        R.uniform(key, (3.0,))
    R.permutation(key, 5)
    with pytest.raises(ValueError):
        R.permutation(key, 5, axis=1)
    R.bits(key, (3,))
    with pytest.raises(ValueError):
        R.bits(key, (3,), np.float32)
    R.split(key, 3)
    with pytest.raises(TypeError):
        R.split(key, 3.0)


def test_explicit_64_bit_dtypes_warn_on_every_call_without_x64():
    key = R.PRNGKey(0)
    with enable_x64(False):
        for _ in range(2):
            with pytest.warns(UserWarning, match="float64"):
                out = R.uniform(key, (3,), np.float64)
            assert out.dtype == np.float32


def test_x64_changes_the_step():
    key = R.PRNGKey(0)
    assert R.normal(key, (3,)).dtype == np.float32
    with enable_x64(True):
        assert R.normal(key, (3,)).dtype == np.float64
        assert R.permutation(key, 4).dtype == np.int64
    assert R.normal(key, (3,)).dtype == np.float32
    assert R.permutation(key, 4).dtype == np.int32


def test_clear_caches_empties_the_table():
    key = R.PRNGKey(4)
    first = R.uniform(key, (5,))
    R.uniform(key, (5,))
    assert random_impl._steps
    didax.clear_caches()
    assert not random_impl._steps
    for _ in range(2):
        _same_bits(R.uniform(key, (5,)), first)
    assert random_impl._steps


def test_the_table_is_bounded():
    entry = caches.tables()["random.eager_steps"]
    assert entry.limit is not None and not entry.interns
    key = R.PRNGKey(0)
    for n in range(entry.limit // 2 + 5):  # (two keys a draw: its spelling, its signature)
        R.bits(key, (n,))
        R.bits(key, (n,))  # (the second call makes the step)
    assert len(random_impl._steps) <= entry.limit


def test_transformations_and_disabled_jit_make_no_steps():
    key = R.PRNGKey(6)
    keys = R.split(key, 2)
    didax.clear_caches()
    didax.jit(lambda k: R.normal(k, (3,)))(key)
    didax.grad(lambda m: R.uniform(key, (3,), minval=m, maxval=m + 1.0).sum())(0.5)
    didax.vmap(lambda k: R.split(k))(keys)
    with didax.disable_jit():
        eager = R.normal(key, (3,))
    assert not random_impl._steps
    for _ in range(2):
        _same_bits(R.normal(key, (3,)), eager)
    assert random_impl._steps


def test_keys_keep_their_kind():
    typed, raw = R.key(3), R.PRNGKey(3)
    for k in (typed, raw):
        for _ in range(2):
            for out in (R.split(k), R.fold_in(k, 2), R.split(k, (2, 2))):
                assert type(out) is type(k)
    _same_bits(R.key_data(R.split(typed)), R.split(raw))
    _same_bits(R.key_data(R.fold_in(typed, 9)), R.fold_in(raw, 9))


def test_numpy_keys_and_arguments():
    key = np.asarray(R.PRNGKey(8))
    jax_key = jax.random.PRNGKey(8)
    _same_bits(R.uniform(key, (4,)), jax.random.uniform(jax_key, (4,)))
    _same_bits(R.randint(key, (4,), np.int64(2), np.array(9)),
               jax.random.randint(jax_key, (4,), np.int64(2), np.array(9)))
    x = [3.0, 1.0, 2.0]
    _same_bits(R.permutation(key, x), jax.random.permutation(jax_key, jjnp.array(x)))


# --------------------------------------------------------------------------------------
# The native rules: threefry2x32, sort, shifts (jit's check mode compares both tiers' bits)


def test_threefry_known_answers(jit_tier):
    """Random123's known-answer vectors for threefry2x32 with 20 rounds."""
    vectors = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
               ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
               ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]
    hashed = didax.jit(lambda k1, k2, x0, x1: prng.threefry2x32(k1, k2, x0, x1))
    u = np.uint32
    for (k1, k2), (x0, x1), want in vectors:
        lanes = (np.full(9, x0, u), np.full(9, x1, u))  # (more than the scalar path's size)
        got = hashed(u(k1), u(k2), *lanes)
        assert [np.asarray(w).tolist() for w in got] == [[want[0]] * 9, [want[1]] * 9]


@pytest.mark.parametrize("shapes", [((), (), (), (5,)), ((), (), (3, 1), (1, 4)),
                                    ((2, 1), (1, 1), (2, 3), ()), ((7,), (7,), (7,), (7,)),
                                    ((), (), (), (0,))])
def test_threefry_broadcasts_its_operands(shapes, jit_tier):
    rng = np.random.default_rng(0)
    ops = [rng.integers(0, 2 ** 32, s, dtype=np.uint32) for s in shapes]
    w1, w2 = didax.jit(lambda *a: prng.threefry2x32(*a))(*ops)
    out_shape = np.broadcast_shapes(*shapes)
    columns = [np.broadcast_to(o, out_shape).ravel().tolist() for o in ops]
    want = [prng._threefry2x32_scalar(*c) for c in zip(*columns)]
    assert np.asarray(w1).ravel().tolist() == [a for a, _ in want]
    assert np.asarray(w2).ravel().tolist() == [b for _, b in want]


def test_threefry_with_a_dropped_word(jit_tier):
    k = np.uint32(5)
    x = np.arange(40, dtype=np.uint32)
    f = didax.jit(lambda x: prng.threefry2x32(k, k, np.uint32(0), x)[1])
    want = [prng._threefry2x32_scalar(5, 5, 0, i)[1] for i in range(40)]
    assert np.asarray(f(x)).tolist() == want


def test_threefry_native_plan():
    """threefry2x32 runs natively, also with an operand given twice or as a literal."""
    if not _native_ready():
        pytest.skip("no C compiler: the NumPy tier only")
    k, x = np.uint32(7), np.arange(10, dtype=np.uint32)
    cases = [(lambda k, x: prng.threefry2x32(k, k, x, x), lambda i: (7, 7, i, i)),
             (lambda k, x: prng.threefry2x32(k, np.uint32(3), np.uint32(0), x),
              lambda i: (7, 3, 0, i))]
    with flag_context("didax_native_tier", "sync"):
        for f, words in cases:
            compiled = didax.jit(f).lower(k, x).compile()
            native = compiled.executable.native
            assert native.status == "ready" and native.plan.python_equations == 0
            want = [prng._threefry2x32_scalar(*words(i)) for i in range(10)]
            w1, w2 = compiled(k, x)
            assert np.asarray(w1).tolist() == [a for a, _ in want]
            assert np.asarray(w2).tolist() == [b for _, b in want]


def _stable_order(keys, axis):
    """The impl's order: NumPy's stable sort (NaN last, -0 and 0 tied)."""
    return np.argsort(keys, axis=axis, kind="stable")


SORT_KEYS = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64,
             np.float32, np.float64, np.bool_]
# (shape, dimension): insertion sorts (up to 16 elements) and radix sorts, lines along every
# position of the dimension.
SORT_SHAPES = [((5,), 0), ((16,), 0), ((17,), 0), ((300,), 0), ((3, 40), 1), ((40, 3), 0),
               ((2, 30, 3), 1)]


def _sort_keys(dtype, shape, rng):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        keys = rng.standard_normal(shape).astype(dtype)
        flat = keys.reshape(-1)
        for n, v in enumerate([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, flat[0], 1e-40]):
            flat[n::9] = v  # NaNs (last, tied), signed zeros (tied), repeats
        return keys
    info = np.iinfo(dtype)
    keys = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return keys % 7 if math.prod(shape) > 40 else keys  # (many ties)


@pytest.mark.parametrize("dtype", SORT_KEYS)
def test_sort_with_values(dtype, jit_tier):
    """Keys with values, every shape in one jitted function (one module a dtype)."""
    rng = np.random.default_rng(SORT_KEYS.index(dtype))
    keys = [_sort_keys(dtype, shape, rng) for shape, _ in SORT_SHAPES]
    values = [rng.standard_normal(shape).astype(np.float32) for shape, _ in SORT_SHAPES]

    def sort_all(keys, values):
        return [lax.sort((k, v), dimension=d, num_keys=1)
                for k, v, (_, d) in zip(keys, values, SORT_SHAPES)]

    with enable_x64(np.dtype(dtype).itemsize == 8):
        got = didax.jit(sort_all)(keys, values)
    for (got_keys, got_values), k, v, (_, dim) in zip(got, keys, values, SORT_SHAPES):
        order = _stable_order(k, dim)
        _same_bits(got_keys, np.take_along_axis(k, order, dim))
        _same_bits(got_values, np.take_along_axis(v, order, dim))


def test_sort_native_plan():
    """Sort runs natively (no NumPy-tier segment), also for one operand given twice."""
    if not _native_ready():
        pytest.skip("no C compiler: the NumPy tier only")
    x = np.random.default_rng(1).integers(0, 9, (4, 50)).astype(np.int32)
    with flag_context("didax_native_tier", "sync"):
        for f in (lambda k: lax.sort(k), lambda k: lax.sort((k, k), num_keys=1),
                  lambda k: lax.sort_key_val(k, -k)[1]):
            compiled = didax.jit(f).lower(x).compile()
            native = compiled.executable.native
            assert native.status == "ready" and native.plan.python_equations == 0


SHIFT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                np.uint64]


@pytest.mark.parametrize("dtype", SHIFT_DTYPES)
def test_shifts(dtype, jit_tier):
    """Counts of 0 to the width and beyond, and negative ones: XLA's results (0 past the
    width), on both tiers."""
    bits = 8 * np.dtype(dtype).itemsize
    info = np.iinfo(dtype)
    x = np.array([0, 1, 5, info.max, info.min, info.max // 3, -1 if info.min else 7] * 6,
                 dtype=dtype)[:40]
    counts = [0, 1, 3, bits - 1, bits, bits + 5] + ([-1, -bits] if info.min else [])
    y = np.resize(np.array(counts, dtype=dtype), x.shape)
    with enable_x64(bits == 64):
        left, right = didax.jit(lambda x, y: (lax.shift_left(x, y),
                                              lax.shift_right_logical(x, y)))(x, y)
        by_constants = didax.jit(lambda x: [op(x, dtype(c)) for c in (0, 1, bits - 1, bits)
                                            for op in (lax.shift_left,
                                                       lax.shift_right_logical)])(x)
    unsigned = x.view(f"u{x.itemsize}")
    for got, op in ((left, np.left_shift), (right, np.right_shift)):
        want = [0 if not 0 <= int(c) < bits else
                int(op(unsigned[i], unsigned.dtype.type(c))) for i, c in enumerate(y)]
        want = np.array(want, dtype=unsigned.dtype).view(dtype)
        _same_bits(got, want)
    constants = iter(by_constants)
    for c in (0, 1, bits - 1, bits):
        for op in (np.left_shift, np.right_shift):
            want = (op(unsigned, unsigned.dtype.type(c)) if c < bits
                    else np.zeros_like(unsigned))
            _same_bits(next(constants), want.view(dtype))
