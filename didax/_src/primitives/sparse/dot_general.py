"""`bcoo_dot_general`: `lax.dot_general` of a sparse lhs (data, indices) and a dense rhs,
computed from the stored elements only (never densifying the lhs), and
`bcoo_dot_general_transpose_data`, its transpose with respect to the lhs data.

The product is bilinear in (data, rhs). Its transpose for the rhs is again a sparse product
(the lhs contracted with the cotangent over the lhs's free dimensions) followed by a
permutation; its transpose for the data needs the cotangent and the rhs only at the stored
positions, which the second primitive gathers, so reverse mode over a large sparse matrix
never builds a dense one. The second primitive is bilinear in (cotangent, rhs) and its two
transposes are the first primitive again, so derivatives of every order stay sparse.

How the NumPy kernel sees a product. Each lhs dimension is a batch, sparse or dense one of
the layout, and for the product a batch one (paired with the rhs), a contracted one, or a
free one. Batch dimensions of the product must be layout batch dimensions (as in JAX);
contractions may be over any dimension. Per stored element the kernel gathers the rhs at
the element's position (batch coordinates, and the sparse coordinates that are contracted),
multiplies with the element's dense block summing what is contracted (one `np.einsum`), and
scatters the result to the element's free sparse coordinates (`np.add.at`) or, when there
are none, sums over the elements.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import add_tangents, convert_element_type, transpose
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters.batching import matchaxis, moveaxis
from didax._src.interpreters.transpose import is_undefined
from didax._src.primitives.sparse import kernels
from didax._src.primitives.sparse.layout import (
    broadcast_batch,
    check_dimension_numbers,
    layout_of,
    product_shape,
    segment_sum,
    valid_and_flat,
)
from didax._src.primitives.sparse.todense import front, sum_to_shape

bcoo_dot_general_p = core.primitive("bcoo_dot_general")
bcoo_dot_general_transpose_data_p = core.primitive("bcoo_dot_general_transpose_data")


class _Plan(NamedTuple):
    """The lhs dimensions by role (lhs dimension numbers; `r...`: their rhs partners)."""

    nb: int
    ns: int
    Bb: tuple  # layout batch dimensions that are batch dimensions of the product
    rBb: tuple
    Bc: tuple  # layout batch dimensions contracted
    rBc: tuple
    Sc: tuple  # sparse dimensions contracted
    rSc: tuple
    Dc: tuple  # dense dimensions contracted
    rDc: tuple
    Bf: tuple  # free layout batch dimensions
    Sf: tuple  # free sparse dimensions
    Df: tuple  # free dense dimensions
    rfree: tuple  # free rhs dimensions

    @property
    def grid(self) -> tuple:
        """The layout batch dimensions in the order the kernel lays them out."""
        return self.Bb + self.Bc + self.Bf


def _plan(dimension_numbers, lhs_ndim, nb, ns, rhs_ndim) -> _Plan:
    (lc, rc), (lb, rb) = dimension_numbers

    def contracted(lo, hi):
        pairs = [(a, b) for a, b in zip(lc, rc) if lo <= a < hi]
        return tuple(a for a, _ in pairs), tuple(b for _, b in pairs)

    def free(lo, hi):
        return tuple(d for d in range(lo, hi) if d not in lc and d not in lb)

    Bc, rBc = contracted(0, nb)
    Sc, rSc = contracted(nb, nb + ns)
    Dc, rDc = contracted(nb + ns, lhs_ndim)
    rfree = tuple(d for d in range(rhs_ndim) if d not in rc and d not in rb)
    return _Plan(nb, ns, tuple(lb), tuple(rb), Bc, rBc, Sc, rSc, Dc, rDc, free(0, nb),
                 free(nb, nb + ns), free(nb + ns, lhs_ndim), rfree)


_compute_dtype = kernels.compute_dtype


def _arange_at(size, k, ndim):
    shape = [1] * ndim
    shape[k] = size
    return np.arange(size).reshape(shape)


def _sparse_column(idx_t, d, plan, size):
    """Coordinate `d` (an lhs sparse dimension) of every stored element, clamped in bounds
    (elements out of bounds are masked by the caller)."""
    return np.clip(idx_t[..., d - plan.nb].astype(np.int64), 0, max(size - 1, 0))


def _gather(x, index, grid_shape):
    """x[index] broadcast to `grid_shape` + x's remaining dimensions."""
    g = len(grid_shape)
    out = x[tuple(index)] if index else x.reshape((1,) * g + x.shape)
    return np.broadcast_to(out, grid_shape + out.shape[g:])


