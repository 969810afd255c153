"""Sorting the stored elements and merging those at one position: `bcoo_sort_indices`,
`bcoo_sum_duplicates`, and the marking of repeated positions that `bcoo_extract` needs.

Written with didax.numpy (a stable multi-key `lax.sort`, a cumulative sum, scatters that
drop what falls outside), per batch element under `vmap`, so their derivatives (in the data;
the indices are integers), batching and jit come from those primitives. The number of
distinct positions is data-dependent: `sum_duplicates` counts them from concrete indices
when `nse` is not given, and under jit (where they are abstract) asks for `nse`, as JAX does.
"""
from __future__ import annotations

import operator

import numpy as np

from didax._src import core
from didax._src.core import get_aval
from didax._src.experimental.sparse.parts import Parts, bounds, full_batch, split
from didax._src.lax.reduction import sort as lax_sort
from didax._src.numpy import namespace as jnp
from didax._src.transforms.api import vmap


def per_batch(fn, n_batch: int):
    """`fn` of one batch element's arrays, mapped over `n_batch` leading dimensions."""
    for _ in range(n_batch):
        fn = vmap(fn)
    return fn


def _sort_perm(keys):
    """The stable permutation sorting the rows of `keys` (nse, n_sparse) lexicographically."""
    nse, ns = get_aval(keys).shape
    iota = jnp.arange(nse, dtype=np.int32)
    if ns == 0 or nse == 0:
        return iota
    return lax_sort([keys[:, k] for k in range(ns)] + [iota], dimension=0, is_stable=True,
                    num_keys=ns)[-1]


def _keys(indices, b):
    """Positions, with every one out of bounds replaced by `b` (so they sort last, together)."""
    valid = jnp.all((indices >= 0) & (indices < b), axis=1)
    return jnp.where(valid[:, None], indices, b), valid


def sort_indices(mat) -> Parts:
    """`mat` with its stored elements in row-major order of their positions."""
    if mat.nse <= 1 or mat.n_sparse == 0:
        return Parts(mat.data, mat.indices, tuple(mat.shape), True, mat.unique_indices)
    data, indices = full_batch(mat)

    def one(d, idx):
        perm = _sort_perm(idx)
        return d[perm], idx[perm]

    data, indices = per_batch(one, mat.n_batch)(data, indices)
    return Parts(data, indices, tuple(mat.shape), True, mat.unique_indices)


def mark_duplicates(mat):
    """`mat`'s indices with every repeat of a position (all but its first occurrence) moved
    out of bounds: what `bcoo_extract` reads when the indices may repeat."""
    if mat.nse <= 1:
        return mat.indices
    b = bounds(mat)
    nse = mat.nse

    def one(idx):
        keys, _ = _keys(idx, b)
        perm = _sort_perm(keys)
        k = keys[perm]
        repeat = jnp.concatenate([jnp.zeros(1, bool), jnp.all(k[1:] == k[:-1], axis=1)])
        repeat = jnp.zeros(nse, bool).at[perm].set(repeat)
        return jnp.where(repeat[:, None], b, idx)

    return per_batch(one, mat.n_batch)(mat.indices)


def eliminate_zeros(mat) -> Parts:
    """`mat` with the elements whose data are all zero moved out of bounds (no entry)."""
    data, indices = full_batch(mat)
    nb = mat.n_batch
    zero = data == 0
    if mat.n_dense:
        zero = jnp.all(zero, axis=tuple(range(nb + 1, nb + 1 + mat.n_dense)))
    indices = jnp.where(zero[..., None], bounds(mat), indices)
    return Parts(data, indices, tuple(mat.shape), False, mat.unique_indices)


def count_unique(mat, name: str = "bcoo_sum_duplicates") -> int:
    """The largest number of distinct in-bounds positions of a batch element (concrete
    indices only: the number of stored elements after merging duplicates)."""
    value = core.concrete_value(mat.indices)
    if value is None:
        raise ValueError(f"{name}: nse must be specified when using the function within jit, "
                         "vmap, and other transformations requiring abstract evaluation (the "
                         "number of distinct positions depends on the values of the indices)")
    batch, sparse, _ = split(mat)
    idx = np.broadcast_to(np.asarray(value), batch + value.shape[len(batch):])
    idx = idx.reshape((-1,) + idx.shape[-2:])
    valid = np.all((idx >= 0) & (idx < np.asarray(sparse, np.int64)), axis=-1)
    counts = [len(np.unique(rows[ok], axis=0)) if rows.shape[-1] else int(ok.any())
              for rows, ok in zip(idx, valid)]
    return max(counts, default=0)


def sum_duplicates(mat, nse=None) -> Parts:
    """`mat` with one stored element per distinct position (their data summed), sorted, the
    elements out of bounds dropped, padded (out of bounds, zero data) to `nse` elements."""
    nse = count_unique(mat) if nse is None else operator.index(nse)
    if nse < 0:
        raise ValueError(f"bcoo_sum_duplicates: nse={nse} must be non-negative")
    batch, sparse, dense = split(mat)
    b = bounds(mat)
    ns = len(sparse)
    if mat.nse == 0:
        data = jnp.zeros(batch + (nse,) + dense, mat.dtype)
        indices = jnp.broadcast_to(b, batch + (nse, ns))
        return Parts(data, indices, tuple(mat.shape), True, True)
    data, indices = full_batch(mat)

    def one(d, idx):
        keys, valid = _keys(idx, b)
        perm = _sort_perm(keys)
        k, ok = keys[perm], valid[perm]
        first = jnp.concatenate([jnp.ones(1, bool), jnp.any(k[1:] != k[:-1], axis=1)])
        segment = jnp.cumsum(first.astype(np.int32)) - 1
        segment = jnp.where(ok, segment, nse)  # (dropped)
        out_idx = jnp.broadcast_to(b, (nse, ns)).at[segment].set(k, mode="drop")
        out_data = jnp.zeros((nse,) + dense, d.dtype).at[segment].add(d[perm], mode="drop")
        return out_data, out_idx

    data, indices = per_batch(one, mat.n_batch)(data, indices)
    return Parts(data, indices, tuple(mat.shape), True, True)
