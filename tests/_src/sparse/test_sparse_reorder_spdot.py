"""bcoo_transpose, bcoo_sort_indices, bcoo_sum_duplicates, bcoo_spdot_general and
bcoo_dot_general_sampled as primitives: they appear in jaxprs, agree with dense NumPy,
differentiate (finite differences), batch (against a loop) and jit (against eager)."""
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.experimental.sparse import spdot
from didax.experimental import sparse
from didax.test_util import check_grads

IDX = np.array([[2, 1], [0, 3], [2, 1], [1, 0], [5, 5]], np.int32)  # (a repeat, one out)
DATA = np.arange(1., 6., dtype=np.float32)
DENSE = np.zeros((3, 4), np.float32)
np.add.at(DENSE, (IDX[:4, 0], IDX[:4, 1]), DATA[:4])


def mat(data):
    return sparse.BCOO((data, IDX), shape=(3, 4))


OPS = {
    "bcoo_transpose": (lambda m: sparse.bcoo_transpose(m, permutation=(1, 0)), DENSE.T),
    "bcoo_sort_indices": (sparse.bcoo_sort_indices, DENSE),
    "bcoo_sum_duplicates": (lambda m: sparse.bcoo_sum_duplicates(m, nse=4), DENSE),
    "bcoo_spdot_general": (lambda m: sparse.bcoo_dot_general(
        m, mat(DATA[::-1].copy()), dimension_numbers=(([1], [1]), ([], []))),
        DENSE @ mat(DATA[::-1].copy()).todense().T),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_reorder_and_spdot(name):
    op, want = OPS[name]
    np.testing.assert_allclose(op(mat(DATA)).todense(), want, rtol=1e-6)
    assert name in str(didax.make_jaxpr(lambda d: op(mat(d)).data)(DATA))
    weights = np.linspace(-1, 1, op(mat(DATA)).nse).astype(np.float32)

    def f(d):
        return jnp.sum(op(mat(d)).data * weights) + jnp.sum(op(mat(d)).todense() ** 2)

    check_grads(f, (DATA,), order=2, modes=("fwd", "rev"), eps=1e-2)
    np.testing.assert_allclose(didax.jit(f)(DATA), f(DATA), rtol=1e-6)
    stacked = np.stack([DATA, -2 * DATA])
    looped = np.stack([op(mat(d)).todense() for d in stacked])
    np.testing.assert_allclose(didax.vmap(lambda d: op(mat(d)).todense())(stacked), looped,
                               rtol=1e-6)


def test_sum_duplicates_and_sort_results():
    out = sparse.bcoo_sum_duplicates(mat(DATA))
    np.testing.assert_array_equal(out.indices, [[0, 3], [1, 0], [2, 1]])
    np.testing.assert_array_equal(out.data, [2., 4., 4.])
    srt = sparse.bcoo_sort_indices(mat(DATA))
    np.testing.assert_array_equal(srt.indices, IDX[[1, 3, 0, 2, 4]])
    assert srt.indices_sorted and out.unique_indices
    with pytest.raises(ValueError, match="nse must be specified"):
        didax.jit(lambda d, i: sparse.bcoo_sum_duplicates(
            sparse.BCOO((d, i), shape=(3, 4))).data)(DATA, IDX)
    with pytest.raises(NotImplementedError, match="each must stay"):
        sparse.bcoo_transpose(sparse.BCOO.fromdense(DENSE, n_batch=1), permutation=(1, 0))


@pytest.mark.parametrize("n_batch", [0, 1])
def test_dot_general_sampled(n_batch):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 3, 5)).astype(np.float32)
    B = rng.standard_normal((2, 5, 4)).astype(np.float32)
    dims = (([2], [1]), ([0], [0]))
    where = sparse.BCOO.fromdense((rng.random((2, 3, 4)) < 0.5).astype(np.float32),
                                  n_batch=n_batch)
    got = sparse.bcoo_dot_general_sampled(A, B, where.indices, dimension_numbers=dims)
    want = sparse.BCOO((got, where.indices), shape=(2, 3, 4)).todense()
    np.testing.assert_allclose(want, (A @ B) * (where.todense() != 0), rtol=1e-5, atol=1e-6)

    def f(A, B):
        return sparse.bcoo_dot_general_sampled(A, B, where.indices, dimension_numbers=dims)

    check_grads(f, (A, B), order=2, modes=("fwd", "rev"), eps=1e-2)
    np.testing.assert_allclose(didax.jit(f)(A, B), f(A, B), rtol=1e-6)
    looped = np.stack([f(a, B) for a in (A, 2 * A)])
    np.testing.assert_allclose(didax.vmap(f, (0, None))(np.stack([A, 2 * A]), B), looped,
                               rtol=1e-6)


def test_sampled_product_computes_only_the_samples():
    """No value of the dense product's size is formed (a 3000 x 3000 product, 3 samples)."""
    A, B = np.ones((3000, 8), np.float32), np.ones((8, 3000), np.float32)
    indices = np.array([[0, 0], [5, 2999], [2999, 7]], np.int32)

    def f(A, B):
        return sparse.bcoo_dot_general_sampled(A, B, indices,
                                               dimension_numbers=(([1], [0]), ([], [])))

    np.testing.assert_array_equal(f(A, B), [8., 8., 8.])
    jaxpr = didax.make_jaxpr(f)(A, B)
    assert "bcoo_dot_general_sampled" in str(jaxpr)
    inner = didax.make_jaxpr(lambda A, B: spdot._sampled(
        A, B, indices, dimension_numbers=(([1], [0]), ([], []))))(A, B)
    sizes = [int(np.prod(v.aval.shape)) for e in inner.jaxpr.eqns for v in e.outvars]
    assert max(sizes) < 3000 * 8 * 2, max(sizes)
    grads = didax.grad(lambda A: f(A, B).sum())(A)
    assert grads.shape == A.shape and float(grads.sum()) == 3 * 8
