"""The smaller names of jax.lax: clz and mulhi against Python's integers, split/stack/unstack/
tile/collapse against NumPy (with derivatives and vmap), select, reciprocal, broadcast helpers,
empty and dtype, index_take, scatter_sub and scatter_apply, conv_transpose and the convolution
shape helpers, zeta; values recorded from JAX 0.10.2 kept as literals."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads
from vmap_testing import assert_same, loop


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def integers(seed, dtype, size=64):
    """Random integers of `dtype` and its extremes, as a NumPy array."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    x[:5] = [0, 1, info.max, info.min, info.max // 3]
    return x


# --------------------------------------------------------------------------------------
# clz, mulhi


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_clz_counts_leading_zero_bits(dtype):
    x = integers(0, dtype)
    bits = 8 * np.dtype(dtype).itemsize
    want = [bits - (int(v) % 2 ** bits).bit_length() for v in x]
    out = lax.clz(x)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_mulhi_is_the_high_half_of_the_product(dtype):
    x, y = integers(1, dtype), integers(2, dtype)[::-1].copy()
    bits = 8 * np.dtype(dtype).itemsize
    want = [(int(a) * int(b)) >> bits for a, b in zip(x, y)]  # Python: exact, floor shift
    out = lax.mulhi(x, y)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out).astype(object), np.array(want, object)
                                  .astype(np.dtype(dtype)).astype(object))


def test_clz_and_mulhi_literals_from_jax():
    np.testing.assert_array_equal(lax.clz(jnp.int32([0, 1, -1, 2 ** 30, 255])),
                                  [32, 31, 0, 1, 24])
    np.testing.assert_array_equal(lax.clz(jnp.uint8([0, 1, 255, 16])), [8, 7, 0, 3])
    np.testing.assert_array_equal(
        lax.mulhi(jnp.int32([-7, 2 ** 30, -2 ** 31, 123456789]),
                  jnp.int32([3, 8, -2 ** 31, 987654321])), [-1, 2, 1073741824, 28389652])
    np.testing.assert_array_equal(lax.mulhi(jnp.int8([-128, 100, -3]), jnp.int8([-128, 100, 5])),
                                  [64, 39, -1])


def test_integer_ops_reject_floats_and_have_zero_derivatives():
    with pytest.raises(TypeError, match="clz does not accept dtype float32"):
        lax.clz(jnp.float32(1))
    with pytest.raises(TypeError, match="clz does not accept dtype bool"):
        lax.clz(jnp.array([True]))
    with pytest.raises(TypeError, match="mulhi does not accept dtype float64"):
        lax.mulhi(1.0, 2.0)
    x = jnp.arange(5.0)
    assert didax.grad(lambda x: jnp.sum(x * lax.clz(x.astype(jnp.int32))))(x).tolist() == [
        32, 31, 30, 30, 29]
    xs = integers(3, "int32").reshape(4, 16)
    assert_same(didax.vmap(lax.clz, in_axes=1)(xs), loop(lax.clz, (1,), 16, xs))
    assert_same(didax.vmap(lax.mulhi, in_axes=(0, None))(xs, xs[0]),
                loop(lax.mulhi, (0, None), 4, xs, xs[0]))
    assert_same(didax.jit(lax.mulhi)(xs, xs), np.asarray(lax.mulhi(xs, xs)))


# --------------------------------------------------------------------------------------
# split, stack, unstack, tile, collapse


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_split_matches_numpy(data):
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    pieces = lax.split(x, sizes, axis)
    want = np.split(x, cuts, axis)
    assert len(pieces) == len(want)
    for p, w in zip(pieces, want):
        assert_same(p, w)


def test_split_derivatives_vmap_and_jaxpr():
    x = np.random.default_rng(0).normal(size=(3, 5))

    def f(x):
        a, b, c = lax.split(x, (1, 0, 4), axis=1)
        return jnp.sum(jnp.sin(a) * 2) + jnp.sum(c ** 3)

    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    g = didax.grad(lambda x: jnp.sum(lax.split(x, (2, 3), 1)[1]))(x)
    np.testing.assert_array_equal(g, np.tile([0, 0, 1, 1, 1], (3, 1)))

    def second(x):
        return lax.split(x, (1, 2), 0)[1]

    assert_same(didax.vmap(second, in_axes=1)(x), loop(second, (1,), 5, x))
    assert str(didax.make_jaxpr(lambda x: lax.split(x, (1, 2), axis=1))(
        jnp.zeros((2, 3, 4), jnp.float32))) == """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,1,4] c:f32[2,2,4] = split[axis=1 sizes=(1, 2)] a
  in (b, c) }"""
    with pytest.raises(ValueError, match=r"Sum of sizes 2 must be equal to dimension 1 of the "
                       r"operand shape \[2, 3, 4\]"):
        lax.split(jnp.zeros((2, 3, 4)), (1, 1), axis=1)
    with pytest.raises(ValueError, match="Sizes passed to split must be nonnegative"):
        lax.split(jnp.zeros((2, 3)), (4, -1), axis=1)


