"""`bcoo_fromdense`: the batched-COO form of a dense array, with a static number of stored
elements `nse` (shapes are static under tracing, so jit needs it given).

Per batch element, the positions whose dense block has a nonzero value are stored in
row-major order; the first `nse` are kept and the rest padded with zero data at the position
`sparse_shape` itself (out of bounds: no entry), as JAX pads. The data are then the dense
values at those positions, so the derivative is `bcoo_extract` of the tangent at the same
indices (the indices themselves are integers: their tangent is float0).
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core, dtypes
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters.batching import moveaxis
from didax._src.primitives.sparse.todense import bcoo_extract_p

bcoo_fromdense_p = core.primitive("bcoo_fromdense", multiple_results=True)


def _parts(shape, n_batch, n_dense):
    shape = tuple(shape)
    n_sparse = len(shape) - n_batch - n_dense
    return shape[:n_batch], shape[n_batch:n_batch + n_sparse], shape[n_batch + n_sparse:]


def nonzero_counts(mat: np.ndarray, n_batch: int, n_dense: int) -> np.ndarray:
    """How many positions of each batch element hold a nonzero dense block."""
    batch, sparse, _ = _parts(mat.shape, n_batch, n_dense)
    nz = mat != 0
    if n_dense:
        nz = nz.any(axis=tuple(range(mat.ndim - n_dense, mat.ndim)))
    return nz.reshape(batch + (math.prod(sparse),)).sum(axis=-1)


def _fromdense_impl(mat, *, nse, n_batch, n_dense, index_dtype):
    batch, sparse, dense = _parts(mat.shape, n_batch, n_dense)
    n_sparse = len(sparse)
    nz = mat != 0
    if n_dense:
        nz = nz.any(axis=tuple(range(mat.ndim - n_dense, mat.ndim)))
    n_b, size = math.prod(batch), math.prod(sparse)
    nz = nz.reshape(n_b, size)
    # Per batch element, the nonzero positions first (in order), padded with the position
    # `size` (out of bounds): a stable sort of "is zero" does both.
    order = np.argsort(~nz, axis=1, kind="stable")[:, :nse]
    taken = np.take_along_axis(nz, order, axis=1)
    flat = np.where(taken, order, size)
    if flat.shape[1] < nse:  # (nse larger than the number of positions)
        flat = np.concatenate([flat, np.full((n_b, nse - flat.shape[1]), size)], axis=1)
        taken = np.concatenate([taken, np.zeros((n_b, nse - taken.shape[1]), bool)], axis=1)
    if n_sparse and size:
        coords = np.stack(np.unravel_index(np.minimum(flat, size - 1), sparse), -1)
        coords = np.where(taken[..., None], coords, np.asarray(sparse))
    else:  # (no sparse dimensions, or none of their positions exists)
        coords = np.broadcast_to(np.asarray(sparse, np.int64), (n_b, nse, n_sparse))
    table = mat.reshape((n_b * size,) + dense)
    rows = np.arange(n_b)[:, None] * size + np.where(taken, flat, 0)
    data = table[rows] if table.shape[0] else np.zeros((n_b, nse) + dense, mat.dtype)
    data = np.where(taken.reshape(taken.shape + (1,) * n_dense), data, 0).astype(mat.dtype)
    return [data.reshape(batch + (nse,) + dense),
            coords.astype(index_dtype).reshape(batch + (nse, n_sparse))]


def _fromdense_aval(mat, *, nse, n_batch, n_dense, index_dtype):
    if not (0 <= n_batch and 0 <= n_dense and n_batch + n_dense <= mat.ndim):
        raise ValueError(f"bcoo_fromdense: n_batch={n_batch} and n_dense={n_dense} must be "
                         f"non-negative with n_batch + n_dense <= ndim={mat.ndim} (shape "
                         f"{mat.shape})")
    if nse < 0:
        raise ValueError(f"bcoo_fromdense: nse={nse} must be non-negative")
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(f"bcoo_fromdense: index_dtype must be an integer dtype, got "
                        f"{np.dtype(index_dtype).name}")
    batch, sparse, dense = _parts(mat.shape, n_batch, n_dense)
    return [ShapedArray(batch + (nse,) + dense, mat.dtype, mat.weak_type),
            ShapedArray(batch + (nse, len(sparse)), np.dtype(index_dtype))]


def _fromdense_jvp(primals, tangents, **params):
    (mat,), (t,) = primals, tangents
    data, indices = bcoo_fromdense_p.bind(mat, **params)
    t_indices = Zero(get_aval(indices).to_tangent_aval())
    if type(t) is Zero:
        return [data, indices], [Zero(get_aval(data).to_tangent_aval()), t_indices]
    return [data, indices], [bcoo_extract_p.bind(indices, t, assume_unique=True), t_indices]


def _fromdense_batch(size, vals, dims, *, n_batch, **params):
    (mat,), (d,) = vals, dims
    outs = bcoo_fromdense_p.bind(moveaxis(mat, d, 0), n_batch=n_batch + 1, **params)
    return outs, [0, 0]


bcoo_fromdense_p.def_impl(_fromdense_impl)
bcoo_fromdense_p.def_abstract_eval(_fromdense_aval)
bcoo_fromdense_p.def_jvp(_fromdense_jvp)
bcoo_fromdense_p.def_batch(_fromdense_batch)
bcoo_fromdense_p.mark_absent("transpose", "not linear as a whole (its indices depend on the "
                             "values); reverse mode transposes its JVP, a bcoo_extract")


def bcoo_fromdense(mat, *, nse: int, n_batch: int = 0, n_dense: int = 0,
                   index_dtype=np.int32):
    """(data, indices) of `mat` with `nse` stored elements per batch element."""
    return bcoo_fromdense_p.bind(mat, nse=int(nse), n_batch=int(n_batch),
                                 n_dense=int(n_dense), index_dtype=np.dtype(index_dtype))
