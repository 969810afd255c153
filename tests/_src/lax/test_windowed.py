"""reduce_window and the primitives that differentiate it: values against one-element-at-a-time
references of XLA's semantics (order of visits, ties, NaNs, padding and dilation holes) over
hypothesis-drawn geometries; values, tangents, gradients and jaxprs recorded from JAX 0.10.2
(kept as literals); derivatives of max/min/average pooling and of a small CNN to second order
in both modes against finite differences; adjoint identities; vmap against a loop; jit against
eager evaluation; errors."""
import itertools
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vmap_testing import assert_same, loop

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


# --------------------------------------------------------------------------------------
# References: one window element at a time


def canonical(shape, window, strides=None, padding="VALID", base=None, wdil=None):
    n = len(shape)
    strides, base, wdil = (v or (1,) * n for v in (strides, base, wdil))
    if isinstance(padding, str):
        extent = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
        padding = lax.padtype_to_pads(shape, extent, strides, padding)
    return dict(window_dimensions=tuple(window), window_strides=tuple(strides),
                padding=tuple(map(tuple, padding)), base_dilation=tuple(base),
                window_dilation=tuple(wdil))


def out_shape(shape, g):
    out = []
    for n, w, s, (lo, hi), b, d in zip(shape, g["window_dimensions"], g["window_strides"],
                                       g["padding"], g["base_dilation"],
                                       g["window_dilation"]):
        size = lo + hi + ((n - 1) * b + 1 if n else 0)
        extent = (w - 1) * d + 1
        out.append((size - extent) // s + 1 if size >= extent else 0)
    return tuple(out)


def window_positions(shape, index, g):
    """The dilated-and-padded positions of the window at output `index`, in visiting order,
    each with the operand index there (None for padding and dilation holes)."""
    for k in itertools.product(*map(range, g["window_dimensions"])):
        position, source = [], []
        for o, kk, s, d, (lo, _), b, n in zip(index, k, g["window_strides"],
                                              g["window_dilation"], g["padding"],
                                              g["base_dilation"], shape):
            q = o * s + kk * d - lo  # position in the dilated, unpadded operand
            position.append(q)
            source.append(q // b if 0 <= q and q % b == 0 and q // b < n else None)
        yield tuple(position), (None if None in source else tuple(source))


def reference_reduce(x, init, combine, g):
    """XLA's ReduceWindow on CPU: init combined with the window's operand elements in order
    (padding and holes skipped)."""
    out = np.empty(out_shape(x.shape, g), x.dtype)
    for index in np.ndindex(*out.shape):
        acc = init
        for _, src in window_positions(x.shape, index, g):
            if src is not None:
                acc = combine(acc, x[src])
        out[index] = acc
    return out


def _keeps(greater, acc, value):
    return acc >= value if greater else acc <= value


def reference_gather(t, x, g, greater):
    """select_and_gather_add: the tangent of the element chosen by visiting the window from
    (identity, 0) and taking each element unless the choice so far is >= (<=) it."""
    out = np.zeros(out_shape(x.shape, g), t.dtype)
    for index in np.ndindex(*out.shape):
        key, value = (-np.inf if greater else np.inf), 0.0
        for _, src in window_positions(x.shape, index, g):
            if src is not None and not _keeps(greater, key, x[src]):
                key, value = x[src], t[src]
        out[index] = value
    return out


def reference_scatter(ct, x, g, greater):
    """The transpose JAX computes for it: over the operand with identity in padding and
    dilation holes, the first element of a window is chosen, then replaced as above; each
    cotangent is added where its window's choice is (dropped in padding and holes)."""
    identity = -np.inf if greater else np.inf
    out = np.zeros(x.shape, ct.dtype)
    for index in np.ndindex(*ct.shape):
        chosen = None
        for _position, src in window_positions(x.shape, index, g):
            value = identity if src is None else x[src]
            if chosen is None or not _keeps(greater, chosen[0], value):
                chosen = (value, src)
        if chosen[1] is not None:
            out[chosen[1]] += ct[index]
    return out


# --------------------------------------------------------------------------------------
# Drawn geometries and operands


@st.composite
def geometries(draw, max_ndim=3):
    ndim = draw(st.integers(1, max_ndim))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))

    def per_dim(lo, hi):
        return tuple(draw(st.lists(st.integers(lo, hi), min_size=ndim, max_size=ndim)))

    pairs = st.lists(st.tuples(st.integers(-1, 2), st.integers(-1, 2)), min_size=ndim,
                     max_size=ndim).map(tuple)
    padding = draw(st.one_of(st.sampled_from(["VALID", "SAME", "SAME_LOWER"]), pairs))
    return shape, canonical(shape, per_dim(1, 3), per_dim(1, 3), padding, per_dim(1, 2),
                            per_dim(1, 2))


