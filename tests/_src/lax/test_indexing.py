"""Tests for the indexing primitives: dynamic_slice, dynamic_update_slice, gather, scatter*.

Impls are checked against NumPy and against slow loop references that follow XLA's
gather/scatter semantics index by index, on random dimension numbers drawn by hypothesis.
Results marked "JAX 0.10.2" were produced by running JAX and are kept as literals.
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from indexing_testing import draw_gather_dims

from didax._src import core, dtypes
from didax._src.config import enable_x64
from didax._src.lax import indexing as lax
from didax._src.lax.indexing import (
    GatherDimensionNumbers as GDN,
)
from didax._src.lax.indexing import (
    GatherScatterMode as Mode,
)
from didax._src.lax.indexing import (
    ScatterDimensionNumbers as SDN,
)
from didax._src.transforms import api
from didax._src.transforms.public_test_util import check_grads

MODES = ("clip", "fill", "promise_in_bounds")


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def np_(x):
    return np.asarray(x)


# --------------------------------------------------------------------------------------
# dynamic_slice and dynamic_update_slice


def ref_start(s, n, k):
    """A start index as JAX computes it: negative counts from the end, then clamped."""
    s = s + n if s < 0 else s
    return min(max(s, 0), n - k)


@st.composite
def slice_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    sizes = tuple(draw(st.integers(0, n)) for n in shape)
    starts = tuple(draw(st.integers(-6, 6)) for _ in shape)
    return shape, sizes, starts


@settings(max_examples=40, deadline=None)
@given(slice_cases(), st.sampled_from([int, np.int32, np.int8]))
def test_dynamic_slice_matches_numpy(case, index_type):
    shape, sizes, starts = case
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = lax.dynamic_slice(x, [index_type(s) for s in starts], sizes)
    begin = [ref_start(s, n, k) for s, n, k in zip(starts, shape, sizes)]
    expected = x[tuple(slice(b, b + k) for b, k in zip(begin, sizes))]
    np.testing.assert_array_equal(np_(out), expected)
    assert out.dtype == np.float32 and out.shape == sizes


@settings(max_examples=40, deadline=None)
@given(slice_cases())
def test_dynamic_update_slice_matches_numpy(case):
    shape, sizes, starts = case
    x = np.zeros(shape, np.int32)
    update = np.arange(1, int(np.prod(sizes)) + 1, dtype=np.int32).reshape(sizes)
    out = lax.dynamic_update_slice(x, update, [np.asarray(s) for s in starts])
    begin = [ref_start(s, n, k) for s, n, k in zip(starts, shape, sizes)]
    expected = x.copy()
    expected[tuple(slice(b, b + k) for b, k in zip(begin, sizes))] = update
    np.testing.assert_array_equal(np_(out), expected)


def test_dynamic_slice_clamping_matches_jax():
    x = np.arange(5.0)
    # JAX 0.10.2: -7 wraps to -2, then clamps to 0; 4 clamps to 3.
    for starts, expected in [((-7,), [0.0, 1.0]), ((4,), [3.0, 4.0]), ((-1,), [3.0, 4.0])]:
        np.testing.assert_array_equal(np_(lax.dynamic_slice(x, starts, (2,))), expected)
        from_array = lax.dynamic_slice(x, (core.Array(np.int32(starts[0])),), (2,))
        np.testing.assert_array_equal(np_(from_array), expected)
    u = np.array([10.0, 11.0])
    # JAX 0.10.2
    np.testing.assert_array_equal(np_(lax.dynamic_update_slice(x, u, (4,))),
                                  [0.0, 1.0, 2.0, 10.0, 11.0])
    np.testing.assert_array_equal(np_(lax.dynamic_update_slice(x, u, (-1,))),
                                  [0.0, 1.0, 2.0, 10.0, 11.0])
    np.testing.assert_array_equal(np_(lax.dynamic_update_slice(x, u, (-9,))),
                                  [10.0, 11.0, 2.0, 3.0, 4.0])


def test_negative_index_wrapping_is_traced():
    x = np.arange(12.0).reshape(3, 4)
    f = api.make_jaxpr(lambda i: lax.dynamic_slice(x, (i, 0), (2, 4)))
    prims = [e.primitive.name for e in f(np.int32(0)).eqns]
    assert prims == ["lt", "add", "select_n", "dynamic_slice"]
    closed = f(np.int32(0))
    out = closed(core.Array(np.int32(-1)))[0]  # -1 -> 2, clamped to 1
    np.testing.assert_array_equal(np_(out), x[1:3])


def test_allow_negative_indices_false():
    x = np.arange(5.0)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.dynamic_slice(x, (-1,), (2,), allow_negative_indices=False)
    # A traced negative index is then clamped to 0 rather than wrapped.
    out = lax.dynamic_slice(x, (core.Array(np.int32(-1)),), (2,), allow_negative_indices=False)
    np.testing.assert_array_equal(np_(out), [0.0, 1.0])


def test_index_dtypes():
    x = np.zeros((3, 4), np.float32)
    with enable_x64(False):
        a = lax.dynamic_slice(x, (1, 2), (1, 1))
        jaxpr = api.make_jaxpr(lambda x: lax.dynamic_slice(x, (1, 2), (1, 1)))(x)
        assert [a.aval.dtype for a in jaxpr.eqns[0].invars[1:]] == [np.int32, np.int32]
    assert a.shape == (1, 1)
    # Python ints take the dtype of the array indices beside them.
    jaxpr = api.make_jaxpr(lambda i: lax.dynamic_slice(x, (i, 2), (1, 1)))(np.int16(1))
    assert [v.aval.dtype for v in jaxpr.eqns[-1].invars[1:]] == [np.int16, np.int16]
    # A 1-D array of start indices is split into scalars.
    out = lax.dynamic_slice(np.arange(12.0).reshape(3, 4), np.array([1, 2]), (2, 2))
    np.testing.assert_array_equal(np_(out), [[6.0, 7.0], [10.0, 11.0]])
    # A 1-D didax array of start indices is split with slice + squeeze, as in JAX.
    jaxpr = api.make_jaxpr(lambda s: lax.dynamic_slice(x, s, (2, 2)))(np.zeros(2, np.int32))
    assert [e.primitive.name for e in jaxpr.eqns] == [
        "slice", "squeeze", "slice", "squeeze", "lt", "add", "select_n", "lt", "add",
        "select_n", "dynamic_slice"]
    assert jaxpr.out_avals[0].shape == (2, 2)
    out = lax.dynamic_slice(np.arange(12.0).reshape(3, 4), core.Array(np.array([1, -1])),
                            (2, 2))
    np.testing.assert_array_equal(np_(out), [[6.0, 7.0], [10.0, 11.0]])
    # Unsigned indices are never wrapped.
    out = lax.dynamic_slice(np.arange(5.0), (np.uint8(200),), (2,))
    np.testing.assert_array_equal(np_(out), [3.0, 4.0])


def test_in_dim_wrappers():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(np_(lax.dynamic_slice_in_dim(x, 1, 2, axis=2)),
                                  x[:, :, 1:3])
    np.testing.assert_array_equal(np_(lax.dynamic_slice_in_dim(x, -1, 2, axis=-2)),
                                  x[:, 1:3, :])
    np.testing.assert_array_equal(np_(lax.dynamic_index_in_dim(x, 2, axis=1)), x[:, 2:3])
    np.testing.assert_array_equal(
        np_(lax.dynamic_index_in_dim(x, -1, axis=1, keepdims=False)), x[:, 2])
    u = -np.ones((2, 2, 4))
    expected = x.copy()
    expected[:, 1:3] = u
    np.testing.assert_array_equal(np_(lax.dynamic_update_slice_in_dim(x, u, 5, axis=1)),
                                  expected)
    expected = x.copy()
    expected[:, :, 3] = -1
    np.testing.assert_array_equal(
        np_(lax.dynamic_update_index_in_dim(x, -np.ones((2, 3)), -1, axis=2)), expected)
    np.testing.assert_array_equal(
        np_(lax.dynamic_update_index_in_dim(x, -np.ones((2, 3, 1)), 3, axis=2)), expected)


def test_dynamic_slice_errors():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError, match=r"dynamic_slice: got 1 start indices .* \(3, 4\)"):
        lax.dynamic_slice(x, (1,), (1, 1))
    with pytest.raises(TypeError, match=r"slice_sizes \(4, 1\) .* \(3, 4\)"):
        lax.dynamic_slice(x, (0, 0), (4, 1))
    with pytest.raises(TypeError, match=r"slice_sizes \(-1, 1\)"):
        lax.dynamic_slice(x, (0, 0), (-1, 1))
    with pytest.raises(TypeError, match="integers of the same type, got: int32, int16"):
        lax.dynamic_slice(x, (np.int32(0), np.int16(0)), (1, 1))
    with pytest.raises(TypeError, match="integers of the same type, got: float32"):
        lax.dynamic_slice(x, (np.float32(0), 0), (1, 1))
    with pytest.raises(TypeError, match="must be scalars"):
        lax.dynamic_slice_p.bind(x, np.zeros(2, np.int32), np.int32(0), slice_sizes=(1, 1))
    with pytest.raises(ValueError, match="1D sequence"):
        lax.dynamic_slice(x, np.zeros((2, 1), np.int32), (1, 1))


def test_dynamic_update_slice_errors():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match=r"update shape \(4,\)"):
        lax.dynamic_update_slice(x, np.zeros(4, np.float32), (0, 0))
    with pytest.raises(TypeError, match=r"update shape \(4, 4\) must not exceed .* \(3, 4\)"):
        lax.dynamic_update_slice(x, np.zeros((4, 4), np.float32), (0, 0))
    with pytest.raises(TypeError, match="operand and update must have the same dtype, got "
                                        "float32 and float64"):
        lax.dynamic_update_slice(x, np.zeros((1, 1)), (0, 0))
    with pytest.raises(TypeError, match="integers of the same type"):
        lax.dynamic_update_slice(x, np.zeros((1, 1), np.float32), (0.5, 0))


def test_dynamic_slice_jaxpr_matches_jax():
    with enable_x64(False):
        text = str(api.make_jaxpr(lambda a: lax.dynamic_slice(a, (1,), (2,)))(
            np.zeros(3, np.float32)))
        traced = str(api.make_jaxpr(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1))(
            np.zeros((3, 4), np.float32), np.int32(1)))
        dus = str(api.make_jaxpr(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)))(
            np.zeros((3, 4), np.float32), np.zeros((2, 2), np.float32), np.int32(1)))
    # JAX 0.10.2
    assert text == ("{ lambda ; a:f32[3]. let\n"
                    "    b:f32[2] = dynamic_slice[slice_sizes=(2,)] a 1:i32[]\n"
                    "  in (b,) }")
    assert traced == ("{ lambda ; a:f32[3,4] b:i32[]. let\n"
                      "    c:bool[] = lt b 0:i32[]\n"
                      "    d:i32[] = add b 4:i32[]\n"
                      "    e:i32[] = select_n c b d\n"
                      "    f:f32[3,2] = dynamic_slice[slice_sizes=(3, 2)] a 0:i32[] e\n"
                      "  in (f,) }")
    assert dus == ("{ lambda ; a:f32[3,4] b:f32[2,2] c:i32[]. let\n"
                   "    d:bool[] = lt c 0:i32[]\n"
                   "    e:i32[] = add c 3:i32[]\n"
                   "    f:i32[] = select_n d c e\n"
                   "    g:f32[3,4] = dynamic_update_slice a b f 0:i32[]\n"
                   "  in (g,) }")


def test_dynamic_slice_grads():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5))
    check_grads(lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 3)), (x, np.int32(3)), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, -2)),
                (x, rng.standard_normal((2, 3)), np.int32(1)), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: lax.dynamic_update_slice(x, np.ones((1, 2)), (0, 0)), (x,), order=2,
                modes=("fwd", "rev"))


def test_dynamic_slice_jvp_zero_and_weak_types():
    x = np.arange(5.0)
    out, t = api.jvp(lambda u: lax.dynamic_update_slice(x, u, (1,)), (np.ones(2),),
                     (np.full(2, 3.0),))
    np.testing.assert_array_equal(np_(t), [0.0, 3.0, 3.0, 0.0, 0.0])
    weak = core.Array(np.arange(3.0), weak_type=True)
    assert lax.dynamic_slice(weak, (1,), (1,)).weak_type
    # JAX 0.10.2: the start indices are strongly typed, so the update is never weak.
    assert not lax.dynamic_update_slice(weak, core.Array(np.ones(1), True), (1,)).weak_type


# --------------------------------------------------------------------------------------
# gather and scatter: a random-dimension-numbers generator and loop references


@st.composite
def gather_cases(draw):
    """A valid gather: operand, indices (some out of bounds), dimension numbers, sizes."""
    # empty index batches are tested apart
    shape, dnums, slice_sizes, batch_shape, n_indexed = draw_gather_dims(draw, 1)
    index_dtype = draw(st.sampled_from([np.int32, np.int8, np.int64, np.uint8]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    low = 0 if index_dtype == np.uint8 else -2
    indices = rng.integers(low, max(shape, default=1) + 2,
                           batch_shape + (n_indexed,)).astype(index_dtype)
    operand = rng.integers(-50, 50, shape).astype(np.float64)
    return operand, indices, dnums, slice_sizes, draw(st.sampled_from(MODES))


def ref_gather(operand, indices, dn, slice_sizes, mode, fill):
    """XLA's gather, one output element at a time."""
    batch_shape = indices.shape[:-1]
    offset_sizes = [s for d, s in enumerate(slice_sizes)
                    if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    rank = len(batch_shape) + len(offset_sizes)
    batch_pos = [p for p in range(rank) if p not in dn.offset_dims]
    out_shape = [0] * rank
    for p, n in zip(batch_pos, batch_shape):
        out_shape[p] = n
    for p, n in zip(dn.offset_dims, offset_sizes):
        out_shape[p] = n
    out = np.zeros(out_shape, operand.dtype)
    for out_index in np.ndindex(*out_shape):
        g = [out_index[p] for p in batch_pos]
        offsets = iter(out_index[p] for p in dn.offset_dims)
        start = [0] * operand.ndim
        out_of_bounds = False
        for k, d in enumerate(dn.start_index_map):
            v = int(indices[tuple(g) + (k,)])
            hi = operand.shape[d] - slice_sizes[d]
            out_of_bounds |= not 0 <= v <= hi
            start[d] = min(max(v, 0), hi)
        for d, b in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[d] = g[b]
        full = [start[d] + (0 if d in dn.collapsed_slice_dims or d in dn.operand_batching_dims
                            else next(offsets)) for d in range(operand.ndim)]
        out[out_index] = fill if mode == "fill" and out_of_bounds else operand[tuple(full)]
    return out


def scatter_dnums(dn):
    return SDN(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
               dn.operand_batching_dims, dn.start_indices_batching_dims)


COMBINE = {
    "scatter": lambda a, b: b, "scatter_add": lambda a, b: a + b,
    "scatter_mul": lambda a, b: a * b, "scatter_min": min, "scatter_max": max,
}


def ref_scatter(kind, operand, indices, updates, dn, mode):
    """XLA's scatter, one update element at a time, in order (later updates win)."""
    out = operand.copy()
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    windows = iter(updates.shape[d] for d in dn.update_window_dims)
    sizes = [1 if d in dn.inserted_window_dims or d in dn.operand_batching_dims
             else next(windows) for d in range(operand.ndim)]
    for u_index in np.ndindex(*updates.shape):
        g = [u_index[d] for d in scatter_dims]
        offsets = iter(u_index[d] for d in dn.update_window_dims)
        start = [0] * operand.ndim
        dropped = False
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            v = int(indices[tuple(g) + (k,)])
            hi = operand.shape[d] - sizes[d]
            if mode == "clip":
                v = min(max(v, 0), hi)
            dropped |= not 0 <= v <= hi
            start[d] = v
        for d, b in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            start[d] = g[b]
        if dropped:
            continue
        full = tuple(start[d] + (0 if d in dn.inserted_window_dims
                                 or d in dn.operand_batching_dims else next(offsets))
                     for d in range(operand.ndim))
        out[full] = COMBINE[kind](out[full], updates[u_index])
    return out


@settings(max_examples=60, deadline=None)
@given(gather_cases())
def test_gather_matches_loop_reference(case):
    operand, indices, dn, slice_sizes, mode = case
    out = lax.gather(operand, indices, dn, slice_sizes, mode=mode)
    expected = ref_gather(operand, indices, dn, slice_sizes, mode, np.nan)
    assert out.shape == expected.shape and out.dtype == np.float64
    np.testing.assert_array_equal(np_(out), expected)


@settings(max_examples=60, deadline=None)
@given(gather_cases(), st.sampled_from(sorted(COMBINE)))
def test_scatter_matches_loop_reference(case, kind):
    operand, indices, dn, slice_sizes, mode = case
    rng = np.random.default_rng(int(np.abs(operand).sum()))
    shape = lax.gather_p.abstract_eval(
        core.get_aval(operand), core.get_aval(indices), dimension_numbers=dn,
        slice_sizes=slice_sizes, unique_indices=False, indices_are_sorted=False,
        mode=Mode.CLIP, fill_value=None).shape
    updates = rng.integers(-5, 5, shape).astype(np.float64)
    sdn = scatter_dnums(dn)
    out = getattr(lax, kind)(operand, indices, updates, sdn, mode=mode)
    expected = ref_scatter(kind, operand, indices, updates, sdn, mode)
    assert out.shape == operand.shape and out.dtype == np.float64
    np.testing.assert_array_equal(np_(out), expected)


# Hand-checked cases: an operand of shape (3, 4), windows of 2 along the columns.
X2 = np.arange(12.0).reshape(3, 4)
IDX = np.array([[0, 0], [2, 3], [-1, 1], [1, 2], [5, 0]])
GDN2 = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1))
SDN2 = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
           scatter_dims_to_operand_dims=(0, 1))
