"""Gathers, scatters and dynamic slices on the native tier: the same bits as the NumPy tier
and eager evaluation, with no NumPy-tier equation left, in every mode, for windows and index
vectors in any arrangement, out-of-bounds and repeated indices included."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import didax
import didax.numpy as jnp
from didax import lax

from .conftest import executable, have_compiler, same_on_every_tier

EXAMPLES = settings(max_examples=6, deadline=None)
# the primitives with native rules tested here
GATHERS_SCATTERS = {"gather", "scatter", "scatter-add", "dynamic_slice", "dynamic_update_slice"}


def _check(f, *args, python_equations=0):
    tiers = same_on_every_tier(f, *args)
    if have_compiler():
        assert executable(tiers.native, *args).native.plan.python_equations == \
            python_equations


def _floats(data, shape, dtype=np.float32):
    return data.draw(hnp.arrays(dtype, shape, elements=st.floats(-4, 4, width=32)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@EXAMPLES
@given(data=st.data())
def test_embedding_lookup_and_its_gradient(dtype, data):
    """Rows at token ids (repeated, negative, past the end: jnp's indexing wraps the
    negative ones and clamps the rest) and the scatter-add of their cotangents, which adds
    repeated rows' in the tokens' order."""
    table = _floats(data, (7, 5), dtype) if dtype != np.int32 else \
        data.draw(hnp.arrays(dtype, (7, 5)))
    tokens = data.draw(hnp.arrays(np.int32, (3, 4), elements=st.integers(-9, 9)))
    if dtype == np.int32:
        _check(lambda t, i: (jnp.asarray(t)[i], jnp.asarray(t)[i] * 3), table, tokens)
        return

    def loss(t, i):
        x = jnp.asarray(t)[i]
        return (x * x * jnp.arange(5, dtype=dtype)).sum()
    _check(lambda t, i: (didax.jit(loss)(t, i), didax.grad(loss)(t, i)), table, tokens)


@EXAMPLES
@given(data=st.data())
def test_label_pick_and_its_gradient(data):
    """take_along_axis of log-probabilities at labels (batching dimensions, "fill" mode:
    labels out of range read NaN) and its gradient (a scatter-add dropping them)."""
    logits = _floats(data, (2, 3, 6))
    labels = data.draw(hnp.arrays(np.int32, (2, 3), elements=st.integers(-2, 7)))

    def loss(x, y):
        logp = x - jnp.log(jnp.exp(x).sum(-1, keepdims=True))
        picked = jnp.take_along_axis(logp, y[..., None], axis=-1)
        return jnp.where(jnp.isnan(picked), 0.0, picked).sum(), picked
    _check(lambda x, y: (*loss(x, y), didax.grad(lambda x: loss(x, y)[0])(x)),
           logits, labels)


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@EXAMPLES
@given(data=st.data())
def test_gathers_of_windows_in_any_arrangement(mode, data):
    """Windows of 2 x 3 from a (5, 4, 6) operand at index vectors of two starts (in the
    operand's order and reversed), the window's dimensions before, between and after the
    batch's in the result; starts out of bounds are clamped, or filled in "fill" mode."""
    x = _floats(data, (5, 4, 6))
    idx = data.draw(hnp.arrays(np.int32, (3, 2, 2), elements=st.integers(-3, 7)))
    offsets = data.draw(st.sampled_from([(0, 1), (1, 3), (2, 3), (0, 3)]))
    start_map = data.draw(st.sampled_from([(0, 2), (2, 0)]))
    dn = lax.GatherDimensionNumbers(offset_dims=offsets, collapsed_slice_dims=(1,),
                                    start_index_map=start_map)

    def f(x, i):
        return lax.gather(x, i, dn, (2, 1, 3), mode=mode, fill_value=-1.5), \
            lax.gather(x.astype(np.int32), i, dn, (2, 1, 3), mode=mode)
    _check(f, x, idx)


@pytest.mark.parametrize("mode", ["clip", "drop", "promise_in_bounds"])
@EXAMPLES
@given(data=st.data())
def test_scatters_of_windows_in_any_arrangement(mode, data):
    """Windows of 2 x 3 added, or assigned, into a (5, 4, 6) operand at index vectors of two
    starts with repeats (assignments: the last one stays; additions: in order), the
    window's dimensions before or after the batch's in the updates; windows not entirely in
    bounds are dropped, or clamped in "clip" mode."""
    x = _floats(data, (5, 4, 6))
    idx = data.draw(hnp.arrays(np.int32, (3, 2), elements=st.integers(-2, 5)))
    windows_first = data.draw(st.booleans())
    window_dims = (0, 1) if windows_first else (1, 2)
    u = _floats(data, (2, 3, 3) if windows_first else (3, 2, 3))
    dn = lax.ScatterDimensionNumbers(update_window_dims=window_dims, inserted_window_dims=(1,),
                                     scatter_dims_to_operand_dims=(2, 0))

    def f(x, i, u):
        return (lax.scatter_add(x, i, u, dn, mode=mode), lax.scatter(x, i, u, dn, mode=mode),
                lax.scatter_add(x.astype(np.int32), i, (u * 1e8).astype(np.int32), dn,
                                mode=mode))
    _check(f, x, idx, u)


@EXAMPLES
@given(data=st.data())
def test_batched_gathers_and_scatters_under_vmap(data):
    """vmap over both operand and indices: operand batching dimensions on both sides."""
    x = _floats(data, (3, 5, 2))
    idx = data.draw(hnp.arrays(np.int32, (3, 4), elements=st.integers(-6, 6)))
    u = _floats(data, (3, 4, 2))

    def one(x, i, u):
        x = jnp.asarray(x)
        return x[i], x.at[i].add(u), x.at[i].set(u, mode="drop")
    _check(didax.vmap(one), x, idx, u)


def test_a_scatter_into_a_value_nothing_reads_after_it_updates_it_in_place(monkeypatch):
    """A scatter into an intermediate that dies with it writes into that array (no copy);
    into one read afterwards (here: summed after, and returned), it copies it first."""
    from didax._src.compiler.native import emit

    taken = []
    copy_or_take = emit._Emitter.copy_or_take

    def spy(self, eqn, x, out):
        taken.append(copy_or_take(self, eqn, x, out))
        return taken[-1]
    monkeypatch.setattr(emit._Emitter, "copy_or_take", spy)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    i = np.array([0, 2, 0, 5, -1], np.int32)
    u = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)

    def f(x, i, u):
        z = jnp.asarray(x) * 2.0
        kept = z.at[i].add(u)             # z is read after it: copied
        dying = (z + 1).at[i].add(u)      # z + 1 dies here: updated in place
        return kept, dying, z.sum(), z
    _check(f, x, i, u)
    if have_compiler():
        assert sorted(taken) == [False, True]


