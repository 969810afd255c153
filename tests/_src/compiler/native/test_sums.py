"""Float sums in jit: both tiers add in NumPy's order for a row-major operand (pairwise along
the trailing reduced dimensions, rows in turn; before NumPy 2.3, pairwise within pieces of
8192 elements of a row, pieces in turn), so they give the same bits and NumPy's accuracy: a
float32 sum of millions of values is within a few ulps of the exact sum (from NumPy 2.3)."""
from __future__ import annotations

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.compiler.native import emit, loops
from didax._src.compiler.native.loops import CALL_BLOCK, ROW_PIECE
from didax._src.config import enable_x64, flag_context
from didax._src.eager import vjp as eager_vjp

from .conftest import Tiers, assert_native, assert_same, executable, have_compiler


def _relative_error(got, x, axis=None):
    exact = np.sum(x.astype(np.float64), axis=axis)
    scale = np.sum(np.abs(x.astype(np.float64)), axis=axis)
    return np.max(np.abs(np.asarray(got, np.float64) - exact) / scale)


@pytest.fixture(scope="module")
def millions():
    return np.random.default_rng(0).uniform(0, 2, 4 * 2**20).astype(np.float32)


@pytest.mark.parametrize("fused", [False, True])
def test_sum_of_millions_is_accurate_on_both_tiers(millions, fused):
    f = (lambda x: jnp.sum(x * 0.5 + 0.25)) if fused else jnp.sum
    n, m, e = Tiers(f)(millions)
    assert_same(n, m)
    want = millions * np.float32(0.5) + np.float32(0.25) if fused else millions
    # (NumPy before 2.3 adds its 8192-element pieces' pairwise sums in turn: 512 here)
    bound = 1e-7 if ROW_PIECE is None else millions.size / ROW_PIECE * 2**-24
    assert _relative_error(n, want) <= bound
    assert _relative_error(e, want) <= bound


def test_row_and_column_sums_of_millions_are_accurate(millions):
    x = millions.reshape(2048, 2048)
    tiers = Tiers(lambda x: (jnp.sum(jnp.abs(x), axis=1), jnp.sum(x * x, axis=0)))
    (n1, n0), (m1, m0), _ = tiers(x)
    assert_same(n1, m1)
    assert_same(n0, m0)
    assert _relative_error(n1, np.abs(x), axis=1) <= 4 * 2**-23  # (a few ulps)
    # (a column sum adds one row at a time, as NumPy does: 2048 terms each)
    assert _relative_error(n0, x * x, axis=0) <= 2048 * 2**-24


LENGTHS = [1, 7, 8, 9, 16, 127, 128, 129, 136, 255, 256, 257, 1000, 1023, 1024, 1025, 2049,
           4097, 8192, 8193, 16385, 100003]


@pytest.mark.parametrize("n", LENGTHS)
def test_pairwise_sums_of_every_length_are_numpys(n):
    """The walk of the pairwise tree (leaves of up to 128 values, halves at multiples of 8;
    blocks of up to CALL_BLOCK values summed as subtrees) gives np.add.reduce's bits,
    summing an operand or an expression of it."""
    x = np.random.default_rng(n).standard_normal((3, n)).astype(np.float32)
    tiers = Tiers(lambda x: (jnp.sum(x, axis=1), jnp.sum(jnp.tanh(x) * x, axis=1),
                             jnp.sum(x)))
    native, numpy_, _ = tiers(x)
    for a, b in zip(native, numpy_):
        assert_same(a, b)
    assert_same(native[0], np.add.reduce(x, axis=1))
    assert_native(tiers.native, x)


def test_a_row_of_one_block_is_one_leaf_without_the_walk():
    """A row of at most one block is the pairwise tree's only leaf: its loop has no walk to
    compile (the bits: test_pairwise_sums_of_every_length_are_numpys, on both sides)."""
    def f(x):
        return jnp.sum(jnp.tanh(x) * x, axis=1)
    for n in (CALL_BLOCK, CALL_BLOCK + 1):
        source = emit.plan(didax.make_jaxpr(f)(np.ones((3, n), np.float32))).source
        assert ("the pairwise walk" in source) == (n > CALL_BLOCK)
        assert "pw_sum_f(" in source


