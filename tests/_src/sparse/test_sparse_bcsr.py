"""didax.experimental.sparse.BCSR and its functions against JAX's (layouts, nse, dtypes,
values), with derivatives by finite differences, jit against eager and vmap against a
loop."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.sparse as ssp
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


def csr(sp, x, n_batch=0, n_dense=0):
    return sp.BCSR.fromdense(x, nse=nse_of(x, n_batch, n_dense), n_batch=n_batch,
                             n_dense=n_dense)


CASES = {
    "fromdense": lambda J, n, sp: sp.BCSR.fromdense(A),
    "fromdense_padded": lambda J, n, sp: sp.BCSR.fromdense(A, nse=5),
    "fromdense_batch": lambda J, n, sp: csr(sp, B, n_batch=1),
    "fromdense_dense": lambda J, n, sp: csr(sp, B.transpose(1, 2, 0), n_dense=1),
    "matvec": lambda J, n, sp: csr(sp, A) @ n.arange(3.),
    "matmat": lambda J, n, sp: csr(sp, A) @ n.ones((3, 2)),
    "batched_dot": lambda J, n, sp: sp.bcsr_dot_general(
        csr(sp, B, n_batch=1), n.ones((2, 3, 2)),
        dimension_numbers=(([2], [1]), ([0], [0]))),
    "from_bcoo": lambda J, n, sp: sp.BCSR.from_bcoo(sp.BCOO.fromdense(A, nse=3)),
    "to_bcoo": lambda J, n, sp: csr(sp, B, n_batch=1).to_bcoo(),
    "extract": lambda J, n, sp: sp.bcsr_extract(csr(sp, A).indices,
                                                csr(sp, A).indptr,
                                                n.arange(6.).reshape(2, 3)),
    "broadcast": lambda J, n, sp: sp.bcsr_broadcast_in_dim(
        csr(sp, A), shape=(2, 2, 3), broadcast_dimensions=(1, 2)),
    "concatenate_rows": lambda J, n, sp: sp.bcsr_concatenate([csr(sp, A)] * 2,
                                                             dimension=0),
    "concatenate_cols": lambda J, n, sp: sp.bcsr_concatenate([csr(sp, A)] * 2,
                                                             dimension=1),
    "sum_duplicates": lambda J, n, sp: sp.bcsr_sum_duplicates(csr(sp, A)),
    "vmap_fromdense": lambda J, n, sp: J.vmap(
        lambda x: sp.BCSR.fromdense(x, nse=3).todense())(n.asarray(B)),
    "vmap_sparse": lambda J, n, sp: J.vmap(lambda m: m @ n.ones(3))(
        csr(sp, B, n_batch=1)),
}


register("bcsr", CASES)


@pytest.fixture(scope="module")
def jax_cases():
    return registered_results("bcsr", JAX)


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_jax(name, jax_cases):
    assert_matches(jax_cases[name], CASES[name], DIDAX)


def test_from_scipy_and_errors():
    m = sparse.BCSR.from_scipy_sparse(ssp.csr_matrix(A))
    want = jsparse.BCSR.from_scipy_sparse(ssp.csr_matrix(A))
    np.testing.assert_array_equal(m.indptr, want.indptr)
    np.testing.assert_array_equal(m.todense(), A)
    with pytest.raises(NotImplementedError, match="Transpose"):
        m.transpose()
    with pytest.raises(ValueError, match="2"):
        sparse.BCSR.fromdense(np.ones((2, 2, 2)))


def test_derivatives_jit_vmap():
    m = sparse.BCSR.fromdense(A)

    def f(data, v):
        mat = sparse.BCSR((data, m.indices, m.indptr), shape=m.shape)
        return jnp.sin(mat @ v) + sparse.bcsr_todense(mat).sum(0)[:2]

    v = jnp.array([0.5, -1.0, 2.0])
    check_grads(f, (m.data, v), order=2, modes=("fwd", "rev"))
    got = didax.grad(lambda x: (sparse.BCSR.fromdense(x, nse=3).todense() * x).sum())(A)
    want = jax.grad(lambda x: (jsparse.BCSR.fromdense(x, nse=3).todense() * x).sum())(A)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(didax.jit(f)(m.data, v), f(m.data, v), rtol=1e-6)
    vs = jnp.stack([v, 2 * v, -v])
    np.testing.assert_allclose(didax.vmap(f, (None, 0))(m.data, vs),
                               np.stack([f(m.data, x) for x in vs]), rtol=1e-6)
