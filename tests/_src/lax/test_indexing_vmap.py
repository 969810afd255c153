"""Batching rules of the indexing primitives, tested as JAX does: `vmap(f, in_axes)` equals a
Python loop of `f` over the examples, stacked, for hypothesis-drawn shapes, dimension
numbers, modes, out-of-bounds indices and in_axes (None, positive and negative); the staged
program holds one gather/scatter, not one per example. Nested vmap and vmap of grad too.
Dimension numbers marked "JAX 0.10.2" were read from JAX's jaxprs.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from indexing_testing import draw_gather_dims

import didax
from didax._src.config import enable_x64
from didax._src.lax import indexing as lax
from didax._src.lax.elementwise import mul, sin
from didax._src.lax.indexing import (
    GatherDimensionNumbers as GDN,
)
from didax._src.lax.indexing import (
    GatherScatterMode as Mode,
)
from didax._src.lax.indexing import (
    ScatterDimensionNumbers as SDN,
)
from didax._src.lax.reduction import reduce_sum

MODES = ("clip", "fill", "promise_in_bounds")
SCATTERS = ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")
INDEXING = {"dynamic_slice", "dynamic_update_slice", "gather", "scatter", "scatter-add",
            "scatter-mul", "scatter-min", "scatter-max"}


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


# --------------------------------------------------------------------------------------
# Batched arguments and the loop reference


def draw_axes(draw, ranks):
    """An in_axes entry per argument of the given (per-example) ranks: None or an axis,
    drawn positive or negative; at least one argument is batched."""
    batched = [draw(st.booleans()) for _ in ranks]
    if not any(batched):
        batched[draw(st.integers(0, len(ranks) - 1))] = True
    axes = []
    for r, b in zip(ranks, batched):
        axis = draw(st.integers(0, r)) if b else None
        if axis is not None and draw(st.booleans()):
            axis -= r + 1  # the same axis counted from the end
        axes.append(axis)
    return axes


def build(makers, axes, size):
    """The arguments: a fresh example from each maker per batch element, stacked along the
    argument's axis (one example for an unbatched argument)."""
    def stacked(m, a):  # a batch of none: stack one example, keep none of it
        batch = np.stack([m() for _ in range(max(size, 1))], axis=a)
        return np.take(batch, np.arange(size), axis=a)

    return [m() if a is None else stacked(m, a) for m, a in zip(makers, axes)]


def loop(f, in_axes, args):
    """`f` applied to each example in turn, the results stacked (tuples elementwise)."""
    size = next(np.shape(x)[a] for x, a in zip(args, in_axes) if a is not None)
    outs = [f(*[x if a is None else np.take(x, b, axis=a) for x, a in zip(args, in_axes)])
            for b in range(size)]
    if outs and isinstance(outs[0], tuple):
        return tuple(np.stack([np.asarray(o[k]) for o in outs]) for k in range(len(outs[0])))
    return np.stack([np.asarray(o) for o in outs])


def assert_equal(out, expected):
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(out), expected)


def indexing_eqns(f, in_axes, args):
    jaxpr = didax.make_jaxpr(didax.vmap(f, in_axes))(*args)
    return [e for e in jaxpr.eqns if e.primitive.name in INDEXING]


def check_vmap(f, makers, ranks, draw, prim_name):
    """vmap equals the loop, and stages a single indexing equation, named
    `prim_name(in_axes)`."""
    axes = draw_axes(draw, ranks)
    size = draw(st.integers(1, 3))
    args = build(makers, axes, size)
    assert_equal(didax.vmap(f, axes)(*args), loop(f, axes, args))
    eqns = indexing_eqns(f, axes, args)
    assert [e.primitive.name for e in eqns] == [prim_name(axes)]


def check_nested_vmap(f, makers, ranks, draw):
    """Two levels of vmap equal two nested loops."""
    inner = draw_axes(draw, ranks)
    inner_size, outer_size = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    outer_makers = [(lambda m=m, a=a: build([m], [a], inner_size)[0]) for m, a in
                    zip(makers, inner)]
    outer = draw_axes(draw, [r + (a is not None) for r, a in zip(ranks, inner)])
    args = build(outer_makers, outer, outer_size)
    expected = loop(lambda *xs: loop(f, inner, xs), outer, args)
    assert_equal(didax.vmap(didax.vmap(f, inner), outer)(*args), expected)


