"""Shape primitives: values against NumPy, JVPs against finite differences (float64, second
order), and the type errors they raise."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax as jax
from didax import lax
from didax._src.config import enable_x64
from didax._src.transforms.public_test_util import check_grads


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def _check(fn, ref, *args):
    np.testing.assert_array_equal(np.asarray(fn(*args)), ref(*args))
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)
seeds = st.integers(0, 2 ** 16)


@settings(max_examples=15, deadline=None)
@given(shape=shapes, lead=st.lists(st.integers(1, 3), max_size=2).map(tuple), seed=seeds)
def test_broadcast_in_dim(shape, lead, seed):
    x = np.random.default_rng(seed).normal(size=shape)
    target = lead + shape
    dims = tuple(range(len(lead), len(target)))
    _check(lambda a: lax.broadcast_in_dim(a, target, dims),
           lambda a: np.broadcast_to(a, target), x)


def test_broadcast_in_dim_size_one_and_middle_dims():
    x = np.random.default_rng(0).normal(size=(3, 1))
    _check(lambda a: lax.broadcast_in_dim(a, (3, 2, 4), (0, 1)),
           lambda a: np.broadcast_to(a[:, :, None], (3, 2, 4)), x)


@settings(max_examples=15, deadline=None)
@given(shape=shapes, seed=seeds, data=st.data())
def test_reshape_transpose_rev(shape, seed, data):
    x = np.random.default_rng(seed).normal(size=shape)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    _check(lambda a: lax.transpose(a, perm), lambda a: np.transpose(a, perm), x)
    _check(lambda a: lax.reshape(a, (x.size,)), lambda a: a.reshape(-1), x)
    if shape:
        dims = tuple(data.draw(st.sets(st.integers(0, len(shape) - 1))))
        _check(lambda a: lax.rev(a, dims), lambda a: np.flip(a, dims) if dims else a, x)
        _check(lambda a: lax.reshape(a, x.shape[::-1]),
               lambda a: a.reshape(x.shape[::-1]), x)


def test_reshape_with_dimensions_transposes_first():
    x = np.arange(6.0).reshape(2, 3)
    _check(lambda a: lax.reshape(a, (6,), dimensions=(1, 0)), lambda a: a.T.reshape(6), x)


def test_squeeze_expand_dims():
    x = np.random.default_rng(1).normal(size=(1, 3, 1))
    _check(lambda a: lax.squeeze(a, (0, 2)), lambda a: a.reshape(3), x)
    _check(lambda a: lax.squeeze(a, (-1,)), lambda a: a.reshape(1, 3), x)
    _check(lambda a: lax.expand_dims(a, (0, -1)), lambda a: a[None, ..., None], x)


@pytest.mark.parametrize("config", [
    ((1, 2, 0),), ((0, 0, 1),), ((-1, 2, 0),), ((2, -2, 1),), ((0, 0, 3),), ((-2, -1, 0),),
])
def test_pad_1d(config):
    x = np.arange(1.0, 6.0)
    (lo, hi, interior), = config
    ref = []
    for i, v in enumerate(x):
        ref.append(v)
        if i < len(x) - 1:
            ref.extend([-1.0] * interior)
    ref = [-1.0] * max(lo, 0) + ref[max(-lo, 0):len(ref) - max(-hi, 0)] + [-1.0] * max(hi, 0)
    out = lax.pad(x, -1.0, config)
    np.testing.assert_array_equal(np.asarray(out), ref)
    check_grads(lambda a, v: lax.pad(a, v, config), (x, np.float64(-1.0)), order=2,
                modes=("fwd", "rev"))


def test_pad_2d_against_numpy():
    x = np.random.default_rng(2).normal(size=(3, 4))
    _check(lambda a: lax.pad(a, 0.0, ((1, 2, 0), (3, 0, 0))),
           lambda a: np.pad(a, ((1, 2), (3, 0))), x)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 4), dim=st.integers(0, 1), seed=seeds)
def test_concatenate(n, dim, seed):
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(2, i + 1) if dim == 1 else (i + 1, 2)) for i in range(n)]
    _check(lambda *a: lax.concatenate(a, dim), lambda *a: np.concatenate(a, dim), *xs)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 6), data=st.data(), seed=seeds)
def test_slice(n, data, seed):
    x = np.random.default_rng(seed).normal(size=(n, 3))
    start = data.draw(st.integers(0, n))
    limit = data.draw(st.integers(start, n))
    stride = data.draw(st.integers(1, 3))
    _check(lambda a: lax.slice(a, (start, 0), (limit, 3), (stride, 2)),
           lambda a: a[start:limit:stride, 0:3:2], x)


def test_slice_in_dim_and_index_in_dim():
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(lax.slice_in_dim(x, 1, -1, axis=1)), x[:, 1:-1])
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, -1, 0, False)), x[-1])


def test_iota():
    np.testing.assert_array_equal(np.asarray(lax.iota(np.int32, 4)), np.arange(4))
    out = lax.broadcasted_iota(np.float32, (2, 3), 1)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.arange(3.0), (2, 3)))
    closed = jax.make_jaxpr(lambda: lax.iota(np.int32, 3))()
    assert "iota[dimension=0 dtype=int32 shape=(3,) sharding=None]" in str(closed)


def test_full():
    out = lax.full((2, 3), 1.5)
    assert out.shape == (2, 3) and out.weak_type
    assert lax.full((2,), 1, np.float32).dtype == np.float32


@pytest.mark.parametrize("fn,msg", [
    (lambda: lax.broadcast_in_dim(np.ones(3), (4,), (0,)), "cannot broadcast"),
    (lambda: lax.broadcast_in_dim(np.ones((3, 3)), (3, 3), (1, 0)), "strictly increasing"),
    (lambda: lax.reshape(np.ones(6), (4,)), r"shape \(6,\) .* into shape \(4,\)"),
    (lambda: lax.squeeze(np.ones((2, 3)), (0,)), "size 2"),
    (lambda: lax.transpose(np.ones((2, 3)), (0, 0)), "not a permutation"),
    (lambda: lax.concatenate([np.ones((2, 3)), np.ones((2, 4))], 0), "must match except"),
    (lambda: lax.concatenate([np.ones(2), np.ones(2, np.int32)], 0), "same dtype"),
    (lambda: lax.slice(np.ones(3), (2,), (1,)), "invalid slice"),
    (lambda: lax.pad(np.ones(3), np.ones(2), ((0, 0, 0),)), "must be a scalar"),
    (lambda: lax.pad(np.ones(3), 0.0, ((-3, -1, 0),)), "negative dimension"),
])
def test_shape_errors(fn, msg):
    with pytest.raises((TypeError, ValueError), match=msg):
        fn()
