"""The primitives of batched-CSR sparse arrays: `bcsr_todense`, `bcsr_extract`,
`bcsr_fromdense` and `bcsr_dot_general`, with their rules.

A BCSR array of shape `batch + (rows, cols) + dense` stores, per batch element, `nse`
entries: `data` (batch + (nse,) + dense), their column `indices` (batch + (nse,)) and the
row pointers `indptr` (batch + (rows + 1,)): the entries of row r are those from
`indptr[r]` to `indptr[r + 1]`; entries from `indptr[-1]` on are padding. Each impl reads
the rows off `indptr` and runs the batched-COO kernel on (row, column) coordinates, so the
two formats compute alike; the rules mirror BCOO's (todense and extract are each other's
transposes; the product is bilinear, its data transpose BCOO's, on the same coordinates).
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import base_prims, core, dtypes
from didax._src.base_prims import add_tangents
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters.batching import matchaxis, moveaxis
from didax._src.interpreters.transpose import is_undefined
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.lax.indexing import GatherDimensionNumbers, GatherScatterMode, gather
from didax._src.primitives.sparse import dot_general as bcoo_dot
from didax._src.primitives.sparse import fromdense as bcoo_fromdense
from didax._src.primitives.sparse import kernels
from didax._src.primitives.sparse import todense as bcoo_todense
from didax._src.primitives.sparse.layout import SparseInfo, check_dimension_numbers, product_shape

bcsr_todense_p = core.primitive("bcsr_todense", linear=True)
bcsr_extract_p = core.primitive("bcsr_extract", linear=True)
bcsr_fromdense_p = core.primitive("bcsr_fromdense", multiple_results=True)
bcsr_dot_general_p = core.primitive("bcsr_dot_general")


def coo_indices_np(indices: np.ndarray, indptr: np.ndarray, rows: int, cols: int):
    """The (row, column) coordinates, batch + (nse, 2), of BCSR indices (NumPy); padding
    entries get (rows, cols), out of bounds."""
    nse = indices.shape[-1]
    batch = np.broadcast_shapes(indices.shape[:-1], indptr.shape[:-1])
    ind = np.broadcast_to(indices, batch + (nse,)).reshape(-1, nse)
    ptr = np.broadcast_to(indptr, batch + (rows + 1,)).reshape(-1, rows + 1)
    k = np.arange(nse)
    out = np.empty((ind.shape[0], nse, 2), np.result_type(indices.dtype, indptr.dtype))
    for b in range(ind.shape[0]):
        r = np.searchsorted(ptr[b], k, side="right") - 1
        valid = k < ptr[b, -1]
        out[b, :, 0] = np.where(valid, r, rows)
        out[b, :, 1] = np.where(valid, ind[b], cols)
    return out.reshape(batch + (nse, 2))


def coo_indices(indices, indptr, rows: int, cols: int):
    """`coo_indices_np` with lax (for traced indices in the rules), in the dtype of
    `indices`: each element's row is found by a binary search of `indptr`, unrolled over its
    ceil(log2(rows + 2)) levels, every element of every batch element at once."""
    ind_aval, ptr_aval = get_aval(indices), get_aval(indptr)
    nse, n = ind_aval.shape[-1], rows + 1
    batch = tuple(np.broadcast_shapes(ind_aval.shape[:-1], ptr_aval.shape[:-1]))
    shape, idx_dtype = batch + (nse,), ind_aval.dtype
    if math.prod(shape) == 0:
        return base_prims.full(shape + (2,), 0, idx_dtype)
    indices = _broadcast_to(indices, shape)
    k = lax_shape.broadcasted_iota(ptr_aval.dtype, shape, len(batch))
    # each batch element's indptr at an offset in one flat array, read by 1-D gathers
    size = math.prod(batch) * n
    pos = np.dtype(np.int32) if size <= np.iinfo(np.int32).max else dtypes.default_int_dtype()
    flat = lax_shape.reshape(_broadcast_to(indptr, batch + (n,)), (size,))
    first = lax_shape.broadcasted_iota(pos, (math.prod(batch),), 0)
    first = lax.mul(lax_shape.reshape(first, batch + (1,)), np.asarray(n, pos))
    first = base_prims.broadcast_in_dim(first, shape, tuple(range(len(shape))))
    low, high = base_prims.full(shape, 0, pos), base_prims.full(shape, n, pos)
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        mid = lax.add(low, lax.div(lax.sub(high, low), np.asarray(2, pos)))
        go_left = lax.lt(k, _take(flat, lax.add(first, mid)))
        low, high = lax.select_n(go_left, mid, low), lax.select_n(go_left, high, mid)
    row = lax.sub(lax.convert_element_type(high, idx_dtype), np.asarray(1, idx_dtype))
    valid = lax.lt(k, _take(flat, lax.add(first, np.asarray(n - 1, pos))))
    row = lax.select_n(valid, base_prims.full(shape, rows, idx_dtype), row)
    col = lax.select_n(valid, base_prims.full(shape, cols, idx_dtype), indices)
    return lax_shape.concatenate([lax_shape.expand_dims(row, (len(shape),)),
                                  lax_shape.expand_dims(col, (len(shape),))], len(shape))


def _broadcast_to(x, shape):
    aval = get_aval(x)
    if aval.shape == shape:
        return x
    return base_prims.broadcast_in_dim(x, shape, tuple(range(len(shape) - aval.ndim,
                                                             len(shape))))


def _take(flat, index):
    """flat[index] for the 1-D `flat`. (A search that has converged probes one past its
    batch element's end, into the next one's or, clipped, its own last entry: either way
    its bounds stay as they are.)"""
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                   start_index_map=(0,))
    return gather(flat, lax_shape.expand_dims(index, (get_aval(index).ndim,)), dnums, (1,),
                  mode=GatherScatterMode.CLIP)


def _sparse_dims(shape, indices):
    nb = len(indices.shape) - 1
    return nb, shape[nb], shape[nb + 1]


def check_layout(name, data, indices, indptr, shape):
    shape = tuple(shape)
    for what, x in (("indices", indices), ("indptr", indptr)):
        if not dtypes.issubdtype(x.dtype, np.integer):
            raise TypeError(f"{name}: {what} must be integers, got dtype {x.dtype.name}")
    nb = indices.ndim - 1
    if nb < 0 or indptr.ndim != nb + 1 or len(shape) < nb + 2:
        raise ValueError(f"{name}: inconsistent layout: data.shape={data.shape}, indices.shape="
                         f"{indices.shape}, indptr.shape={indptr.shape}, shape={shape}; "
                         "indices must be batch + (nse,), indptr batch + (rows + 1,), and the "
                         "shape batch + (rows, cols) + dense")
    nse = indices.shape[-1]
    if (data.shape[:nb + 1] != tuple(shape[:nb]) + (nse,) and data.shape[nb] != nse) \
            or tuple(data.shape[nb + 1:]) != shape[nb + 2:] \
            or indptr.shape[-1] != shape[nb] + 1:
        raise ValueError(f"{name}: inconsistent layout: data.shape={data.shape}, indices.shape="
                         f"{indices.shape}, indptr.shape={indptr.shape}, shape={shape}")
    return nb


# ------------------------------------------------------------------------------------------
# bcsr_todense and bcsr_extract


def _todense_impl(data, indices, indptr, *, spinfo):
    nb, rows, cols = _sparse_dims(spinfo.shape, indices)
    coo = coo_indices_np(indices, indptr, rows, cols)
    return bcoo_todense._todense_impl(data, coo, spinfo=spinfo)


def _todense_aval(data, indices, indptr, *, spinfo):
    check_layout("bcsr_todense", data, indices, indptr, spinfo.shape)
    return ShapedArray(tuple(spinfo.shape), data.dtype, data.weak_type)


def _todense_jvp(primals, tangents, *, spinfo):
    out = bcsr_todense_p.bind(*primals, spinfo=spinfo)
    if type(tangents[0]) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, bcsr_todense_p.bind(tangents[0], *primals[1:], spinfo=spinfo)


def _todense_transpose(ct, data, indices, indptr, *, spinfo):
    if not is_undefined(data) or is_undefined(indices) or is_undefined(indptr):
        raise NotImplementedError("transpose of bcsr_todense: it is linear in its data only")
    if type(ct) is Zero:
        return [Zero(data.aval), None, None]
    out = bcsr_extract_p.bind(indices, indptr, ct)
    return [bcoo_todense.sum_to_shape(out, data.aval.shape), None, None]


def _all_front(size, vals, dims):
    return [matchaxis(x, d, 0, size) for x, d in zip(vals, dims)]


def _todense_batch(size, vals, dims, *, spinfo):
    data, indices, indptr = _all_front(size, vals, dims)
    info = spinfo._replace(shape=(size,) + tuple(spinfo.shape))
    return bcsr_todense_p.bind(data, indices, indptr, spinfo=info), 0


def _extract_impl(indices, indptr, mat):
    nb = indices.ndim - 1
    coo = coo_indices_np(indices, indptr, mat.shape[nb], mat.shape[nb + 1])
    return bcoo_todense._extract_impl(coo, mat, assume_unique=True)


def _extract_aval(indices, indptr, mat):
    nb = indices.ndim - 1
    if mat.ndim < nb + 2 or indptr.shape[-1] != mat.shape[nb] + 1:
        raise ValueError(f"bcsr_extract: indices of shape {indices.shape} and indptr of shape "
                         f"{indptr.shape} do not fit an array of shape {mat.shape}")
    return ShapedArray(mat.shape[:nb] + (indices.shape[-1],) + mat.shape[nb + 2:], mat.dtype,
                       mat.weak_type)


def _extract_jvp(primals, tangents):
    out = bcsr_extract_p.bind(*primals)
    if type(tangents[2]) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, bcsr_extract_p.bind(primals[0], primals[1], tangents[2])


def _extract_transpose(ct, indices, indptr, mat):
    if not is_undefined(mat) or is_undefined(indices) or is_undefined(indptr):
        raise NotImplementedError("transpose of bcsr_extract: it is linear in the dense array "
                                  "only")
    if type(ct) is Zero:
        return [None, None, Zero(mat.aval)]
    return [None, None, bcsr_todense_p.bind(ct, indices, indptr,
                                            spinfo=SparseInfo(mat.aval.shape))]


def _extract_batch(size, vals, dims):
    return bcsr_extract_p.bind(*_all_front(size, vals, dims)), 0


for _p, _rules in ((bcsr_todense_p, (_todense_impl, _todense_aval, _todense_jvp,
                                     _todense_transpose, _todense_batch)),
                   (bcsr_extract_p, (_extract_impl, _extract_aval, _extract_jvp,
                                     _extract_transpose, _extract_batch))):
    for _kind, _fn in zip(("impl", "abstract_eval", "jvp", "transpose", "batch"), _rules):
        _p.def_rule(_kind, _fn)


# ------------------------------------------------------------------------------------------
# bcsr_fromdense


def _fromdense_impl(mat, *, nse, n_batch, n_dense, index_dtype):
    data, coo = bcoo_fromdense._fromdense_impl(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                               index_dtype=index_dtype)
    rows = mat.shape[n_batch]
    valid = coo[..., 0] < rows
    r = np.where(valid, coo[..., 0], rows)
    indptr = (r[..., None, :] < np.arange(1, rows + 1)[:, None]).sum(-1)
    indptr = np.concatenate([np.zeros(indptr.shape[:-1] + (1,), indptr.dtype), indptr], -1)
    return [data, coo[..., 1].astype(index_dtype), indptr.astype(index_dtype)]


def _fromdense_aval(mat, *, nse, n_batch, n_dense, index_dtype):
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError(f"bcsr_fromdense: an array of shape {mat.shape} with n_batch="
                         f"{n_batch} and n_dense={n_dense} has {mat.ndim - n_batch - n_dense} "
                         "sparse dimensions; BCSR needs exactly 2")
    data, coo = bcoo_fromdense._fromdense_aval(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                               index_dtype=index_dtype)
    batch = mat.shape[:n_batch]
    return [data, ShapedArray(batch + (nse,), np.dtype(index_dtype)),
            ShapedArray(batch + (mat.shape[n_batch] + 1,), np.dtype(index_dtype))]


def _fromdense_jvp(primals, tangents, **params):
    (mat,), (t,) = primals, tangents
    data, indices, indptr = bcsr_fromdense_p.bind(mat, **params)
    zeros = [Zero(get_aval(x).to_tangent_aval()) for x in (indices, indptr)]
    if type(t) is Zero:
        return [data, indices, indptr], [Zero(get_aval(data).to_tangent_aval()), *zeros]
    return [data, indices, indptr], [bcsr_extract_p.bind(indices, indptr, t), *zeros]


def _fromdense_batch(size, vals, dims, *, n_batch, **params):
    outs = bcsr_fromdense_p.bind(moveaxis(vals[0], dims[0], 0), n_batch=n_batch + 1, **params)
    return outs, [0, 0, 0]


bcsr_fromdense_p.def_impl(_fromdense_impl)
bcsr_fromdense_p.def_abstract_eval(_fromdense_aval)
bcsr_fromdense_p.def_jvp(_fromdense_jvp)
bcsr_fromdense_p.def_batch(_fromdense_batch)
bcsr_fromdense_p.mark_absent("transpose", "not linear as a whole (its indices depend on the "
                             "values); reverse mode transposes its JVP, a bcsr_extract")


# ------------------------------------------------------------------------------------------
# bcsr_dot_general


def _dot_impl(data, indices, indptr, rhs, *, dimension_numbers, lhs_spinfo,
              preferred_element_type):
    nb, rows, cols = _sparse_dims(lhs_spinfo.shape, indices)
    if (nb == 0 and data.ndim == 1 and dimension_numbers == (((1,), (0,)), ((), ()))
            and rhs.ndim in (1, 2)):
        return kernels.csr_matmul(data, indices, indptr, rhs, preferred_element_type)
    coo = coo_indices_np(indices, indptr, rows, cols)
    return bcoo_dot._dot_impl(data, coo, rhs, dimension_numbers=dimension_numbers,
                              lhs_spinfo=lhs_spinfo,
                              preferred_element_type=preferred_element_type)


def _dot_aval(data, indices, indptr, rhs, *, dimension_numbers, lhs_spinfo,
              preferred_element_type):
    name = "bcsr_dot_general"
    nb = check_layout(name, data, indices, indptr, lhs_spinfo.shape)
    check_dimension_numbers(name, dimension_numbers, tuple(lhs_spinfo.shape), rhs.shape, nb)
    if data.dtype != rhs.dtype:
        raise TypeError(f"{name} requires operands of one dtype, got {data.dtype.name} data "
                        f"and a {rhs.dtype.name} rhs")
    shape = product_shape(dimension_numbers, tuple(lhs_spinfo.shape), rhs.shape)
    return ShapedArray(shape, np.dtype(preferred_element_type),
                       data.weak_type and rhs.weak_type)


def _dot_jvp(primals, tangents, **params):
    (data, indices, indptr, rhs), (t_data, _, _, t_rhs) = primals, tangents
    out = bcsr_dot_general_p.bind(data, indices, indptr, rhs, **params)
    t_out = Zero(get_aval(out).to_tangent_aval())
    if type(t_data) is not Zero:
        t_out = add_tangents(t_out, bcsr_dot_general_p.bind(t_data, indices, indptr, rhs,
                                                            **params))
    if type(t_rhs) is not Zero:
        t_out = add_tangents(t_out, bcsr_dot_general_p.bind(data, indices, indptr, t_rhs,
                                                            **params))
    return out, t_out


def _dot_transpose(ct, data, indices, indptr, rhs, **params):
    """BCOO's transpose, on the (row, column) coordinates."""
    if is_undefined(indices) or is_undefined(indptr):
        raise NotImplementedError("transpose of bcsr_dot_general with respect to its indices")
    nb, rows, cols = _sparse_dims(params["lhs_spinfo"].shape, get_aval(indices))
    coo = coo_indices(indices, indptr, rows, cols)
    data_ct, _, rhs_ct = bcoo_dot._dot_transpose(ct, data, coo, rhs, **params)
    return [data_ct, None, None, rhs_ct]


def _dot_batch(size, vals, dims, *, dimension_numbers, lhs_spinfo, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    data, indices, indptr = _all_front(size, vals[:3], dims[:3])
    rhs, dr = vals[3], dims[3]
    info = lhs_spinfo._replace(shape=(size,) + tuple(lhs_spinfo.shape))
    shift = bcoo_dot._shift
    if dr is None:
        dims_ = ((shift(lc), tuple(rc)), (shift(lb), tuple(rb)))
        out_dim = len(lb)
    else:
        rhs = moveaxis(rhs, dr, 0)
        dims_ = ((shift(lc), shift(rc)), ((0,) + shift(lb), (0,) + shift(rb)))
        out_dim = 0
    return bcsr_dot_general_p.bind(data, indices, indptr, rhs, dimension_numbers=dims_,
                                   lhs_spinfo=info,
                                   preferred_element_type=preferred_element_type), out_dim


bcsr_dot_general_p.def_impl(_dot_impl)
bcsr_dot_general_p.def_abstract_eval(_dot_aval)
bcsr_dot_general_p.def_jvp(_dot_jvp)
bcsr_dot_general_p.def_transpose(_dot_transpose)
bcsr_dot_general_p.def_batch(_dot_batch)