def tied_values(rng, shape, specials=False):
    """Small integers as floats (many ties); some NaNs and infinities with `specials`."""
    x = rng.integers(-2, 3, shape).astype(np.float64)
    if specials and x.size:
        where = rng.random(shape) < 0.15
        x[where] = rng.choice([np.nan, np.inf, -np.inf], int(where.sum()))
    return x


def apply(x, init, computation, g):
    return lax.reduce_window(x, init, computation, **g)


seeds = st.integers(0, 2 ** 16)


# --------------------------------------------------------------------------------------
# Values against the references


@pytest.mark.parametrize("name", ["sum", "max", "min"])
@settings(max_examples=40, deadline=None)
@given(geometry=geometries(), seed=seeds, dtype=st.sampled_from([np.float64, np.int32]))
def test_monoids_match_reference(name, geometry, seed, dtype):
    shape, g = geometry
    rng = np.random.default_rng(seed)
    x = tied_values(rng, shape, specials=dtype == np.float64).astype(dtype)
    if dtype == np.int32:
        identity = {"sum": 0, "max": np.iinfo(dtype).min, "min": np.iinfo(dtype).max}[name]
    else:
        identity = {"sum": 0.0, "max": -np.inf, "min": np.inf}[name]
    computation = {"sum": lax.add, "max": lax.max, "min": lax.min}[name]
    combine = {"sum": operator.add, "max": np.maximum, "min": np.minimum}[name]
    out = apply(x, np.asarray(identity, dtype), computation, g)
    prims = {e.primitive.name for e in didax.make_jaxpr(
        lambda x: apply(x, np.asarray(identity, dtype), computation, g))(x).jaxpr.eqns}
    assert prims == {f"reduce_window_{name}"}
    want = reference_reduce(x, np.asarray(identity, dtype), combine, g)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), want)


@settings(max_examples=30, deadline=None)
@given(geometry=geometries(), seed=seeds, greater=st.booleans())
def test_tangents_and_cotangents_follow_xla_selection(geometry, seed, greater):
    """Ties, NaNs and infinities included: the JVP gathers and the VJP scatters exactly
    where XLA's selection goes."""
    shape, g = geometry
    rng = np.random.default_rng(seed)
    x, t = tied_values(rng, shape, specials=True), rng.normal(size=shape)
    init, computation = (-np.inf, lax.max) if greater else (np.inf, lax.min)

    def f(x):
        return apply(x, init, computation, g)

    _, tangent = didax.jvp(f, (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent), reference_gather(t, x, g, greater))
    ct = rng.normal(size=out_shape(shape, g))
    (grad,) = didax.vjp(f, x)[1](ct)
    np.testing.assert_allclose(np.asarray(grad), reference_scatter(ct, x, g, greater),
                               rtol=1e-14, atol=1e-14)


def test_general_computations_fold_in_order():
    """Not a monoid (another computation, or an initial value that is not the identity):
    padding is skipped and the initial value enters once, as in XLA."""
    x = np.arange(1.0, 6.0)
    g = canonical((5,), (2,), padding=((1, 1),))
    np.testing.assert_array_equal(apply(x, 1.0, lax.mul, g), [1, 2, 6, 12, 20, 5])  # JAX's
    np.testing.assert_array_equal(apply(x, 1.0, lax.add, g), [2, 4, 6, 8, 10, 6])
    np.testing.assert_array_equal(apply(x, 0.0, jnp.add, g), [1, 3, 5, 7, 9, 5])
    rng = np.random.default_rng(0)
    y = rng.normal(size=(4, 5))
    g2 = canonical((4, 5), (2, 3), (1, 2), "SAME", (2, 1), (1, 2))
    np.testing.assert_allclose(apply(y, 2.0, lax.mul, g2),
                               reference_reduce(y, 2.0, operator.mul, g2), rtol=1e-14)
    no_identity = np.asarray(apply(y, 0.5, lax.max, g2))
    np.testing.assert_array_equal(no_identity, reference_reduce(y, 0.5, np.maximum, g2))


def test_pytree_operands_reduce_together():
    """A variadic reduction: the value and index of each window's maximum."""
    x = np.array([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0], [2.0, 6.0, 5.0]])
    idx = np.arange(9).reshape(3, 3)

    def argmax_pair(a, b):
        take_b = lax.gt(b[0], a[0])
        return lax.select(take_b, b[0], a[0]), lax.select(take_b, b[1], a[1])

    vals, where = lax.reduce_window((x, idx), (-np.inf, np.int64(-1)), argmax_pair, (2, 2),
                                    (1, 1), "VALID")
    np.testing.assert_array_equal(vals, [[5, 9], [6, 9]])
    np.testing.assert_array_equal(where, [[4, 5], [7, 5]])