def check_empty_batch(f, makers, ranks, draw):
    """A batch of no examples has the example's shape behind a leading 0."""
    axes = draw_axes(draw, ranks)
    out = didax.vmap(f, axes)(*build(makers, axes, 0))
    example = np.asarray(f(*[m() for m in makers]))
    assert out.shape == (0,) + example.shape and out.dtype == example.dtype


# --------------------------------------------------------------------------------------
# dynamic_slice and dynamic_update_slice


@st.composite
def slice_specs(draw):
    """An operand shape, slice sizes, an index dtype and a source of random starts (often
    out of bounds, negative ones counting from the end)."""
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    sizes = tuple(draw(st.integers(0, n)) for n in shape)
    dtype = draw(st.sampled_from([np.int32, np.int8, np.int64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return shape, sizes, dtype, rng


def operand_maker(rng, shape, dtype=np.float64):
    return lambda: rng.integers(-50, 50, shape).astype(dtype)


def start_makers(rng, shape, dtype):
    return [(lambda: rng.integers(-6, 7).astype(dtype)) for _ in shape]


def dynamic_slice_case(spec):
    shape, sizes, dtype, rng = spec
    makers = [operand_maker(rng, shape)] + start_makers(rng, shape, dtype)
    ranks = [len(shape)] + [0] * len(shape)

    def f(x, *starts):
        return lax.dynamic_slice(x, starts, sizes)

    return f, makers, ranks


def dynamic_update_slice_case(spec):
    shape, sizes, dtype, rng = spec
    makers = [operand_maker(rng, shape), operand_maker(rng, sizes)]
    makers += start_makers(rng, shape, dtype)
    ranks = [len(shape)] * 2 + [0] * len(shape)

    def f(x, u, *starts):
        return lax.dynamic_update_slice(x, u, starts)

    return f, makers, ranks


def unless_indices_batched(n_arrays, same, other):
    return lambda axes: other if any(a is not None for a in axes[n_arrays:]) else same


@settings(max_examples=60, deadline=None)
@given(slice_specs(), st.data())
def test_dynamic_slice_vmap(spec, data):
    f, makers, ranks = dynamic_slice_case(spec)
    check_vmap(f, makers, ranks, data.draw,
               unless_indices_batched(1, "dynamic_slice", "gather"))


@settings(max_examples=60, deadline=None)
@given(slice_specs(), st.data())
def test_dynamic_update_slice_vmap(spec, data):
    f, makers, ranks = dynamic_update_slice_case(spec)
    check_vmap(f, makers, ranks, data.draw,
               unless_indices_batched(2, "dynamic_update_slice", "scatter"))


@settings(max_examples=25, deadline=None)
@given(slice_specs(), st.sampled_from([dynamic_slice_case, dynamic_update_slice_case]),
       st.data())
def test_dynamic_slices_nested_and_empty_vmap(spec, case, data):
    f, makers, ranks = case(spec)
    check_nested_vmap(f, makers, ranks, data.draw)
    check_empty_batch(f, makers, ranks, data.draw)


def test_dynamic_slice_batched_starts_clamp_per_example():
    x = np.arange(12.0).reshape(2, 6)
    starts = np.array([-1, 5], np.int32)  # -1 counts from the end; both clamp to 3
    out = didax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (3,)))(x, starts)
    np.testing.assert_array_equal(np.asarray(out), [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]])
    u = np.array([[-1.0, -2.0], [-3.0, -4.0]])
    out = didax.vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)))(x, u, starts)
    np.testing.assert_array_equal(np.asarray(out), [[0, 1, 2, 3, -1, -2], [6, 7, 8, 9, -3, -4]])


def test_dynamic_slice_batched_dnums_match_jax():
    x, i = np.zeros((5, 3, 4)), np.zeros(5, np.int32)
    f = lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2))  # noqa: E731
    (eqn,) = indexing_eqns(f, (0, 0), (x, i))
    # JAX 0.10.2
    assert eqn.params["dimension_numbers"] == GDN((1, 2), (), (1, 2), (0,), (0,))
    assert eqn.params["slice_sizes"] == (1, 2, 2)
    assert eqn.params["mode"] is Mode.CLIP
    assert eqn.params["unique_indices"] and eqn.params["indices_are_sorted"]
    (eqn,) = indexing_eqns(f, (None, 0), (x[0], i))
    assert eqn.params["dimension_numbers"] == GDN((1, 2), (), (0, 1))  # JAX 0.10.2
    assert not eqn.params["unique_indices"] and not eqn.params["indices_are_sorted"]
    (eqn,) = indexing_eqns(f, (-1, None), (np.moveaxis(x, 0, -1), np.int32(0)))
    assert eqn.primitive.name == "dynamic_slice" and eqn.params["slice_sizes"] == (2, 2, 5)
    g = lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1))  # noqa: E731
    (eqn,) = indexing_eqns(g, (None, 0, 0), (x[0], np.zeros((5, 2, 2)), i))
    # JAX 0.10.2
    assert eqn.params["dimension_numbers"] == SDN((1, 2), (), (1, 2), (0,), (0,))
    assert eqn.params["mode"] is Mode.CLIP


