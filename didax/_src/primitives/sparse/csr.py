"""The primitives of CSR matrices (`didax.experimental.sparse.CSR`, and through its
transpose `CSC`): `csr_todense`, `csr_fromdense`, `csr_matvec` and `csr_matmat`, with
their rules.

A CSR matrix is (data, indices, indptr): the entries of row r are data[k] at column
indices[k] for k from indptr[r] to indptr[r + 1]; entries from indptr[-1] on are padding.
The products are the C kernels of `kernels` (NumPy without a compiler); the transposed
product (M.T @ x) runs the COO kernel on (column, row) coordinates. The rules are COO's
(coo.py) on the row of each entry, which `bcsr.coo_indices` reads off indptr. As in JAX
there are no batching rules (use BCSR, which has batch dimensions).
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import add_tangents
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters.transpose import is_undefined
from didax._src.primitives.sparse import bcsr, kernels
from didax._src.primitives.sparse.coo import gather_at, product_aval, valid
from didax._src.primitives.sparse.layout import SparseInfo

csr_todense_p = core.primitive("csr_todense", linear=True)
csr_fromdense_p = core.primitive("csr_fromdense", multiple_results=True)
csr_matvec_p = core.primitive("csr_matvec")
csr_matmat_p = core.primitive("csr_matmat")

_NO_BATCH = "not implemented (as in JAX): use BCSR, whose n_batch dimensions batch"


def check_layout(name, data, indices, indptr, shape):
    """A TypeError or ValueError naming the parts that do not make a CSR matrix."""
    for what, x in (("indices", indices), ("indptr", indptr)):
        if not dtypes.issubdtype(x.dtype, np.integer):
            raise TypeError(f"{name}: {what} must be integers, got dtype {x.dtype.name}")
    shape = tuple(shape)
    if len(shape) != 2 or data.ndim != 1 or indices.shape != data.shape \
            or indptr.shape != (shape[0] + 1,):
        raise ValueError(f"{name}: a CSR matrix of shape (rows, cols) needs data and indices "
                         "of one shape (nse,) and indptr of shape (rows + 1,), got "
                         f"data.shape={data.shape}, indices.shape={indices.shape}, "
                         f"indptr.shape={indptr.shape}, shape={shape}")


def entry_rows(indices, indptr, shape):
    """(row, col) of every entry (lax); padding entries get (rows, cols), out of
    bounds."""
    coords = bcsr.coo_indices(indices, indptr, shape[0], shape[1])
    return coords[:, 0], coords[:, 1]


# ------------------------------------------------------------------------------------------
# csr_todense


def _todense_impl(data, indices, indptr, *, shape):
    return bcsr._todense_impl(data, indices, indptr, spinfo=SparseInfo(tuple(shape)))


def _todense_aval(data, indices, indptr, *, shape):
    check_layout("csr_todense", data, indices, indptr, shape)
    return ShapedArray(tuple(shape), data.dtype, data.weak_type)


def _todense_jvp(primals, tangents, *, shape):
    out = csr_todense_p.bind(*primals, shape=shape)
    if type(tangents[0]) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, csr_todense_p.bind(tangents[0], *primals[1:], shape=shape)


def _todense_transpose(ct, data, indices, indptr, *, shape):
    if not is_undefined(data) or is_undefined(indices) or is_undefined(indptr):
        raise NotImplementedError("transpose of csr_todense: it is linear in its data only")
    if type(ct) is Zero:
        return [Zero(data.aval), None, None]
    return [bcsr.bcsr_extract_p.bind(indices, indptr, ct), None, None]


csr_todense_p.def_impl(_todense_impl)
csr_todense_p.def_abstract_eval(_todense_aval)
csr_todense_p.def_jvp(_todense_jvp)
csr_todense_p.def_transpose(_todense_transpose)
csr_todense_p.mark_absent("batch", _NO_BATCH)


# ------------------------------------------------------------------------------------------
# csr_fromdense


def _fromdense_impl(mat, *, nse, index_dtype):
    row, col = np.nonzero(mat)
    row, col = row[:nse], col[:nse]
    pad = nse - len(row)
    index_dtype = np.dtype(index_dtype)
    data = np.concatenate([mat[row, col], np.zeros(pad, mat.dtype)])
    indices = np.concatenate([col, np.zeros(pad, col.dtype)]).astype(index_dtype)
    indptr = np.searchsorted(row, np.arange(mat.shape[0] + 1)).astype(index_dtype)
    return [data, indices, indptr]


def _fromdense_aval(mat, *, nse, index_dtype):
    if mat.ndim != 2:
        raise ValueError(f"csr_fromdense: a CSR matrix is 2-D, got an array of shape "
                         f"{mat.shape}; use BCSR for other ranks")
    index_dtype = np.dtype(index_dtype)
    return [ShapedArray((nse,), mat.dtype, mat.weak_type), ShapedArray((nse,), index_dtype),
            ShapedArray((mat.shape[0] + 1,), index_dtype)]


def _fromdense_jvp(primals, tangents, **params):
    (mat,), (t,) = primals, tangents
    data, indices, indptr = csr_fromdense_p.bind(mat, **params)
    zeros = [Zero(get_aval(x).to_tangent_aval()) for x in (indices, indptr)]
    if type(t) is Zero:
        return [data, indices, indptr], [Zero(get_aval(data).to_tangent_aval()), *zeros]
    return [data, indices, indptr], [bcsr.bcsr_extract_p.bind(indices, indptr, t), *zeros]


csr_fromdense_p.def_impl(_fromdense_impl)
csr_fromdense_p.def_abstract_eval(_fromdense_aval)
csr_fromdense_p.def_jvp(_fromdense_jvp)
csr_fromdense_p.mark_absent("transpose", "not linear as a whole (its indices depend on the "
                            "values); reverse mode transposes its JVP, a bcsr_extract")
csr_fromdense_p.mark_absent("batch", _NO_BATCH)


# ------------------------------------------------------------------------------------------
# csr_matvec and csr_matmat: M @ x, or M.T @ x with transpose=True


def _product_impl(data, indices, indptr, x, *, shape, transpose):
    if not transpose:
        return kernels.csr_matmul(data, indices, indptr, x, data.dtype)
    coords = bcsr.coo_indices_np(indices, indptr, shape[0], shape[1])
    return kernels.coo_matmul(data, coords[:, 1], coords[:, 0], x, shape[1], data.dtype)


def _product_rules(p, x_ndim):
    name = p.name

    def aval(data, indices, indptr, x, *, shape, transpose):
        check_layout(name, data, indices, indptr, shape)
        return product_aval(name, data, x, shape, transpose, x_ndim)

    def jvp(primals, tangents, **params):
        (data, indices, indptr, x), (t_data, _, _, t_x) = primals, tangents
        out = p.bind(data, indices, indptr, x, **params)
        t_out = Zero(get_aval(out).to_tangent_aval())
        if type(t_data) is not Zero:
            t_out = add_tangents(t_out, p.bind(t_data, indices, indptr, x, **params))
        if type(t_x) is not Zero:
            t_out = add_tangents(t_out, p.bind(data, indices, indptr, t_x, **params))
        return out, t_out

    def transpose_rule(ct, data, indices, indptr, x, *, shape, transpose):
        if is_undefined(indices) or is_undefined(indptr) \
                or (is_undefined(data) == is_undefined(x)):
            raise NotImplementedError(f"transpose of {name}: it is linear in its data or its "
                                      "dense operand, one at a time")
        if is_undefined(x):
            if type(ct) is Zero:
                return [None, None, None, Zero(x.aval)]
            return [None, None, None, p.bind(data, indices, indptr, ct, shape=shape,
                                             transpose=not transpose)]
        if type(ct) is Zero:
            return [Zero(data.aval), None, None, None]
        row, col = entry_rows(indices, indptr, shape)
        out_idx, in_idx = (col, row) if transpose else (row, col)
        ok = valid(row, col, shape)
        prod = gather_at(ct, out_idx, ok) * gather_at(x, in_idx, ok)
        if x_ndim == 2:
            prod = prod.sum(axis=1)
        return [prod, None, None, None]

    p.def_impl(_product_impl)
    p.def_abstract_eval(aval)
    p.def_jvp(jvp)
    p.def_transpose(transpose_rule)
    p.mark_absent("batch", _NO_BATCH)


_product_rules(csr_matvec_p, 1)
_product_rules(csr_matmat_p, 2)
