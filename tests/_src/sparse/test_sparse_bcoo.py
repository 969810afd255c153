"""didax.experimental.sparse's BCOO class and functions against jax.experimental.sparse
0.10.2 (layouts, values, dtypes, reprs, random draws, derivatives) and dense NumPy; as a
pytree through jit, vmap and grad; the sparse-aware transformations; numpyro's CAR
log-density (its sparse path); and the errors for what does not fit or is not built."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.sparse as ssp
from jax.experimental import sparse as jsparse

import didax
import didax.numpy as jnp
from didax._src.config import enable_x64
from didax.errors import ConcretizationTypeError
from didax.experimental import sparse
from didax.test_util import check_grads

M = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)
M3 = np.stack([M, 2 * M[::-1]])
# stored elements with a repeated position, a zero, and one out of bounds
IDX = np.array([[0, 1], [2, 3], [0, 1], [3, 4], [1, 0], [2, 3]], np.int32)
DAT = np.array([1., 2., 3., 4., 0., -5.], np.float32)


def dup(lib):
    return lib.BCOO((DAT, IDX), shape=(3, 4))


def layout(mat):
    return (type(mat).__name__, tuple(mat.shape), np.dtype(mat.dtype).name, mat.nse,
            mat.n_batch, mat.n_sparse, mat.n_dense)


def assert_like_jax(got, want, exact=False):
    """The same kind of result as JAX's: a BCOO of the same layout and dense value (and the
    same stored arrays if `exact`), or a dense array of the same shape, dtype and values.
    `want` may be a pair (JAX's BCOO, its dense form) computed beforehand."""
    want, want_dense = want if isinstance(want, tuple) else (want, None)
    if isinstance(want, jsparse.BCOO):
        assert isinstance(got, sparse.BCOO), type(got)
        assert layout(got) == layout(want), (layout(got), layout(want))
        want_dense = want.todense() if want_dense is None else want_dense
        np.testing.assert_allclose(got.todense(), want_dense, rtol=1e-6)
        if exact:
            np.testing.assert_array_equal(got.indices, want.indices)
            np.testing.assert_array_equal(got.data, want.data)
            assert (got.indices_sorted, got.unique_indices) == (want.indices_sorted,
                                                                want.unique_indices)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6)


# ------------------------------------------------------------------------------------------
# Against JAX


LAYOUTS = [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0)]


def _with_dense(x):
    return (x, x.todense()) if isinstance(x, jsparse.BCOO) else x


def _jax_all(fns, *args):
    """JAX's results of several functions (each a BCOO with its dense form, or an array),
    traced and compiled together once: JAX compiles each eager operation on a sparse array
    separately, seconds in all."""
    return jax.jit(lambda *a: {k: _with_dense(f(*a)) for k, f in fns.items()})(*args)


def _count(nb, nd):  # (jit needs nse: the largest number of nonzero positions)
    nz = M3 != 0
    nz = nz.any(-1) if nd else nz
    return int(nz.reshape(int(np.prod(nz.shape[:nb])), -1).sum(-1).max())


@pytest.fixture(scope="module")
def jax_groups():
    """JAX's results of every group of cases below (fromdense layouts, operations, batched
    operations, creation, sparse transformations), compiled together in one jit: one
    compilation costs less than one per group."""
    fns = {("fromdense", (nb, nd)): lambda m, a, b, nb=nb, nd=nd: jsparse.BCOO.fromdense(
        m, nse=_count(nb, nd), n_batch=nb, n_dense=nd) for nb, nd in LAYOUTS}
    fns.update({("operations", k): lambda m, a, b, op=op: op(jsparse, a)
                for k, op in OPERATIONS.items()})
    fns.update({("batched", k): lambda m, a, b, op=op: op(jsparse, b)
                for k, op in BATCHED.items()})
    fns.update({("creation", k): lambda m, a, b, f=f: f(jsparse, jax.random)
                for k, f in CREATION.items() if k not in EAGER_ONLY})
    fns.update({("transformations", name): lambda m, a, b, name=name, kw=kw:
                _jax_transformation(name, kw) for name, kw in TRANSFORMATIONS})
    out = _jax_all(fns, M3, dup(jsparse), jsparse.BCOO.fromdense(M3, n_batch=1))
    groups = {}
    for (group, k), v in out.items():
        groups.setdefault(group, {})[k] = v
    return groups


