"""Native rules of products (NumPy's matmul loop), reductions, views and integer/bool
arithmetic: native == NumPy tier == eager over drawn inputs, and a whole MLP
SGD step with no equation left on the NumPy tier."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.config import enable_x64

from .conftest import (
    Tiers,
    assert_native,
    assert_same,
    executable,
    have_compiler,
    same_on_every_tier,
)

PRODUCTS_REDUCTIONS_VIEWS = {
    "dot_general", "reduce_sum", "reduce_max", "reduce_min", "broadcast_in_dim", "reshape",
    "squeeze", "expand_dims", "transpose", "add_any", "and", "or", "xor", "not"}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0]


def _floats(dtype, shape):
    width = 32 if dtype == np.float32 else 64
    return hnp.arrays(dtype, shape, elements=st.one_of(
        st.sampled_from(SPECIAL), st.floats(-10, 10, width=width)))


def _close(n, m, e, rtol):
    """The NumPy tier as eager evaluation; the native tier as the NumPy tier, bit for bit;
    eager evaluation close to it (jit may round differently)."""
    assert_same(n, m)
    np.testing.assert_allclose(m, e, rtol=rtol, atol=rtol)


DOTS = {  # (lhs shape, rhs shape, dimension numbers): every transposition, batched, vectors
    "nn": ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    "tn": ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),
    "nt": ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),
    "tt": ((4, 3), (5, 4), (((0,), (1,)), ((), ()))),
    "batched": ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    "batched_t": ((2, 4, 3), (2, 5, 4), (((1,), (2,)), ((0,), (0,)))),
    # a few rows times a transposed rhs: computed as its transpose (emit._swapped)
    "batched_nt": ((2, 3, 4), (2, 6, 4), (((2,), (2,)), ((0,), (0,)))),
    # nothing to sum: elementwise products of broadcast reads (compiler/native/products.py)
    "outer_k1": ((1, 3), (1, 4), (((0,), (0,)), ((), ()))),
    "outer_k1_nt": ((3, 1), (4, 1), (((1,), (1,)), ((), ()))),
    "matvec": ((3, 4), (4,), (((1,), (0,)), ((), ()))),
    "vecmat": ((4,), (4, 5), (((0,), (0,)), ((), ()))),
    "empty_k": ((3, 0), (0, 5), (((1,), (0,)), ((), ()))),
    "empty_m": ((0, 4), (4, 5), (((1,), (0,)), ((), ()))),
    "size1": ((1, 4), (4, 1), (((1,), (0,)), ((), ()))),
    # contracting and free dimensions in blocks: stacked weight gradients, outer products
    "stacked_tn": ((3, 2, 4), (3, 2, 5), (((0, 1), (0, 1)), ((), ()))),
    "stacked_vec": ((3, 2), (3, 2, 5), (((0, 1), (0, 1)), ((), ()))),
    "free_block": ((3, 2, 4), (4,), (((2,), (0,)), ((), ()))),
    "free_block_t": ((4, 3, 2), (5, 4), (((0,), (1,)), ((), ()))),
    "batched_blocks": ((2, 3, 2, 4), (2, 3, 2), (((1, 2), (1, 2)), ((0,), (0,)))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(DOTS))
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_dot_general(dtype, case, data):
    ls, rs, dn = DOTS[case]
    with enable_x64(dtype == np.float64):
        x, y = data.draw(_floats(dtype, ls)), data.draw(_floats(dtype, rs))
        tiers = Tiers(lambda a, b: lax.dot_general(a, b, dn) * 2.0)
        n, m, e = tiers(x, y)
        finite = np.isfinite(m).all()
        if finite:
            _close(n, m, e, 1e-5 if dtype == np.float32 else 1e-12)
        assert_native(tiers.native, x, y)


AXES = [(0,), (1,), (2,), (0, 2), (0, 1, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("axes", AXES)
@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 4, 1), (2, 0, 3)])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_reductions_of_expressions(dtype, axes, shape, data):
    with enable_x64(dtype == np.float64):
        if dtype == np.int32:
            x = data.draw(hnp.arrays(dtype, shape, elements=st.integers(-2**31, 2**31 - 1)))
        else:
            x = data.draw(_floats(dtype, shape))

        def f(x):
            y = x * x - x if dtype != np.int32 else x * 3 + 7  # int32 wraps
            return (lax.reduce_sum(y, axes), lax.reduce_max(y, axes), lax.reduce_min(x, axes))
        tiers = Tiers(f)
        for n, m, e in zip(*tiers(x)):
            if dtype == np.int32:
                assert_same(m, e)
                assert_same(n, m)
            else:
                _close(n, m, e, 1e-5 if dtype == np.float32 else 1e-12)
        assert_native(tiers.native, x)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_views_read_in_place(dtype, data):
    x = data.draw(hnp.arrays(dtype, (3, 1, 4)))
    z = data.draw(hnp.arrays(dtype, (4, 3)))

    def f(x, z):
        t = lax.transpose(lax.squeeze(x, (1,)), (1, 0))              # (4, 3), strided
        b = lax.broadcast_in_dim(lax.reshape(x, (12,)), (2, 12), (1,))
        e = lax.expand_dims(z, (0,))
        c = lax.convert_element_type(t, np.float32)
        sel = lax.select_n(lax.ne(t, z), t, z)
        return t, b, e, c, sel, lax.reshape(t, (12,)), lax.reshape(b, (2, 3, 4))
    tiers = Tiers(f)
    for n, m, e in zip(*tiers(x, z)):
        assert_same(m, e)
        assert_same(n, m)
    assert_native(tiers.native, x, z)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_reshapes_of_views_no_strides_express_are_copies_in_order(dtype, data):
    """Heads merged after attention: a transposed (and sliced) view reshaped. The view is
    copied in order by a native loop (no NumPy-tier equation), which the reshape's readers
    (a loop, a product, the results) read; the view itself is read elsewhere as before, and
    copied again for another reshape after the first copy's readers."""
    h = data.draw(hnp.arrays(dtype, (2, 3, 5, 4)))
    w = data.draw(hnp.arrays(dtype, (12, 6)))

    def f(h, w):
        t = lax.transpose(h, (0, 2, 1, 3))                      # (2, 5, 3, 4), strided
        merged = lax.reshape(t, (2, 5, 12))
        part = lax.reshape(lax.slice(t, (0, 1, 0, 0), (2, 4, 3, 4)), (6, 12))
        p = lax.dot_general(merged * 2 + 1, w, (((2,), (0,)), ((), ())))
        # after the first copy's readers: t again, reshaped otherwise and read by a product
        again = lax.reshape(t, (10, 12)) - lax.reshape(p, (10, 6)).sum()
        tw = lax.dot_general(t, w[:4, :3], (((3,), (0,)), ((), ())))
        return merged, p, part, t - 1, again, tw
    tiers = same_on_every_tier(f, h, w)
    if have_compiler():
        # (integer products are the NumPy tier's, with the reshape of the first one's
        # result that runs right after it: a view NumPy makes)
        products = 3 if dtype == np.int32 else 0
        assert executable(tiers.native, h, w).native.plan.python_equations == products