# --------------------------------------------------------------------------------------
# gather and the scatters


@st.composite
def gather_specs(draw):
    """A valid gather of one example: operand and indices shapes, dimension numbers with
    batching dims, slice sizes, index dtype, mode, fill value, and a random source."""
    shape, dn, slice_sizes, batch_shape, n_indexed = draw_gather_dims(draw, 0)
    index_dtype = draw(st.sampled_from([np.int32, np.int8, np.uint8]))
    mode = draw(st.sampled_from(MODES))
    fill = draw(st.sampled_from([None, -7.0])) if mode == "fill" else None
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    indices_shape = tuple(batch_shape) + (n_indexed,)
    return shape, indices_shape, dn, slice_sizes, index_dtype, mode, fill, rng


def index_maker(rng, operand_shape, indices_shape, dtype):
    low = 0 if dtype == np.uint8 else -3
    high = max(operand_shape, default=1) + 3
    return lambda: rng.integers(low, high, indices_shape).astype(dtype)


def gather_case(spec, operand_dtype=np.float64):
    shape, indices_shape, dn, sizes, index_dtype, mode, fill, rng = spec
    makers = [operand_maker(rng, shape, operand_dtype),
              index_maker(rng, shape, indices_shape, index_dtype)]

    def f(x, i):
        return lax.gather(x, i, dn, sizes, mode=mode, fill_value=fill)

    return f, makers, [len(shape), len(indices_shape)]


def scatter_case(spec, kind):
    shape, indices_shape, dn, sizes, index_dtype, mode, _, rng = spec
    updates_shape = np.shape(lax.gather(np.zeros(shape), np.zeros(indices_shape, np.int32),
                                        dn, sizes))
    sdn = SDN(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
              dn.operand_batching_dims, dn.start_indices_batching_dims)
    # Small integers: sums and products are exact whatever the order they are taken in.
    makers = [operand_maker(rng, shape), index_maker(rng, shape, indices_shape, index_dtype),
              lambda: rng.integers(-3, 4, updates_shape).astype(np.float64)]

    def f(x, i, u):
        return getattr(lax, kind)(x, i, u, sdn, mode=mode)

    return f, makers, [len(shape), len(indices_shape), len(updates_shape)]


@settings(max_examples=80, deadline=None)
@given(gather_specs(), st.sampled_from([np.float64, np.int32]), st.data())
def test_gather_vmap(spec, dtype, data):
    f, makers, ranks = gather_case(spec, dtype)
    check_vmap(f, makers, ranks, data.draw, lambda axes: "gather")


@settings(max_examples=80, deadline=None)
@given(gather_specs(), st.sampled_from(SCATTERS), st.data())
def test_scatter_vmap(spec, kind, data):
    f, makers, ranks = scatter_case(spec, kind)
    check_vmap(f, makers, ranks, data.draw, lambda axes: kind.replace("_", "-"))


@settings(max_examples=30, deadline=None)
@given(gather_specs(), st.sampled_from(("gather",) + SCATTERS), st.data())
def test_gather_scatter_nested_and_empty_vmap(spec, kind, data):
    f, makers, ranks = gather_case(spec) if kind == "gather" else scatter_case(spec, kind)
    check_nested_vmap(f, makers, ranks, data.draw)
    check_empty_batch(f, makers, ranks, data.draw)