# --------------------------------------------------------------------------------------
# Literals recorded from JAX 0.10.2

X = np.array([[0., 1., 1., 3.], [2., -1., 3., 3.], [np.nan, 0., 5., 4.]])
T = np.arange(12.).reshape(3, 4) / 4
NAN = np.nan
JAX_CASES = [
    (dict(window_dimensions=(2, 2), window_strides=(1, 1), padding="VALID"), {
        "max": ([[2, 3, 3], [NAN, 5, 5]], [[1, 1.5, .75], [2.25, 2.5, 2.5]],
                [[0, 0, 0, 3], [1, 0, 2, 0], [0, 4, 11, 0]]),
        "min": ([[-1, -1, 1], [NAN, -1, 3]], [[1.25, 1.25, .5], [2.25, 1.25, 1.5]],
                [[0, 0, 3, 0], [0, 8, 6, 0], [0, 4, 0, 0]]),
        "sum": ([[2, 4, 10], [NAN, 7, 15]], [[1, 2, 2, 1], [2, 4, 4, 2], [1, 2, 2, 1]])}),
    (dict(window_dimensions=(2, 3), window_strides=(2, 1), padding="SAME",
          base_dilation=(1, 2)), {
        "max": ([[2, 2, 1, 3, 3, 3, 3], [NAN, NAN, 0, 5, 5, 5, 4]],
                [[1, 1, .25, 1.5, 1.5, .75, .75], [2, 2.25, 2.25, 2.5, 2.5, 2.5, 2.75]],
                [[0, 3, 0, 13], [3, 0, 9, 0], [0, 19, 36, 14]]),
        "min": ([[0, -1, -1, -1, 1, 1, 3], [NAN, NAN, 0, 0, 5, 4, 4]],
                [[0, 1.25, 1.25, 1.25, .5, .5, .75], [2, 2.25, 2.25, 2.25, 2.5, 2.75, 2.75]],
                [[1, 0, 11, 7], [0, 9, 0, 0], [0, 30, 12, 27]]),
        "sum": ([[2, 2, 0, 4, 4, 10, 6], [NAN, NAN, 0, 5, 5, 9, 4]],
                [[2, 3, 3, 2], [2, 3, 3, 2], [2, 3, 3, 2]])}),
]


@pytest.mark.parametrize("geometry,expected", JAX_CASES)
def test_values_tangents_and_gradients_match_jax(geometry, expected):
    for name, (init, computation) in {"max": (-np.inf, lax.max),
                                      "min": (np.inf, lax.min)}.items():
        def f(x, init=init, computation=computation):
            return lax.reduce_window(x, init, computation, **geometry)

        out, tangent = didax.jvp(f, (X,), (T,))
        ct = np.arange(np.size(out)).reshape(np.shape(out)) + 1.0
        want_out, want_tangent, want_grad = expected[name]
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(tangent, want_tangent)
        np.testing.assert_array_equal(didax.vjp(f, X)[1](ct)[0], want_grad)

    def s(x):
        return lax.reduce_window(x, 0.0, lax.add, **geometry)

    want_sum, want_sum_grad = expected["sum"]
    np.testing.assert_array_equal(s(X), want_sum)
    np.testing.assert_array_equal(didax.grad(lambda x: jnp.sum(s(x)))(T), want_sum_grad)


def test_ties_and_padding_as_jax():
    x = jnp.zeros(5)

    def f(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (3,), (1,), "VALID")

    np.testing.assert_array_equal(didax.grad(lambda x: f(x).sum())(x), [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(didax.jvp(f, (x,), (jnp.arange(5.0),))[1], [0, 1, 2])

    def g(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (3,), (2,), ((1, 1),))

    minus_inf = jnp.full(5, -jnp.inf)
    np.testing.assert_array_equal(didax.grad(lambda x: g(x).sum())(minus_inf), [0, 1, 0, 1, 0])
    np.testing.assert_array_equal(didax.jvp(g, (minus_inf,), (jnp.arange(5.0) + 1,))[1],
                                  [0, 0, 0])


def test_integer_and_boolean_operands():
    np.testing.assert_array_equal(
        lax.reduce_window(jnp.arange(6, dtype=jnp.int32), 0, lax.add, (2,), (2,), "VALID"),
        [1, 5, 9])
    out = lax.reduce_window(jnp.arange(6, dtype=jnp.int32), np.iinfo(np.int32).min, lax.max,
                            (3,), (1,), "SAME")
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 5, 5])
    assert out.dtype == np.int32
    both = lax.reduce_window(jnp.array([True, False, False]), False, lax.max, (2,), (1,),
                             "VALID")
    np.testing.assert_array_equal(both, [True, False])