def test_stack_unstack_tile_collapse_match_numpy():
    x = np.arange(6.0).reshape(2, 3)
    assert_same(lax.stack([x, x + 1], 1), np.stack([x, x + 1], 1))
    assert_same(lax.stack([x, x], -1), np.stack([x, x], -1))
    pieces = lax.unstack(x, axis=1)
    assert isinstance(pieces, tuple) and len(pieces) == 3
    for p, w in zip(pieces, np.moveaxis(x, 1, 0)):
        assert_same(p, w)
    assert_same(lax.tile(x, (2, 3)), np.tile(x, (2, 3)))
    assert lax.tile(x, (0, 2)).shape == (0, 6)
    assert lax.collapse(jnp.zeros((2, 3, 4)), 0, 2).shape == (6, 4)
    assert lax.collapse(jnp.zeros((2, 3, 4)), 1).shape == (2, 12)
    assert lax.collapse(jnp.zeros((2, 3, 4)), -2).shape == (2, 12)
    assert lax.collapse(jnp.zeros((2, 3, 4)), 1, 1).shape == (2, 1, 3, 4)
    check_grads(lambda x: lax.tile(jnp.sin(x), (2, 1)) * lax.collapse(lax.stack([x, x ** 2]), 0, 2),
                (x,), order=1)
    with pytest.raises(ValueError, match="Invalid dimension range passed to collapse"):
        lax.collapse(jnp.zeros((2, 3, 4)), 2, 1)
    with pytest.raises(TypeError, match="reps length must be equal to the ndim of x"):
        lax.tile(x, (2,))
    with pytest.raises(ValueError, match="All input arrays must have the same shape"):
        lax.stack([x, x[:1]])


# --------------------------------------------------------------------------------------
# select, reciprocal, broadcast_shapes, broadcast_like, empty, dtype


def test_select_reciprocal_and_broadcasting_helpers():
    np.testing.assert_array_equal(
        lax.select(jnp.array([True, False]), jnp.array([1., 2.]), jnp.array([3., 4.])), [1, 4])
    assert str(didax.make_jaxpr(lambda p, a, b: lax.select(p, a, b))(True, 1.0, 2.0)).endswith(
        "d:f64[] = select_n a c b in (d,) }")
    assert lax.reciprocal(jnp.float32(4.0)) == 0.25
    assert "integer_pow[y=-1]" in str(didax.make_jaxpr(lax.reciprocal)(1.0))
    with pytest.raises(TypeError):
        lax.reciprocal(jnp.int32(4))
    assert lax.broadcast_shapes((3, 1), (1, 4), (5, 1, 1)) == (5, 3, 4)
    assert lax.broadcast_shapes((2,), ()) == (2,)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: "
                                         r"shapes=\[\(3, 1\), \(4, 1\)\]"):
        lax.broadcast_shapes((3, 1), (4, 1))
    assert_same(lax.broadcast_like(np.arange(3), np.zeros((2, 3))),
                np.broadcast_to(np.arange(3), (2, 3)))


def test_empty_and_dtype():
    e = lax.empty((2, 3), jnp.float32)
    assert e.shape == (2, 3) and e.dtype == np.float32 and not e.weak_type
    assert lax.empty(3, "int8").shape == (3,)
    with enable_x64(False):
        assert lax.dtype(1.0) == np.float32 and lax.dtype(1) == np.int32
        assert lax.dtype(np.float64(1)) == np.float32
    assert lax.dtype(1.0) == np.float64
    assert lax.dtype(jnp.float16) == np.float16 and lax.dtype(True) == np.bool_
    assert lax.dtype(np.arange(3, dtype=np.int16)) == np.int16


# --------------------------------------------------------------------------------------
# index_take, scatter_sub, scatter_apply


