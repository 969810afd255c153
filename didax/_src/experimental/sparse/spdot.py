"""`bcoo_spdot_general` (dot_general of two sparse arrays, sparse) and
`bcoo_dot_general_sampled` (dot_general of two dense arrays read only at given positions)
as primitives.

Both are bilinear. The spdot result's indices depend on the operands' indices only (every
pair of stored elements, matched or moved out of bounds; see sparse_sparse.py), so the JVP
is two applications to tangent data with the same indices; the transposes are the
decompositions' (see `didax._src.primitives.sparse.composite`). The sampled product
computes each sampled entry alone: the rows of A and B at the entry's position gathered and
contracted (no dense product), so its cost and its cotangents (scatters into A's and B's
shapes) grow with the number of entries. Batching adds a leading batch dimension to the
spdot operands; the sampled product is mapped with `vmap` over its decomposition.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core
from didax._src.base_prims import add_tangents
from didax._src.core import Zero, get_aval
from didax._src.experimental.sparse import sparse_sparse
from didax._src.experimental.sparse.parts import Parts
from didax._src.lax.dot import dot_general as lax_dot_general
from didax._src.numpy import namespace as jnp
from didax._src.primitives.sparse import composite
from didax._src.primitives.sparse.layout import SparseInfo, product_shape
from didax._src.primitives.sparse.todense import front
from didax._src.transforms.api import vmap

bcoo_spdot_general_p = core.primitive("bcoo_spdot_general", multiple_results=True)
bcoo_dot_general_sampled_p = core.primitive("bcoo_dot_general_sampled")


# ------------------------------------------------------------------------------------------
# bcoo_spdot_general


def _parts(data, indices, spinfo):
    return Parts(data, indices, tuple(spinfo.shape), spinfo.indices_sorted,
                 spinfo.unique_indices)


def _spdot(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_spinfo, rhs_spinfo,
           dimension_numbers, preferred_element_type):
    out = sparse_sparse.spdot_general(_parts(lhs_data, lhs_indices, lhs_spinfo),
                                      _parts(rhs_data, rhs_indices, rhs_spinfo),
                                      dimension_numbers)
    data = out.data
    if preferred_element_type is not None:
        data = data.astype(preferred_element_type)
    return data, out.indices


def _spdot_impl(*args, **params):
    return composite.evaluate(_spdot, args, params, True)


def _spdot_aval(*avals, **params):
    return composite.out_types(_spdot, avals, params, True)


def _spdot_jvp(primals, tangents, **params):
    (ld, li, rd, ri), (tl, _, tr, _) = primals, tangents
    p = bcoo_spdot_general_p
    data, indices = p.bind(ld, li, rd, ri, **params)
    t = Zero(get_aval(data).to_tangent_aval())
    if type(tl) is not Zero:
        t = add_tangents(t, p.bind(tl, li, rd, ri, **params)[0])
    if type(tr) is not Zero:
        t = add_tangents(t, p.bind(ld, li, tr, ri, **params)[0])
    return [data, indices], [t, Zero(get_aval(indices).to_tangent_aval())]


def _spdot_batch(size, vals, dims, *, lhs_spinfo, rhs_spinfo, dimension_numbers,
                 preferred_element_type):
    vals = [front(x, d, size) for x, d in zip(vals, dims)]
    (lc, rc), (lb, rb) = dimension_numbers
    shift = lambda ds: tuple(int(d) + 1 for d in ds)  # noqa: E731
    dims_ = ((shift(lc), shift(rc)), ((0,) + shift(lb), (0,) + shift(rb)))
    out = bcoo_spdot_general_p.bind(
        *vals, lhs_spinfo=lhs_spinfo._replace(shape=(size,) + tuple(lhs_spinfo.shape)),
        rhs_spinfo=rhs_spinfo._replace(shape=(size,) + tuple(rhs_spinfo.shape)),
        dimension_numbers=dims_, preferred_element_type=preferred_element_type)
    return out, [0, 0]


bcoo_spdot_general_p.def_impl(_spdot_impl)
bcoo_spdot_general_p.def_abstract_eval(_spdot_aval)
bcoo_spdot_general_p.def_jvp(_spdot_jvp)
bcoo_spdot_general_p.def_transpose(composite.transpose_rule(
    "bcoo_spdot_general", _spdot, (0, 2), True,
    "it is linear in the data of one operand at a time"))
bcoo_spdot_general_p.def_batch(_spdot_batch)


def spdot_general(lhs, rhs, dimension_numbers, preferred_element_type=None):
    """dot_general of two BCOO arrays (or their Parts), as Parts, through the primitive."""
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
            (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    info = [SparseInfo(tuple(m.shape), bool(m.indices_sorted), bool(m.unique_indices))
            for m in (lhs, rhs)]
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    data, indices = bcoo_spdot_general_p.bind(
        lhs.data, lhs.indices, rhs.data, rhs.indices, lhs_spinfo=info[0], rhs_spinfo=info[1],
        dimension_numbers=dims, preferred_element_type=pet)
    nb = len(lb)
    out_sparse = (tuple(s for d, s in enumerate(lhs.shape) if d >= nb and d not in lc)
                  + tuple(s for d, s in enumerate(rhs.shape) if d >= nb and d not in rc))
    merged = lhs.nse * rhs.nse > math.prod(out_sparse)  # (then summed: sorted, unique)
    return Parts(data, indices, tuple(lhs.shape[:nb]) + out_sparse, merged, merged)


def matmul(lhs, rhs):
    """lhs @ rhs for sparse vectors and matrices, as Parts."""
    if lhs.ndim not in (1, 2) or rhs.ndim not in (1, 2):
        raise NotImplementedError(
            f"matmul of sparse arrays of shapes {tuple(lhs.shape)} and {tuple(rhs.shape)}: "
            "only vectors and matrices are implemented (use bcoo_dot_general)")
    dims = (((lhs.ndim - 1,), (0 if rhs.ndim == 1 else rhs.ndim - 2,)), ((), ()))
    return spdot_general(lhs, rhs, dims)


# ------------------------------------------------------------------------------------------
# bcoo_dot_general_sampled


def _sampled(A, B, indices, *, dimension_numbers):
    """dot_general(A, B) at `indices` (the indices of a BCOO of the product's shape), each
    entry from the rows of A and B at its position. A layout with dense dimensions reads
    the dense product instead (the cost of the dense product; the values are the same)."""
    (lc, rc), (lb, rb) = dimension_numbers
    a_shape, b_shape = get_aval(A).shape, get_aval(B).shape
    out_shape = product_shape(dimension_numbers, a_shape, b_shape)
    idx_shape = get_aval(indices).shape
    nb, nse, ns = len(idx_shape) - 2, idx_shape[-2], idx_shape[-1]
    dtype = jnp.result_type(A, B)
    A, B = jnp.asarray(A, dtype), jnp.asarray(B, dtype)
    if nb + ns != len(out_shape):
        return sparse_sparse.dot_general_sampled(A, B, indices, dimension_numbers)
    lfree = [d for d in range(len(a_shape)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(b_shape)) if d not in rc and d not in rb]
    At = jnp.transpose(A, tuple(lb) + tuple(lfree) + tuple(lc))
    Bt = jnp.transpose(B, tuple(rb) + tuple(rfree) + tuple(rc))
    batch = tuple(out_shape[:nb])
    indices = jnp.broadcast_to(indices, batch + (nse, ns))
    coords = []
    for d in range(nb):  # (the position along a layout batch dimension is the element's)
        shape = [1] * (nb + 1)
        shape[d] = batch[d]
        coords.append(jnp.reshape(jnp.arange(batch[d]), shape))
    sizes = out_shape[nb:]
    coords += [jnp.clip(indices[..., j], 0, max(sizes[j] - 1, 0)) for j in range(ns)]
    valid = jnp.all((indices >= 0) & (indices < np.asarray(sizes, np.int64)), axis=-1)
    nbat, nlf = len(lb), len(lfree)
    full = batch + (nse,)
    coords = [jnp.broadcast_to(c, full) for c in coords]
    Ag = At[tuple(coords[:nbat + nlf])] if nbat + nlf else jnp.broadcast_to(At, full + At.shape)
    b_coords = coords[:nbat] + coords[nbat + nlf:]
    Bg = Bt[tuple(b_coords)] if b_coords else jnp.broadcast_to(Bt, full + Bt.shape)
    m = math.prod(full)
    c = math.prod(a_shape[d] for d in lc)
    out = lax_dot_general(jnp.reshape(Ag, (m, c)), jnp.reshape(Bg, (m, c)),
                          (((1,), (1,)), ((0,), (0,))))
    return jnp.where(valid, jnp.reshape(out, full), 0).astype(dtype)


def _sampled_impl(A, B, indices, **params):
    return composite.evaluate(_sampled, (A, B, indices), params, False)


def _sampled_aval(A, B, indices, **params):
    return composite.out_types(_sampled, (A, B, indices), params, False)


def _sampled_jvp(primals, tangents, **params):
    (A, B, indices), (tA, tB, _) = primals, tangents
    p = bcoo_dot_general_sampled_p
    out = p.bind(A, B, indices, **params)
    t = Zero(get_aval(out).to_tangent_aval())
    if type(tA) is not Zero:
        t = add_tangents(t, p.bind(tA, B, indices, **params))
    if type(tB) is not Zero:
        t = add_tangents(t, p.bind(A, tB, indices, **params))
    return out, t


def _sampled_batch(size, vals, dims, *, dimension_numbers):
    fn = lambda a, b, i: _sampled(a, b, i, dimension_numbers=dimension_numbers)  # noqa: E731
    return vmap(fn, in_axes=tuple(dims))(*vals), 0


bcoo_dot_general_sampled_p.def_impl(_sampled_impl)
bcoo_dot_general_sampled_p.def_abstract_eval(_sampled_aval)
bcoo_dot_general_sampled_p.def_jvp(_sampled_jvp)
bcoo_dot_general_sampled_p.def_transpose(composite.transpose_rule(
    "bcoo_dot_general_sampled", _sampled, (0, 1), False, "it is linear in A or B, one at a time"))
bcoo_dot_general_sampled_p.def_batch(_sampled_batch)


def dot_general_sampled(A, B, indices, dimension_numbers):
    """The data of dot_general(A, B) at `indices`, through the primitive (A and B promoted
    to one dtype, as JAX does)."""
    A, B, indices = jnp.asarray(A), jnp.asarray(B), jnp.asarray(indices)
    dtype = jnp.result_type(A, B)
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
            (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    return bcoo_dot_general_sampled_p.bind(jnp.asarray(A, dtype), jnp.asarray(B, dtype),
                                           indices, dimension_numbers=dims)