def _gather_rhs(rhs, idx_t, plan, grid_shape, lhs_shape):
    """The rhs at each stored element's contracted position: shape grid + (rDc, rfree)."""
    r = rhs.transpose(plan.rBb + plan.rBc + plan.rSc + plan.rDc + plan.rfree)
    g = len(grid_shape)
    index = [_arange_at(grid_shape[k], k, g) for k in range(len(plan.Bb) + len(plan.Bc))]
    index += [_sparse_column(idx_t, d, plan, lhs_shape[d]) for d in plan.Sc]
    return _gather(r, index, grid_shape)


def _elements(indices, plan, lhs_shape):
    """The indices (batch dimensions broadcast) laid out as grid + (nse, n_sparse), and
    which stored elements are in bounds."""
    nb = plan.nb
    indices = broadcast_batch(indices, tuple(lhs_shape[:nb]))
    idx_t = indices.transpose(plan.grid + (nb, nb + 1))
    valid, _ = valid_and_flat(idx_t, tuple(lhs_shape[nb:nb + plan.ns]))
    return idx_t, valid


def _masked(x, valid):
    if valid.all():
        return x
    return np.where(valid.reshape(valid.shape + (1,) * (x.ndim - valid.ndim)), x, 0)


def _dense_axis(d, plan):
    return plan.nb + 1 + (d - plan.nb - plan.ns)


def _dot_impl(data, indices, rhs, *, dimension_numbers, lhs_spinfo, preferred_element_type):
    lhs_shape = tuple(lhs_spinfo.shape)
    nb, ns = indices.ndim - 2, indices.shape[-1]
    plan = _plan(dimension_numbers, len(lhs_shape), nb, ns, rhs.ndim)
    out_shape = product_shape(dimension_numbers, lhs_shape, rhs.shape)
    out_dtype = np.dtype(preferred_element_type)
    if data.size == 0 or rhs.size == 0 or math.prod(out_shape) == 0 or 0 in lhs_shape:
        return np.zeros(out_shape, out_dtype)
    cdt = _compute_dtype(out_dtype)
    if (nb == 0 and ns == 2 and data.ndim == 1 and rhs.ndim in (1, 2)
            and dimension_numbers in ((((1,), (0,)), ((), ())), (((0,), (0,)), ((), ())))):
        c = dimension_numbers[0][0][0]  # (1: matrix @ rhs; 0: its transpose @ rhs)
        return kernels.coo_matmul(data, indices[:, 1 - c], indices[:, c], rhs,
                                  lhs_shape[1 - c], out_dtype)
    data = broadcast_batch(data, lhs_shape[:nb])
    data_t = data.transpose(plan.grid + (nb,)
                            + tuple(_dense_axis(d, plan) for d in plan.Dc + plan.Df))
    idx_t, valid = _elements(indices, plan, lhs_shape)
    grid_shape = idx_t.shape[:-1]
    g = len(grid_shape)
    G = _masked(_gather_rhs(rhs, idx_t, plan, grid_shape, lhs_shape), valid)
    data_t = _masked(data_t, valid)
    # einsum labels: the grid (its last one the stored elements), then Dc, Df, rfree
    grid = list(range(g))
    nbb, nbc = len(plan.Bb), len(plan.Bc)
    dc = list(range(g, g + len(plan.Dc)))
    df = list(range(g + len(dc), g + len(dc) + len(plan.Df)))
    start = g + len(dc) + len(df)
    rf = list(range(start, start + len(plan.rfree)))
    if plan.Sf:  # keep every element: each goes to its own free sparse coordinates
        out_labels = grid + df + rf
    else:
        out_labels = grid[:nbb] + grid[nbb + nbc:g - 1] + df + rf
    P = np.einsum(data_t.astype(cdt, copy=False), grid + dc + df,
                  G.astype(cdt, copy=False), grid + dc + rf, out_labels)
    if not plan.Sf:
        return P.reshape(out_shape).astype(out_dtype, copy=False)
    # Scatter: (Bb, Bf) rows, each receiving its (Bc, nse) elements at their free sparse
    # coordinates.
    order = (list(range(nbb)) + list(range(nbb + nbc, g - 1)) + list(range(nbb, nbb + nbc))
             + [g - 1])
    P = P.transpose(order + list(range(g, P.ndim)))
    sf_shape = tuple(lhs_shape[d] for d in plan.Sf)
    _, flat = valid_and_flat(idx_t[..., [d - nb for d in plan.Sf]], sf_shape)
    flat, ok = flat.transpose(order), valid.transpose(order)
    n_rows = math.prod(grid_shape[d] for d in order[:nbb + len(plan.Bf)])
    rest = P.shape[g:]
    rows = (np.arange(n_rows).reshape(-1, 1) * math.prod(sf_shape)
            + flat.reshape(n_rows, -1))[ok.reshape(n_rows, -1)]
    values = P.reshape(n_rows, -1, math.prod(rest))[ok.reshape(n_rows, -1)]
    if values.shape[1] == 1:
        values = values[:, 0]
    out = segment_sum(rows, values, n_rows * math.prod(sf_shape))
    return out.reshape(out_shape).astype(out_dtype, copy=False)