UPD = np.arange(1.0, 11.0).reshape(5, 2) * 100

# JAX 0.10.2
GATHER_JAX = {
    "clip": [[0, 1], [10, 11], [1, 2], [6, 7], [8, 9]],
    "fill": [[0, 1], [np.nan] * 2, [np.nan] * 2, [6, 7], [np.nan] * 2],
    "promise_in_bounds": [[0, 1], [10, 11], [1, 2], [6, 7], [8, 9]],
}
SCATTER_JAX = {
    ("scatter", "clip"): [[100, 500, 600, 3], [4, 5, 700, 800], [900, 1000, 300, 400]],
    ("scatter_add", "clip"): [[100, 701, 602, 3], [4, 5, 706, 807], [908, 1009, 310, 411]],
    ("scatter", "fill"): [[100, 200, 2, 3], [4, 5, 700, 800], [8, 9, 10, 11]],
    ("scatter_add", "fill"): [[100, 201, 2, 3], [4, 5, 706, 807], [8, 9, 10, 11]],
    ("scatter", "promise_in_bounds"): [[100, 200, 2, 3], [4, 5, 700, 800], [8, 9, 10, 11]],
    ("scatter_add", "promise_in_bounds"): [[100, 201, 2, 3], [4, 5, 706, 807],
                                           [8, 9, 10, 11]],
}


