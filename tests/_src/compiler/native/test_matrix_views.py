"""Products reading views in place (matrix_views): the reshape without a copy as NumPy
makes it, the premise that OpenBLAS's sums do not depend on the leading dimension, and
attention's products on views giving the NumPy tier's bits with no copy made of them."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import didax
from didax import lax
from didax._src.compiler.native.matrix_views import nocopy_reshape

from .conftest import assert_same, executable, have_compiler, same_on_every_tier


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_nocopy_reshape_is_numpys(data):
    """Strides of a transposed (and sliced) view reshaped to a shape of the same size,
    merging and splitting dimensions: NumPy's, or None where NumPy must copy."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4), label="shape")
    base = np.zeros(int(np.prod(shape)), np.float32).reshape(shape)
    v = base.transpose(data.draw(st.permutations(range(len(shape))), label="perm"))
    if data.draw(st.booleans(), label="sliced"):
        v = v[tuple(slice(0, max(1, n - 1)) for n in v.shape)]
    target, rest = [], v.size
    while rest > 1:
        d = data.draw(st.sampled_from([k for k in range(2, rest + 1) if rest % k == 0]))
        target.append(d)
        rest //= d
    target.insert(data.draw(st.integers(0, len(target)), label="unit at"), 1)
    got = nocopy_reshape(v.shape, tuple(s // 4 for s in v.strides), tuple(target))
    try:
        r = v.view()
        r.shape = tuple(target)  # (raises where NumPy would copy)
    except AttributeError:
        assert got is None
        return
    assert got is not None
    assert [g for g, n in zip(got, target) if n != 1] == \
        [s // 4 for s, n in zip(r.strides, target) if n != 1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blas_sums_do_not_depend_on_the_leading_dimension(dtype):
    """The premise of reading views in place: NumPy's matmul (its BLAS) gives the same bits
    for matrices inside wider arrays as for row-major copies of them, with either operand
    transposed, for small and large products."""
    rng = np.random.default_rng(0)
    for (m, k, n), ta, tb in itertools.product(
            [(2, 3, 5), (8, 32, 64), (64, 32, 64), (17, 300, 129), (128, 512, 96)],
            [False, True], [False, True]):
        a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
        wide_a = np.zeros((a.shape[0], a.shape[1] + 3), dtype)
        wide_b = np.zeros((b.shape[0], b.shape[1] + 7), dtype)
        wide_a[:, :a.shape[1]], wide_b[:, :b.shape[1]] = a, b
        va, vb = wide_a[:, :a.shape[1]], wide_b[:, :b.shape[1]]
        want = np.matmul(a.T if ta else a, b.T if tb else b)
        got = np.matmul(va.T if ta else va, vb.T if tb else vb)
        assert_same(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_products_read_heads_in_place(dtype):
    """Heads split from one projection (slices, reshapes, transposes: batch dimensions no
    one stride walks), multiplied, and their gradients: the native tier's bits are the
    NumPy tier's and eager's, and its products read the heads where they are."""
    rng = np.random.default_rng(1)
    h = rng.standard_normal((2, 6, 16)).astype(dtype)
    w = rng.standard_normal((16, 48)).astype(dtype)

    def loss(h, w):
        qkv = h @ w
        q, k, v = (lax.transpose(lax.reshape(qkv[..., i * 16:(i + 1) * 16], (2, 6, 4, 4)),
                                 (0, 2, 1, 3)) for i in range(3))
        scores = q @ k.swapaxes(-1, -2)
        mixed = didax.nn.softmax(scores, axis=-1) @ v
        return (mixed * mixed).sum()

    def f(h, w):
        value, (gh, gw) = didax.value_and_grad(loss, argnums=(0, 1))(h, w)
        return value, gh, gw
    tiers = same_on_every_tier(f, h, w)
    if have_compiler():
        source = executable(tiers.native, h, w).native.plan.source
        assert source.count("a product: NumPy's matmul loop, on views") >= 4
