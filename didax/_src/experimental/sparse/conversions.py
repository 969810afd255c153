"""Between dense and sparse: `fromdense` (counting the stored elements when `nse` is not
given), `todense`, `extract`, SciPy's sparse matrices, and the sparse `empty` and `eye`."""
from __future__ import annotations

import operator

import numpy as np

from didax._src import core, dtypes
from didax._src.core import get_aval
from didax._src.errors import concretization_error
from didax._src.experimental.sparse.duplicates import mark_duplicates
from didax._src.experimental.sparse.parts import Parts, info
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse import fromdense as fromdense_prim
from didax._src.primitives.sparse import todense as todense_prim


def _layout_counts(name, ndim, n_batch, n_dense):
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > ndim:
        raise ValueError(f"{name}: n_batch={n_batch} and n_dense={n_dense} must be "
                         f"non-negative with n_batch + n_dense <= ndim={ndim}")
    return n_batch, n_dense


def fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32) -> Parts:
    """The sparse form of `mat`; `nse` (the number of stored elements per batch element) is
    the largest count of nonzero positions unless given, which needs a concrete `mat`."""
    mat = jnp.asarray(mat)
    aval = get_aval(mat)
    n_batch, n_dense = _layout_counts("bcoo_fromdense", aval.ndim, n_batch, n_dense)
    if nse is None:
        value = core.concrete_value(mat)
        if value is None:
            raise concretization_error(
                mat, "the nse argument of bcoo_fromdense (the number of stored elements; "
                "pass `nse=...` to use BCOO.fromdense under jit or vmap)", topic="shape")
        counts = fromdense_prim.nonzero_counts(np.asarray(value), n_batch, n_dense)
        nse = int(counts.max()) if counts.size else 0
    else:
        nse = operator.index(nse)
    data, indices = fromdense_prim.bcoo_fromdense(mat, nse=nse, n_batch=n_batch,
                                                  n_dense=n_dense, index_dtype=index_dtype)
    return Parts(data, indices, aval.shape, True, True)


def todense(mat):
    """The dense array `mat` stands for (duplicates summed)."""
    return todense_prim.bcoo_todense(mat.data, mat.indices, spinfo=info(mat))


def extract(sparr, arr, *, assume_unique=None) -> Parts:
    """`arr`'s values at `sparr`'s positions, as a sparse array with `sparr`'s indices. A
    position stored more than once gets the value at its first occurrence and zero at the
    others (so the dense form is `arr` where `sparr` stores something), unless
    `assume_unique` (by default `sparr.unique_indices`) promises there are none."""
    arr = jnp.asarray(arr)
    if tuple(get_aval(arr).shape) != tuple(sparr.shape):
        raise ValueError(f"bcoo_extract: the dense array's shape {get_aval(arr).shape} must "
                         f"equal the sparse array's {tuple(sparr.shape)}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    indices = sparr.indices if assume_unique else mark_duplicates(sparr)
    data = todense_prim.bcoo_extract(indices, arr)
    return Parts(data, sparr.indices, tuple(sparr.shape), sparr.indices_sorted,
                 sparr.unique_indices)


def from_scipy_sparse(mat, *, index_dtype=None, n_dense=0, n_batch=0) -> Parts:
    """A SciPy sparse matrix (any format) as coordinates: its stored elements as they are,
    so neither sorted nor known unique."""
    if n_dense or n_batch:
        raise NotImplementedError(
            "BCOO.from_scipy_sparse with n_batch or n_dense (a layout change, "
            "bcoo_update_layout) is not implemented in didax; use "
            "BCOO.fromdense(mat.toarray(), n_batch=..., n_dense=...) instead")
    coo = mat.tocoo()
    index_dtype = np.dtype(np.int32 if index_dtype is None else index_dtype)
    data = jnp.asarray(coo.data)
    indices = np.stack([np.asarray(coo.row), np.asarray(coo.col)], axis=1).astype(index_dtype)
    return Parts(data, jnp.asarray(indices), tuple(int(s) for s in coo.shape))


def _sparse_format(name, sparse_format):
    if sparse_format != "bcoo":
        raise NotImplementedError(f"{name}: sparse_format={sparse_format!r} is not implemented "
                                  "in didax (only 'bcoo')")


def _dtype(dtype):
    return dtypes.canonicalize_dtype(np.dtype(dtype) if dtype is not None
                                     else dtypes.default_float_dtype())


def empty(shape, dtype=None, index_dtype="int32", sparse_format="bcoo", *, n_batch=0,
          n_dense=0, nse=0) -> Parts:
    """An all-zero sparse array: `nse` stored elements, each out of bounds."""
    _sparse_format("sparse.empty", sparse_format)
    shape = tuple(operator.index(s) for s in shape)
    n_batch, n_dense = _layout_counts("sparse.empty", len(shape), n_batch, n_dense)
    nse = operator.index(nse)
    n_sparse = len(shape) - n_batch - n_dense
    batch, sparse, dense = (shape[:n_batch], shape[n_batch:n_batch + n_sparse],
                            shape[n_batch + n_sparse:])
    data = jnp.zeros(batch + (nse,) + dense, _dtype(dtype))
    indices = np.broadcast_to(np.asarray(sparse, np.int64), batch + (nse, n_sparse))
    return Parts(data, jnp.asarray(indices.astype(index_dtype)), shape, True, True)


def eye(N, M=None, k=0, dtype=None, index_dtype="int32", sparse_format="bcoo", *,
        n_batch=0, n_dense=0) -> Parts:
    """The sparse N x M matrix with ones on diagonal `k`: its min(N, M) coordinates are
    written directly (the other layouts go through the dense matrix)."""
    _sparse_format("sparse.eye", sparse_format)
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    n_batch, n_dense = _layout_counts("sparse.eye", 2, n_batch, n_dense)
    dtype = _dtype(dtype)
    if n_batch or n_dense:
        return fromdense(jnp.asarray(np.eye(N, M, k, dtype)), n_batch=n_batch,
                         n_dense=n_dense, index_dtype=index_dtype)
    rows = np.arange(max(0, -k), max(0, min(N, M - k)))
    indices = np.stack([rows, rows + k], axis=1).astype(index_dtype).reshape(-1, 2)
    data = jnp.ones(len(rows), dtype)
    return Parts(data, jnp.asarray(indices), (N, M), True, True)