def _dot_aval(data, indices, rhs, *, dimension_numbers, lhs_spinfo, preferred_element_type):
    name = "bcoo_dot_general"
    lay = layout_of(name, data, indices, lhs_spinfo.shape)
    check_dimension_numbers(name, dimension_numbers, tuple(lhs_spinfo.shape), rhs.shape,
                            lay.n_batch)
    if data.dtype != rhs.dtype:
        raise TypeError(f"{name} requires operands of one dtype, got {data.dtype.name} data "
                        f"and a {rhs.dtype.name} rhs (didax.experimental.sparse.bcoo_dot_general "
                        "and `@` promote them first)")
    shape = product_shape(dimension_numbers, tuple(lhs_spinfo.shape), rhs.shape)
    return ShapedArray(shape, np.dtype(preferred_element_type),
                       data.weak_type and rhs.weak_type)


def _bind_dot(data, indices, rhs, dimension_numbers, lhs_spinfo, preferred_element_type):
    return bcoo_dot_general_p.bind(data, indices, rhs, dimension_numbers=dimension_numbers,
                                   lhs_spinfo=lhs_spinfo,
                                   preferred_element_type=preferred_element_type)


def _dot_jvp(primals, tangents, **params):
    (data, indices, rhs), (t_data, _, t_rhs) = primals, tangents
    out = bcoo_dot_general_p.bind(data, indices, rhs, **params)
    t_out = Zero(get_aval(out).to_tangent_aval())
    if t_out.aval.dtype == dtypes.float0:
        return out, t_out
    if type(t_data) is not Zero:
        t_out = add_tangents(t_out, bcoo_dot_general_p.bind(t_data, indices, rhs, **params))
    if type(t_rhs) is not Zero:
        t_out = add_tangents(t_out, bcoo_dot_general_p.bind(data, indices, t_rhs, **params))
    return out, t_out


def rhs_transpose(data, indices, ct, rhs_shape, dimension_numbers, lhs_spinfo):
    """The cotangent of the rhs of a product with the sparse lhs (data, indices): the lhs
    contracted with `ct` over the lhs's free dimensions, permuted into the rhs's order."""
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_ndim = len(lhs_spinfo.shape)
    lfree = tuple(d for d in range(lhs_ndim) if d not in lc and d not in lb)
    dims = ((lfree, tuple(len(lb) + j for j in range(len(lfree)))),
            (tuple(lb), tuple(range(len(lb)))))
    out = _bind_dot(data, indices, ct, dims, lhs_spinfo, get_aval(ct).dtype)
    rfree = [d for d in range(len(rhs_shape)) if d not in rc and d not in rb]
    rhs_of = list(rb) + [rc[list(lc).index(d)] for d in sorted(lc)] + rfree
    perm = tuple(int(k) for k in np.argsort(rhs_of))
    return transpose(out, perm) if perm != tuple(range(len(perm))) else out


def _dot_transpose(ct, data, indices, rhs, *, dimension_numbers, lhs_spinfo,
                   preferred_element_type):
    if is_undefined(indices):
        raise NotImplementedError("transpose of bcoo_dot_general with respect to its indices "
                                  "(integers: they have no cotangent)")
    if is_undefined(data) and is_undefined(rhs):
        raise NotImplementedError("transpose of bcoo_dot_general: the product of two linear "
                                  "values is not linear")
    if is_undefined(data):
        if type(ct) is Zero:
            return [Zero(data.aval), None, None]
        data_ct = bcoo_dot_general_transpose_data_p.bind(
            ct, indices, rhs, dimension_numbers=dimension_numbers, lhs_spinfo=lhs_spinfo)
        data_ct = sum_to_shape(data_ct, data.aval.shape)
        if get_aval(data_ct).dtype != data.aval.dtype:
            data_ct = convert_element_type(data_ct, data.aval.dtype)
        return [data_ct, None, None]
    if type(ct) is Zero:
        return [None, None, Zero(rhs.aval)]
    rhs_ct = rhs_transpose(data, indices, ct, rhs.aval.shape, dimension_numbers, lhs_spinfo)
    if get_aval(rhs_ct).dtype != rhs.aval.dtype:
        rhs_ct = convert_element_type(rhs_ct, rhs.aval.dtype)
    return [None, None, rhs_ct]