INT_DTYPES = [np.int8, np.int32, np.uint8, np.uint32, np.int64]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_integer_and_bool_elementwise(dtype, data):
    with enable_x64(dtype == np.int64):
        x = data.draw(hnp.arrays(dtype, (3, 4)))
        y = data.draw(hnp.arrays(dtype, (1, 4)))

        def f(x, y):
            p = lax.lt(x, y)
            q = lax.ge(x, y)
            return (lax.add(x, y), lax.sub(x, y), lax.mul(x, y), lax.neg(x), lax.max(x, y),
                    lax.min(x, y), lax.bitwise_and(x, y), lax.bitwise_or(x, y),
                    lax.bitwise_xor(x, y), lax.bitwise_not(x), lax.bitwise_and(p, q),
                    lax.bitwise_or(p, q), lax.bitwise_not(p), lax.eq(x, y),
                    lax.convert_element_type(x, np.float32),
                    lax.convert_element_type(x, np.bool_),
                    lax.convert_element_type(p, np.int32))
        tiers = Tiers(f)
        for n, m, e in zip(*tiers(x, y)):
            assert_same(m, e)
            assert_same(n, m)
        assert_native(tiers.native, x, y)


def _mlp_loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    logits = h @ w + b
    lse = jnp.log(jnp.sum(jnp.exp(logits - jnp.max(logits, axis=1, keepdims=True)), axis=1,
                          keepdims=True)) + jnp.max(logits, axis=1, keepdims=True)
    return jnp.mean(jnp.sum(y * (lse - logits), axis=1))