@pytest.mark.parametrize("mode", MODES)
def test_gather_out_of_bounds_matches_jax(mode):
    out = lax.gather(X2, IDX, GDN2, (1, 2), mode=mode)
    np.testing.assert_array_equal(np_(out), GATHER_JAX[mode])


def test_gather_fill_values_match_jax():
    # JAX 0.10.2: the default fill is NaN, the minimum signed, the maximum unsigned, True.
    ints = lax.gather(X2.astype(np.int32), IDX, GDN2, (1, 2), mode="fill")
    assert np_(ints)[1].tolist() == [-2147483648] * 2
    assert np_(lax.gather(X2.astype(np.uint8), IDX, GDN2, (1, 2), mode="fill"))[1].tolist() == [
        255, 255]
    assert np_(lax.gather(X2 > 3, IDX, GDN2, (1, 2), mode="fill")).tolist() == [
        [False, False], [True, True], [True, True], [True, True], [True, True]]
    custom = lax.gather(X2, IDX, GDN2, (1, 2), mode="fill", fill_value=-1.0)
    assert np_(custom)[1].tolist() == [-1.0, -1.0]
    # fill_value only matters for FILL_OR_DROP.
    clip = lax.gather(X2, IDX, GDN2, (1, 2), mode="clip", fill_value=-1.0)
    np.testing.assert_array_equal(np_(clip), GATHER_JAX["clip"])


@pytest.mark.parametrize("kind,mode", sorted(SCATTER_JAX))
def test_scatter_out_of_bounds_matches_jax(kind, mode):
    out = getattr(lax, kind)(X2, IDX, UPD, SDN2, mode=mode)
    np.testing.assert_array_equal(np_(out), SCATTER_JAX[kind, mode])