def _shift(dims, by=1) -> tuple:
    return tuple(d + by for d in dims)


def _batched_info(size, lhs_spinfo):
    """The lhs's info with the vmapped dimension as a new leading layout batch dimension
    (its data and indices get it first, of size 1 where they are not batched)."""
    return lhs_spinfo._replace(shape=(size,) + tuple(lhs_spinfo.shape))


def _dot_batch(size, vals, dims, *, dimension_numbers, lhs_spinfo, preferred_element_type):
    (data, indices, rhs), (dd, di, dr) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if dd is None and di is None:  # only the rhs: a new free rhs dimension, first
        rhs = moveaxis(rhs, dr, 0)
        dims_ = ((tuple(lc), _shift(rc)), (tuple(lb), _shift(rb)))
        out = _bind_dot(data, indices, rhs, dims_, lhs_spinfo, preferred_element_type)
        n_lhs_free = len(lhs_spinfo.shape) - len(lc) - len(lb)
        return out, len(lb) + n_lhs_free
    data, indices = front(data, dd), front(indices, di)
    info = _batched_info(size, lhs_spinfo)
    if dr is None:  # a new free lhs dimension, first of them
        dims_ = ((_shift(lc), tuple(rc)), (_shift(lb), tuple(rb)))
        out = _bind_dot(data, indices, rhs, dims_, info, preferred_element_type)
        return out, len(lb)
    rhs = moveaxis(rhs, dr, 0)
    dims_ = ((_shift(lc), _shift(rc)), ((0,) + _shift(lb), (0,) + _shift(rb)))
    return _bind_dot(data, indices, rhs, dims_, info, preferred_element_type), 0


bcoo_dot_general_p.def_impl(_dot_impl)
bcoo_dot_general_p.def_abstract_eval(_dot_aval)
bcoo_dot_general_p.def_jvp(_dot_jvp)
bcoo_dot_general_p.def_transpose(_dot_transpose)
bcoo_dot_general_p.def_batch(_dot_batch)


def bcoo_dot_general(data, indices, rhs, *, dimension_numbers, lhs_spinfo,
                     preferred_element_type=None):
    """dot_general(todense(data, indices), rhs) without the dense lhs; the operands have
    one dtype (callers promote)."""
    if preferred_element_type is None:
        preferred_element_type = get_aval(data).dtype
    return _bind_dot(data, indices, rhs, _dimension_numbers(dimension_numbers), lhs_spinfo,
                     np.dtype(preferred_element_type))


def _dimension_numbers(dimension_numbers) -> tuple:
    (lc, rc), (lb, rb) = dimension_numbers
    return ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
            (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))


# ------------------------------------------------------------------------------------------
# The transpose for the lhs data


def _transpose_data_impl(ct, indices, rhs, *, dimension_numbers, lhs_spinfo):
    lhs_shape = tuple(lhs_spinfo.shape)
    nb, ns = indices.ndim - 2, indices.shape[-1]
    plan = _plan(dimension_numbers, len(lhs_shape), nb, ns, rhs.ndim)
    nse = indices.shape[-2]
    dense = lhs_shape[nb + ns:]
    out_shape = lhs_shape[:nb] + (nse,) + dense
    if math.prod(out_shape) == 0 or ct.size == 0 or rhs.size == 0 or 0 in lhs_shape:
        return np.zeros(out_shape, ct.dtype)
    cdt = _compute_dtype(ct.dtype)
    idx_t, valid = _elements(indices, plan, lhs_shape)
    grid_shape = idx_t.shape[:-1]
    g = len(grid_shape)
    G = _gather_rhs(rhs, idx_t, plan, grid_shape, lhs_shape)
    nbb, nbc = len(plan.Bb), len(plan.Bc)
    index = [_arange_at(grid_shape[k], k, g) for k in range(nbb)]
    index += [_arange_at(grid_shape[nbb + nbc + j], nbb + nbc + j, g)
              for j in range(len(plan.Bf))]
    index += [_sparse_column(idx_t, d, plan, lhs_shape[d]) for d in plan.Sf]
    C = _gather(ct, index, grid_shape)
    grid = list(range(g))
    dc = list(range(g, g + len(plan.Dc)))
    df = list(range(g + len(dc), g + len(dc) + len(plan.Df)))
    start = g + len(dc) + len(df)
    rf = list(range(start, start + len(plan.rfree)))
    out = np.einsum(C.astype(cdt, copy=False), grid + df + rf,
                    G.astype(cdt, copy=False), grid + dc + rf, grid + dc + df)
    out = _masked(out, valid)
    where = {d: k for k, d in enumerate(plan.grid)}
    where.update({d: g + k for k, d in enumerate(plan.Dc + plan.Df)})
    perm = ([where[d] for d in range(nb)] + [g - 1]
            + [where[d] for d in range(nb + ns, len(lhs_shape))])
    return out.transpose(perm).astype(ct.dtype, copy=False)


