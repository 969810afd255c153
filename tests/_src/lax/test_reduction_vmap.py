"""vmap of the reductions, argmin/argmax, cumulative reductions, sort and top_k: `vmap(f)`
against a Python loop of `f` over the batch, stacked, for hypothesis-drawn shapes, parameters
and in_axes (None, negative, every position); nested vmap; vmap of grad against a loop of
grads; and staged jaxprs holding one equation of the primitive (no per-example loop)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vmap_testing import assert_same, loop

import didax
from didax._src.config import enable_x64
from didax._src.lax import reduction as red
from didax._src.lax.elementwise import mul, sin


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


# --------------------------------------------------------------------------------------
# Helpers: batched operands (the loop reference is in vmap_testing)


def check_vmap(f, in_axes, *args):
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    assert_same(didax.vmap(f, in_axes)(*args), loop(f, in_axes, size, *args))


def values(rng, shape, dtype):
    """Small integers (many ties, exact sums and products), as `dtype`."""
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-3, 4, shape).astype(dtype)


@st.composite
def shapes(draw, min_ndim=0, max_ndim=3, min_side=0):
    return tuple(draw(st.lists(st.integers(min_side, 3), min_size=min_ndim, max_size=max_ndim)))


@st.composite
def in_axis(draw, ndim, allow_none=False):
    """A vmap in_axes entry for an operand of logical rank `ndim`: any position, negative
    ones included (or None)."""
    axis = st.integers(-(ndim + 1), ndim)
    return draw(st.one_of(st.none(), axis) if allow_none else axis)


def batched(rng, size, shape, axis, dtype):
    """An operand of logical `shape`, with a batch of `size` at `axis` (None: unbatched)."""
    if axis is None:
        return values(rng, shape, dtype)
    return np.moveaxis(values(rng, (size,) + shape, dtype), 0, axis)


sizes = st.integers(1, 3)
seeds = st.integers(0, 2 ** 16)


# --------------------------------------------------------------------------------------
# reduce_*


REDUCERS = {
    "sum": (red.reduce_sum, [np.float64, np.int32]),
    "prod": (red.reduce_prod, [np.float64, np.int32]),
    "max": (red.reduce_max, [np.float64, np.int32, np.bool_]),
    "min": (red.reduce_min, [np.float64, np.uint8, np.bool_]),
    "and": (red.reduce_and, [np.int32, np.bool_]),
    "or": (red.reduce_or, [np.int32, np.bool_]),
    "xor": (red.reduce_xor, [np.uint8, np.bool_]),
}


@pytest.mark.parametrize("name", list(REDUCERS))
@settings(max_examples=15, deadline=None)
@given(data=st.data(), size=sizes, seed=seeds)
def test_reducers(name, data, size, seed):
    fn, dtypes = REDUCERS[name]
    shape = data.draw(shapes())
    axes = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
                 if shape else ())
    axis = data.draw(in_axis(len(shape)))
    x = batched(np.random.default_rng(seed), size, shape, axis, data.draw(st.sampled_from(dtypes)))
    check_vmap(lambda x: fn(x, axes), (axis,), x)


@pytest.mark.parametrize("fn", [red.argmax, red.argmin])
@settings(max_examples=20, deadline=None)
@given(data=st.data(), size=sizes, seed=seeds,
       dtype=st.sampled_from([np.float64, np.int32, np.bool_]),
       index_dtype=st.sampled_from([np.int32, np.int64, np.uint8]))
def test_argminmax(fn, data, size, seed, dtype, index_dtype):
    shape = data.draw(shapes(min_ndim=1, min_side=1))
    reduced = data.draw(st.integers(0, len(shape) - 1))
    axis = data.draw(in_axis(len(shape)))
    x = batched(np.random.default_rng(seed), size, shape, axis, dtype)
    if dtype == np.float64 and x.size > 1:
        x.flat[seed % x.size] = np.nan  # the first NaN wins
    check_vmap(lambda x: fn(x, reduced, index_dtype), (axis,), x)


# --------------------------------------------------------------------------------------
# Cumulative reductions


CUMULATIVE = {
    "cumsum": (red.cumsum, [np.float64, np.int32]),
    "cumprod": (red.cumprod, [np.float64, np.int32]),
    "cummax": (red.cummax, [np.float64, np.int32]),
    "cummin": (red.cummin, [np.float64, np.uint8]),
    "cumlogsumexp": (red.cumlogsumexp, [np.float64]),
}


@pytest.mark.parametrize("name", list(CUMULATIVE))
@settings(max_examples=15, deadline=None)
@given(data=st.data(), size=sizes, seed=seeds, reverse=st.booleans())
def test_cumulative(name, data, size, seed, reverse):
    fn, dtypes = CUMULATIVE[name]
    shape = data.draw(shapes(min_ndim=1))
    scanned = data.draw(st.integers(0, len(shape) - 1))
    axis = data.draw(in_axis(len(shape)))
    x = batched(np.random.default_rng(seed), size, shape, axis, data.draw(st.sampled_from(dtypes)))
    check_vmap(lambda x: fn(x, scanned, reverse), (axis,), x)


# --------------------------------------------------------------------------------------
# sort and top_k


@settings(max_examples=40, deadline=None)
@given(data=st.data(), size=sizes, seed=seeds, is_stable=st.booleans())
def test_sort_multi_operand(data, size, seed, is_stable):
    """Operands batched at different positions, or not at all (then broadcast): keys with
    ties, so later keys and the stability of the sort decide the order."""
    shape = data.draw(shapes(min_ndim=1))
    n = data.draw(st.integers(1, 3))
    num_keys = data.draw(st.integers(1, n))
    dimension = data.draw(st.integers(-len(shape), len(shape) - 1))
    axes = data.draw(st.lists(in_axis(len(shape), allow_none=True), min_size=n, max_size=n))
    if all(a is None for a in axes):
        axes[data.draw(st.integers(0, n - 1))] = data.draw(in_axis(len(shape)))
    dtypes = data.draw(st.lists(st.sampled_from([np.float64, np.int32, np.bool_]),
                                min_size=n, max_size=n))
    rng = np.random.default_rng(seed)
    ops = [batched(rng, size, shape, a, dt) for a, dt in zip(axes, dtypes)]
    check_vmap(lambda *ops: red.sort(ops, dimension, is_stable, num_keys), tuple(axes), *ops)


@settings(max_examples=20, deadline=None)
@given(data=st.data(), size=sizes, seed=seeds)
def test_sort_key_val(data, size, seed):
    shape = data.draw(shapes(min_ndim=1))
    dimension = data.draw(st.integers(0, len(shape) - 1))
    axes = (data.draw(in_axis(len(shape), allow_none=True)), data.draw(in_axis(len(shape))))
    rng = np.random.default_rng(seed)
    keys = batched(rng, size, shape, axes[0], np.float64)
    vals = batched(rng, size, shape, axes[1], np.int32)
    check_vmap(lambda k, v: red.sort_key_val(k, v, dimension), axes, keys, vals)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), size=sizes, seed=seeds,
       dtype=st.sampled_from([np.float64, np.int32, np.bool_]))
def test_top_k(data, size, seed, dtype):
    shape = data.draw(shapes(min_ndim=1))
    operand_axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[operand_axis]))
    axis = data.draw(in_axis(len(shape)))
    x = batched(np.random.default_rng(seed), size, shape, axis, dtype)
    check_vmap(lambda x: red.top_k(x, k, axis=operand_axis), (axis,), x)


@pytest.mark.parametrize("in_axes", [-1, 2, 0])
def test_top_k_batch_dim_last(in_axes):
    """top_k's default axis is the last one: a batch dimension there must not be taken."""
    x = np.random.default_rng(0).permutation(60).reshape(3, 4, 5).astype(np.float64)
    out = didax.vmap(lambda x: red.top_k(x, 2), in_axes)(x)
    expected = loop(lambda x: red.top_k(x, 2), (in_axes,), x.shape[in_axes], x)
    assert_same(out, expected)