@pytest.fixture(scope="module")
def jax_fromdense(jax_groups):
    return jax_groups["fromdense"]


@pytest.mark.parametrize("n_batch,n_dense", LAYOUTS)
def test_fromdense_layouts_and_reprs_match_jax(n_batch, n_dense, jax_fromdense):
    got = sparse.BCOO.fromdense(M3, n_batch=n_batch, n_dense=n_dense)
    want = jax_fromdense[n_batch, n_dense]
    assert repr(got) == repr(want[0])
    assert_like_jax(got, want, exact=True)
    assert got.ndim == 3 and got.size == 24 and len(got) == 2


OPERATIONS = {  # name -> f(sparse module, a BCOO with duplicates)
    "T": lambda sp, a: a.T,
    "transpose": lambda sp, a: sp.bcoo_transpose(a, permutation=(1, 0)),
    "sum0": lambda sp, a: a.sum(0),
    "sum1": lambda sp, a: a.sum(-1),
    "sum_all": lambda sp, a: a.sum(),
    "sum_keepdims0": lambda sp, a: a.sum(0, keepdims=True),
    "sum_keepdims1": lambda sp, a: a.sum(1, keepdims=True),
    "reduce_sum_all": lambda sp, a: sp.bcoo_reduce_sum(a, axes=(0, 1)),
    "mul_scalar": lambda sp, a: a * 2,
    "rmul_scalar": lambda sp, a: 2 * a,
    "mul_col": lambda sp, a: a * np.arange(3., dtype=np.float32)[:, None],
    "mul_row": lambda sp, a: a * np.arange(4., dtype=np.float32),
    "mul_dense": lambda sp, a: a * (M + 1),
    "div": lambda sp, a: a / 2,
    "neg": lambda sp, a: -a,
    "abs": lambda sp, a: abs(a),
    "add": lambda sp, a: a + a,
    "sub": lambda sp, a: a - sp.BCOO((DAT[::-1].copy(), IDX), shape=(3, 4)),
    "add_dense": lambda sp, a: a + M,
    "reshape": lambda sp, a: a.reshape(12),
    "reshape2": lambda sp, a: a.reshape((2, 6)),
    "matvec": lambda sp, a: a @ np.arange(4., dtype=np.float32),
    "matmat": lambda sp, a: a @ np.arange(8., dtype=np.float32).reshape(4, 2),
    "matmat_stacked": lambda sp, a: a @ np.arange(16., dtype=np.float32).reshape(2, 4, 2),
    "dot_general_rhs_sparse": lambda sp, a: sp.bcoo_dot_general(
        np.ones((2, 3), np.float32), a, dimension_numbers=(([1], [0]), ([], []))),
    "sum_duplicates": lambda sp, a: a.sum_duplicates(nse=2),
    "sort_indices": lambda sp, a: sp.bcoo_sort_indices(a),
    "extract": lambda sp, a: sp.bcoo_extract(a, M * 10),
    "extract_unique": lambda sp, a: sp.bcoo_extract(a, M * 10, assume_unique=True),
    "multiply_dense": lambda sp, a: sp.bcoo_multiply_dense(a, np.arange(4., dtype=np.float32)),
    "todense": lambda sp, a: sp.todense(a),
    "bcoo_todense": lambda sp, a: sp.bcoo_todense(a),
}
EXACT = {"T", "transpose", "sum_duplicates", "sort_indices", "extract", "extract_unique",
         "neg", "mul_scalar", "add"}


@pytest.fixture(scope="module")
def jax_operations(jax_groups):
    return jax_groups["operations"]


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_operations_match_jax(name, jax_operations):
    op = OPERATIONS[name]
    want = jax_operations[name]
    assert_like_jax(op(sparse, dup(sparse)), want, exact=name in EXACT)
    assert_like_jax(didax.jit(lambda a: op(sparse, a))(dup(sparse)), want, exact=name in EXACT)