def _transpose_data_aval(ct, indices, rhs, *, dimension_numbers, lhs_spinfo):
    name = "bcoo_dot_general_transpose_data"
    lhs_shape = tuple(lhs_spinfo.shape)
    nb = indices.ndim - 2
    nse, ns = indices.shape[-2], indices.shape[-1]
    data = ShapedArray(lhs_shape[:nb] + (nse,) + lhs_shape[nb + ns:], ct.dtype, ct.weak_type)
    layout_of(name, data, indices, lhs_shape)
    check_dimension_numbers(name, dimension_numbers, lhs_shape, rhs.shape, nb)
    want = product_shape(dimension_numbers, lhs_shape, rhs.shape)
    if ct.shape != want:
        raise ValueError(f"{name}: the cotangent has shape {ct.shape}, but the product's "
                         f"shape is {want}")
    if ct.dtype != rhs.dtype:
        raise TypeError(f"{name} requires operands of one dtype, got a {ct.dtype.name} "
                        f"cotangent and a {rhs.dtype.name} rhs")
    return data


def _transpose_data_jvp(primals, tangents, **params):
    (ct, indices, rhs), (t_ct, _, t_rhs) = primals, tangents
    p = bcoo_dot_general_transpose_data_p
    out = p.bind(ct, indices, rhs, **params)
    t_out = Zero(get_aval(out).to_tangent_aval())
    if type(t_ct) is not Zero:
        t_out = add_tangents(t_out, p.bind(t_ct, indices, rhs, **params))
    if type(t_rhs) is not Zero:
        t_out = add_tangents(t_out, p.bind(ct, indices, t_rhs, **params))
    return out, t_out


def _transpose_data_transpose(d_ct, ct, indices, rhs, *, dimension_numbers, lhs_spinfo):
    """Both transposes are the sparse product again: for the cotangent, with `d_ct` as the
    lhs data; for the rhs, that product's own rhs transpose."""
    if is_undefined(indices) or (is_undefined(ct) and is_undefined(rhs)):
        raise NotImplementedError("transpose of bcoo_dot_general_transpose_data: it is "
                                  "linear in its cotangent or its rhs, one at a time")
    if is_undefined(ct):
        if type(d_ct) is Zero:
            return [Zero(ct.aval), None, None]
        out = _bind_dot(d_ct, indices, rhs, dimension_numbers, lhs_spinfo, ct.aval.dtype)
        return [out, None, None]
    if type(d_ct) is Zero:
        return [None, None, Zero(rhs.aval)]
    return [None, None, rhs_transpose(d_ct, indices, ct, rhs.aval.shape, dimension_numbers,
                                      lhs_spinfo)]


def _transpose_data_batch(size, vals, dims, *, dimension_numbers, lhs_spinfo):
    (ct, indices, rhs), (dc, di, dr) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    indices, info = front(indices, di), _batched_info(size, lhs_spinfo)
    if dr is None:  # the new lhs dimension is free: the cotangent has it after the batch
        ct = matchaxis(ct, dc, len(lb), size)
        dims_ = ((_shift(lc), tuple(rc)), (_shift(lb), tuple(rb)))
    else:
        ct = matchaxis(ct, dc, 0, size)
        rhs = moveaxis(rhs, dr, 0)
        dims_ = ((_shift(lc), _shift(rc)), ((0,) + _shift(lb), (0,) + _shift(rb)))
    out = bcoo_dot_general_transpose_data_p.bind(ct, indices, rhs, dimension_numbers=dims_,
                                                 lhs_spinfo=info)
    return out, 0


bcoo_dot_general_transpose_data_p.def_impl(_transpose_data_impl)
bcoo_dot_general_transpose_data_p.def_abstract_eval(_transpose_data_aval)
bcoo_dot_general_transpose_data_p.def_jvp(_transpose_data_jvp)
bcoo_dot_general_transpose_data_p.def_transpose(_transpose_data_transpose)
bcoo_dot_general_transpose_data_p.def_batch(_transpose_data_batch)