def test_scatter_duplicates_last_wins_as_jax():
    dn = SDN((), (0,), (0,))
    out = lax.scatter(np.zeros(3), np.array([[0], [0], [1], [0]]), np.array([1.0, 2, 3, 4]), dn)
    np.testing.assert_array_equal(np_(out), [4.0, 3.0, 0.0])  # JAX 0.10.2
    idx = np.array([[0], [0], [1], [0]])
    out = lax.scatter(np.zeros((2, 2)), idx, np.arange(8.0).reshape(4, 2), SDN((1,), (0,), (0,)))
    np.testing.assert_array_equal(np_(out), [[6.0, 7.0], [4.0, 5.0]])  # JAX 0.10.2


def test_scatter_combiners_on_duplicates():
    dn = SDN((), (0,), (0,))
    x = np.array([1.0, 2.0, 3.0])
    idx = np.array([[0], [0], [2]])
    u = np.array([4.0, -5.0, 6.0])
    np.testing.assert_array_equal(np_(lax.scatter_add(x, idx, u, dn)), [0.0, 2.0, 9.0])
    np.testing.assert_array_equal(np_(lax.scatter_mul(x, idx, u, dn)), [-20.0, 2.0, 18.0])
    np.testing.assert_array_equal(np_(lax.scatter_min(x, idx, u, dn)), [-5.0, 2.0, 3.0])
    np.testing.assert_array_equal(np_(lax.scatter_max(x, idx, u, dn)), [4.0, 2.0, 6.0])
    ints = lax.scatter_add(np.zeros(3, np.int32), idx.astype(np.uint8), np.ones(3, np.int32), dn)
    assert ints.dtype == np.int32 and np_(ints).tolist() == [2, 0, 1]


def test_scalar_operand_and_empty_cases():
    x = np.float64(7.0)
    out = lax.gather(x, np.zeros((3, 0), np.int32), GDN((), (), ()), ())
    np.testing.assert_array_equal(np_(out), [7.0, 7.0, 7.0])
    out = lax.scatter_add(x, np.zeros((3, 0), np.int32), np.ones(3), SDN((), (), ()))
    assert np_(out).item() == 10.0
    out = lax.gather(X2, np.zeros((0, 2), np.int32), GDN2, (1, 2))
    assert out.shape == (0, 2)
    out = lax.scatter(X2, np.zeros((0, 2), np.int32), np.zeros((0, 2)), SDN2)
    np.testing.assert_array_equal(np_(out), X2)
    out = lax.gather(np.zeros((2, 0)), np.zeros((3, 1), np.int32), GDN((1,), (0,), (0,)),
                     (1, 0))
    assert out.shape == (3, 0)


def test_batching_dims():
    x = np.arange(24.0).reshape(2, 3, 4)
    idx = np.array([[[1], [2]], [[0], [3]]])  # (batch=2, 2 lookups, 1)
    dn = GDN(offset_dims=(2,), collapsed_slice_dims=(2,), start_index_map=(2,),
             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    out = lax.gather(x, idx, dn, (1, 3, 1))
    expected = np.stack([x[b, :, idx[b, :, 0]] for b in range(2)])
    np.testing.assert_array_equal(np_(out), expected)
    back = lax.scatter_add(np.zeros_like(x), idx, np_(out), scatter_dnums(dn))
    expected = np.zeros_like(x)
    for b, j in itertools.product(range(2), range(2)):
        expected[b, :, idx[b, j, 0]] += x[b, :, idx[b, j, 0]]
    np.testing.assert_array_equal(np_(back), expected)


def test_gather_scatter_jaxprs_match_jax():
    with enable_x64(False):
        dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
        g = str(api.make_jaxpr(lambda x, i: lax.gather(x, i, dn, (1, 2), mode="fill"))(
            np.zeros((3, 4), np.float32), np.zeros((5, 1), np.int32)))
        sdn = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,))
        s = str(api.make_jaxpr(lambda x, i, u: lax.scatter_add(x, i, u, sdn, mode="clip"))(
            np.zeros((3, 4), np.float32), np.zeros((5, 1), np.int32),
            np.zeros((5, 2), np.float32)))
    # JAX 0.10.2
    assert g == (
        "{ lambda ; a:f32[3,4] b:i32[5,1]. let\n"
        "    c:f32[5,2] = gather[\n"
        "      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), "
        "collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), "
        "start_indices_batching_dims=())\n"
        "      fill_value=nan\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.FILL_OR_DROP\n"
        "      slice_sizes=(1, 2)\n"
        "      unique_indices=False\n"
        "    ] a b\n"
        "  in (c,) }")
    assert s == (
        "{ lambda ; a:f32[3,4] b:i32[5,1] c:f32[5,2]. let\n"
        "    d:f32[3,4] = scatter-add[\n"
        "      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), "
        "inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), "
        "operand_batching_dims=(), scatter_indices_batching_dims=())\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.CLIP\n"
        "      unique_indices=False\n"
        "      update_consts=()\n"
        "      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = add e f in (g,) }\n"
        "    ] a b c\n"
        "  in (d,) }")


def test_wrapper_params():
    assert Mode.from_any(None) is Mode.FILL_OR_DROP
    assert Mode.from_any("clip") is Mode.CLIP
    assert Mode.from_any("drop") is Mode.FILL_OR_DROP
    assert Mode.from_any("promise_in_bounds") is Mode.PROMISE_IN_BOUNDS
    assert Mode.from_any(Mode.CLIP) is Mode.CLIP
    with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
        Mode.from_any("wrap")
    jaxpr = api.make_jaxpr(lambda x: lax.gather(x, np.zeros((1, 1), np.int32),
                                                GDN([1], [0], [0]), [1, 2]))(X2)
    params = jaxpr.eqns[0].params
    # lax.gather defaults to PROMISE_IN_BOUNDS; lists become hashable tuples.
    assert params["mode"] is Mode.PROMISE_IN_BOUNDS and params["fill_value"] is None
    assert params["dimension_numbers"] == GDN((1,), (0,), (0,), (), ())
    assert params["slice_sizes"] == (1, 2)
    hash(tuple(params.values()))
    jaxpr = api.make_jaxpr(lambda x: lax.scatter(x, np.zeros((1, 2), np.int32),
                                                 np.zeros((1, 2)), SDN2))(X2)
    assert jaxpr.eqns[0].params["update_jaxpr"] is None
    assert jaxpr.eqns[0].params["mode"] is Mode.FILL_OR_DROP


# --------------------------------------------------------------------------------------
# Type errors


def gather_aval(operand_shape, indices_shape, dn, slice_sizes, indices_dtype=np.int32,
                mode=Mode.CLIP):
    return lax.gather_p.abstract_eval(
        core.ShapedArray(operand_shape, np.float32), core.ShapedArray(indices_shape,
                                                                      indices_dtype),
        dimension_numbers=dn, slice_sizes=slice_sizes, unique_indices=False,
        indices_are_sorted=False, mode=mode, fill_value=None)


def test_gather_aval_shape():
    dn = GDN(offset_dims=(0, 2), collapsed_slice_dims=(1,), start_index_map=(1, 0))
    assert gather_aval((5, 6, 7), (3, 2), dn, (2, 1, 4)).shape == (2, 3, 4)