def test_shape_tuple():
    assert lax.reduce_window_shape_tuple((3, 4), (2, 2), (1, 2), ((1, 0), (0, 1)), (2, 1),
                                         (1, 2)) == (5, 2)
    assert lax.reduce_window_shape_tuple((5,), (3,), (2,), ((0, 0),)) == (2,)
    assert lax.reduce_window_shape_tuple((1,), (3,), (1,), ((0, 0),)) == (0,)


def test_jaxprs_print_as_jax():
    def f(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (3,), (2,), ((1, 1),))

    zeros = jnp.zeros(5, jnp.float32)
    assert str(didax.make_jaxpr(lambda x: didax.jvp(f, (x,), (x,)))(zeros)) == """\
{ lambda ; a:f32[5]. let
    b:f32[3] = reduce_window_max[
      base_dilation=(1,)
      padding=((1, 1),)
      window_dilation=(1,)
      window_dimensions=(3,)
      window_strides=(2,)
    ] a
    c:f32[3] = select_and_gather_add[
      base_dilation=(1,)
      padding=((1, 1),)
      select_prim=ge
      window_dilation=(1,)
      window_dimensions=(3,)
      window_strides=(2,)
    ] a a
  in (b, c) }"""
    text = str(didax.make_jaxpr(didax.grad(lambda x: f(x).sum()))(zeros))
    assert """\
    e:f32[5] = select_and_scatter_add[
      padding=((1, 1),)
      select_prim=ge
      window_dimensions=(3,)
      window_strides=(2,)
    ] d a""" in text


# --------------------------------------------------------------------------------------
# Derivatives against finite differences, adjoints


POOLS = {
    "max": lambda x, g: lax.reduce_window(x, -jnp.inf, lax.max, **g),
    "min": lambda x, g: lax.reduce_window(x, jnp.inf, lax.min, **g),
    "avg": lambda x, g: lax.reduce_window(x, 0.0, lax.add, **g) / np.prod(
        g["window_dimensions"]),
}
GEOMETRIES = [
    canonical((2, 6, 5, 3), (1, 2, 2, 1), (1, 2, 2, 1)),
    canonical((2, 5, 6), (1, 3, 2), (1, 2, 1), "SAME", (1, 2, 1), (1, 1, 2)),
    canonical((7,), (3,), (2,), ((2, -1),), None, (2,)),
]


@pytest.mark.parametrize("pool", list(POOLS))
@pytest.mark.parametrize("g", GEOMETRIES, ids=["pool2x2", "dilated_same", "negative_pad"])
def test_pooling_grads_to_second_order(pool, g):
    rng = np.random.default_rng(1)
    shape = {1: (7,), 3: (2, 5, 6), 4: (2, 6, 5, 3)}[len(g["window_dimensions"])]
    x = rng.normal(size=shape)  # continuous values: no ties within reach of the differences
    check_grads(lambda x: jnp.sin(POOLS[pool](x, g)), (x,), order=2, modes=("fwd", "rev"))