def _step(params, x, y):
    value, grads = didax.value_and_grad(_mlp_loss)(params, x, y)
    return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)], value


def test_mlp_sgd_step_is_fully_native():
    rng = np.random.RandomState(0)
    sizes = (8, 16, 16, 4)
    params = [(rng.randn(m, n).astype(np.float32) * 0.3, rng.randn(n).astype(np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.randn(5, 8).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.randint(0, 4, 5)]
    tiers = Tiers(_step)
    n, m, e = tiers(params, x, y)
    for a, b in zip(didax.tree_util.tree_leaves(n), didax.tree_util.tree_leaves(m)):
        assert_same(a, b)
    assert_native(tiers.native, params, x, y)
    if have_compiler():
        plan = executable(tiers.native, params, x, y).native.plan
        assert plan.python_segments == () and plan.python_equations == 0
        assert (np.matmul, (11, 11, 11)) in plan.loops  # (float32's type number: 11)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grad_and_vmap_of_products_inside_jit(dtype):
    rng = np.random.RandomState(1)
    with enable_x64(dtype == np.float64):
        w = rng.randn(6, 3).astype(dtype)
        xs = rng.randn(4, 5, 6).astype(dtype)
        f = didax.vmap(didax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)), in_axes=(None, 0))
        n, m, e = Tiers(f)(w, xs)
        _close(n, m, e, 1e-5 if dtype == np.float32 else 1e-12)


UPDATES = {  # a product read by an update (an SGD step's): the NumPy tier's two roundings
    "sgd": lambda w, a, b: w - 0.1 * (a.T @ b),
    "scaled_right": lambda w, a, b: w - (a.T @ b) * 0.25,
    "plain_sub": lambda w, a, b: w - a.T @ b,
    "plus": lambda w, a, b: a.T @ b + w,
    "scaled_plus": lambda w, a, b: w + 3.0 * (a.T @ b),
    "product_read_twice": lambda w, a, b: (w - a.T @ b, a.T @ b),
    "view_of_w": lambda w, a, b: w.T.T[::1] - 0.5 * (a.T @ b),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(UPDATES))
def test_updates_of_a_product(dtype, case):
    rng = np.random.RandomState(2)
    with enable_x64(dtype == np.float64):
        w = rng.randn(5, 7).astype(dtype)
        a, b = rng.randn(4, 5).astype(dtype), rng.randn(4, 7).astype(dtype)
        w[0, 0], a[:, 0] = -0.0, 0.0  # a zero product added to -0
        tiers = Tiers(UPDATES[case])
        n, m, e = tiers(w, a, b)
        _close(n, m, e, 1e-5 if dtype == np.float32 else 1e-12)
        assert_native(tiers.native, w, a, b)
        if have_compiler():
            assert executable(tiers.native, w, a, b).native.plan.python_equations == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_by_booleans_are_native_selects(dtype):
    """jit's rewrite of convert(p) * x into select(p, convert(p), x) stays native and
    computes the same bits as the NumPy tier (0 where p is false, inf and NaN too)."""
    with enable_x64(dtype == np.float64):
        b = np.array([[True, False, False, True, False]] * 3)
        x = np.tile(np.array([np.inf, np.inf, np.nan, np.nan, -5.0], dtype), (3, 1))

        def f(b, x):
            mask = b.astype(dtype)
            return mask * x, x * mask, b * x, jnp.sum(mask * x * 2, axis=1)

        tiers = Tiers(f)
        for n, m, _ in zip(*tiers(b, x)):
            assert_same(n, m)
        assert_native(tiers.native, b, x)
        np.testing.assert_array_equal(tiers.native(b, x)[0][0], [np.inf, 0, 0, np.nan, 0])