@pytest.mark.parametrize("args,exc,match", [
    (((3, 4), (5, 1), GDN((1,), (0,), (0,)), (1, 2), np.float32), ValueError,
     "gather: indices must have an integer type, got float32"),
    (((3, 4), (), GDN((0, 1), (), ()), (1, 2)), TypeError, r"rank >= 1.*shape \(\)"),
    (((3, 4), (5, 2), GDN((1,), (0,), (0,)), (1, 2)), TypeError,
     r"start_index_map \(0,\) has 1 entries .* have 2"),
    (((3, 4), (5, 1), GDN((1,), (0,), (2,)), (1, 2)), TypeError,
     r"Invalid start_index_map set in gather op; valid range is \[0, 2\); got: 2"),
    (((3, 4), (5, 1), GDN((1,), (0,), (0,)), (2, 2)), TypeError,
     r"collapse slice dims with size 1, but slice_sizes\[0\] = 2"),
    (((3, 4), (5, 1), GDN((1,), (0,), (0,)), (1, 5)), TypeError,
     r"slice size 5 at index 1 is out of range, must be within \[0, 4\]"),
    (((3, 4), (5, 1), GDN((1,), (0,), (0,)), (1, 2, 1)), TypeError,
     r"slice_sizes \(1, 2, 1\) must have one entry per dimension"),
    (((3, 4), (5, 1), GDN((), (0,), (0,)), (1, 2)), TypeError,
     "every operand dimension must be an offset, collapsed or batching dimension"),
    (((3, 4, 2), (5, 1), GDN((2, 1), (0,), (0,)), (1, 2, 2)), TypeError,
     r"offset_dims in gather op must be sorted; got \(2, 1\)"),
    (((3, 4), (5, 1), GDN((1,), (0, 0), (0,)), (1, 2)), TypeError,
     "collapsed_slice_dims in gather op must not repeat"),
    (((3, 4), (3, 1), GDN((1,), (0,), (1,), (0,), (0,)), (1, 2)), TypeError,
     "collapsed_slice_dims and operand_batching_dims in gather op must be disjoint"),
    (((3, 4), (2, 1), GDN((1,), (), (1,), (0,), (0,)), (1, 2)), TypeError,
     r"batching dimensions to have the same shape, got \(3,\) and \(2,\)"),
    (((3, 4), (3, 1), GDN((1,), (), (1,), (0,), (1,)), (1, 2)), TypeError,
     "cannot have the index vector dimension as a batching dimension"),
    (((3, 4), (5, 1), GDN((1,), (0,), (0,)), (1, 2), np.int32, Mode.ONE_HOT), ValueError,
     "ONE_HOT"),
])
def test_gather_type_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        gather_aval(*args)


@pytest.mark.parametrize("operand,indices,updates,dn,match", [
    ((3, 4), (5, 1), (5,), SDN((1,), (0,), (0,)), r"updates must have rank 1 .* \+ 1"),
    ((3, 4), (5, 1), (5, 5), SDN((1,), (0,), (0,)),
     r"window dimension 1 of updates has size 5, larger than .* \(4\)"),
    ((3, 4), (5, 1), (6, 2), SDN((1,), (0,), (0,)),
     r"scatter dimensions of updates \(6, 2\) have sizes \(6,\), .* \(5,\)"),
    ((3, 4), (5, 1), (5, 2), SDN((1,), (), (0,)), "window has rank 1"),
    ((3, 4), (5, 1), (5, 2), SDN((1,), (0,), (0, 1)),
     r"scatter_dims_to_operand_dims \(0, 1\) has 2 entries"),
    ((3, 4), (5, 1), (5, 2), SDN((1,), (0,), (0,), (1,), (1,)),
     "cannot have the index vector dimension as a batching dimension"),
])
def test_scatter_type_errors(operand, indices, updates, dn, match):
    with pytest.raises(TypeError, match=match):
        lax.scatter(np.zeros(operand, np.float32), np.zeros(indices, np.int32),
                    np.zeros(updates, np.float32), dn)


def test_scatter_dtype_errors():
    dn = SDN((1,), (0,), (0,))
    with pytest.raises(TypeError, match="scatter-add: operand and updates must have the same "
                                        "dtype, got float32 and float64"):
        lax.scatter_add(np.zeros((3, 4), np.float32), np.zeros((5, 1), np.int32),
                        np.zeros((5, 2)), dn)
    with pytest.raises(ValueError, match="scatter: indices must have an integer type"):
        lax.scatter(np.zeros((3, 4)), np.zeros((5, 1)), np.zeros((5, 2)), dn)
    with pytest.raises(TypeError, match="add does not accept dtype bool"):
        lax.scatter_add(np.zeros((3, 4), bool), np.zeros((5, 1), np.int32),
                        np.zeros((5, 2), bool), dn)
    with pytest.raises(TypeError, match="must be a lax.ScatterDimensionNumbers"):
        lax.scatter(np.zeros((3, 4)), np.zeros((5, 1), np.int32), np.zeros((5, 2)),
                    GDN((1,), (0,), (0,)))


# --------------------------------------------------------------------------------------
# Derivatives


def grads(f, *args, mode=None):
    """Derivatives against finite differences; reverse mode against forward mode too, but
    not for PROMISE_IN_BOUNDS: as in JAX, its gathers clamp and their transposes drop (and
    its scatters drop and their transposes clamp), so with indices out of bounds reverse
    mode is not the adjoint of forward mode (test_reverse_mode_out_of_bounds_as_jax)."""
    promised = mode in ("promise_in_bounds", Mode.PROMISE_IN_BOUNDS)
    check_grads(f, args, order=2, modes=("fwd",) if promised else ("fwd", "rev"))


@pytest.mark.parametrize("mode", MODES)
def test_gather_grads(mode):
    x = np.random.default_rng(1).standard_normal((3, 4))
    grads(lambda x: lax.gather(x, IDX, GDN2, (1, 2), mode=mode, fill_value=0.5), x, mode=mode)


def test_gather_fill_tangent_is_zero_as_jax():
    dn = GDN((), (0,), (0,))
    f = lambda x: lax.gather(x, np.array([[0], [5]]), dn, (1,), mode="fill")  # noqa: E731
    out, t = api.jvp(f, (np.array([1.0, 2.0, 3.0]),), (np.array([10.0, 20.0, 30.0]),))
    np.testing.assert_array_equal(np_(out), [1.0, np.nan])
    np.testing.assert_array_equal(np_(t), [10.0, 0.0])  # JAX 0.10.2


@settings(max_examples=15, deadline=None)
@given(gather_cases())
def test_gather_scatter_grads_random(case):
    operand, indices, dn, slice_sizes, mode = case
    grads(lambda x: lax.gather(x, indices, dn, slice_sizes, mode=mode, fill_value=0.0), operand,
          mode=mode)
    updates = np_(lax.gather(operand, indices, dn, slice_sizes)) + 0.5
    sdn = scatter_dnums(dn)
    grads(lambda x, u: lax.scatter(x, indices, u, sdn, mode=mode), operand, updates, mode=mode)
    grads(lambda x, u: lax.scatter_add(x, indices, u, sdn, mode=mode), operand, updates,
          mode=mode)


