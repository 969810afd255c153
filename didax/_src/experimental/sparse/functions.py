"""The functions of `jax.experimental.sparse` on BCOO arrays: each checks its operand and
returns a BCOO (or the dense array JAX returns), and `random_bcoo`."""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import dtypes
from didax._src import random as jrandom
from didax._src.core import get_aval
from didax._src.experimental.sparse import (
    conversions,
    products,
    reorder,
    spdot,
    structure,
)
from didax._src.experimental.sparse.bcoo import BCOO, JAXSparse
from didax._src.experimental.sparse.parts import canonical_axes
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse import generic
from didax._src.transforms.api import vmap


def _bcoo(name: str, mat) -> BCOO:
    if not isinstance(mat, BCOO):
        raise TypeError(f"{name} expects a BCOO sparse array, got {type(mat).__name__}"
                        + (f" of shape {get_aval(mat).shape}" if hasattr(mat, "shape") else "")
                        + "; convert a dense array with BCOO.fromdense")
    return mat


def bcoo_todense(mat):
    """The dense array a BCOO stands for (duplicates summed)."""
    return _bcoo("bcoo_todense", mat).todense()


def bcoo_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32) -> BCOO:
    """The BCOO form of a dense array; `nse` must be given under jit."""
    return BCOO.fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                          index_dtype=index_dtype)


def bcoo_extract(sparr, arr, *, assume_unique=None) -> BCOO:
    """The values of the dense `arr` at `sparr`'s positions, as a BCOO with its indices."""
    return BCOO._new(conversions.extract(_bcoo("bcoo_extract", sparr), arr,
                                         assume_unique=assume_unique))


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """`lax.dot_general` where either operand may be a BCOO (a dense result)."""
    del precision, out_sharding  # (one device; NumPy's precision)
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        out = BCOO._new(spdot.spdot_general(lhs, rhs, dimension_numbers))
        return out if preferred_element_type is None else out.astype(preferred_element_type)
    return products.dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                                preferred_element_type=preferred_element_type)


def bcoo_transpose(mat, *, permutation) -> BCOO:
    """The transpose of a BCOO; batch, sparse and dense dimensions each stay in their group."""
    return BCOO._new(reorder.transpose(_bcoo("bcoo_transpose", mat), permutation))


def bcoo_sum_duplicates(mat, nse=None) -> BCOO:
    """One stored element per position, sorted; `nse` must be given under jit."""
    return BCOO._new(reorder.sum_duplicates(_bcoo("bcoo_sum_duplicates", mat), nse))


def bcoo_sort_indices(mat) -> BCOO:
    """The stored elements in row-major order of their positions."""
    return BCOO._new(reorder.sort_indices(_bcoo("bcoo_sort_indices", mat)))


def bcoo_multiply_dense(sp_mat, v):
    """The data of the elementwise product of a BCOO with a dense array broadcastable to its
    shape (the product has the BCOO's indices)."""
    return products.multiply_dense(_bcoo("bcoo_multiply_dense", sp_mat), v)


def bcoo_reduce_sum(mat, *, axes) -> BCOO:
    """The sum over `axes`, a BCOO (of shape () if every axis is summed)."""
    mat = _bcoo("bcoo_reduce_sum", mat)
    return BCOO._new(structure.reduce_sum(mat, canonical_axes("bcoo_reduce_sum", axes,
                                                              mat.ndim)))


def bcoo_reshape(mat, *, new_sizes, dimensions=None, sharding=None) -> BCOO:
    """A reshape of the sparse dimensions (batch and dense dimensions unchanged)."""
    del sharding
    return _bcoo("bcoo_reshape", mat).reshape(new_sizes, dimensions=dimensions)


def todense(arr):
    """The dense form of a sparse array; a dense array is returned as it is (through
    `todense_p`, which marks the densification for `sparsify`)."""
    if isinstance(arr, JAXSparse):
        return arr.todense()
    return generic.todense_p.bind(jnp.asarray(arr))


def empty(shape, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds) -> BCOO:
    """An all-zero sparse array (`n_batch`, `n_dense`, `nse` may be given)."""
    return BCOO._new(conversions.empty(shape, dtype, index_dtype, sparse_format, **kwds))


def eye(N, M=None, k=0, dtype=None, index_dtype="int32", sparse_format="bcoo",
        **kwds) -> BCOO:
    """The sparse identity (ones on diagonal `k` of an N x M matrix)."""
    return BCOO._new(conversions.eye(N, M, k, dtype, index_dtype, sparse_format, **kwds))


def random_bcoo(key, shape, *, dtype=None, indices_dtype=None, nse=0.2, n_batch=0,
                n_dense=0, unique_indices=True, sorted_indices=False,
                generator=jrandom.uniform, **kwds) -> BCOO:
    """A random BCOO: per batch element, `nse` positions (a fraction in (0, 1) is that share
    of the sparse positions, rounded up) drawn without replacement if `unique_indices`, and
    data from `generator(key, shape=..., dtype=..., **kwds)`. The first of
    `split(key, batch_size + 1)` draws the data, the others each batch element's positions."""
    shape = tuple(operator.index(s) for s in shape)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"random_bcoo: invalid n_batch={n_batch}, n_dense={n_dense} for "
                         f"shape={shape}")
    n_sparse = len(shape) - n_batch - n_dense
    batch, sparse, dense = (shape[:n_batch], shape[n_batch:n_batch + n_sparse],
                            shape[n_batch + n_sparse:])
    sparse_size = math.prod(sparse)
    if not 0 <= nse <= sparse_size:
        raise ValueError(f"random_bcoo: got nse={nse}, expected to be between 0 and "
                         f"{sparse_size} (the number of sparse positions)")
    nse = int(math.ceil(nse * sparse_size)) if 0 < nse < 1 else operator.index(nse)
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype) if dtype is not None
                                      else dtypes.default_float_dtype())
    indices_dtype = dtypes.canonicalize_dtype(np.dtype(indices_dtype) if indices_dtype
                                              is not None else np.int64)
    if sparse_size > np.iinfo(indices_dtype).max:
        raise ValueError(f"random_bcoo: {sparse_size} sparse positions overflow "
                         f"{indices_dtype.name} indices")
    keys = jrandom.split(key, math.prod(batch) + 1)
    data = generator(keys[0], shape=batch + (nse,) + dense, dtype=dtype, **kwds)
    def positions(k):
        if not sparse:
            return jnp.zeros((nse, 0), indices_dtype)
        flat = jrandom.choice(k, sparse_size, shape=(nse,), replace=not unique_indices)
        return jnp.stack(jnp.unravel_index(flat.astype(indices_dtype), sparse), axis=-1)

    indices = vmap(positions)(keys[1:]).astype(indices_dtype)
    indices = jnp.reshape(indices, batch + (nse, n_sparse))
    mat = BCOO((data, indices), shape=shape)
    return mat.sort_indices() if sorted_indices else mat