# --------------------------------------------------------------------------------------
# Nested vmap


NESTED = [
    lambda x: red.reduce_max(x, (0,)),
    lambda x: red.argmin(x, 1, np.int32),
    lambda x: red.cumsum(x, 1, reverse=True),
    lambda x: red.sort(x, 0),
    lambda x: red.top_k(x, 2, axis=0),
]


@pytest.mark.parametrize("f", NESTED)
@settings(max_examples=10, deadline=None)
@given(data=st.data(), seed=seeds)
def test_nested_vmap(f, data, seed):
    outer, inner = data.draw(st.integers(-4, 3)), data.draw(st.integers(-3, 2))
    x = values(np.random.default_rng(seed), (2, 3, 3, 2), np.float64)  # outer, inner, logical
    x = np.moveaxis(np.moveaxis(x, 1, 1 + inner % 3), 0, outer)
    expected = loop(lambda xo: loop(f, (inner,), 3, xo), (outer,), 2, x)
    assert_same(didax.vmap(didax.vmap(f, inner), outer)(x), expected)


# --------------------------------------------------------------------------------------
# vmap of grad


W = np.arange(1.0, 13.0).reshape(3, 4) / 7  # distinct weights: sort's permutation matters
GRADS = {
    "sum": lambda x: red.reduce_sum(sin(red.reduce_sum(x, (1,))), (0,)),
    "max": lambda x: red.reduce_sum(sin(red.reduce_max(x, (1,))), (0,)),
    "cumsum": lambda x: red.reduce_sum(mul(sin(red.cumsum(x, 1)), W), (0, 1)),
    "sort": lambda x: red.reduce_sum(mul(red.sort(x, 1), W), (0, 1)),
}


@pytest.mark.parametrize("name", list(GRADS))
@pytest.mark.parametrize("in_axes", [0, 1, 2, -1])
def test_vmap_of_grad(name, in_axes):
    f = GRADS[name]
    x = np.moveaxis(np.random.default_rng(1).normal(size=(5, 3, 4)), 0, in_axes)
    out = didax.vmap(didax.grad(f), in_axes)(x)
    assert_same(out, loop(didax.grad(f), (in_axes,), 5, x))


# --------------------------------------------------------------------------------------
# Staged: one equation of the primitive, no per-example loop


@pytest.mark.parametrize("f,name", [
    (lambda x: red.reduce_sum(x, (0, 2)), "reduce_sum"),
    (lambda x: red.argmax(x, 2, np.int32), "argmax"),
    (lambda x: red.cumprod(x, 1), "cumprod"),
    (lambda x: red.sort(x, 0), "sort"),
    (lambda x: red.top_k(x, 1), "top_k"),
])
@pytest.mark.parametrize("in_axes", [0, 2, -1])
def test_staged_once(f, name, in_axes):
    x = np.ones((4, 3, 4, 2))
    eqns = didax.make_jaxpr(didax.vmap(f, in_axes))(x).jaxpr.eqns
    assert [e.primitive.name for e in eqns].count(name) == 1
    assert all(e.primitive.name in (name, "transpose") for e in eqns)