@pytest.mark.parametrize("unique", [False, True])
def test_scatter_grads(unique):
    rng = np.random.default_rng(2)
    idx = np.array([[2], [0]]) if unique else np.array([[2], [0], [2], [1], [7]])
    u = rng.standard_normal((len(idx), 4))
    for mode in MODES:
        grads(lambda x, u, mode=mode: lax.scatter(x, idx, u, SDN((1,), (0,), (0,)), mode=mode,
                                                  unique_indices=unique),
              rng.standard_normal((3, 4)), u, mode=mode)
        grads(lambda x, u, mode=mode: lax.scatter_add(x, idx, u, SDN((1,), (0,), (0,)),
                                                      mode=mode),
              rng.standard_normal((3, 4)), u, mode=mode)


# JAX 0.10.2: jvp with operand [1, 2, 3], tangent [10, 20, 30], indices [0, 0, 2] and
# update tangents [1, 2, 3] (ties share their tangents equally).
JVP_JAX = {
    "scatter": ([4.0, 5.0, 6.0], [5.0, 2.0, 6.0], [2.0, 20.0, 3.0]),
    "scatter_max": ([1.0, 0.5, 5.0], [1.0, 2.0, 5.0], [5.5, 20.0, 3.0]),
    "scatter_min": ([1.0, 1.0, 0.0], [1.0, 2.0, 0.0], [13 / 3, 20.0, 3.0]),
    "scatter_add": ([4.0, 5.0, 6.0], [10.0, 2.0, 9.0], [13.0, 20.0, 33.0]),
}


@pytest.mark.parametrize("kind", sorted(JVP_JAX))
def test_scatter_jvp_matches_jax(kind):
    updates, out, tangent = JVP_JAX[kind]
    f = lambda x, u: getattr(lax, kind)(x, np.array([[0], [0], [2]]), u,  # noqa: E731
                                        SDN((), (0,), (0,)))
    p, t = api.jvp(f, (np.array([1.0, 2.0, 3.0]), np.array(updates)),
                   (np.array([10.0, 20.0, 30.0]), np.array([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(np_(p), out)
    np.testing.assert_allclose(np_(t), tangent)


def test_scatter_mul_grads():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4))
    idx = np.array([[2], [0]])
    u = rng.standard_normal((2, 4))
    dn = SDN((1,), (0,), (0,))
    grads(lambda x, u: lax.scatter_mul(x, idx, u, dn, unique_indices=True), x, u)
    dup = np.array([[2], [0], [2]])
    u3 = rng.standard_normal((3, 4))
    grads(lambda x: lax.scatter_mul(x, dup, u3, dn), x)  # linear in the operand
    # JAX 0.10.2
    p, t = api.jvp(lambda x, u: lax.scatter_mul(x, np.array([[0], [2]]), u, SDN((), (0,), (0,)),
                                                unique_indices=True),
                   (np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0])),
                   (np.array([10.0, 20.0, 30.0]), np.array([1.0, 2.0])))
    np.testing.assert_allclose(np_(p), [4.0, 2.0, 15.0])
    np.testing.assert_allclose(np_(t), [41.0, 20.0, 156.0])
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        api.jvp(lambda u: lax.scatter_mul(x, dup, u, dn), (u3,), (u3,))


@pytest.mark.parametrize("kind", ["scatter_min", "scatter_max"])
def test_scatter_extremal_grads(kind):
    # Well-separated values: no ties within the finite-difference step.
    rng = np.random.default_rng(4)
    values = rng.permutation(27).astype(np.float64)
    x, u = values[:12].reshape(3, 4), values[12:27].reshape(5, 3)[:, :2]
    for mode in MODES:
        grads(lambda x, u, mode=mode: getattr(lax, kind)(x, IDX, u, SDN2, mode=mode), x, u,
              mode=mode)


def test_integer_operands_have_zero_tangents():
    x = np.arange(12).reshape(3, 4)
    zero = np.zeros(x.shape, dtypes.float0)
    for f in (lambda x: lax.gather(x, IDX, GDN2, (1, 2)),
              lambda x: lax.scatter(x, IDX, np.ones((5, 2), np.int64), SDN2),
              lambda x: lax.dynamic_slice(x, (1, 1), (2, 2))):
        out, t = api.jvp(f, (x,), (zero,))
        assert out.dtype == np.int64 and t.dtype == dtypes.float0 and t.shape == out.shape


def test_jvp_staged():
    """The JVP rules stage: the jaxpr of a derivative evaluates to the same tangent."""
    idx = np.array([[0], [0], [2]])
    dn = SDN((), (0,), (0,))

    def tangent(x, u):
        return api.jvp(lambda x, u: lax.scatter(x, idx, u, dn), (x, u),
                       (np.ones(3), np.full(3, 2.0)))[1]

    args = (np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]))
    staged = api.make_jaxpr(tangent)(*args)
    np.testing.assert_array_equal(np_(staged(*args)[0]), np_(tangent(*args)))
    np.testing.assert_array_equal(np_(tangent(*args)), [2.0, 1.0, 2.0])


# --------------------------------------------------------------------------------------
# Reverse mode: transpose rules


