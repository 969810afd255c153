"""vmap of dot_general and conv_general_dilated: `vmap(f)` against a Python loop of `f` over
the batch, stacked, for hypothesis-drawn dimension numbers, convolution parameters (feature
and batch groups included) and in_axes (None, negative, every position); nested vmap; vmap
of grad against a loop of grads; and staged jaxprs holding exactly one dot_general / conv
equation (the batch is folded into the dimension numbers or groups, not looped over)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vmap_testing import assert_same, loop

import didax
from didax._src.config import enable_x64
from didax._src.lax.conv import conv_general_dilated
from didax._src.lax.dot import dot, dot_general
from didax._src.lax.elementwise import sin
from didax._src.lax.reduction import reduce_sum


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


# --------------------------------------------------------------------------------------
# Helpers: batched operands (the loop reference is in vmap_testing)


def batched(rng, size, shape, axis, dtype=np.float64):
    """Small integers of logical `shape`, with a batch of `size` at `axis` (None: unbatched)."""
    if axis is None:
        return rng.integers(-3, 4, shape).astype(dtype)
    return np.moveaxis(rng.integers(-3, 4, (size,) + tuple(shape)).astype(dtype), 0, axis)


@st.composite
def in_axes_pair(draw, lhs_ndim, rhs_ndim):
    """in_axes for two operands: any positions, negative ones included, at most one None."""
    batched = draw(st.sampled_from([(True, True), (True, False), (False, True)]))
    return tuple(draw(st.integers(-(n + 1), n)) if b else None
                 for n, b in zip((lhs_ndim, rhs_ndim), batched))


sizes = st.integers(1, 3)
seeds = st.integers(0, 2 ** 16)


def _primitives(f, *args):
    return [e.primitive.name for e in didax.make_jaxpr(f)(*args).jaxpr.eqns]


# --------------------------------------------------------------------------------------
# dot_general


@st.composite
def dot_cases(draw):
    """Random logical shapes and dimension numbers (any order of the dimensions)."""
    nb, nc, nl, nr = (draw(st.integers(0, 2)) for _ in range(4))
    dims = [draw(st.integers(0, 3)) for _ in range(nb + nc + nl + nr)]
    batch, contract = list(range(nb)), list(range(nb, nb + nc))
    lfree, rfree = list(range(nb + nc, nb + nc + nl)), list(range(nb + nc + nl, len(dims)))
    lhs_axes = draw(st.permutations(batch + contract + lfree))
    rhs_axes = draw(st.permutations(batch + contract + rfree))
    dn = ((tuple(lhs_axes.index(i) for i in contract), tuple(rhs_axes.index(i) for i in contract)),
          (tuple(lhs_axes.index(i) for i in batch), tuple(rhs_axes.index(i) for i in batch)))
    return tuple(dims[i] for i in lhs_axes), tuple(dims[i] for i in rhs_axes), dn


@settings(max_examples=80, deadline=None)
@given(case=dot_cases(), data=st.data(), size=sizes, seed=seeds,
       dtypes=st.sampled_from([(np.float64, None), (np.int32, None), (np.int32, np.float64),
                               (np.complex128, None)]))
def test_dot_general(case, data, size, seed, dtypes):
    lhs_shape, rhs_shape, dn = case
    dtype, preferred = dtypes
    axes = data.draw(in_axes_pair(len(lhs_shape), len(rhs_shape)))
    rng = np.random.default_rng(seed)
    x = batched(rng, size, lhs_shape, axes[0], dtype)
    y = batched(rng, size, rhs_shape, axes[1], dtype)

    def f(x, y):
        return dot_general(x, y, dn, preferred_element_type=preferred)

    assert_same(didax.vmap(f, axes)(x, y), loop(f, axes, size, x, y))
    assert _primitives(didax.vmap(f, axes), x, y).count("dot_general") == 1


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 0), (2, None), (None, 0), (None, -1),
                                     (-1, -2)])
def test_batched_matmul_is_one_dot_general(in_axes):
    rng = np.random.default_rng(0)
    x = batched(rng, 5, (3, 4), in_axes[0])
    y = batched(rng, 5, (4, 2), in_axes[1])
    f = didax.vmap(dot, in_axes)
    names = _primitives(f, x, y)
    assert names.count("dot_general") == 1
    assert set(names) <= {"dot_general", "transpose"}  # at most the final move to axis 0
    assert_same(f(x, y), loop(dot, in_axes, 5, x, y))


def test_dot_general_batch_dimension_numbers():
    """The folded dimension numbers JAX 0.10.2 stages for these vmaps (from its jaxprs)."""
    x, y = np.ones((3, 5, 4)), np.ones((4, 5, 2))
    cases = [((1, 1), (((2,), (0,)), ((1,), (1,)))),   # both: a new (first) dot batch dim
             ((1, None), (((2,), (0,)), ((), ()))),     # lhs: a free dimension
             ((None, 1), (((1,), (0,)), ((), ())))]     # rhs: a free dimension
    for in_axes, dn in cases:
        args = (x if in_axes[0] is not None else x[:, 0], y if in_axes[1] is not None else y[:, 0])
        eqns = didax.make_jaxpr(didax.vmap(dot, in_axes))(*args).jaxpr.eqns
        assert [e.primitive.name for e in eqns] == (
            ["dot_general"] if None not in in_axes else ["dot_general", "transpose"])
        assert eqns[0].params["dimension_numbers"] == dn


@settings(max_examples=20, deadline=None)
@given(data=st.data(), seed=seeds)
def test_dot_nested_vmap(data, seed):
    """Two vmapped dimensions: vmap(vmap(matmul)) against a double loop."""
    rng = np.random.default_rng(seed)
    xi, yi = data.draw(in_axes_pair(2, 2))
    xo, yo = data.draw(in_axes_pair(2 + (xi is not None), 2 + (yi is not None)))

    def operand(shape, outer, inner):
        x = rng.normal(size=(2, 3) + shape)  # outer batch, inner batch, logical
        if inner is None:
            x = x[:, 0]
        else:
            x = np.moveaxis(x, 1, 1 + inner % (len(shape) + 1))
        return x[0] if outer is None else np.moveaxis(x, 0, outer)

    x, y = operand((3, 4), xo, xi), operand((4, 2), yo, yi)
    inner_size = 3
    out = didax.vmap(didax.vmap(dot, (xi, yi)), (xo, yo))(x, y)
    expected = loop(lambda a, b: loop(dot, (xi, yi), inner_size, a, b), (xo, yo), 2, x, y)
    assert_same(out, expected)


def test_dot_zero_size_batch():
    x, y = np.ones((0, 3, 4)), np.ones((4, 0, 2))
    assert didax.vmap(dot, (0, 1))(x, y).shape == (0, 3, 2)
    assert didax.vmap(dot, (0, None))(x, np.ones((4, 2))).shape == (0, 3, 2)
    assert didax.vmap(dot, (None, 1))(np.ones((3, 4)), y).shape == (0, 3, 2)


# --------------------------------------------------------------------------------------
# conv_general_dilated


@st.composite
def conv_cases(draw):
    """Logical shapes and parameters of a valid convolution, in a random layout."""
    nsp = draw(st.integers(1, 2))
    fgc, bgc = draw(st.sampled_from([(1, 1), (2, 1), (3, 1), (1, 2), (1, 3)]))
    n = bgc * draw(st.integers(1, 2))
    cin = draw(st.integers(1, 2))
    out_features = fgc * bgc * draw(st.integers(1, 2))
    window = [draw(st.integers(1, 3)) for _ in range(nsp)]
    spatial = [draw(st.integers(1, 5)) for _ in range(nsp)]
    strides = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    lhs_dilation = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    rhs_dilation = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    padding = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(nsp))
    letters = "HW"[:nsp]
    lhs_spec = "".join(draw(st.permutations("NC" + letters)))
    rhs_spec = "".join(draw(st.permutations("OI" + letters)))
    out_spec = "".join(draw(st.permutations("NC" + letters)))
    sizes = dict(zip(letters, spatial), N=n, C=fgc * cin)
    lhs_shape = tuple(sizes[c] for c in lhs_spec)
    ksizes = dict(zip(letters, window), O=out_features, I=cin)
    rhs_shape = tuple(ksizes[c] for c in rhs_spec)

    def f(x, w):
        return conv_general_dilated(x, w, strides, padding, lhs_dilation, rhs_dilation,
                                    (lhs_spec, rhs_spec, out_spec), feature_group_count=fgc,
                                    batch_group_count=bgc)

    return lhs_shape, rhs_shape, f


@settings(max_examples=80, deadline=None)
@given(case=conv_cases(), data=st.data(), size=sizes, seed=seeds)
def test_conv(case, data, size, seed):
    lhs_shape, rhs_shape, f = case
    axes = data.draw(in_axes_pair(len(lhs_shape), len(rhs_shape)))
    rng = np.random.default_rng(seed)
    x = batched(rng, size, lhs_shape, axes[0])
    w = batched(rng, size, rhs_shape, axes[1])
    assert_same(didax.vmap(f, axes)(x, w), loop(f, axes, size, x, w))
    names = _primitives(didax.vmap(f, axes), x, w)
    assert names.count("conv_general_dilated") == 1
    assert set(names) <= {"conv_general_dilated", "reshape", "transpose"}


@pytest.mark.parametrize("in_axes,groups,names,group_counts,in_shapes", [
    ((0, 0), (1, 1), ["reshape", "reshape", "conv_general_dilated", "reshape", "transpose"],
     (3, 1), [(2, 6, 5), (6, 2, 3)]),
    ((0, 0), (2, 1), ["reshape", "reshape", "conv_general_dilated", "reshape", "transpose"],
     (6, 1), [(2, 12, 5), (12, 2, 3)]),
    ((0, 0), (1, 2), ["reshape", "reshape", "conv_general_dilated", "reshape", "transpose"],
     (1, 6), [(12, 2, 5), (12, 2, 3)]),
    ((0, None), (1, 1), ["reshape", "conv_general_dilated", "reshape"],
     (1, 1), [(6, 2, 5), (2, 2, 3)]),
    ((0, None), (2, 1), ["reshape", "conv_general_dilated", "reshape"],
     (2, 1), [(6, 4, 5), (4, 2, 3)]),
    ((0, None), (1, 2), ["reshape"] * 3 + ["conv_general_dilated", "reshape"],
     (1, 2), [(12, 2, 5), (4, 2, 3)]),
    ((None, 0), (1, 1), ["reshape", "conv_general_dilated", "reshape", "transpose"],
     (1, 1), [(2, 2, 5), (6, 2, 3)]),
    ((None, 0), (2, 1), ["reshape"] * 3 + ["conv_general_dilated"] + ["reshape"] * 3
     + ["transpose"], (2, 1), [(2, 4, 5), (12, 2, 3)]),
    ((None, 0), (1, 2), ["reshape"] * 3 + ["conv_general_dilated"] + ["reshape"] * 3
     + ["transpose"], (1, 2), [(4, 2, 5), (12, 2, 3)]),
])
def test_conv_staged_like_jax(in_axes, groups, names, group_counts, in_shapes):
    """The equations JAX 0.10.2 stages for these vmaps (taken from its jaxprs)."""
    fgc, bgc = groups

    def f(x, w):
        return conv_general_dilated(x, w, (1,), [(0, 0)], dimension_numbers=("NCH", "OIH", "NCH"),
                                    feature_group_count=fgc, batch_group_count=bgc)

    x, w = np.ones((2 * bgc, 2 * fgc, 5)), np.ones((2 * fgc * bgc, 2, 3))
    x, w = (a if ax is None else np.stack([a] * 3) for a, ax in zip((x, w), in_axes))
    eqns = didax.make_jaxpr(didax.vmap(f, in_axes))(x, w).jaxpr.eqns
    assert [e.primitive.name for e in eqns] == names
    conv, = [e for e in eqns if e.primitive.name == "conv_general_dilated"]
    assert (conv.params["feature_group_count"], conv.params["batch_group_count"]) == group_counts
    assert [tuple(v.aval.shape) for v in conv.invars] == in_shapes


@settings(max_examples=15, deadline=None)
@given(case=conv_cases(), data=st.data(), seed=seeds)
def test_conv_nested_vmap(case, data, seed):
    lhs_shape, rhs_shape, f = case
    rng = np.random.default_rng(seed)
    inner = data.draw(in_axes_pair(len(lhs_shape), len(rhs_shape)))
    outer = data.draw(in_axes_pair(len(lhs_shape) + (inner[0] is not None),
                                   len(rhs_shape) + (inner[1] is not None)))

    def operand(shape, o, i):
        x = batched(rng, 3, shape, i)
        return x if o is None else np.moveaxis(np.stack([x, -x]), 0, o)

    x, w = operand(lhs_shape, outer[0], inner[0]), operand(rhs_shape, outer[1], inner[1])
    out = didax.vmap(didax.vmap(f, inner), outer)(x, w)
    assert_same(out, loop(lambda a, b: loop(f, inner, 3, a, b), outer, 2, x, w))


@settings(max_examples=10, deadline=None)
@given(case=conv_cases(), data=st.data())
def test_conv_zero_size_batch(case, data):
    lhs_shape, rhs_shape, f = case
    axes = data.draw(in_axes_pair(len(lhs_shape), len(rhs_shape)))
    rng = np.random.default_rng(0)
    x, w = batched(rng, 0, lhs_shape, axes[0]), batched(rng, 0, rhs_shape, axes[1])
    example = f(np.ones(lhs_shape), np.ones(rhs_shape))
    out = didax.vmap(f, axes)(x, w)
    assert (out.shape, out.dtype) == ((0,) + example.shape, example.dtype)


# --------------------------------------------------------------------------------------
# vmap of grad


def _dot_loss(x, y):
    return reduce_sum(sin(dot_general(x, y, (((2,), (0,)), ((0,), (1,))))), (0, 1, 2))


def _conv_loss(fgc, bgc):
    def loss(x, w):
        out = conv_general_dilated(x, w, (2, 1), [(1, 0), (0, 1)], (1, 2), (2, 1),
                                   ("NHWC", "OIHW", "CNHW"), feature_group_count=fgc,
                                   batch_group_count=bgc)
        return reduce_sum(sin(out), (0, 1, 2, 3))

    return loss


@pytest.mark.parametrize("in_axes", [(0, 0), (3, None), (None, -1), (-2, 1)])
def test_dot_vmap_of_grad(in_axes):
    rng = np.random.default_rng(2)
    x = batched(rng, 4, (2, 3, 5), in_axes[0]) / 3
    y = batched(rng, 4, (5, 2, 3), in_axes[1]) / 3
    grad = didax.grad(_dot_loss, argnums=(0, 1))
    assert_same(didax.vmap(grad, in_axes)(x, y), loop(grad, in_axes, 4, x, y))


@pytest.mark.parametrize("groups", [(1, 1), (2, 1), (1, 2)])
@pytest.mark.parametrize("in_axes", [(0, 0), (4, None), (None, -1), (-3, 2)])
def test_conv_vmap_of_grad(groups, in_axes):
    fgc, bgc = groups
    rng = np.random.default_rng(3)
    x = batched(rng, 3, (2 * bgc, 5, 4, 2 * fgc), in_axes[0]) / 3
    w = batched(rng, 3, (2 * fgc * bgc, 2, 2, 3), in_axes[1]) / 3
    grad = didax.grad(_conv_loss(fgc, bgc), argnums=(0, 1))
    assert_same(didax.vmap(grad, in_axes)(x, w), loop(grad, in_axes, 3, x, w))