def test_rows_of_several_dimensions_longer_than_a_piece_are_numpys():
    """A row of trailing reduced dimensions is walked whole (in 8192-element pieces before
    NumPy 2.3) from its own start, whatever the rows before it."""
    x = np.random.default_rng(2).standard_normal((4, 3, 5000)).astype(np.float32)
    tiers = Tiers(lambda x: jnp.sum(x, axis=(1, 2)))
    native, numpy_, _ = tiers(x)
    assert_same(native, numpy_)
    assert_same(native, np.add.reduce(x, axis=(1, 2)))
    assert_native(tiers.native, x)


@pytest.mark.parametrize("axes", [(0,), (1,), (2,), (1, 2), (0, 2), (0, 1, 2)])
def test_sums_of_broadcast_and_transposed_operands(axes):
    """An operand read across merged dimensions (a broadcast bias, a transpose) is summed in
    the row-major order of the logical shape, as the NumPy tier's row-major copy is."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 6, 300)).astype(np.float32)
    b = rng.standard_normal((6, 1)).astype(np.float32)
    y = rng.standard_normal((300, 6, 5)).astype(np.float32)
    tiers = Tiers(lambda x, b, y: (jnp.sum(x * b + 1.0, axis=axes),
                                   jnp.sum(jnp.transpose(y) - x, axis=axes)))
    native, numpy_, _ = tiers(x, b, y)
    for a, c in zip(native, numpy_):
        assert_same(a, c)
    assert_native(tiers.native, x, b, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_and_min_of_signed_zeros_are_jaxs(dtype):
    """-0 < +0 for max and min, whatever the order the zeros come in (JAX's result; NumPy's
    depends on the order)."""
    x = np.zeros((4, 37), dtype)
    x[0, ::2] = -0.0
    x[1, :] = -0.0
    x[2, 5] = -0.0
    tiers = Tiers(lambda x: (jnp.max(x, axis=1), jnp.min(x, axis=1), jnp.max(x, axis=0),
                             jnp.min(x, axis=0)))
    native, numpy_, eager = tiers(x)
    for a, b, c in zip(native, numpy_, eager):
        assert_same(a, b)
        assert_same(b, c)
    np.testing.assert_array_equal(np.signbit(native[0]), [False, True, False, False])
    np.testing.assert_array_equal(np.signbit(native[1]), [True, True, True, False])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("blocked", [False, True])
@pytest.mark.parametrize("n", [70, loops.TREE_MAX + 44])
def test_max_and_min_in_vector_lanes_are_the_values_in_order(dtype, blocked, n):
    """Native maxima and minima accumulate in vector lanes, combined at the loop's end
    (rows of n = 70: several vectors of every width, and a tail), or over a short row (of at
    most loops.TREE_MAX, in a loop calling no NumPy function) by halves of a buffer of its
    values: the same bits as the NumPy tier and eager whichever lane or half holds the
    extremum, a NaN, an infinity or a zero of either sign, also in a loop that calls NumPy's
    functions (`blocked`: its blocks of elements)."""
    rows = []
    for k in range(n):  # the extremum, at every position of a row
        row = np.arange(n) % 7 - 3
        row[k] = 9
        rows.append(row)
        rows.append(-row)
    x = np.array(rows, dtype)
    if np.dtype(dtype).kind == "f":
        special = np.zeros((6, n), dtype)
        special[0, ::3] = -0.0          # zeros of both signs
        special[1, 40] = -0.0
        special[2, 17] = np.nan         # NaN beats everything
        special[3, :] = -np.inf
        special[3, 66] = np.inf
        special[4, 5] = np.nan
        special[4, 69] = -np.inf
        special[5, :] = -0.0
        x = np.concatenate([x, special])
    b = np.zeros_like(x)

    def f(x, b):  # (y is x, computed in the loop)
        y = x * ((jnp.exp(b) if blocked else b) * 0 + 1)
        return jnp.max(y, axis=1), jnp.min(y, axis=1), jnp.max(y, axis=0)

    tiers = Tiers(f)
    native, numpy_, eager = tiers(x, b)
    for a, c, e in zip(native, numpy_, eager):
        assert_same(a, c)
        assert_same(c, e)
    np.testing.assert_array_equal(native[0][:2 * n:2], 9)
    np.testing.assert_array_equal(native[1][1:2 * n:2], -9)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_equal(np.signbit(native[0][2 * n:]),
                                      [False, False, False, False, False, True])
        np.testing.assert_array_equal(np.signbit(native[1][2 * n:]),
                                      [True, True, False, True, False, True])
    assert_native(tiers.native, x, b)
    if have_compiler():
        source = executable(tiers.native, x, b).native.plan.source
        if n > loops.TREE_MAX:
            assert "#pragma omp simd reduction(" in source
        elif not blocked:
            assert f"for (npy_intp u = 0; u < {n // 2}; u++)" in source


def test_eager_steps_sum_accurately_and_as_the_numpy_tier(millions):
    """Eager gradients' compiled steps, native (logsumexp: a step of several equations with a
    sum of a million terms), sum as the NumPy tier does."""
    x = millions[:2**20].reshape(1024, 1024)
    w = np.float32(0.75)

    def loss(w, x):
        return didax.nn.logsumexp(x * w)

    with flag_context("didax_eager_vjp_steps", "first"):
        with flag_context("didax_native_tier", "off"):
            eager_vjp._steps.clear()
            want = didax.value_and_grad(loss)(w, x)
        eager_vjp._steps.clear()
        got = didax.value_and_grad(loss)(w, x)
        step = next(s for k, s in eager_vjp._steps.items()
                    if getattr(k[0], "__name__", "") == "logsumexp")
    for a, b in zip(got, want):
        assert_same(a, b)
    xw = x.astype(np.float64) * 0.75
    total = np.log(np.sum(np.exp(xw - xw.max()))) + xw.max()
    assert abs(float(got[0]) - total) <= 4 * 2**-23 * abs(total)
    assert _native(step.forward) == have_compiler()


def _native(fn) -> bool:
    """Whether a step's half is native code (or wraps it: see eager_vjp._returning_arrays)."""
    return fn.__name__ == "run" or any(getattr(c.cell_contents, "__name__", "") == "run"
                                       for c in fn.__closure__ or ())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_masked_maximum_selects_the_values_bit_for_bit(dtype):
    """A causal mask's fill and a row's maximum in one loop (attention's scores): the select
    is made of the values' bits (so that gcc vectorizes the loop beside the reduction), and
    gives what `?:` gives: signed zeros, infinities, NaNs with their payloads."""
    n = 67
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, n, n)).astype(dtype)
    bits = np.dtype(f"u{np.dtype(dtype).itemsize}")
    payload = np.array([np.nan], dtype).view(bits) | 0x5  # (a quiet NaN of its own payload)
    x[0, 3, :] = payload.view(dtype)[0]
    x[0, 4, ::2] = -0.0
    x[1, 5, :] = -np.inf
    mask = np.tril(np.ones((n, n), bool))

    def f(x):
        s = jnp.where(mask, x * 0.5, -1e30)
        return s, jnp.max(s, axis=-1)

    with enable_x64(dtype == np.float64):
        tiers = Tiers(f)
        native, numpy_, eager = tiers(x)
        for a, b, c in zip(native, numpy_, eager):
            assert_same(a, b)
            assert_same(b, c)
        got = np.asarray(native[0])
        assert got.dtype == dtype
        np.testing.assert_array_equal(got[0, 3, :4].view(bits), x[0, 3, :4].view(bits))
        np.testing.assert_array_equal(np.signbit(got[0, 4, :5]),
                                      [True, False, True, False, True])
        assert_native(tiers.native, x)
        if have_compiler():
            source = executable(tiers.native, x).native.plan.source
            assert f"didax_select_f{8 * np.dtype(dtype).itemsize}(" in source
