"""The sparse primitives (bcoo_todense, bcoo_extract, bcoo_fromdense, bcoo_dot_general and
bcoo_dot_general_transpose_data) through every interpreter, on every layout (batch, sparse
and dense dimensions), against dense NumPy and against jax 0.10.2:

- eager values against the dense NumPy computation, at float32, float64, complex64 and int32
  (tolerances per dtype), with stored elements out of bounds and repeated positions;
- check_grads to second order, forward and reverse, in float64 (data, dense operands);
- the transposes: <ct, f(u)> == <f^T(ct), u> for each linear map;
- jit against eager, and vmap against a Python loop, batching each operand and all at once;
- jaxprs printed as JAX prints them; clear errors for operands that do not fit.
"""
import jax
import numpy as np
import pytest
from jax.experimental import sparse as jsparse

import didax
from didax._src.config import enable_x64
from didax._src.primitives.sparse import dot_general as dot_prim
from didax._src.primitives.sparse import fromdense as fromdense_prim
from didax._src.primitives.sparse import todense as todense_prim
from didax._src.primitives.sparse.layout import SparseInfo
from didax.experimental import sparse
from didax.test_util import check_grads

TOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12,
       np.dtype(np.complex64): 1e-5, np.dtype(np.int32): 0}
DTYPES = list(TOL)

# (shape, n_batch, n_dense) of the sparse operands
LAYOUTS = [((3, 4), 0, 0), ((2, 3, 4), 1, 0), ((2, 3, 4), 0, 1), ((2, 3, 4, 2), 1, 1),
           ((2, 3, 4), 2, 0), ((5,), 0, 0)]
LAYOUT_IDS = [f"{s}-b{b}-d{d}" for s, b, d in LAYOUTS]


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True), jax.enable_x64(True):
        yield