def test_elementwise_functions_sum_duplicates_first():
    """|a|, a ** 2 and a.astype(int) act on the dense values, so repeated positions are
    summed first (keeping the number of stored elements, as JAX does)."""
    a = dup(sparse)
    dense = np.asarray(a.todense())
    for got, want in [(abs(a), np.abs(dense)), (a ** 2, dense ** 2),
                      (a.astype(np.int32), dense.astype(np.int32))]:
        assert (got.nse, got.unique_indices, got.dtype) == (6, True, want.dtype)
        np.testing.assert_array_equal(got.todense(), want)
    for got, nse in [(a.sum_duplicates(remove_zeros=False), 3),
                     (sparse.bcoo_sum_duplicates(a), 3), (a.sum_duplicates(), 2),
                     (sparse.bcoo_sum_duplicates(a, nse=5), 5)]:
        assert (got.nse, got.indices_sorted, got.unique_indices) == (nse, True, True)
        np.testing.assert_array_equal(got.todense(), dense)
        idx = np.asarray(got.indices)
        inside = (idx < [3, 4]).all(-1)
        assert inside[:2].all() and not inside[3:].any()  # sorted, padding out of bounds
        assert len({tuple(r) for r in idx[inside]}) == inside.sum()


BATCHED = {  # name -> f(sparse module, a BCOO of shape (2, 3, 4) with n_batch=1)
    "sum_batch": lambda sp, a: a.sum(0),
    "sum_sparse": lambda sp, a: a.sum(1),
    "sum_keepdims": lambda sp, a: a.sum(1, keepdims=True),
    "transpose": lambda sp, a: a.transpose((0, 2, 1)),
    "mul": lambda sp, a: a * np.arange(8., dtype=np.float32).reshape(2, 1, 4),
    "matmul": lambda sp, a: a @ np.arange(16., dtype=np.float32).reshape(2, 4, 2),
    "matvec": lambda sp, a: a @ np.arange(4., dtype=np.float32),
}


@pytest.fixture(scope="module")
def jax_batched(jax_groups):
    return jax_groups["batched"]


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_batched_operations_match_jax(name, jax_batched):
    got = BATCHED[name](sparse, sparse.BCOO.fromdense(M3, n_batch=1))
    assert_like_jax(got, jax_batched[name])


