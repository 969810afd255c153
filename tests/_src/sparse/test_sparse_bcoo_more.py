"""The BCOO shape operations, layout changes and sparse-sparse products against JAX's
(kinds, layouts, nse, dtypes, dense values, errors), with derivatives in the data, jit
against eager and vmap against a loop."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import sparse as jsparse

import didax
import didax.numpy as jnp
from didax.experimental import sparse
from didax.test_util import check_grads
from tests._src.sparse.sparse_compare import assert_matches, nse_of, register, registered_results

JAX = (jax, jjnp, jsparse)
DIDAX = (didax, jnp, sparse)
A = np.array([[1., 0, 2], [0, 3, 0]], np.float32)
B = np.stack([A, 2 * A[::-1]])


def dense(sp, n_batch=0, n_dense=0, x=A):
    return sp.BCOO.fromdense(np.asarray(x), nse=nse_of(x, n_batch, n_dense), n_batch=n_batch,
                             n_dense=n_dense)


def inputs(sp):
    """The sparse operands of the cases (made once: arguments of JAX's one jit)."""
    return dense(sp), dense(sp, 1, x=B), dense(sp, x=A[:1])


CASES = {
    "broadcast_batch": lambda J, n, sp, m, mb, m1: sp.bcoo_broadcast_in_dim(
        m, shape=(4, 2, 3), broadcast_dimensions=(1, 2)),
    "broadcast_sparse": lambda J, n, sp, m, mb, m1: sp.bcoo_broadcast_in_dim(
        m, shape=(2, 3, 4), broadcast_dimensions=(0, 1)),
    "slice": lambda J, n, sp, m, mb, m1: sp.bcoo_slice(
        m, start_indices=(0, 1), limit_indices=(2, 3)),
    "dynamic_slice": lambda J, n, sp, m, mb, m1: sp.bcoo_dynamic_slice(
        m, start_indices=(1, 2), slice_sizes=(1, 2)),
    "rev": lambda J, n, sp, m, mb, m1: sp.bcoo_rev(mb, dimensions=(0, 2)),
    "squeeze": lambda J, n, sp, m, mb, m1: sp.bcoo_squeeze(m1, dimensions=(0,)),
    "concatenate_sparse": lambda J, n, sp, m, mb, m1: sp.bcoo_concatenate([m] * 2, dimension=1),
    "multiply_sparse": lambda J, n, sp, m, mb, m1: sp.bcoo_multiply_sparse(m, m * 2),
    "spdot": lambda J, n, sp, m, mb, m1: sp.bcoo_dot_general(
        m, m, dimension_numbers=(([1], [1]), ([], []))),
    "update_layout_error": lambda J, n, sp, m, mb, m1: sp.bcoo_update_layout(m, n_batch=1),
    "update_layout_batch": lambda J, n, sp, m, mb, m1: sp.bcoo_update_layout(
        m, n_batch=1, on_inefficient=None),
    "update_layout_dense": lambda J, n, sp, m, mb, m1: sp.bcoo_update_layout(
        m, n_dense=1, on_inefficient=None),
    "gather": lambda J, n, sp, m, mb, m1: sp.bcoo_gather(
        m, n.array([[1], [0]]), J.lax.GatherDimensionNumbers(
            offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
        slice_sizes=(1, 3)),
    "dot_general_sampled": lambda J, n, sp, m, mb, m1: sp.bcoo_dot_general_sampled(
        n.arange(8.).reshape(2, 4), n.ones((4, 3)), m.indices,
        dimension_numbers=(([1], [0]), ([], []))),
}


register("bcoo_more", CASES, inputs)


@pytest.fixture(scope="module")
def jax_cases():
    return registered_results("bcoo_more", JAX)


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_jax(name, jax_cases):
    assert_matches(jax_cases[name], CASES[name], DIDAX, inputs=inputs(sparse))


def test_efficiency_error_type():
    with pytest.raises(sparse.SparseEfficiencyError):
        sparse.bcoo_update_layout(dense(sparse), n_dense=1)
    with pytest.warns(sparse.SparseEfficiencyWarning):
        sparse.bcoo_update_layout(dense(sparse), n_dense=1, on_inefficient="warn")
    assert issubclass(sparse.CuSparseEfficiencyWarning, sparse.SparseEfficiencyWarning)
    assert issubclass(sparse.SparseEfficiencyError, ValueError)


def test_derivatives_jit_vmap():
    m = dense(sparse)

    def f(data, start):
        mat = sparse.BCOO((data, m.indices), shape=m.shape)
        s = sparse.bcoo_dynamic_slice(mat, (start, 0), (1, 3))
        r = sparse.bcoo_rev(sparse.bcoo_slice(mat, start_indices=(0, 1),
                                              limit_indices=(2, 3)), dimensions=(1,))
        prod = sparse.bcoo_multiply_sparse(mat, mat)
        return (jnp.sin(s.todense()).sum() + (r.todense() ** 2).sum()
                + sparse.bcoo_dot_general(prod, mat, dimension_numbers=(([1], [1]),
                                                                        ([], []))).todense()
                .sum())

    check_grads(lambda d: f(d, 1), (m.data,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(didax.jit(f)(m.data, 1), f(m.data, 1), rtol=1e-6)
    starts = jnp.array([0, 1])
    looped = np.stack([f(m.data, int(s)) for s in starts])
    np.testing.assert_allclose(didax.vmap(f, (None, 0))(m.data, starts), looped, rtol=1e-6)


def test_not_implemented():
    with pytest.raises(NotImplementedError, match="conv_general_dilated"):
        sparse.bcoo_conv_general_dilated(dense(sparse), jnp.ones((1, 1)))