def test_cnn_layer_grads():
    """Convolution, tanh, 2x2 max pooling, dense layer: second order in both modes."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 6, 6, 1))
    params = (rng.normal(size=(3, 3, 1, 2)) * 0.5, rng.normal(size=(2,)) * 0.1,
              rng.normal(size=(18, 3)) * 0.3)

    def loss(params, x):
        w, b, v = params
        h = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jnp.tanh(h + b)
        pooled = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.sum(jnp.tanh(pooled.reshape(2, -1) @ v))

    check_grads(loss, (params, x), order=2, modes=("fwd", "rev"))


@settings(max_examples=25, deadline=None)
@given(geometry=geometries(), seed=seeds, name=st.sampled_from(["sum", "max", "min"]))
def test_linear_maps_are_adjoint(geometry, seed, name):
    """<ct, J t> == <J^T ct, t> for the window sum and for the tangent maps of max and min
    (select_and_gather_add and its transpose), and again for the transposed map."""
    shape, g = geometry
    rng = np.random.default_rng(seed)
    x, t = rng.normal(size=shape), rng.normal(size=shape)
    init, computation = {"sum": (0.0, lax.add), "max": (-np.inf, lax.max),
                         "min": (np.inf, lax.min)}[name]

    def f(x):
        return lax.reduce_window(x, init, computation, **g)

    _, jvp_fn = didax.linearize(f, x)
    ct = rng.normal(size=out_shape(shape, g))
    (vjp_ct,) = didax.vjp(jvp_fn, t)[1](ct)
    np.testing.assert_allclose(np.vdot(ct, jvp_fn(t)), np.vdot(vjp_ct, t), rtol=1e-10,
                               atol=1e-10)
    transpose = didax.linear_transpose(jvp_fn, t)
    (back,) = didax.vjp(lambda c: transpose(c)[0], ct)[1](t)
    np.testing.assert_allclose(np.asarray(back), np.asarray(jvp_fn(t)), rtol=1e-10,
                               atol=1e-10)


# --------------------------------------------------------------------------------------
# vmap against a loop, jit against eager evaluation


def maxpool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 2), ((1, 0), (0, 1)),
                             window_dilation=(1, 2))


def sumpool(x):
    return lax.reduce_window(x, 0.0, lax.add, (2, 3), (2, 1), "SAME", base_dilation=(2, 1))


@pytest.mark.parametrize("f", [maxpool, sumpool, didax.grad(lambda x: jnp.sum(maxpool(x) ** 2)),
                               didax.grad(lambda x: jnp.sum(jnp.sin(sumpool(x))))],
                         ids=["maxpool", "sumpool", "grad_maxpool", "grad_sumpool"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_vmap_matches_loop(f, axis):
    xs = np.moveaxis(tied_values(np.random.default_rng(3), (3, 4, 5)), 0, axis)
    assert_same(didax.vmap(f, in_axes=axis)(xs), loop(f, (axis,), 3, xs))


def test_vmap_of_tangents_with_shared_or_batched_operands():
    rng = np.random.default_rng(4)
    x, ts = tied_values(rng, (4, 5)), rng.normal(size=(3, 4, 5))

    def tangent(x, t):
        return didax.jvp(maxpool, (x,), (t,))[1]

    assert_same(didax.vmap(tangent, in_axes=(None, 0))(x, ts), loop(tangent, (None, 0), 3, x, ts))
    xs = tied_values(rng, (3, 4, 5))
    assert_same(didax.vmap(tangent, in_axes=(0, 0))(xs, ts), loop(tangent, (0, 0), 3, xs, ts))
    cts = rng.normal(size=(3,) + np.shape(maxpool(x)))

    def cotangent(x, ct):
        return didax.vjp(maxpool, x)[1](ct)[0]

    assert_same(didax.vmap(cotangent, in_axes=(None, 0))(x, cts),
                loop(cotangent, (None, 0), 3, x, cts))
    eqns = didax.make_jaxpr(didax.vmap(maxpool))(xs).jaxpr.eqns
    assert [e.primitive.name for e in eqns] == ["reduce_window_max"]  # one batched reduction


@pytest.mark.parametrize("f", [maxpool, sumpool, didax.grad(lambda x: jnp.sum(maxpool(x) ** 2)),
                               lambda x: didax.jvp(maxpool, (x,), (jnp.cos(x),))],
                         ids=["maxpool", "sumpool", "grad", "jvp"])
def test_jit_matches_eager(f):
    x = tied_values(np.random.default_rng(5), (4, 5), specials=True)
    got, want = didax.jit(f)(x), f(x)
    for a, b in zip(didax.tree_util.tree_leaves(got), didax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# --------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("args,error,message", [
    ((np.ones((3, 4)), 0.0, lax.add, (2,)), TypeError, "wrong number of window_dimensions"),
    ((np.ones((3, 4)), 0.0, lax.add, (0, 2)), TypeError,
     r"window_dimensions must have every element be strictly positive, got \(0, 2\)"),
    ((np.ones((3, 4)), 0.0, lax.add, (2, 2), (0, 1)), TypeError,
     "window_strides must have every element be strictly positive"),
    ((np.ones(3, bool), False, lax.add, (2,)), TypeError,
     "operand to reduce_window_sum must have a number dtype, got bool"),
    ((np.ones(3), np.float32(1), lax.mul, (2,)), TypeError,
     "inconsistent dtypes for operands and init_values"),
    ((np.ones(3), np.ones(2), lax.mul, (2,)), TypeError, "init_values to be scalars"),
    (((np.ones(3), np.ones(3)), 0.0, lax.add, (2,)), ValueError, "same tree structure"),
    ((np.ones(3), 0.0, lambda a, b: (a, b), (2,)), ValueError, "same tree structure"),
])
def test_errors(args, error, message):
    with pytest.raises(error, match=message):
        lax.reduce_window(*args)