def test_products_from_the_left_of_numpy_arrays():
    a = sparse.BCOO.fromdense(M3, n_batch=1)
    x = np.arange(12., dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_allclose(x @ a, x @ M3)  # (NumPy defers to BCOO.__rmatmul__)
    np.testing.assert_allclose(np.arange(3.) @ sparse.BCOO.fromdense(M), np.arange(3.) @ M)
    np.testing.assert_allclose(a.__rmatmul__(jnp.ones(3)), np.ones(3) @ M3)
    np.testing.assert_allclose(np.ones((5, 3)) * 2 @ sparse.BCOO.fromdense(M), 2 * np.ones(
        (5, 3)) @ M)


CREATION = {  # name -> f(sparse module, random module)
    "eye": lambda sp, r: sp.eye(3),
    "eye_k": lambda sp, r: sp.eye(3, 4, k=1),
    "eye_negative_k": lambda sp, r: sp.eye(3, 4, k=-1),
    "eye_k_outside": lambda sp, r: sp.eye(3, 4, k=5),
    "eye_n_batch": lambda sp, r: sp.eye(3, n_batch=1),
    "eye_n_dense": lambda sp, r: sp.eye(3, n_dense=1),
    "eye_int": lambda sp, r: sp.eye(2, dtype=np.int32),
    "empty": lambda sp, r: sp.empty((2, 3)),
    "empty_n_batch": lambda sp, r: sp.empty((2, 3, 4), n_batch=1, nse=2),
    "empty_int": lambda sp, r: sp.empty((2, 3), dtype=np.int32),
    "random_n_batch": lambda sp, r: sp.random_bcoo(r.PRNGKey(3), (2, 3, 4), n_batch=1, nse=3,
                                                   dtype=np.float32),
    "random_sorted": lambda sp, r: sp.random_bcoo(r.PRNGKey(3), (5, 5), nse=0.5,
                                                  sorted_indices=True, dtype=np.float32),
}


EAGER_ONLY = {"eye_n_batch", "eye_n_dense"}  # (JAX builds them with fromdense: not jittable)


@pytest.fixture(scope="module")
def jax_creation(jax_groups):
    eager = {k: CREATION[k](jsparse, jax.random) for k in EAGER_ONLY}
    return {**jax_groups["creation"], **eager}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_eye_empty_and_random_bcoo_match_jax(name, jax_creation):
    """The same layouts and arrays, and random_bcoo's draws bit for bit."""
    assert_like_jax(CREATION[name](sparse, didax.random), jax_creation[name], exact=True)


def test_x64_dtypes_match_jax():
    fns = {"random": lambda sp, r: sp.random_bcoo(r.PRNGKey(0), (3, 4)),
           "scipy": lambda sp, r: sp.BCOO.from_scipy_sparse(ssp.csr_matrix(M.astype(
               np.float64))),
           "eye": lambda sp, r: sp.eye(3), "fromdense": lambda sp, r: sp.BCOO.fromdense(M, nse=4)}
    with enable_x64(True), jax.enable_x64(True):
        want = jax.eval_shape(lambda: {k: f(jsparse, jax.random) for k, f in fns.items()})
        for k, f in fns.items():
            got = f(sparse, didax.random)
            assert (got.dtype, got.indices.dtype) == (want[k].dtype, want[k].indices.dtype), k


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_from_scipy_sparse(fmt):
    mat = ssp.coo_matrix(M).asformat(fmt)
    got = sparse.BCOO.from_scipy_sparse(mat)
    want = jsparse.BCOO.from_scipy_sparse(mat)
    assert_like_jax(got, want, exact=True)


TRANSFORMATIONS = [("grad", {"argnums": (0, 1)}), ("value_and_grad", {}), ("jacfwd", {}),
                   ("jacrev", {"argnums": (0, 1)}), ("jacobian", {})]


def _transformed(name):
    if "grad" in name:
        return lambda a, x: ((a @ x) ** 2).sum()
    return lambda a, x: a @ x


def _bcoo_leaves(tree, cls):
    return jax.tree_util.tree_leaves(tree, is_leaf=lambda v: isinstance(v, cls))


def _jax_transformation(name, kw):
    x = np.arange(4., dtype=np.float32)
    out = getattr(jsparse, name)(_transformed(name), **kw)(jsparse.BCOO.fromdense(M, nse=4), x)
    return [_with_dense(w) for w in _bcoo_leaves(out, jsparse.BCOO)]


def test_sparse_transformations_match_jax(jax_groups):
    x = np.arange(4., dtype=np.float32)

    for name, kw in TRANSFORMATIONS:
        want = jax_groups["transformations"][name]
        got = _bcoo_leaves(getattr(sparse, name)(_transformed(name), **kw)(
            sparse.BCOO.fromdense(M), x), sparse.BCOO)
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert_like_jax(g, w, exact=isinstance(w, tuple))


def test_sparse_grad_with_aux_and_pytrees():
    a = sparse.BCOO.fromdense(M)
    g, aux = sparse.grad(lambda p: ((p["a"] @ p["x"]).sum(), 7), has_aux=True)(
        {"a": a, "x": np.ones(4, np.float32)})
    assert aux == 7 and isinstance(g["a"], sparse.BCOO)
    np.testing.assert_array_equal(g["a"].indices, a.indices)
    np.testing.assert_allclose(g["a"].data, [1., 1., 1., 1.])
    np.testing.assert_allclose(g["x"], M.sum(0))


def test_numpyro_car_log_prob_sparse_path_matches_jax():
    """numpyro's CAR distribution with is_sparse=True: `BCOO.from_scipy_sparse(adj)` and
    `(adj @ phi[..., None]).squeeze(-1)`, under jit and grad, against JAX."""
    n = 6
    adj = np.zeros((n, n))
    for i in range(n):
        adj[i, (i + 1) % n] = adj[(i + 1) % n, i] = 1
    adj[0, 3] = adj[3, 0] = 1
    phi = np.random.default_rng(0).standard_normal((3, n)).astype(np.float32)

    def log_prob(lib, sp, np_, value):
        adj_matrix = sp.BCOO.from_scipy_sparse(ssp.csr_matrix(adj))
        degree = np.asarray(ssp.csr_matrix(adj).sum(axis=-1)).squeeze(axis=-1)
        quad = np_.sum(value * (degree * value - 0.5 * (adj_matrix @ value[..., np_.newaxis])
                                .squeeze(axis=-1)), -1)
        return -0.5 * quad + np_.log(degree).sum(-1)

    def value_and_grad(lib, sp, np_):
        return lib.value_and_grad(lambda v: log_prob(lib, sp, np_, v).sum())

    want = jax.jit(lambda v: (log_prob(jax, jsparse, jjnp, v),
                              value_and_grad(jax, jsparse, jjnp)(v)))(phi)
    for run in (lambda f: f, didax.jit):
        got = run(lambda v: (log_prob(didax, sparse, jnp, v),
                             value_and_grad(didax, sparse, jnp)(v)))(phi)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------
# Pytrees: jit, vmap, grad


def test_bcoo_is_a_pytree_through_jit():
    a = dup(sparse)
    leaves, tree = didax.tree_util.tree_flatten(a)
    assert len(leaves) == 2 and didax.tree_util.tree_unflatten(tree, leaves).shape == (3, 4)
    seen = []

    def f(a):
        seen.append(repr(a))
        return (a.T * 2).sum_duplicates(nse=4), a @ np.ones(4, np.float32)

    got = didax.jit(f)(a)
    want = f(a)
    assert seen[0].startswith("StagingTracer[BCOO(float32[3, 4], nse=6)")
    for g, w in zip(didax.tree_util.tree_leaves(got), didax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(g, w)
    assert a.block_until_ready() is a


def test_vmap_maps_over_batch_dimensions_of_a_bcoo():
    a = sparse.BCOO.fromdense(M3, n_batch=1)
    inner = []

    def f(b, x):
        inner.append((b.shape, b.n_batch))
        return b @ x, b * 2

    xs = np.arange(8., dtype=np.float32).reshape(2, 4)
    out, doubled = didax.vmap(f)(a, xs)
    assert inner[0] == ((3, 4), 0)
    np.testing.assert_allclose(out, np.stack([M3[0] @ xs[0], M3[1] @ xs[1]]))
    assert isinstance(doubled, sparse.BCOO) and doubled.shape == (2, 3, 4)
    np.testing.assert_allclose(doubled.todense(), 2 * M3)
    made = didax.vmap(lambda m: sparse.BCOO.fromdense(m, nse=4))(M3)
    assert repr(made) == "BCOO(float32[2, 3, 4], nse=4, n_batch=1)"
    np.testing.assert_allclose(made.todense(), M3)


def test_vmap_of_operations_matches_a_loop():
    datas = np.stack([DAT, 2 * DAT + 1, -DAT])
    xs = np.arange(12., dtype=np.float32).reshape(3, 4)

    def f(d, x):
        a = sparse.BCOO((d, IDX), shape=(3, 4))
        summed = a.sum_duplicates(nse=4)
        return (summed.T @ (a @ x)) + (a * x).sum(0).todense() + a.sort_indices().data.sum()

    got = didax.vmap(f)(datas, xs)
    np.testing.assert_allclose(got, np.stack([f(d, x) for d, x in zip(datas, xs)]),
                               rtol=1e-6)
    np.testing.assert_allclose(didax.jit(f)(datas[1], xs[1]), f(datas[1], xs[1]), rtol=1e-6)


def test_derivatives_through_operations():
    rng = np.random.default_rng(0)
    with enable_x64(True):
        data = DAT.astype(np.float64)
        x = rng.standard_normal(4)
        y = rng.standard_normal((3, 4))

        def f(d, x, y):
            a = sparse.BCOO((d, IDX), shape=(3, 4))
            out = a.sum_duplicates(nse=5, remove_zeros=False).T @ (a @ x)
            out = out + (a * y).sum(0).todense() + a.sort_indices().reshape(12).todense()[:4]
            return out + (a.T / y.T).sum(1).todense() + (a + a).todense().sum(0)

        check_grads(f, (data, x, y), order=2, modes=("fwd", "rev"))
        m3 = rng.standard_normal((2, 3, 4))
        a = sparse.BCOO.fromdense(m3, n_batch=1, nse=12)
        check_grads(lambda d, r: sparse.BCOO((d, a.indices), shape=a.shape).sum(1) @ r,
                    (a.data, rng.standard_normal(4)), order=2)


# ------------------------------------------------------------------------------------------
# Errors and what is not built


def test_errors():
    a = dup(sparse)
    with pytest.raises(ConcretizationTypeError, match="nse argument of bcoo_fromdense"):
        didax.jit(lambda m: sparse.BCOO.fromdense(m))(M)
    with pytest.raises(ValueError, match="nse must be specified when using the function "
                                         "within jit"):
        didax.jit(lambda a: a.sum_duplicates())(a)
    with pytest.raises(NotImplementedError, match=r"permutation \(1, 0, 2\) moves dimensions"):
        sparse.BCOO.fromdense(M3, n_batch=1).transpose((1, 0, 2))
    with pytest.raises(TypeError, match="contracting dimensions must have the same sizes"):
        a @ np.ones(3)
    with pytest.raises(NotImplementedError, match="output shape matches the sparse"):
        a * np.ones((2, 3, 4))
    with pytest.raises(NotImplementedError, match="larger than Y.shape"):
        a + 1
    with pytest.raises(ValueError, match=r"data has 3 stored elements.*indices have 6"):
        sparse.BCOO((DAT[:3], IDX), shape=(3, 4))
    with pytest.raises(ValueError, match=r"inconsistent layout.*shape=\(3,\)"):
        sparse.BCOO((DAT, IDX), shape=(3,))
    with pytest.raises(TypeError, match="pair \\(data, indices\\)"):
        sparse.BCOO(DAT, shape=(3, 4))
    with pytest.raises(TypeError, match="bcoo_transpose expects a BCOO.*shape \\(3, 4\\)"):
        sparse.bcoo_transpose(M, permutation=(1, 0))
    with pytest.raises(TypeError, match="sparse array: it does not convert"):
        np.asarray(a)
    with pytest.raises(NotImplementedError, match="bcoo_update_layout"):
        sparse.BCOO.from_scipy_sparse(ssp.csr_matrix(M), n_batch=1)
    with pytest.raises(NotImplementedError, match="sparse_format='bcsr'"):
        sparse.eye(3, sparse_format="bcsr")
    with pytest.raises(NotImplementedError, match="only reshapes of the sparse dimensions"):
        sparse.BCOO.fromdense(M3, n_batch=1).reshape(24)
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape(5)
    with pytest.raises(ValueError, match="n_batch=3 and n_dense=0"):
        sparse.BCOO.fromdense(M, n_batch=3)
    with pytest.raises(ValueError, match="between 0 and 12"):
        sparse.random_bcoo(didax.random.PRNGKey(0), (3, 4), nse=13)


def test_only_the_built_names_exist():
    built = {"BCOO", "JAXSparse", "bcoo_dot_general", "bcoo_dot_general_p", "bcoo_extract",
             "bcoo_extract_p", "bcoo_fromdense", "bcoo_fromdense_p", "bcoo_multiply_dense",
             "bcoo_reduce_sum", "bcoo_reshape", "bcoo_sort_indices", "bcoo_sum_duplicates",
             "bcoo_todense", "bcoo_todense_p", "bcoo_transpose", "empty", "eye", "grad",
             "jacfwd", "jacobian", "jacrev", "random_bcoo", "todense", "value_and_grad"}
    public = {n for n in dir(sparse) if not n.startswith("_")}
    assert built <= public
    assert built <= set(dir(jsparse))