def test_index_take_wraps_indices_as_jax():
    src = np.arange(24.0).reshape(2, 3, 4)
    idxs = (np.array([0, 2, -1, 4]), np.array([1, 3, 5, -6]))
    out = lax.index_take(src, idxs, (1, 2))
    np.testing.assert_array_equal(out, [[1, 13], [11, 23], [9, 21], [6, 18]])  # JAX's
    want = np.moveaxis(src[:, idxs[0] % 3, idxs[1] % 4], 0, 1)
    assert_same(out, want)
    check_grads(lambda s: lax.index_take(s, idxs, (1, 2)), (src,), order=1)


SCALAR_DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))


def test_scatter_sub():
    indices = np.array([[0], [0], [3], [9]])
    x, u = np.arange(5.0), np.array([1.0, 2.0, 3.0, 4.0])
    want = x.copy()
    np.subtract.at(want, [0, 0, 3], u[:3])  # index 9 is out of bounds: dropped
    assert_same(lax.scatter_sub(x, indices, u, SCALAR_DN), want)
    np.testing.assert_array_equal(
        lax.scatter_sub(jnp.uint8([1, 2, 3]), np.array([[0], [0]]), jnp.uint8([5, 200]),
                        SCALAR_DN), [52, 2, 3])  # JAX's: unsigned arithmetic wraps
    check_grads(lambda x, u: lax.scatter_sub(x, indices, u, SCALAR_DN) ** 2, (x, u), order=2)
    text = str(didax.make_jaxpr(lambda x, u: lax.scatter_sub(x, indices, u, SCALAR_DN))(x, u))
    assert "scatter-sub[" in text and "g:f64[] = sub e f" in text

    def f(x, u):
        return lax.scatter_sub(x, indices, u, SCALAR_DN, mode="clip")

    xs, us = np.arange(15.0).reshape(3, 5), np.arange(12.0).reshape(3, 4)
    assert_same(didax.vmap(f)(xs, us), loop(f, (0, 0), 3, xs, us))
    assert_same(didax.vmap(f, in_axes=(None, 0))(x, us), loop(f, (None, 0), 3, x, us))


def test_scatter_apply_applies_once_per_update_as_jax():
    x = jnp.arange(5.0)
    indices = jnp.array([[0], [0], [2], [7]])

    def f(x, mode=None):
        return lax.scatter_apply(x, indices, lambda v: v * 2 + 1, SCALAR_DN, update_shape=(4,),
                                 mode=mode)

    np.testing.assert_array_equal(f(x), [3, 1, 5, 3, 4])  # JAX's values
    np.testing.assert_array_equal(f(x, "clip"), [3, 1, 5, 3, 9])
    np.testing.assert_array_equal(didax.jit(f)(x), [3, 1, 5, 3, 4])
    unique = lax.scatter_apply(x, jnp.array([[1], [3]]), jnp.sin, SCALAR_DN, update_shape=(2,),
                               unique_indices=True)
    np.testing.assert_allclose(unique, [0, np.sin(1), 2, np.sin(3), 4])
    # Differentiable (JAX raises): sin applied twice at 0 and once at 2.
    y = np.array([0.3, 1.0, 0.7, 2.0, 5.0])
    g = didax.grad(lambda y: jnp.sum(lax.scatter_apply(y, indices[:3], jnp.sin, SCALAR_DN,
                                                       update_shape=(3,))))(y)
    np.testing.assert_allclose(g, [np.cos(np.sin(0.3)) * np.cos(0.3), 1, np.cos(0.7), 1, 1])
    with pytest.raises(TypeError, match="func must return values of the operand's dtype"):
        lax.scatter_apply(x, indices, lambda v: v.astype(jnp.int32), SCALAR_DN,
                          update_shape=(4,))


# --------------------------------------------------------------------------------------
# conv_transpose and the convolution shape helpers


X1 = np.arange(12.0, dtype=np.float32).reshape(1, 4, 3) / 4   # NHC
W1 = (np.arange(12.0, dtype=np.float32).reshape(2, 3, 2) - 5) / 3  # HIO
JAX_SAME = [[1.0833333730697632, 1.3333333730697632], [-0.4166666865348816, -0.1666666716337204],
            [3.3333334922790527, 4.333333492279053], [-2.6666667461395264, -1.6666667461395264],
            [5.583333492279053, 7.333333492279053], [-4.916666507720947, -3.1666667461395264],
            [7.833333492279053, 10.333333969116211], [-7.166666507720947, -4.6666669845581055]]
