"""Products of two sparse arrays: the elementwise product (`bcoo_multiply_sparse`) and
`dot_general` (`bcoo_spdot_general`), both sparse, and `bcoo_dot_general_sampled`.

Every pair of stored elements (one from each operand, per batch element) is compared: a pair
whose positions agree where they must contributes the product of its values at the pair's
result position, the others are moved out of bounds. The result has lhs.nse * rhs.nse
stored elements (merged down to the number of result positions when that is fewer), as
JAX's has. Written with didax.numpy, so derivatives, batching and jit come from there.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src.core import get_aval
from didax._src.experimental.sparse.duplicates import sum_duplicates
from didax._src.experimental.sparse.parts import Parts, full_batch, in_bounds
from didax._src.experimental.sparse.products import dot_general as dense_dot_general
from didax._src.experimental.sparse.shape_ops import update_layout
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse import todense as todense_prim


def _common_layout(lhs, rhs, n_batch, name):
    """Both operands with `n_batch` batch dimensions and no dense ones (fewer batch or
    dense dimensions are always efficient to reach)."""
    out = []
    for x in (lhs, rhs):
        if x.n_batch < n_batch:
            raise NotImplementedError(
                f"{name}: an operand has n_batch={x.n_batch} but the product pairs {n_batch} "
                "batch dimensions; convert it with bcoo_update_layout(..., n_batch=...) first")
        out.append(update_layout(x, n_batch=n_batch, n_dense=0))
    return out


def _promote(lhs, rhs):
    dtype = jnp.result_type(lhs.data, rhs.data)
    idx = jnp.promote_types(get_aval(lhs.indices).dtype, get_aval(rhs.indices).dtype)
    return dtype, idx


def multiply_sparse(lhs, rhs) -> Parts:
    """The elementwise product of two sparse arrays of one shape."""
    if tuple(lhs.shape) != tuple(rhs.shape):
        raise NotImplementedError(
            "bcoo_multiply_sparse: operands of shapes "
            f"{tuple(lhs.shape)} and {tuple(rhs.shape)}; broadcasting them is not implemented")
    nb = min(lhs.n_batch, rhs.n_batch)
    lhs, rhs = _common_layout(lhs, rhs, nb, "bcoo_multiply_sparse")
    dtype, idx_dtype = _promote(lhs, rhs)
    (ld, li), (rd, ri) = full_batch(lhs), full_batch(rhs)
    li, ri = li.astype(idx_dtype), ri.astype(idx_dtype)
    match = (jnp.all(li[..., :, None, :] == ri[..., None, :, :], axis=-1)
             & in_bounds(lhs, li)[..., :, None] & in_bounds(rhs, ri)[..., None, :])
    data = ld.astype(dtype)[..., :, None] * rd.astype(dtype)[..., None, :]
    data = jnp.where(match, data, 0)
    batch = tuple(lhs.shape[:nb])
    bound = jnp.asarray(np.asarray(lhs.shape[nb:], np.int64), idx_dtype)
    indices = jnp.where(match[..., None], li[..., :, None, :], bound)
    nse = lhs.nse * rhs.nse
    return Parts(jnp.reshape(data, batch + (nse,)),
                 jnp.reshape(indices, batch + (nse, lhs.n_sparse)), tuple(lhs.shape))


def spdot_general(lhs, rhs, dimension_numbers) -> Parts:
    """dot_general of two sparse arrays, sparse. The product's batch dimensions must be
    leading batch dimensions of both layouts, in order."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = map(lambda t: tuple(int(d) for d in t), (lc, rc, lb, rb))
    nb = len(lb)
    if lb != tuple(range(nb)) or rb != tuple(range(nb)):
        raise NotImplementedError(
            f"bcoo_spdot_general: batch dimensions {lb} and {rb} must be the leading "
            "dimensions of both operands, in order")
    for a, b in zip(lc, rc):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"bcoo_spdot_general: contracting dimensions must have the same "
                            f"sizes, got {lhs.shape[a]} and {rhs.shape[b]} (shapes "
                            f"{tuple(lhs.shape)} and {tuple(rhs.shape)})")
    lhs, rhs = _common_layout(lhs, rhs, nb, "bcoo_spdot_general")
    dtype, idx_dtype = _promote(lhs, rhs)
    (ld, li), (rd, ri) = full_batch(lhs), full_batch(rhs)
    li, ri = li.astype(idx_dtype), ri.astype(idx_dtype)
    match = in_bounds(lhs, li)[..., :, None] & in_bounds(rhs, ri)[..., None, :]
    for a, b in zip(lc, rc):
        match = match & (li[..., :, None, a - nb] == ri[..., None, :, b - nb])
    lfree = [d for d in range(nb, lhs.ndim) if d not in lc]
    rfree = [d for d in range(nb, rhs.ndim) if d not in rc]
    out_sparse = tuple(lhs.shape[d] for d in lfree) + tuple(rhs.shape[d] for d in rfree)
    batch = tuple(lhs.shape[:nb])
    n1, n2 = lhs.nse, rhs.nse
    cols = ([jnp.broadcast_to(li[..., :, None, d - nb], batch + (n1, n2)) for d in lfree]
            + [jnp.broadcast_to(ri[..., None, :, d - nb], batch + (n1, n2)) for d in rfree])
    indices = (jnp.stack(cols, axis=-1) if cols
               else jnp.zeros(batch + (n1, n2, 0), idx_dtype))
    bound = jnp.asarray(np.asarray(out_sparse, np.int64), idx_dtype)
    indices = jnp.where(match[..., None], indices, bound)
    data = jnp.where(match, ld.astype(dtype)[..., :, None] * rd.astype(dtype)[..., None, :], 0)
    nse = n1 * n2
    out = Parts(jnp.reshape(data, batch + (nse,)), jnp.reshape(indices, batch + (nse,
                                                                                len(cols))),
                batch + out_sparse)
    if nse > math.prod(out_sparse):
        out = sum_duplicates(out, math.prod(out_sparse))
    return out


def dot_general_sampled(A, B, indices, dimension_numbers):
    """The data of dot_general(A, B) read at `indices` (a BCOO's indices for the product's
    shape). didax computes the dense product and reads it at those positions: the values
    and derivatives are JAX's, the cost that of the dense product."""
    out = dense_dot_general(A, B, dimension_numbers=dimension_numbers)
    return todense_prim.bcoo_extract(indices, out)


def matmul(lhs, rhs) -> Parts:
    """lhs @ rhs for sparse vectors and matrices."""
    if lhs.ndim not in (1, 2) or rhs.ndim not in (1, 2):
        raise NotImplementedError(
            f"matmul of sparse arrays of shapes {tuple(lhs.shape)} and {tuple(rhs.shape)}: "
            "only vectors and matrices are implemented (use bcoo_dot_general)")
    dims = (((lhs.ndim - 1,), (0 if rhs.ndim == 1 else rhs.ndim - 2,)), ((), ()))
    return spdot_general(lhs, rhs, dims)
