"""The primitives of COO matrices (`didax.experimental.sparse.COO`): `coo_todense`,
`coo_fromdense`, `coo_matvec` and `coo_matmat`, with their rules.

A COO matrix is (data, row, col), each of shape (nse,): entry k adds data[k] at
(row[k], col[k]); entries out of bounds add nothing (`coo_fromdense` pads with zeros at
(0, 0), as JAX does). The products are the C kernels of `kernels` (NumPy without a
compiler). todense and the products are linear in the data, the products bilinear in
(data, dense operand); their data cotangents read the other operand at the stored positions
only. (JAX 0.10.2's data cotangent of `coo_matvec`/`csr_matvec` with transpose=True swaps
the rows and columns; didax's is the derivative, as finite differences check.) As in JAX
there are no batching rules (use BCOO, which has batch dimensions).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from didax._src import base_prims, core, dtypes
from didax._src.base_prims import add_tangents
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters.transpose import is_undefined
from didax._src.lax import elementwise as lax
from didax._src.lax import shape as lax_shape
from didax._src.lax.indexing import GatherDimensionNumbers, GatherScatterMode, gather
from didax._src.primitives.sparse import kernels
from didax._src.primitives.sparse import todense as bcoo_todense
from didax._src.primitives.sparse.layout import SparseInfo

coo_todense_p = core.primitive("coo_todense", linear=True)
coo_fromdense_p = core.primitive("coo_fromdense", multiple_results=True)
coo_matvec_p = core.primitive("coo_matvec")
coo_matmat_p = core.primitive("coo_matmat")

_NO_BATCH = "not implemented (as in JAX): use BCOO, whose n_batch dimensions batch"


class COOInfo(NamedTuple):
    """The static description of a COO matrix (a primitive parameter)."""

    shape: tuple
    rows_sorted: bool = False
    cols_sorted: bool = False


def check_layout(name, data, row, col, shape):
    """A TypeError or ValueError naming the parts that do not make a COO matrix."""
    for what, x in (("row", row), ("col", col)):
        if not dtypes.issubdtype(x.dtype, np.integer):
            raise TypeError(f"{name}: {what} must be integers, got dtype {x.dtype.name}")
    if len(tuple(shape)) != 2 or data.ndim != 1 or row.shape != data.shape \
            or col.shape != data.shape:
        raise ValueError(f"{name}: a COO matrix needs data, row and col of one shape (nse,) "
                         f"and a 2-D shape, got data.shape={data.shape}, row.shape={row.shape}"
                         f", col.shape={col.shape}, shape={tuple(shape)}")


def valid(row, col, shape):
    """Which entries are in bounds (lax, for the rules)."""
    def inside(index, size):
        dtype = get_aval(index).dtype
        return lax.bitwise_and(lax.ge(index, np.asarray(0, dtype)),
                               lax.lt(index, np.asarray(size, dtype)))

    return lax.bitwise_and(inside(row, shape[0]), inside(col, shape[1]))


def gather_at(x, index, ok):
    """x[index] where `ok`, else 0 (lax; the index clipped into bounds)."""
    return _read(x, [index], ok)


def _read(x, index, ok):
    """x at the leading coordinates `index` (a list of integer arrays of the shape of `ok`,
    clipped into bounds) where `ok`, else 0."""
    aval = get_aval(x)
    k, lead = len(index), aval.shape[:len(index)]
    shape = get_aval(ok).shape + aval.shape[k:]
    zeros = base_prims.full(shape, 0, aval.dtype)
    if aval.weak_type:
        zeros = base_prims.convert_element_type(zeros, aval.dtype, weak_type=True)
    if 0 in lead:  # (nothing to read: every entry is out of bounds)
        return zeros
    dtype = np.result_type(*(get_aval(i).dtype for i in index))
    columns = [lax.clamp(np.asarray(0, dtype), lax.convert_element_type(i, dtype),
                         np.asarray(n - 1, dtype)) for i, n in zip(index, lead)]
    starts = lax_shape.concatenate([lax_shape.expand_dims(c, (get_aval(c).ndim,))
                                    for c in columns], get_aval(ok).ndim)
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(get_aval(ok).ndim, len(shape))),
        collapsed_slice_dims=tuple(range(k)), start_index_map=tuple(range(k)))
    read = gather(x, starts, dnums, (1,) * k + aval.shape[k:],
                  mode=GatherScatterMode.PROMISE_IN_BOUNDS)
    mask = base_prims.broadcast_in_dim(ok, shape, tuple(range(get_aval(ok).ndim)))
    return lax.select_n(mask, zeros, read)


# ------------------------------------------------------------------------------------------
# coo_todense


def _todense_impl(data, row, col, *, spinfo):
    coords = np.stack([np.asarray(row), np.asarray(col)], axis=1)
    return bcoo_todense._todense_impl(data, coords, spinfo=SparseInfo(tuple(spinfo.shape)))


def _todense_aval(data, row, col, *, spinfo):
    check_layout("coo_todense", data, row, col, spinfo.shape)
    return ShapedArray(tuple(spinfo.shape), data.dtype, data.weak_type)


def _todense_jvp(primals, tangents, *, spinfo):
    out = coo_todense_p.bind(*primals, spinfo=spinfo)
    if type(tangents[0]) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, coo_todense_p.bind(tangents[0], *primals[1:], spinfo=spinfo)


def _todense_transpose(ct, data, row, col, *, spinfo):
    if not is_undefined(data) or is_undefined(row) or is_undefined(col):
        raise NotImplementedError("transpose of coo_todense: it is linear in its data only")
    if type(ct) is Zero:
        return [Zero(data.aval), None, None]
    return [extract(row, col, ct), None, None]


def extract(row, col, mat):
    """mat[row, col] per entry (0 where out of bounds): the data cotangent of todense."""
    return _read(mat, [row, col], valid(row, col, get_aval(mat).shape))


coo_todense_p.def_impl(_todense_impl)
coo_todense_p.def_abstract_eval(_todense_aval)
coo_todense_p.def_jvp(_todense_jvp)
coo_todense_p.def_transpose(_todense_transpose)
coo_todense_p.mark_absent("batch", _NO_BATCH)


# ------------------------------------------------------------------------------------------
# coo_fromdense


def _fromdense_impl(mat, *, nse, index_dtype):
    row, col = np.nonzero(mat)
    row, col = row[:nse], col[:nse]
    pad = nse - len(row)
    data = np.concatenate([mat[row, col], np.zeros(pad, mat.dtype)])
    index_dtype = np.dtype(index_dtype)
    row = np.concatenate([row, np.zeros(pad, row.dtype)]).astype(index_dtype)
    col = np.concatenate([col, np.zeros(pad, col.dtype)]).astype(index_dtype)
    return [data, row, col]


def _fromdense_aval(mat, *, nse, index_dtype):
    if mat.ndim != 2:
        raise ValueError(f"coo_fromdense: a COO matrix is 2-D, got an array of shape "
                         f"{mat.shape}; use BCOO for other ranks")
    index = ShapedArray((nse,), np.dtype(index_dtype))
    return [ShapedArray((nse,), mat.dtype, mat.weak_type), index, index]


def _fromdense_jvp(primals, tangents, **params):
    (mat,), (t,) = primals, tangents
    data, row, col = coo_fromdense_p.bind(mat, **params)
    zeros = [Zero(get_aval(x).to_tangent_aval()) for x in (row, col)]
    if type(t) is Zero:
        return [data, row, col], [Zero(get_aval(data).to_tangent_aval()), *zeros]
    return [data, row, col], [extract(row, col, t), *zeros]


coo_fromdense_p.def_impl(_fromdense_impl)
coo_fromdense_p.def_abstract_eval(_fromdense_aval)
coo_fromdense_p.def_jvp(_fromdense_jvp)
coo_fromdense_p.mark_absent("transpose", "not linear as a whole (its indices depend on the "
                            "values); reverse mode transposes its JVP")
coo_fromdense_p.mark_absent("batch", _NO_BATCH)


# ------------------------------------------------------------------------------------------
# coo_matvec and coo_matmat: M @ x, or M.T @ x with transpose=True


def _product_impl(data, row, col, x, *, spinfo, transpose):
    rows, cols = (col, row) if transpose else (row, col)
    n_rows = spinfo.shape[1] if transpose else spinfo.shape[0]
    return kernels.coo_matmul(data, rows, cols, x, n_rows, data.dtype)


def product_aval(name, data, x, shape, transpose, x_ndim):
    """The result type of M @ x (M.T @ x) for the matrix M of `shape`."""
    n_in, n_out = (shape[0], shape[1]) if transpose else (shape[1], shape[0])
    if x.ndim != x_ndim or x.shape[0] != n_in:
        want = "a vector" if x_ndim == 1 else "a matrix"
        raise TypeError(f"{name}: expected {want} with {n_in} rows for a matrix of shape "
                        f"{tuple(shape)} (transpose={transpose}), got shape {x.shape}")
    if data.dtype != x.dtype:
        raise TypeError(f"{name} requires operands of one dtype, got {data.dtype.name} data "
                        f"and a {x.dtype.name} operand (promote them first; `@` does)")
    return ShapedArray((n_out,) + x.shape[1:], data.dtype, data.weak_type and x.weak_type)


def _product_rules(p, x_ndim):
    name = p.name

    def aval(data, row, col, x, *, spinfo, transpose):
        check_layout(name, data, row, col, spinfo.shape)
        return product_aval(name, data, x, spinfo.shape, transpose, x_ndim)

    def jvp(primals, tangents, **params):
        (data, row, col, x), (t_data, _, _, t_x) = primals, tangents
        out = p.bind(data, row, col, x, **params)
        t_out = Zero(get_aval(out).to_tangent_aval())
        if type(t_data) is not Zero:
            t_out = add_tangents(t_out, p.bind(t_data, row, col, x, **params))
        if type(t_x) is not Zero:
            t_out = add_tangents(t_out, p.bind(data, row, col, t_x, **params))
        return out, t_out

    def transpose_rule(ct, data, row, col, x, *, spinfo, transpose):
        if is_undefined(row) or is_undefined(col) or (is_undefined(data) == is_undefined(x)):
            raise NotImplementedError(f"transpose of {name}: it is linear in its data or its "
                                      "dense operand, one at a time")
        if is_undefined(x):
            if type(ct) is Zero:
                return [None, None, None, Zero(x.aval)]
            return [None, None, None, p.bind(data, row, col, ct, spinfo=spinfo,
                                             transpose=not transpose)]
        if type(ct) is Zero:
            return [Zero(data.aval), None, None, None]
        out_idx, in_idx = (col, row) if transpose else (row, col)
        ok = valid(row, col, spinfo.shape)
        prod = gather_at(ct, out_idx, ok) * gather_at(x, in_idx, ok)
        if x_ndim == 2:
            prod = prod.sum(axis=1)
        return [prod, None, None, None]

    p.def_impl(_product_impl)
    p.def_abstract_eval(aval)
    p.def_jvp(jvp)
    p.def_transpose(transpose_rule)
    p.mark_absent("batch", _NO_BATCH)


_product_rules(coo_matvec_p, 1)
_product_rules(coo_matmat_p, 2)