JAX_DILATED_FLIPPED = [[-0.8333333730697632, -0.0833333358168602], [0, 0],
                       [-3.1666669845581055, 0.5833333134651184], [0, 0],
                       [-4.6666669845581055, 3.5833334922790527], [0, 0],
                       [-6.1666669845581055, 6.5833330154418945], [0, 0]]


def test_conv_transpose_matches_jax():
    np.testing.assert_allclose(lax.conv_transpose(X1, W1, (2,), "SAME")[0], JAX_SAME,
                               rtol=1e-6)
    np.testing.assert_allclose(lax.conv_transpose(X1, W1, (2,), "VALID")[0], JAX_SAME,
                               rtol=1e-6)
    np.testing.assert_allclose(lax.conv_transpose(X1, W1, (2,), ((1, 0),))[0], JAX_SAME[:7],
                               rtol=1e-6)
    w = (np.arange(12.0, dtype=np.float32).reshape(2, 2, 3) - 5) / 3
    np.testing.assert_allclose(lax.conv_transpose(X1, w, (2,), "SAME", rhs_dilation=(2,),
                                                  transpose_kernel=True)[0],
                               JAX_DILATED_FLIPPED, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_transpose_with_flipped_kernel_is_the_gradient_of_conv(padding):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4, 5))  # NHWC, the cotangent of the forward convolution
    w = rng.normal(size=(3, 2, 6, 5))  # HWIO of the forward convolution: 6 in, 5 out
    specs = ("NHWC", "HWIO", "NHWC")
    out = lax.conv_transpose(x, w, (2, 3), padding, transpose_kernel=True)
    forward_shape = out.shape

    def conv(y):
        return lax.conv_general_dilated(y, w, (2, 3), padding, dimension_numbers=specs)

    assert conv(np.zeros(forward_shape)).shape == x.shape
    (want,) = didax.vjp(conv, np.zeros(forward_shape))[1](x)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    assert lax.conv_transpose_shape_tuple(x.shape, np.swapaxes(w, 2, 3).shape, (2, 3), padding,
                                          specs) == forward_shape


def test_conv_shape_helpers_match_jax():
    specs = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_transpose_shape_tuple((2, 5, 6, 3), (3, 2, 3, 4), (2, 1), "SAME",
                                          specs) == (2, 10, 6, 4)
    assert lax.conv_transpose_shape_tuple((2, 5, 6, 3), (3, 2, 3, 4), (2, 1), ((1, 2), (0, 1)),
                                          specs) == (2, 10, 6, 4)
    assert lax.conv_general_shape_tuple((2, 5, 6, 3), (3, 2, 3, 4), (2, 1), "SAME",
                                        specs) == (2, 3, 6, 4)
    assert lax.conv_shape_tuple((2, 3, 5, 6), (4, 3, 3, 2), (2, 1), "VALID") == (2, 4, 2, 5)
    assert lax.conv_shape_tuple((4, 3, 5, 6), (4, 3, 3, 2), (1, 1), ((1, 1), (0, 0)),
                                2) == (2, 4, 5, 5)
    assert lax.conv_general_permutations(specs) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_general_permutations(("NCHW", "OIWH", "CWNH")) == (
        (0, 1, 3, 2), (0, 1, 2, 3), (2, 0, 1, 3))
    with pytest.raises(TypeError, match="Wrong number of explicit pads"):
        lax.conv_shape_tuple((2, 3, 5, 6), (4, 3, 3, 2), (1, 1), ((0, 0),))
    assert lax.ConvDimensionNumbers in lax.ConvGeneralDilatedDimensionNumbers.__args__
    assert lax.DotDimensionNumbers.__origin__ is tuple


# --------------------------------------------------------------------------------------
# zeta


def test_zeta_matches_jax():
    x = jnp.float32([2.0, 3.0, 1.0, 0.5, 4.5, 2.0])
    q = jnp.float32([1.0, 2.0, 1.0, 1.0, 1.5, -2.0])
    out = lax.zeta(x, q)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [1.644934058189392, 0.2020569145679474, np.inf, np.nan,
                                     0.18318215012550354, np.inf], rtol=2e-7)
    with pytest.raises(TypeError, match="zeta does not accept dtype int32"):
        lax.zeta(jnp.int32(2), jnp.int32(1))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.zeta(jnp.float32(2), jnp.float64(1))
