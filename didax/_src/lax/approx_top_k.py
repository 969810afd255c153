"""`approx_top_k_p`: the primitive of JAX's `approx_max_k`/`approx_min_k`, with JAX's params
(k, reduction_dimension, recall_target, is_max_k, reduction_input_size_override,
aggregate_to_topk). As XLA on CPU computes it: exactly, by sorting (see approx.py for the
number of candidates kept without aggregation, and the order of NaNs and -0, which is
`top_k`'s). Differentiable in the values: each one's tangent is the operand's tangent at its
index."""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.base_prims import broadcast_in_dim, full, reduce_sum
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.lax.approx import _reduction_output_size
from didax._src.lax.elementwise import eq, select_n
from didax._src.lax.reduction import _top_k_impl
from didax._src.lax.shape import broadcasted_iota
from didax._src.typecheck import check_dtype, float_

approx_top_k_p = core.primitive("approx_top_k", multiple_results=True)


def _kept(x: ShapedArray, dim: int, *, k, recall_target, reduction_input_size_override,
          aggregate_to_topk, **_) -> int:
    return _reduction_output_size(x.shape[dim], x.ndim, k, recall_target, aggregate_to_topk,
                                  reduction_input_size_override)


def _approx_top_k_aval(x, *, k, reduction_dimension, recall_target, is_max_k,
                       reduction_input_size_override, aggregate_to_topk):
    check_dtype("approx_top_k", x, float_)
    if not -x.ndim <= reduction_dimension < x.ndim:
        raise ValueError(f"approx_top_k: reduction_dimension {reduction_dimension} is out of "
                         f"range for an operand of shape {x.shape}")
    dim = reduction_dimension % x.ndim
    if not 0 < k <= x.shape[dim]:
        raise ValueError(f"approx_top_k: k must be in [1, {x.shape[dim]}] (the size of "
                         f"reduction_dimension {reduction_dimension}), got {k}")
    kept = _kept(x, dim, k=k, recall_target=recall_target, aggregate_to_topk=aggregate_to_topk,
                 reduction_input_size_override=reduction_input_size_override)
    shape = x.shape[:dim] + (kept,) + x.shape[dim + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, np.int32)]


def _approx_top_k_impl(x, **params):
    dim = params["reduction_dimension"] % x.ndim
    kept = _kept(core.get_aval(x), dim, **params)
    if params["is_max_k"]:
        return _top_k_impl(x, k=kept, axis=dim)
    values, idx = _top_k_impl(-x, k=kept, axis=dim)
    return [-values, idx]


approx_top_k_p.def_impl(_approx_top_k_impl)
approx_top_k_p.def_abstract_eval(_approx_top_k_aval)


def _pick(t, idx, axis: int):
    """t's elements at `idx` along `axis` (selected by a one-hot mask, as top_k's JVP)."""
    shape, kept = get_aval(t).shape, get_aval(idx).shape[axis]
    wide = shape[:axis] + (kept,) + shape[axis:]
    ndim = len(shape)
    t_wide = broadcast_in_dim(t, wide, tuple(d if d < axis else d + 1 for d in range(ndim)))
    idx_wide = broadcast_in_dim(idx, wide, tuple(d if d <= axis else d + 1 for d in range(ndim)))
    chosen = eq(idx_wide, broadcasted_iota(np.int32, wide, axis + 1))
    return reduce_sum(select_n(chosen, full(wide, 0, get_aval(t).dtype), t_wide), (axis + 1,))


@approx_top_k_p.def_jvp
def _approx_top_k_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    values, idx = approx_top_k_p.bind(x, **params)
    zero_idx = Zero(get_aval(idx).to_tangent_aval())
    if type(t) is Zero:
        return [values, idx], [Zero(get_aval(values).to_tangent_aval()), zero_idx]
    axis = params["reduction_dimension"] % get_aval(x).ndim
    return [values, idx], [_pick(t, idx, axis), zero_idx]


@approx_top_k_p.def_batch
def _approx_top_k_batch(size, vals, dims, *, reduction_dimension, **params):
    (x,), (d,) = vals, dims
    dim = reduction_dimension % (get_aval(x).ndim - 1)
    out = approx_top_k_p.bind(x, reduction_dimension=dim + (d <= dim), **params)
    return out, [d, d]


__all__: list = []