def _values(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind == "i":
        x = rng.integers(-4, 5, shape)
    return x.astype(dtype)


def sparse_operands(shape, n_batch, n_dense, dtype=np.float64, seed=0, extra=2):
    """(dense, data, indices): a dense array half zeros and the (data, indices) storing it,
    with `extra` more stored elements per batch element: one repeating a position (its data
    split between the two) and the others out of bounds (holding junk that must not count)."""
    rng = np.random.default_rng(seed)
    dense = _values(rng, shape, dtype) * (rng.random(shape) < 0.5)
    data, indices = fromdense_prim._fromdense_impl(
        dense, nse=int(np.prod(shape[n_batch:len(shape) - n_dense])), n_batch=n_batch,
        n_dense=n_dense, index_dtype=np.dtype(np.int32))
    if extra:
        nb = n_batch
        sparse = np.asarray(shape[nb:len(shape) - n_dense])
        more_idx = np.broadcast_to(sparse, indices.shape[:nb] + (extra, len(sparse))).copy()
        more_data = _values(rng, data.shape[:nb] + (extra,) + data.shape[nb + 1:], dtype)
        # the first extra element repeats the first stored one's position, halving its value
        more_idx[(slice(None),) * nb + (0,)] = indices[(slice(None),) * nb + (0,)]
        first = data[(slice(None),) * nb + (slice(0, 1),)]
        if np.dtype(dtype).kind != "i":
            more_data[(slice(None),) * nb + (slice(0, 1),)] = first / 2
            data = data.copy()
            data[(slice(None),) * nb + (slice(0, 1),)] = first / 2
        else:
            more_data[(slice(None),) * nb + (slice(0, 1),)] = 0
        data = np.concatenate([data, more_data], axis=nb)
        indices = np.concatenate([indices, more_idx.astype(indices.dtype)], axis=nb)
    return dense, data, indices


def _close(got, want, dtype, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == np.dtype(dtype), (what, got.dtype, dtype)
    tol = TOL[np.dtype(dtype)]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)


def _todense(data, indices, shape):
    return todense_prim.bcoo_todense(data, indices, spinfo=SparseInfo(tuple(shape)))


def _dot(data, indices, rhs, shape, dims):
    return dot_prim.bcoo_dot_general(data, indices, rhs, dimension_numbers=dims,
                                     lhs_spinfo=SparseInfo(tuple(shape)))


# Products per layout: (rhs shape, dimension numbers), contracting sparse, batch and dense
# dimensions, pairing batch dimensions, and leaving sparse dimensions free.
PRODUCTS = {
    ((3, 4), 0, 0): [((4,), (((1,), (0,)), ((), ()))), ((5, 3), (((0,), (1,)), ((), ()))),
                     ((4, 2), (((1,), (0,)), ((), ()))), ((2,), (((), ()), ((), ())))],
    ((2, 3, 4), 1, 0): [((2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
                        ((4, 5), (((2,), (0,)), ((), ()))), ((2, 5), (((0,), (0,)), ((), ()))),
                        ((3, 2), (((1, 0), (0, 1)), ((), ())))],
    ((2, 3, 4), 0, 1): [((4, 5), (((2,), (0,)), ((), ()))), ((3, 5), (((1,), (0,)), ((), ()))),
                        ((3, 2), (((1, 0), (0, 1)), ((), ())))],
    ((2, 3, 4, 2), 1, 1): [((2, 4, 3), (((2,), (1,)), ((0,), (0,)))),
                           ((2, 3), (((3, 1), (0, 1)), ((), ())))],
    ((2, 3, 4), 2, 0): [((2, 3, 4), (((2,), (2,)), ((0, 1), (0, 1)))),
                        ((3, 4), (((1, 2), (0, 1)), ((), ())))],
    ((5,), 0, 0): [((5, 2), (((0,), (0,)), ((), ()))), ((3,), (((), ()), ((), ())))],
}
PRODUCT_CASES = [pytest.param(layout, rhs, dims, id=f"{lid}-{rhs}-{dims}")
                 for layout, lid in zip(LAYOUTS, LAYOUT_IDS) for rhs, dims in PRODUCTS[layout]]


# ------------------------------------------------------------------------------------------
# Eager values against dense NumPy


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_todense_and_extract_against_numpy(layout, dtype):
    shape, nb, nd = layout
    dense, data, indices = sparse_operands(shape, nb, nd, dtype)
    _close(_todense(data, indices, shape), dense, dtype, "todense")
    m = _values(np.random.default_rng(1), shape, dtype)
    got = todense_prim.bcoo_extract(indices, m)
    # each stored element reads m at its position; out of bounds reads zero
    assert got.shape == data.shape
    back = _todense(np.asarray(got), indices, shape)
    occupied = np.asarray(_todense(np.ones_like(data), indices, shape))
    _close(back, m * occupied, dtype, "todense(extract(m)) counts m once per stored element")


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_extract_of_repeated_positions_reads_the_first(layout):
    shape, nb, nd = layout
    dense, data, indices = sparse_operands(shape, nb, nd)
    m = _values(np.random.default_rng(1), shape, np.float64)
    unique = np.asarray(todense_prim.bcoo_extract(indices, m, assume_unique=False))
    _close(_todense(unique, indices, shape), m * (np.asarray(
        _todense(np.ones_like(data), indices, shape)) > 0), np.float64)


def _fromdense_reference(dense, nse, nb, nd):
    """Per batch element, the first `nse` nonzero positions in row-major order, padded with
    the out-of-bounds position `sparse_shape` and zero data."""
    shape = dense.shape
    batch, sparse = shape[:nb], shape[nb:len(shape) - nd]
    blocks = dense.reshape((int(np.prod(batch)),) + sparse + shape[len(shape) - nd:])
    datas, indices = [], []
    for block in blocks:
        nz = block != 0
        nz = nz.any(axis=tuple(range(len(sparse), nz.ndim))) if nd else nz
        pos = np.argwhere(nz)[:nse]
        pad = nse - len(pos)
        idx = np.concatenate([pos, np.tile(np.asarray(sparse), (pad, 1))]).reshape(nse, -1)
        vals = np.stack([block[tuple(p)] for p in pos]) if len(pos) else np.zeros(
            (0,) + shape[len(shape) - nd:], dense.dtype)
        datas.append(np.concatenate([vals, np.zeros((pad,) + vals.shape[1:], dense.dtype)]))
        indices.append(idx[:, :len(sparse)])
    return (np.stack(datas).reshape(batch + (nse,) + shape[len(shape) - nd:]),
            np.stack(indices).reshape(batch + (nse, len(sparse))))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_fromdense_against_numpy(layout, dtype):
    shape, nb, nd = layout
    dense = sparse_operands(shape, nb, nd, dtype, extra=0)[0]
    for nse in (1, 3, int(np.prod(shape[nb:len(shape) - nd])) + 1):
        data, indices = fromdense_prim.bcoo_fromdense(dense, nse=nse, n_batch=nb, n_dense=nd)
        want_data, want_indices = _fromdense_reference(dense, nse, nb, nd)
        assert indices.dtype == np.int32 and data.dtype == dtype
        np.testing.assert_array_equal(indices, want_indices)
        np.testing.assert_array_equal(data, want_data)


def test_fromdense_against_jax():
    shape, nb, nd = (2, 3, 4, 2), 1, 1
    dense = sparse_operands(shape, nb, nd, np.float32, extra=0)[0]
    data, indices = fromdense_prim.bcoo_fromdense(dense, nse=5, n_batch=nb, n_dense=nd)
    want = jax.jit(lambda m: jsparse.bcoo_fromdense(m, nse=5, n_batch=nb, n_dense=nd))(dense)
    np.testing.assert_array_equal(indices, want.indices)
    np.testing.assert_array_equal(data, want.data)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout,rhs_shape,dims", PRODUCT_CASES)
def test_dot_general_against_numpy(layout, rhs_shape, dims, dtype):
    shape, nb, nd = layout
    dense, data, indices = sparse_operands(shape, nb, nd, dtype)
    rhs = _values(np.random.default_rng(2), rhs_shape, dtype)
    want = _dense_dot(dense, rhs, dims)
    _close(_dot(data, indices, rhs, shape, dims), want, dtype, "bcoo_dot_general")


def _dense_dot(a, b, dims):
    """lax.dot_general in NumPy (an einsum): batch dimensions, lhs free, rhs free."""
    (lc, rc), (lb, rb) = dims
    la, lbl = list(range(a.ndim)), list(range(a.ndim, a.ndim + b.ndim))
    for x, y in zip(lc + lb, rc + rb):
        lbl[y] = la[x]
    out = ([la[d] for d in lb] + [la[d] for d in range(a.ndim) if d not in lc + lb]
           + [lbl[d] for d in range(b.ndim) if d not in rc + rb])
    return np.einsum(a, la, b, lbl, out)


# the products JAX computes too (it does not contract dense dimensions), a few of each kind
JAX_PRODUCT_CASES = [c for c in PRODUCT_CASES
                     if not any(d >= len(c.values[0][0]) - c.values[0][2]
                                for d in c.values[2][0][0])][::3]


@pytest.mark.parametrize("layout,rhs_shape,dims", JAX_PRODUCT_CASES)
def test_dot_general_against_jax(layout, rhs_shape, dims):
    shape, nb, nd = layout
    dense, data, indices = sparse_operands(shape, nb, nd, np.float32)
    rhs = _values(np.random.default_rng(2), rhs_shape, np.float32)
    want = jsparse.bcoo_dot_general(jsparse.BCOO((data, indices), shape=shape), rhs,
                                    dimension_numbers=dims)
    _close(_dot(data, indices, rhs, shape, dims), want, np.float32)


def test_16_bit_floats_are_summed_in_float32():
    _, data, indices = sparse_operands((3, 4), 0, 0, np.float32)
    rhs = np.ones(4, np.float32)
    for dtype in (np.float16, didax.numpy.bfloat16):
        got = _dot(data.astype(dtype), indices, rhs.astype(dtype), (3, 4),
                   (((1,), (0,)), ((), ())))
        assert got.dtype == dtype
        np.testing.assert_allclose(np.asarray(got, np.float32), _dot(
            data.astype(dtype).astype(np.float32), indices, rhs, (3, 4),
            (((1,), (0,)), ((), ()))).astype(dtype).astype(np.float32))


# ------------------------------------------------------------------------------------------
# Derivatives


@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_todense_extract_fromdense_derivatives(layout):
    shape, nb, nd = layout
    _, data, indices = sparse_operands(shape, nb, nd)
    m = _values(np.random.default_rng(3), shape, np.float64)
    check_grads(lambda d: _todense(d, indices, shape), (data,), order=2)
    check_grads(lambda x: todense_prim.bcoo_extract(indices, x), (m,), order=2)
    # every position nonzero: finite differences keep fromdense's stored positions
    nse = int(np.prod(shape[nb:len(shape) - nd]))
    check_grads(lambda x: fromdense_prim.bcoo_fromdense(x, nse=nse, n_batch=nb,
                                                        n_dense=nd)[0], (m,), order=2)


@pytest.mark.parametrize("layout,rhs_shape,dims", PRODUCT_CASES)
def test_dot_general_derivatives(layout, rhs_shape, dims):
    shape, nb, nd = layout
    _, data, indices = sparse_operands(shape, nb, nd)
    rhs = _values(np.random.default_rng(4), rhs_shape, np.float64)
    check_grads(lambda d, r: _dot(d, indices, r, shape, dims), (data, rhs), order=2)


@pytest.mark.parametrize("layout,rhs_shape,dims", PRODUCT_CASES[::3])
def test_dot_general_transpose_data_derivatives(layout, rhs_shape, dims):
    shape, nb, nd = layout
    _, data, indices = sparse_operands(shape, nb, nd)
    rng = np.random.default_rng(5)
    rhs = _values(rng, rhs_shape, np.float64)
    ct = _values(rng, np.shape(_dot(data, indices, rhs, shape, dims)), np.float64)
    p = dot_prim.bcoo_dot_general_transpose_data_p
    check_grads(lambda c, r: p.bind(c, indices, r, dimension_numbers=dims,
                                    lhs_spinfo=SparseInfo(shape)), (ct, rhs), order=2)


def _inner(a, b):
    return float(np.sum(np.asarray(a) * np.asarray(b)))


@pytest.mark.parametrize("layout,rhs_shape,dims", PRODUCT_CASES)
def test_transposes_are_adjoints(layout, rhs_shape, dims):
    """<ct, f(u)> == <f^T(ct), u> for the linear maps of each primitive."""
    shape, nb, nd = layout
    _, data, indices = sparse_operands(shape, nb, nd)
    rng = np.random.default_rng(6)
    rhs = _values(rng, rhs_shape, np.float64)
    for f, u in [(lambda d: _dot(d, indices, rhs, shape, dims), data),
                 (lambda r: _dot(data, indices, r, shape, dims), rhs),
                 (lambda d: _todense(d, indices, shape), data),
                 (lambda m: todense_prim.bcoo_extract(indices, m), _values(rng, shape,
                                                                           np.float64))]:
        y, f_t = didax.vjp(f, u)
        c = _values(rng, np.shape(y), np.float64)
        (u_ct,) = f_t(c)
        np.testing.assert_allclose(_inner(c, y), _inner(u_ct, u), rtol=1e-10)


def test_grad_against_jax():
    dense, data, indices = sparse_operands((2, 3, 4), 1, 0, np.float32)
    rhs = _values(np.random.default_rng(7), (2, 4, 5), np.float32)
    dims = (((2,), (1,)), ((0,), (0,)))

    def loss(lib_dot):
        return lambda d, r: (lib_dot(d, r) ** 2).sum()

    ours = didax.grad(loss(lambda d, r: _dot(d, indices, r, (2, 3, 4), dims)), (0, 1))(
        data, rhs)
    theirs = jax.jit(jax.grad(loss(lambda d, r: jsparse.bcoo_dot_general(
        jsparse.BCOO((d, indices), shape=(2, 3, 4)), r, dimension_numbers=dims)), (0, 1)))(
        data, rhs)
    for a, b in zip(ours, theirs):
        _close(a, b, np.float32)


# ------------------------------------------------------------------------------------------
# jit and vmap


def _cases():
    """(name, function, operands) applying each primitive."""
    out = []
    for (shape, nb, nd), lid in zip(LAYOUTS, LAYOUT_IDS):
        _, data, indices = sparse_operands((shape), nb, nd)
        m = _values(np.random.default_rng(8), shape, np.float64)
        out.append((f"todense-{lid}", lambda d, i, s=shape: _todense(d, i, s), (data, indices)))
        out.append((f"extract-{lid}", lambda i, x: todense_prim.bcoo_extract(i, x),
                    (indices, m)))
        out.append((f"fromdense-{lid}", lambda x, nb=nb, nd=nd: fromdense_prim.bcoo_fromdense(
            x, nse=3, n_batch=nb, n_dense=nd), (m,)))
        for rhs_shape, dims in PRODUCTS[(shape, nb, nd)][:2]:
            rhs = _values(np.random.default_rng(9), rhs_shape, np.float64)
            out.append((f"dot-{lid}-{dims}", lambda d, i, r, s=shape, dims=dims: _dot(
                d, i, r, s, dims), (data, indices, rhs)))
            ct = _values(np.random.default_rng(10), np.shape(_dot(data, indices, rhs, shape,
                                                                   dims)), np.float64)
            out.append((f"transpose_data-{lid}-{dims}", lambda c, i, r, s=shape, dims=dims:
                        dot_prim.bcoo_dot_general_transpose_data_p.bind(
                            c, i, r, dimension_numbers=dims, lhs_spinfo=SparseInfo(s)),
                        (ct, indices, rhs)))
    return out


CASES = _cases()


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_jit_matches_eager(name, fn, args):
    want = fn(*args)
    got = didax.jit(fn)(*args)
    for g, w in zip(didax.tree_util.tree_leaves(got), didax.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


def _example(rng, x, b):
    """Example `b` of a batch built from operand `x`: integer operands (indices) are shifted
    cyclically along their stored elements, float ones scaled and perturbed."""
    x = np.asarray(x)
    if x.dtype.kind == "i":
        return np.roll(x, b, axis=-2)
    return x * (1 + b) + rng.standard_normal(x.shape) * 0.1


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_a_loop(name, fn, args):
    rng = np.random.default_rng(11)
    batch = 3
    for which in [*range(len(args)), "all"]:
        batched = range(len(args)) if which == "all" else [which]
        axis = -1 if which == "all" else 0
        examples = [[_example(rng, a, b) if i in batched else a for i, a in enumerate(args)]
                    for b in range(batch)]
        in_axes = tuple((axis if i in batched else None) for i in range(len(args)))
        stacked = [np.stack([e[i] for e in examples], axis) if i in batched else a
                   for i, a in enumerate(args)]
        got = didax.vmap(fn, in_axes=in_axes)(*stacked)
        per = [fn(*e) for e in examples]
        got_leaves = didax.tree_util.tree_leaves(got)
        for k, g in enumerate(got_leaves):
            want = np.stack([np.asarray(didax.tree_util.tree_leaves(p)[k]) for p in per])
            np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{name}: vmap over {which}")


def test_vmap_of_grad_of_a_product():
    _, data, indices = sparse_operands((3, 4), 0, 0)
    rhs = _values(np.random.default_rng(12), (2, 4), np.float64)
    dims = (((1,), (0,)), ((), ()))

    def loss(d, r):
        return (_dot(d, indices, r, (3, 4), dims) ** 3).sum()

    datas = np.stack([data, 2 * data])
    got = didax.vmap(didax.grad(loss, (0, 1)))(datas, np.stack([rhs[0], rhs[1]]))
    for b in range(2):
        want = didax.grad(loss, (0, 1))(datas[b], rhs[b])
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g)[b], w, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Printing and errors


def test_jaxprs_print_as_jax_prints_them():
    m = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)
    x = np.ones(4, np.float32)
    with enable_x64(False), jax.enable_x64(False):
        a, ja = sparse.BCOO.fromdense(m), jsparse.BCOO.fromdense(m)
        for ours, theirs, args, jargs in [
                (lambda a: a.todense(), lambda a: a.todense(), (a,), (ja,)),
                (lambda a, x: a @ x, lambda a, x: a @ x, (a, x), (ja, x)),
                (lambda a, m: sparse.bcoo_extract(a, m).data,
                 lambda a, m: jsparse.bcoo_extract(a, m).data, (a, m), (ja, m))]:
            assert str(didax.make_jaxpr(ours)(*args)) == str(jax.make_jaxpr(theirs)(*jargs))


def test_errors_name_the_shapes_and_dtypes():
    _, data, indices = sparse_operands((3, 4), 0, 0, extra=0)
    with pytest.raises(ValueError, match=r"data has 3 stored elements.*indices have 12"):
        _todense(data[:3], indices, (3, 4))
    with pytest.raises(ValueError, match=r"inconsistent layout.*shape=\(3,\)"):
        _todense(data, indices, (3,))
    with pytest.raises(TypeError, match="indices must be integers, got dtype float64"):
        _todense(data, indices.astype(np.float64), (3, 4))
    with pytest.raises(TypeError, match="same sizes.*lhs dimension 1 of size 4"):
        _dot(data, indices, np.ones(3), (3, 4), (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="one dtype, got float64 data and a float32 rhs"):
        _dot(data, indices, np.ones(4, np.float32), (3, 4), (((1,), (0,)), ((), ())))
    with pytest.raises(NotImplementedError, match="batch dimensions .* must be batch"):
        _dot(data, indices, np.ones((3, 4)), (3, 4), (((1,), (1,)), ((0,), (0,))))
    with pytest.raises(ValueError, match="n_batch=2 and n_dense=1"):
        fromdense_prim.bcoo_fromdense(np.ones((2, 2)), nse=1, n_batch=2, n_dense=1)
    with pytest.raises(NotImplementedError, match="assume_unique=False"):
        didax.grad(lambda m: todense_prim.bcoo_extract(indices, m, assume_unique=False).sum())(
            np.ones((3, 4)))