@pytest.mark.parametrize("mode", ["clip", "drop"])
@EXAMPLES
@given(data=st.data())
def test_single_elements_read_and_written_at_traced_indices(mode, data):
    """One element read (a gather whose result is a scalar) and one written or added (a
    scatter of a scalar update), at an index known only when the function runs, as samplers'
    trees and solvers' steps do; out of bounds the read is clamped and the write clamped or
    dropped."""
    x = _floats(data, (6,))
    v = _floats(data, ())
    i = np.int32(data.draw(st.integers(-8, 8)))
    m = "clip" if mode == "clip" else None
    x2 = _floats(data, (3, 4))
    j = np.int32(data.draw(st.integers(-1, 4)))

    def f(x, v, i, x2, j):
        dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1),
                                        start_index_map=(0, 1))
        corner = lax.gather(x2, jnp.stack([j, i]), dn, (1, 1), mode="clip")
        x = jnp.asarray(x)
        return (x.at[i].set(v, mode=m), x.at[i].add(v * 2, mode=m),
                x.at[i].get(mode="clip") * 3, corner)
    _check(f, x, v, i, x2, j)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int8, np.uint64, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
@EXAMPLES
@given(data=st.data())
def test_dynamic_slices_and_updates_at_clamped_starts(dtype, index_dtype, data):
    """Windows read and written at starts known when the function runs (negative or past
    the end: clamped so the window fits, as XLA does; uint64 starts past int64's range
    too), one start a literal; the window's gradient (a dynamic update of zeros)."""
    x = data.draw(hnp.arrays(dtype, (5, 6)))
    u = data.draw(hnp.arrays(dtype, (2, 3)))
    lo, hi = (0, 2 ** 64 - 1) if index_dtype == np.uint64 else (-8, 8)
    i, j = (index_dtype(data.draw(st.integers(lo, min(hi, 127)) | st.sampled_from([lo, hi])))
            for _ in range(2))

    def f(x, u, i, j):
        return (lax.dynamic_slice(x, (i, j), (2, 3)), lax.dynamic_slice(x, (i, 0), (1, 6)),
                lax.dynamic_update_slice(x, u, (i, j)),
                lax.dynamic_update_slice(x, u[:1], (index_dtype(3), j)))
    _check(f, x, u, i, j, python_equations=0)
    if dtype == np.float32:
        _check(lambda x, i, j: didax.grad(
            lambda x: (lax.dynamic_slice(x, (i, j), (2, 3)) ** 2).sum())(x), x, i, j)


@EXAMPLES
@given(data=st.data())
def test_rows_written_in_a_loop_update_the_carry_in_place(data):
    """A fori_loop writing row k of its carry at each step (x.at[k].set: a dynamic update
    slice of the carry, which nothing reads after it) and reading row k - 1 (a dynamic
    slice); under vmap with unbatched starts, still dynamic slices."""
    x = _floats(data, (6, 4))

    def fill(x):
        def body(k, c):
            return c.at[k].set(c[k - 1] * 0.5 + 1.0)
        return lax.fori_loop(1, 6, body, jnp.asarray(x))
    _check(fill, x, python_equations=0)
    _check(didax.vmap(fill), np.stack([x, x[::-1]]), python_equations=0)
