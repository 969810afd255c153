"""`bcoo_transpose`, `bcoo_sort_indices` and `bcoo_sum_duplicates` as primitives: each maps
(data, indices) to a new (data, indices), moving or merging stored elements. Where the
elements go depends on the indices only, so each is linear in the data: the JVP applies the
primitive to the tangent data, and the transpose is the decomposition's (the data moved
back, or each merged element's cotangent read back). Batching adds a leading layout batch
dimension. The decompositions are the didax.numpy functions of structure.py and
duplicates.py; the rules built from them are those of `didax._src.primitives.sparse.composite`.
"""
from __future__ import annotations

import operator

from didax._src import core
from didax._src.core import Zero, get_aval
from didax._src.experimental.sparse import duplicates, structure
from didax._src.experimental.sparse.parts import Parts
from didax._src.primitives.sparse import composite
from didax._src.primitives.sparse.layout import SparseInfo
from didax._src.primitives.sparse.todense import front

bcoo_transpose_p = core.primitive("bcoo_transpose", multiple_results=True)
bcoo_sort_indices_p = core.primitive("bcoo_sort_indices", multiple_results=True)
bcoo_sum_duplicates_p = core.primitive("bcoo_sum_duplicates", multiple_results=True)


def _parts(data, indices, spinfo):
    return Parts(data, indices, tuple(spinfo.shape), spinfo.indices_sorted,
                 spinfo.unique_indices)


def _transpose(data, indices, *, permutation, spinfo):
    out = structure.transpose(_parts(data, indices, spinfo), permutation)
    return out.data, out.indices


def _sort(data, indices, *, spinfo):
    out = duplicates.sort_indices(_parts(data, indices, spinfo))
    return out.data, out.indices


def _sum_duplicates(data, indices, *, spinfo, nse):
    out = duplicates.sum_duplicates(_parts(data, indices, spinfo), nse)
    return out.data, out.indices


def _front(size, vals, dims):
    return [front(x, d, size) for x, d in zip(vals, dims)]


def _batched(spinfo, size):
    return spinfo._replace(shape=(size,) + tuple(spinfo.shape))


def _define(p, fn, batch):
    def impl(data, indices, **params):
        return composite.evaluate(fn, (data, indices), params, True)

    def aval(data, indices, **params):
        return composite.out_types(fn, (data, indices), params, True)

    def jvp(primals, tangents, **params):
        (data, indices), (t_data, _) = primals, tangents
        out = p.bind(data, indices, **params)
        zero_idx = Zero(get_aval(out[1]).to_tangent_aval())
        if type(t_data) is Zero:
            return out, [Zero(get_aval(out[0]).to_tangent_aval()), zero_idx]
        return out, [p.bind(t_data, indices, **params)[0], zero_idx]

    p.def_impl(impl)
    p.def_abstract_eval(aval)
    p.def_jvp(jvp)
    p.def_transpose(composite.transpose_rule(
        p.name, fn, (0,), True, "it is linear in its data only (the indices are integers)"))
    p.def_batch(batch)


def _transpose_batch(size, vals, dims, *, permutation, spinfo):
    data, indices = _front(size, vals, dims)
    perm = (0,) + tuple(int(d) + 1 for d in permutation)
    return bcoo_transpose_p.bind(data, indices, permutation=perm,
                                 spinfo=_batched(spinfo, size)), [0, 0]


def _sort_batch(size, vals, dims, *, spinfo):
    data, indices = _front(size, vals, dims)
    return bcoo_sort_indices_p.bind(data, indices, spinfo=_batched(spinfo, size)), [0, 0]


def _sum_duplicates_batch(size, vals, dims, *, spinfo, nse):
    data, indices = _front(size, vals, dims)
    return bcoo_sum_duplicates_p.bind(data, indices, spinfo=_batched(spinfo, size),
                                      nse=nse), [0, 0]


_define(bcoo_transpose_p, _transpose, _transpose_batch)
_define(bcoo_sort_indices_p, _sort, _sort_batch)
_define(bcoo_sum_duplicates_p, _sum_duplicates, _sum_duplicates_batch)


def _info(mat) -> SparseInfo:
    return SparseInfo(tuple(mat.shape), bool(mat.indices_sorted), bool(mat.unique_indices))


def transpose(mat, permutation):
    """`mat` (a BCOO or its Parts) transposed, as Parts, through bcoo_transpose_p."""
    perm = tuple(int(d) for d in permutation)
    data, indices = bcoo_transpose_p.bind(mat.data, mat.indices, permutation=perm,
                                          spinfo=_info(mat))
    nb, ns = mat.n_batch, mat.n_sparse
    moved = perm[nb:nb + ns] != tuple(range(nb, nb + ns))
    return Parts(data, indices, tuple(mat.shape[d] for d in perm),
                 mat.indices_sorted and not moved, mat.unique_indices)


def sort_indices(mat):
    """`mat` with its stored elements sorted, as Parts, through bcoo_sort_indices_p."""
    data, indices = bcoo_sort_indices_p.bind(mat.data, mat.indices, spinfo=_info(mat))
    return Parts(data, indices, tuple(mat.shape), True, mat.unique_indices)


def sum_duplicates(mat, nse=None):
    """`mat` with one stored element per position, as Parts, through bcoo_sum_duplicates_p
    (`nse`, the number kept, is counted from concrete indices when not given)."""
    nse = duplicates.count_unique(mat) if nse is None else operator.index(nse)
    if nse < 0:
        raise ValueError(f"bcoo_sum_duplicates: nse={nse} must be non-negative")
    data, indices = bcoo_sum_duplicates_p.bind(mat.data, mat.indices, spinfo=_info(mat),
                                               nse=nse)
    return Parts(data, indices, tuple(mat.shape), True, True)
