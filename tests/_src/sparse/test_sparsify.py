"""didax.experimental.sparse.sparsify against JAX's: the sparse rules (elementwise,
products, reductions, shapes, control flow), the refusals, and jit, vmap and grad around a
sparsified function."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import sparse as jsparse

import didax
import didax.numpy as jnp
from didax.experimental import sparse
from didax.test_util import check_grads
from tests._src.sparse.sparse_compare import assert_matches, register, registered_results

JAX = (jax, jjnp, jsparse)
DIDAX = (didax, jnp, sparse)
A = np.array([[1., 0, 2, 0], [0, 3, 0, 0], [0, 0, 0, 4]], np.float32)

PROGRAMS = {
    "add_dense": lambda J, n, sp, m: m + n.ones((3, 4)),
    "add_sparse": lambda J, n, sp, m: m + m * 2,
    "mul_same": lambda J, n, sp, m: m * m,
    "div": lambda J, n, sp, m: n.abs(m) / 2.0,
    "div_by_sparse": lambda J, n, sp, m: n.ones((3, 4)) / m,
    "exp": lambda J, n, sp, m: n.exp(m),
    "sin_sqrt": lambda J, n, sp, m: n.sqrt(n.abs(n.sin(m))),
    "pow": lambda J, n, sp, m: m ** 3,
    "pow_negative": lambda J, n, sp, m: m ** -1,
    "astype": lambda J, n, sp, m: m.astype(int),
    "sum_all": lambda J, n, sp, m: m.sum(),
    "sum_axis": lambda J, n, sp, m: m.sum(1),
    "matvec": lambda J, n, sp, m: 2 * m.T @ n.arange(3.0),
    "spmm": lambda J, n, sp, m: m @ m.T,
    "index": lambda J, n, sp, m: m[1],
    "slice": lambda J, n, sp, m: m[:, 1:3],
    "reverse": lambda J, n, sp, m: m[::-1],
    "newaxis": lambda J, n, sp, m: m[None],
    "concatenate": lambda J, n, sp, m: n.concatenate([m, m]),
    "reshape": lambda J, n, sp, m: m.reshape(12),
    "fancy_index": lambda J, n, sp, m: m[n.array([2, 0])],
    "dynamic_slice": lambda J, n, sp, m: J.lax.dynamic_slice(m, (1, 1), (2, 2)),
    "todense": lambda J, n, sp, m: sp.todense(m) + 1,
    "compare": lambda J, n, sp, m: n.where(m > 0, m, 0),
    "jit": lambda J, n, sp, m: J.jit(lambda x: 2 * x)(m),
    "cond": lambda J, n, sp, m: J.lax.cond(True, lambda x: x, lambda x: -x, m),
    "fori": lambda J, n, sp, m: J.lax.fori_loop(0, 3, lambda i, x: x * 2, m),
    "scan": lambda J, n, sp, m: J.lax.scan(lambda c, _: (c * 2, None), m, None,
                                           length=3)[0],
    "while": lambda J, n, sp, m: J.lax.while_loop(lambda c: c[0] < 3,
                                                  lambda c: (c[0] + 1, c[1] * 2), (0, m))[1],
}


def sparsified(prog):
    def f(J, n, sp, m):
        return sp.sparsify(lambda m: prog(J, n, sp, m))(m)

    return f


register("sparsify", {k: sparsified(p) for k, p in PROGRAMS.items()},
         lambda sp: (sp.BCOO.fromdense(A),))


@pytest.fixture(scope="module")
def jax_programs():
    return registered_results("sparsify", JAX)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sparsify_like_jax(name, jax_programs):
    assert_matches(jax_programs[name], sparsified(PROGRAMS[name]), DIDAX,
                   inputs=(sparse.BCOO.fromdense(A),))


def test_sparsify_under_jit_and_with_pytrees():
    f = sparse.sparsify(lambda d: {"y": (d["m"] * 3).sum(1) @ d["v"]})
    m = sparse.BCOO.fromdense(A)
    args = {"m": m, "v": jnp.arange(3.0)}
    want = jsparse.sparsify(lambda d: {"y": (d["m"] * 3).sum(1) @ d["v"]})(
        {"m": jsparse.BCOO.fromdense(A), "v": jjnp.arange(3.0)})
    np.testing.assert_allclose(didax.jit(f)(args)["y"], want["y"], rtol=1e-6)
    np.testing.assert_allclose(f(args)["y"], want["y"], rtol=1e-6)


def test_sparsify_grad_and_vmap():
    m = sparse.BCOO.fromdense(A)
    v = jnp.arange(4.0) + 1

    def loss(data, v):
        mat = sparse.BCOO((data, m.indices), shape=m.shape)
        return sparse.sparsify(lambda x, y: jnp.sin(x) @ y)(mat, v).sum()

    check_grads(loss, (m.data, v), order=2, modes=("fwd", "rev"))
    batched = didax.vmap(lambda y: sparse.sparsify(lambda x: x @ y)(m))(jnp.ones((5, 4)) * v)
    np.testing.assert_allclose(batched, np.stack([A @ np.asarray(v)] * 5), rtol=1e-6)


def test_sparsify_refusals():
    with pytest.raises(NotImplementedError, match="use_tracer"):
        sparse.sparsify(lambda x: x, use_tracer=True)
    with pytest.raises(NotImplementedError, match="sparse rule for exp"):
        sparse.sparsify(jnp.exp)(sparse.BCOO.fromdense(A))
    with pytest.raises(NotImplementedError, match="BCOO"):
        sparse.sparsify(lambda x: x)(sparse.BCSR.fromdense(A))
    with pytest.raises(NotImplementedError, match="SparseTracer"):
        sparse.SparseTracer()
