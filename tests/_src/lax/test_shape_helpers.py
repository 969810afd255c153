"""lax's shape helpers: split, stack, unstack, tile and collapse against NumPy (with
derivatives and vmap), select, reciprocal and the broadcasting helpers, empty and dtype;
values recorded from JAX 0.10.2 kept as literals."""
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
# clz, mulhi


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
