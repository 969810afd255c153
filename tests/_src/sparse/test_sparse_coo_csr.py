"""COO, CSR and CSC and their functions and primitives: buffers and kinds against JAX's,
products against dense NumPy, derivatives by finite differences, jit against eager, and
the errors where JAX has no rule."""
import jax
import numpy as np
import pytest
from jax.experimental import sparse as jsparse

import didax
import didax.numpy as jnp
from didax.experimental import sparse
from didax.test_util import check_grads

A = np.array([[0, 1., 0, 2], [0, 0, 0, 0], [3, 0, 4, 0]], np.float32)


def buffers(m):
    return [np.asarray(x) for x in m.tree_flatten()[0]]


VARIANTS = {  # name -> f(format class); nse given where JAX infers it from values
    "fromdense": lambda C: C.fromdense(A, nse=4),
    "padded": lambda C: C.fromdense(A, nse=6),
    "truncated": lambda C: C.fromdense(A, nse=2, index_dtype=np.int16),
    "eye_below": lambda C: C._eye(3, 4, -1),
    "eye_above": lambda C: C._eye(3, 4, 2),
    "empty": lambda C: C._empty((3, 4)),
}


@pytest.fixture(scope="module")
def jax_layouts():
    """JAX's matrices of every format and variant, compiled together in one jit."""
    return jax.jit(lambda: {(fmt, k): f(getattr(jsparse, fmt)) for fmt in ("COO", "CSR", "CSC")
                            for k, f in VARIANTS.items()})()


@pytest.mark.parametrize("fmt", ["COO", "CSR", "CSC"])
def test_layouts_match_jax(fmt, jax_layouts):
    ours = getattr(sparse, fmt)
    for name, f in VARIANTS.items():
        m, want = f(ours), jax_layouts[fmt, name]
        assert type(m).__name__ == type(want).__name__ and m.shape == want.shape
        assert m.nse == want.nse and m.dtype == want.dtype
        assert m.tree_flatten()[1] == want.tree_flatten()[1]
        for got, exp in zip(buffers(m), buffers(want)):
            np.testing.assert_array_equal(got, exp)
            assert got.dtype == exp.dtype
    m, want = ours.fromdense(A), jax_layouts[fmt, "fromdense"]  # (nse inferred: 4)
    for got, exp in zip(buffers(m), buffers(want)):
        np.testing.assert_array_equal(got, exp)
    assert type(m.T).__name__ == type(want.T).__name__ and m.T.shape == (4, 3)
    assert repr(m) == repr(want)
    np.testing.assert_array_equal(m.todense(), A)
    np.testing.assert_array_equal(m.T.todense(), A.T)
    np.testing.assert_array_equal(m.T.T.todense(), A)
    assert hasattr(m, "_bufs") == hasattr(want, "_bufs")


@pytest.mark.parametrize("fmt", ["COO", "CSR", "CSC"])
def test_products_match_dense(fmt):
    m = getattr(sparse, fmt).fromdense(A)
    rng = np.random.default_rng(0)
    for x in (rng.standard_normal(4), rng.standard_normal((4, 3))):
        x = x.astype(np.float32)
        np.testing.assert_allclose(m @ x, A @ x, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(m.T @ x[:3], A.T @ x[:3], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(didax.jit(lambda m, x: m @ x)(m, x), m @ x, rtol=0)
    out = m @ jnp.arange(4)  # (promoted, as jnp promotes: an int vector gives float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, A @ np.arange(4.))
    m16 = getattr(sparse, fmt).fromdense(A.astype(np.float16))
    assert (m16 @ np.ones(4, np.float16)).dtype == np.float16
    np.testing.assert_array_equal(m16 @ np.ones(4, np.float16), A.sum(1))


def _rebuild(m, data):
    return type(m)((data,) + tuple(m.tree_flatten()[0][1:]), **m.tree_flatten()[1])


@pytest.mark.parametrize("fmt", ["coo", "csr"])
def test_function_derivatives(fmt):
    """Derivatives in the data and the dense operand, both ways round (JAX 0.10.2's reverse
    mode of the transposed matvec swaps rows and columns; finite differences decide)."""
    m = getattr(sparse, f"{fmt}_fromdense")(A)
    matvec, matmat = getattr(sparse, f"{fmt}_matvec"), getattr(sparse, f"{fmt}_matmat")
    todense, fromdense = getattr(sparse, f"{fmt}_todense"), getattr(sparse, f"{fmt}_fromdense")
    v4, v3 = np.arange(1., 5., dtype=np.float32), np.arange(1., 4., dtype=np.float32)
    B4 = np.arange(8., dtype=np.float32).reshape(4, 2)
    for transpose, v, B in ((False, v4, B4), (True, v3, B4[:3])):
        check_grads(lambda d, v, t=transpose: matvec(_rebuild(m, d), v, transpose=t),
                    (m.data, v), order=2, modes=("fwd", "rev"), eps=1e-2)
        check_grads(lambda d, B, t=transpose: matmat(_rebuild(m, d), B, transpose=t),
                    (m.data, B), order=2, modes=("fwd", "rev"), eps=1e-2)
    check_grads(lambda d: todense(_rebuild(m, d)), (m.data,), order=1, modes=("fwd", "rev"))
    # (no zeros: a perturbation keeps the stored positions, so finite differences apply)
    check_grads(lambda x: fromdense(x, nse=4).data, (A + 5,), order=1, modes=("fwd", "rev"))
    jitted = didax.jit(lambda d, v: matvec(_rebuild(m, d), v, transpose=True))
    np.testing.assert_array_equal(jitted(m.data, v3),
                                  matvec(_rebuild(m, m.data), v3, transpose=True))
    np.testing.assert_array_equal(didax.jit(lambda x: todense(fromdense(x, nse=5)))(A), A)


def test_primitives_and_errors():
    m, c = sparse.COO.fromdense(A), sparse.CSR.fromdense(A)
    jaxpr = str(didax.make_jaxpr(lambda d, v: sparse.csr_matvec(_rebuild(c, d), v))(c.data,
                                                                                 np.ones(4)))
    assert "csr_matvec" in jaxpr
    out = sparse.coo_matmat_p.bind(*m._bufs, np.ones((3, 2), np.float32), spinfo=m._info,
                                   transpose=True)
    np.testing.assert_array_equal(out, A.T @ np.ones((3, 2)))
    with pytest.raises(TypeError, match="one dtype"):
        sparse.coo_matvec(m, np.ones(4, np.int32))
    with pytest.raises(TypeError, match="4 rows"):
        sparse.csr_matvec(c, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="2-D"):
        sparse.CSR.fromdense(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="indptr"):
        sparse.CSR((c.data, c.indices, c.indptr[:-1]), shape=(3, 4))
    with pytest.raises(NotImplementedError, match="matmul with object of shape"):
        m @ np.ones((4, 2, 2))
    for op in (lambda: -m, lambda: m * 2, lambda: np.ones(3) @ c, lambda: c[0], c.T.sum):
        with pytest.raises(NotImplementedError):
            op()
    with pytest.raises(NotImplementedError, match="batch rule for 'coo_matvec'"):
        didax.vmap(lambda v: m @ v)(np.ones((2, 4), np.float32))
    with pytest.raises(NotImplementedError, match="axes argument"):
        m.transpose(axes=(1, 0))
    with pytest.raises(didax.errors.ConcretizationTypeError):
        didax.jit(lambda x: sparse.coo_fromdense(x).data)(A)