def check_transpose(f, *primals, seed=0):
    """`linear_transpose(f)` is the adjoint of the linear `f`: <v, f(u)> == <f^T v, u>."""
    rng = np.random.default_rng(seed)
    us = [rng.standard_normal(np.shape(p)) for p in primals]
    out = np_(f(*us))
    v = rng.standard_normal(out.shape)
    cts = api.linear_transpose(f, *primals)(v)
    assert [(c.shape, c.dtype) for c in cts] == [(np.shape(p), np.float64) for p in primals]
    lhs = np.vdot(v, out)
    rhs = sum(np.vdot(np_(c), u) for c, u in zip(cts, us))
    np.testing.assert_allclose(rhs, lhs, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(slice_cases())
def test_dynamic_slice_transposes(case):
    shape, sizes, starts = case
    x, u = np.zeros(shape), np.zeros(sizes)
    check_transpose(lambda x: lax.dynamic_slice(x, starts, sizes), x)
    check_transpose(lambda x, u: lax.dynamic_update_slice(x, u, starts), x, u)
    check_transpose(lambda u: lax.dynamic_update_slice(np.zeros(shape), u, starts), u)


@settings(max_examples=40, deadline=None)
@given(gather_cases())
def test_gather_scatter_transposes_random(case):
    """Exact adjoints in CLIP and FILL_OR_DROP modes, out-of-bounds indices included. In
    PROMISE_IN_BOUNDS (as in JAX) a gather's transpose is the scatter-add in that mode,
    which drops what the gather clamped, and a scatter-add's is the gather, which clamps."""
    operand, indices, dn, slice_sizes, mode = case
    updates = np_(lax.gather(operand, indices, dn, slice_sizes)) + 0.5
    sdn = scatter_dnums(dn)
    if mode == "promise_in_bounds":
        gather = lambda x: lax.gather(x, indices, dn, slice_sizes, mode=mode)  # noqa: E731
        (ct,) = api.linear_transpose(gather, operand)(updates)
        np.testing.assert_array_equal(
            np_(ct), np_(lax.scatter_add(np.zeros_like(operand), indices, updates, sdn,
                                         mode=mode)))
        _, ct = api.linear_transpose(
            lambda x, u: lax.scatter_add(x, indices, u, sdn, mode=mode), operand,
            updates)(operand)
        np.testing.assert_array_equal(np_(ct), np_(gather(operand)))
        return
    check_transpose(lambda x: lax.gather(x, indices, dn, slice_sizes, mode=mode,
                                         fill_value=0.0), operand)
    check_transpose(lambda x, u: lax.scatter_add(x, indices, u, sdn, mode=mode),
                    operand, updates)
    check_transpose(lambda x: lax.scatter_mul(x, indices, updates, sdn, mode=mode), operand)


@pytest.mark.parametrize("mode", MODES)
def test_scatter_transposes_unique(mode):
    # Disjoint windows; [2, 3] is out of bounds: clamped to [2, 2] or dropped (and, in
    # PROMISE_IN_BOUNDS, dropped but transposed clamped, as in JAX: left out).
    idx = np.array([[0, 0], [2, 3], [1, 1]])
    if mode == "promise_in_bounds":
        idx = idx[::2]
    u = np.arange(1.0, 1.0 + 2 * len(idx)).reshape(len(idx), 2)
    check_transpose(lambda x, u: lax.scatter(x, idx, u, SDN2, mode=mode, unique_indices=True),
                    X2, u)
    # Linear in u once the unwritten places (constants) are taken away.
    base = np_(lax.scatter_mul(X2, idx, np.zeros_like(u), SDN2, mode=mode))
    check_transpose(lambda u: lax.scatter_mul(X2, idx, u, SDN2, mode=mode,
                                              unique_indices=True) - base, u)


def test_transposes_of_reads_of_nothing():
    # An empty batch may have slice sizes beyond the operand; a batching dimension of
    # slice size 0 reads nothing (the output is zeros): both transpose to zeros.
    check_transpose(lambda x: lax.gather(x, np.zeros((0, 1), np.int32), GDN((1,), (), (0,)),
                                         (5,)), np.zeros(2))
    dn = GDN((1,), (), (1,), (0,), (0,))
    idx = np.array([[1], [0]])
    check_transpose(lambda x: lax.gather(x, idx, dn, (0, 2)), np.zeros((2, 3)))
    ct = api.linear_transpose(lambda x: lax.gather(x, idx, dn, (0, 2)), X2[:2])(np.ones((2, 2)))
    np.testing.assert_array_equal(np_(ct[0]), np.zeros((2, 4)))


def test_transpose_errors():
    dup = np.array([[0], [0]])
    dn = SDN((), (0,), (0,))
    x, u = np.zeros(3), np.zeros(2)
    with pytest.raises(NotImplementedError, match="only implemented where unique_indices"):
        api.linear_transpose(lambda x: lax.scatter(x, dup, u, dn), x)(x)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        api.linear_transpose(lambda u: lax.scatter_mul(x, dup, u, dn), u)(x)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        api.grad(lambda u: lax.scatter_mul(x + 1, dup, u, dn).sum())(u + 1)
    with pytest.raises(NotImplementedError, match="'scatter-mul'.* not linear"):
        api.linear_transpose(lambda x: lax.scatter_mul(x, dup[:1], x[:1], dn), x)(x)


def test_promise_in_bounds_grads_as_jax():
    # JAX 0.10.2: XLA's gather clamps the out-of-bounds index but its transpose (a
    # scatter-add in the same mode) drops it, and the other way round.
    x = np.array([0.0, 1.0, 2.0])
    idx = np.array([[5], [1]])
    dn = GDN((), (0,), (0,))
    f = lambda x: lax.gather(x, idx, dn, (1,), mode="promise_in_bounds").sum()  # noqa: E731
    np.testing.assert_array_equal(np_(api.grad(f)(x)), [0.0, 1.0, 0.0])
    g = lambda u: lax.scatter_add(x, idx, u, scatter_dnums(dn),  # noqa: E731
                                  mode="promise_in_bounds").sum()
    np.testing.assert_array_equal(np_(api.grad(g)(np.ones(2))), [1.0, 1.0])


# The gradients of sum(op(...) ** 2 * weights) at integer points (exact results), with
# duplicated, clamped and dropped indices (IDX_G) and ties for scatter_min/max.
IDX_G = np.array([[0, 0], [2, 3], [-1, 1], [1, 2], [0, 0]])
U_G = np.array([[1.0, 2], [3, 4], [5, 6], [6, 7], [1, 2]])
W_G = np.arange(1.0, 13.0).reshape(3, 4)

# JAX 0.10.2: jax.grad of the programs of test_grads_match_jax (argnums 0, 1).
GRAD_JAX = {
    ("gather", "clip"): [[[0, 34, 24, 0], [0, 0, 84, 112], [0, 0, 60, 88]]],
    ("gather", "fill"): [[[0, 24, 0, 0], [0, 0, 84, 112], [0, 0, 0, 0]]],
    ("scatter", "clip"): [[[0, 0, 0, 24], [40, 60, 0, 0], [144, 180, 0, 0]],
                          [[0, 0], [66, 96], [0, 36], [84, 112], [2, 8]]],
    ("scatter", "fill"): [[[0, 0, 12, 24], [40, 60, 0, 0], [144, 180, 220, 264]],
                          [[0, 0], [0, 0], [0, 0], [84, 112], [2, 8]]],
    ("scatter_add", "clip"): [[[4, 40, 48, 24], [40, 60, 168, 224], [144, 180, 286, 360]],
                              [[4, 40], [286, 360], [40, 48], [168, 224], [4, 40]]],
    ("scatter_add", "fill"): [[[4, 20, 12, 24], [40, 60, 168, 224], [144, 180, 220, 264]],
                              [[4, 20], [0, 0], [0, 0], [168, 224], [4, 20]]],
    ("scatter_mul", "clip"): [[[0, 1600, 432, 24], [40, 60, 3024, 5488],
                               [144, 180, 1980, 4224]]],
    ("scatter_mul", "fill"): [[[0, 64, 12, 24], [40, 60, 3024, 5488], [144, 180, 220, 264]]],
    ("scatter_min", "fill"): [[[0, 4, 12, 24], [40, 60, 42, 56], [144, 180, 220, 264]],
                              [[0, 0], [0, 0], [0, 0], [42, 56], [0, 0]]],
    ("scatter_max", "fill"): [[[0, 0, 12, 24], [40, 60, 42, 56], [144, 180, 220, 264]],
                              [[1, 4], [0, 0], [0, 0], [42, 56], [1, 4]]],
}


@pytest.mark.parametrize("kind,mode", sorted(GRAD_JAX))
def test_grads_match_jax(kind, mode):
    if kind == "gather":
        weights = np.arange(1.0, 11.0).reshape(5, 2)
        f = lambda x, u: (lax.gather(x, IDX_G, GDN2, (1, 2), mode=mode,  # noqa: E731
                                     fill_value=0.0) ** 2 * weights).sum()
    else:
        f = lambda x, u: (getattr(lax, kind)(x, IDX_G, u, SDN2, mode=mode)  # noqa: E731
                          ** 2 * W_G).sum()
    expected = GRAD_JAX[kind, mode]  # scatter_mul: the operand only (updates not unique)
    out = api.grad(f, tuple(range(len(expected))))(X2, U_G)
    for g, e in zip(out, expected):
        np.testing.assert_array_equal(np_(g), e)


def test_dynamic_and_unique_grads_match_jax():
    def f(x, u):
        out = lax.dynamic_update_slice(x, u[:2], (2, -1))  # starts clamped to (1, 2)
        return (out ** 2 * W_G).sum() + (lax.dynamic_slice(x * x, (5, -3), (2, 2))
                                         * u[:2]).sum()

    def g(x, u):
        return (lax.scatter_mul(x, IDX_G[:2], u[:2], SDN2, unique_indices=True) ** 2
                * W_G).sum()

    # JAX 0.10.2
    expected = {f: ([[0, 4, 12, 24], [40, 70, 24, 0], [144, 234, 80, 0]],
                    [[39, 68], [147, 196], [0, 0], [0, 0], [0, 0]]),
                g: ([[0, 16, 12, 24], [40, 60, 84, 112], [144, 180, 220, 264]],
                    [[0, 8], [0, 0], [0, 0], [0, 0], [0, 0]])}
    for fun, (gx, gu) in expected.items():
        dx, du = api.grad(fun, (0, 1))(X2, U_G)
        np.testing.assert_array_equal(np_(dx), gx)
        np.testing.assert_array_equal(np_(du), gu)


def test_transpose_jaxprs_match_jax():
    with enable_x64(False):
        x, u = np.zeros((3, 4), np.float32), np.zeros((1, 4), np.float32)
        idx = np.array([[1], [3]], np.int32)

        def pullback(i, ct):
            f = lambda x, u: lax.dynamic_slice(  # noqa: E731
                lax.dynamic_update_slice(x, u, (i, 0)), (1, i), (2, 2))
            return api.linear_transpose(f, x, u)(ct)

        dyn = str(api.make_jaxpr(pullback)(np.int32(1), np.zeros((2, 2), np.float32)))
        sdn = SDN((1,), (0,), (0,))
        sc = str(api.make_jaxpr(api.linear_transpose(
            lambda x, u: lax.scatter(x, idx, u, sdn, unique_indices=True), x,
            np.zeros((2, 2), np.float32)))(x))
    # JAX 0.10.2
    assert dyn == ("{ lambda ; a:i32[] b:f32[2,2]. let\n"
                   "    c:bool[] = lt a 0:i32[]\n"
                   "    d:i32[] = add a 3:i32[]\n"
                   "    e:i32[] = select_n c a d\n"
                   "    f:bool[] = lt a 0:i32[]\n"
                   "    g:i32[] = add a 4:i32[]\n"
                   "    h:i32[] = select_n f a g\n"
                   "    i:f32[3,4] = broadcast_in_dim 0.0:f32[]\n"
                   "    j:f32[3,4] = dynamic_update_slice i b 1:i32[] h\n"
                   "    k:f32[1,4] = broadcast_in_dim 0.0:f32[]\n"
                   "    l:f32[3,4] = dynamic_update_slice j k e 0:i32[]\n"
                   "    m:f32[1,4] = dynamic_slice[slice_sizes=(1, 4)] j e 0:i32[]\n"
                   "  in (l, m) }")
    assert sc == (
        "{ lambda a:i32[2,1]; b:f32[3,4]. let\n"
        "    c:f32[2,2] = broadcast_in_dim 0.0:f32[]\n"
        "    d:f32[3,4] = scatter[\n"
        "      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), "
        "inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), "
        "operand_batching_dims=(), scatter_indices_batching_dims=())\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.FILL_OR_DROP\n"
        "      unique_indices=True\n"
        "      update_consts=()\n"
        "      update_jaxpr=None\n"
        "    ] b a c\n"
        "    e:f32[2,2] = gather[\n"
        "      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), "
        "collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), "
        "start_indices_batching_dims=())\n"
        "      fill_value=0\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.FILL_OR_DROP\n"
        "      slice_sizes=(1, 2)\n"
        "      unique_indices=False\n"
        "    ] b a\n"
        "  in (d, e) }")


# --------------------------------------------------------------------------------------
# Shortcuts of the impls: a gather of whole rows (an embedding lookup) by np.take, and a
# scatter whose windows all apply without selecting by a mask. They must give what the
# general path gives, out-of-bounds rows and duplicate targets (summed in order) included.


@pytest.mark.parametrize("mode", [Mode.CLIP, Mode.FILL_OR_DROP, Mode.PROMISE_IN_BOUNDS])
@pytest.mark.parametrize("operand_shape,batch", [((10,), (7,)), ((10, 4), (3, 5)),
                                                 ((6, 2, 3), (4,)), ((5, 3), ())])
def test_gather_of_rows_equals_the_general_gather(mode, operand_shape, batch, monkeypatch):
    rng = np.random.default_rng(0)
    operand = rng.standard_normal(operand_shape).astype(np.float32)
    rows = rng.integers(-3, operand_shape[0] + 3, batch + (1,)).astype(np.int32)
    if mode is Mode.PROMISE_IN_BOUNDS:
        rows = np.clip(rows, 0, operand_shape[0] - 1)
    rest = len(operand_shape) - 1
    dn = GDN(offset_dims=tuple(range(len(batch), len(batch) + rest)),
             collapsed_slice_dims=(0,), start_index_map=(0,))
    params = dict(dimension_numbers=dn, slice_sizes=(1,) + operand_shape[1:],
                  unique_indices=False, indices_are_sorted=False, mode=mode,
                  fill_value=np.nan)
    assert lax._takes_rows(operand_shape, dn, params["slice_sizes"], len(batch) + rest)
    got = lax.gather_p.impl(operand, rows, **params)
    monkeypatch.setattr(lax, "_takes_rows", lambda *a: False)
    want = lax.gather_p.impl(operand, rows, **params)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("prim", ["scatter_add_p", "scatter_p", "scatter_mul_p"])
def test_scatter_with_every_window_applied_equals_the_masked_scatter(prim, monkeypatch):
    rng = np.random.default_rng(1)
    operand = rng.standard_normal((6, 5)).astype(np.float32)
    rows = rng.integers(0, 6, (40, 1)).astype(np.int32)  # (duplicates: the order matters)
    updates = rng.standard_normal((40, 5)).astype(np.float32)
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
             scatter_dims_to_operand_dims=(0,))
    p = getattr(lax, prim)
    params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                  mode=Mode.FILL_OR_DROP, update_jaxpr=None, update_consts=())
    got = p.impl(operand, rows, updates, **params)
    targets = lax._scatter_targets

    def always_masked(*a):
        flat, valid = targets(*a)
        assert valid is None
        return flat, np.ones(flat.shape, bool)

    monkeypatch.setattr(lax, "_scatter_targets", always_masked)
    np.testing.assert_array_equal(got, p.impl(operand, rows, updates, **params))