def test_gather_fill_and_scatter_drop_per_example():
    x = np.arange(6.0).reshape(2, 3)
    idx = np.array([[[1], [3]], [[-1], [2]]])
    dn = GDN((), (0,), (0,))
    out = didax.vmap(lambda x, i: lax.gather(x, i, dn, (1,), mode="fill", fill_value=-1.0))(
        x, idx)
    np.testing.assert_array_equal(np.asarray(out), [[1.0, -1.0], [-1.0, 5.0]])
    u = np.array([10.0, 20.0])
    out = didax.vmap(lambda x, i: lax.scatter_add(x, i, u, SDN((), (0,), (0,)),
                                                  mode="drop"))(x, idx)
    np.testing.assert_array_equal(np.asarray(out), [[0.0, 11.0, 2.0], [3.0, 4.0, 25.0]])


def test_gather_scatter_batched_dnums_match_jax():
    x, i, u = np.zeros((5, 3, 4)), np.zeros((5, 2, 1), np.int32), np.zeros((5, 2, 4))
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    g = lambda x, i: lax.gather(x, i, dn, (1, 4), mode="fill", fill_value=-1.0)  # noqa: E731
    # JAX 0.10.2, for in_axes (1, None), (None, 2), (2, -3)
    expected = [(GDN((0, 2), (1,), (1,)), (5, 1, 4)), (GDN((2,), (0,), (0,)), (1, 4)),
                (GDN((2,), (1,), (1,), (0,), (0,)), (1, 1, 4))]
    for axes, (dnums, sizes) in zip([(1, None), (None, 2), (2, -3)], expected):
        args = [a if ax is None else np.moveaxis(a, 0, ax)
                for a, ax in zip((x[0] if axes[0] is None else x,
                                  i[0] if axes[1] is None else i), axes)]
        (eqn,) = indexing_eqns(g, axes, args)
        assert eqn.params["dimension_numbers"] == dnums
        assert eqn.params["slice_sizes"] == sizes
        assert eqn.params["mode"] is Mode.FILL_OR_DROP and eqn.params["fill_value"] == -1.0
    sdn = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
              scatter_dims_to_operand_dims=(0,))
    s = lambda x, i, u: lax.scatter_add(x, i, u, sdn, mode="clip")  # noqa: E731
    window, batching = SDN((0, 2), (1,), (1,)), SDN((2,), (1,), (1,), (0,), (0,))
    # JAX 0.10.2
    for axes, dnums in [((0, None, None), window), ((None, 0, None), batching),
                        ((None, None, 0), window), ((0, 0, 0), batching)]:
        args = [a if ax is not None else a[0] for a, ax in zip((x, i, u), axes)]
        (eqn,) = indexing_eqns(s, axes, args)
        assert eqn.params["dimension_numbers"] == dnums and eqn.params["mode"] is Mode.CLIP


# --------------------------------------------------------------------------------------
# vmap of grad equals a loop of grads


def weighted_sum(y, w):
    return reduce_sum(mul(sin(y), w), tuple(range(np.ndim(w))))


def weights(f, makers, rng):
    return rng.standard_normal(np.shape(f(*[m() for m in makers])))


def check_vmap_grad(f, makers, ranks, draw, argnums=0):
    axes = draw_axes(draw, ranks)
    args = build(makers, axes, draw(st.integers(1, 3)))
    df = didax.grad(f, argnums)
    out, expected = didax.vmap(df, axes)(*args), loop(df, axes, args)
    for o, e in zip(out, expected) if isinstance(out, tuple) else [(out, expected)]:
        assert o.shape == e.shape
        np.testing.assert_allclose(np.asarray(o), e, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(slice_specs(), st.data())
def test_vmap_of_grad_dynamic_slice(spec, data):
    g, makers, ranks = dynamic_slice_case(spec)
    w = weights(g, makers, spec[3])
    check_vmap_grad(lambda x, *s: weighted_sum(g(x, *s), w), makers, ranks, data.draw)


@settings(max_examples=30, deadline=None)
@given(gather_specs(), st.data())
def test_vmap_of_grad_gather(spec, data):
    spec = spec[:6] + (0.5 if spec[5] == "fill" else None,) + spec[7:]  # finite fill
    g, makers, ranks = gather_case(spec)
    w = weights(g, makers, spec[7])
    check_vmap_grad(lambda x, i: weighted_sum(g(x, i), w), makers, ranks, data.draw)


@settings(max_examples=30, deadline=None)
@given(gather_specs(), st.data())
def test_vmap_of_grad_scatter_add(spec, data):
    g, makers, ranks = scatter_case(spec, "scatter_add")
    w = weights(g, makers, spec[7])
    check_vmap_grad(lambda x, i, u: weighted_sum(g(x, i, u), w), makers, ranks, data.draw,
                    argnums=(0, 2))
