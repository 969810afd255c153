"""Ragged products (`ragged_dot`, `ragged_dot_general`): one dimension of lhs is cut into
consecutive groups of the sizes `group_sizes` holds, and each group meets its own slice of rhs.

They are compositions, not a primitive: each group's rows are selected by a mask built from the
running sums of `group_sizes`, and one `dot_general` batched over the groups does the products.
That costs a factor of the number of groups in multiplications, and in return differentiates,
batches (over any argument, group sizes included: JAX batches only lhs's leading dimension) and
compiles like any dot product.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from didax._src import dtypes
from didax._src.base_prims import full
from didax._src.core import get_aval
from didax._src.lax.dot import dot_general
from didax._src.lax.elementwise import bitwise_and, convert_element_type, le, lt, select_n, sub
from didax._src.lax.reduction import cumsum, reduce_sum
from didax._src.lax.shape import broadcast_in_dim, broadcasted_iota, transpose


def _ints(dims) -> tuple:
    return tuple(int(d) for d in dims)


@dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The dot dimension numbers, lhs's one ragged dimension and rhs's group dimension (one
    when the ragged dimension is a free dimension of lhs, else none)."""

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __post_init__(self):
        (lc, rc), (lb, rb) = self.dot_dimension_numbers
        object.__setattr__(self, "dot_dimension_numbers",
                           ((_ints(lc), _ints(rc)), (_ints(lb), _ints(rb))))
        object.__setattr__(self, "lhs_ragged_dimensions", _ints(self.lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", _ints(self.rhs_group_dimensions))


_RAGGED_DOT_DIMENSION_NUMBERS = RaggedDotDimensionNumbers(
    dot_dimension_numbers=(((1,), (1,)), ((), ())),
    lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """(m, k) rows times (g, k, n) matrices: row i meets the matrix of the group it lies in
    (rows past the last group give zeros)."""
    return ragged_dot_general(lhs, rhs, group_sizes, _RAGGED_DOT_DIMENSION_NUMBERS, precision,
                              preferred_element_type, group_offset, out_sharding)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """A dot_general whose lhs has one ragged dimension, in JAX's three modes:

    * a free dimension: rhs has a group dimension; each group of lhs rows meets its slice;
    * a contracting dimension: each group contracts only its own span, and the results stack
      along a new leading dimension of size g;
    * a batch dimension: as JAX computes it on CPU, this is the plain dot_general.

    `group_sizes` is `[g]` or, as in JAX, has the batch dimensions and the lhs dimensions of
    the ragged dimension's kind outer to it in front of g. `group_offset` is not supported."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported by didax; "
                                  "slice group_sizes (and rhs's group dimension) instead")
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError("ragged_dot_general: ragged_dot_dimension_numbers must be a "
                        f"lax.RaggedDotDimensionNumbers, got {dn!r}")
    lhs_aval, rhs_aval, sizes_aval = get_aval(lhs), get_aval(rhs), get_aval(group_sizes)
    if not dtypes.issubdtype(sizes_aval.dtype, np.integer):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of "
                        f"np.integer, got {sizes_aval.dtype}.")
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension, got "
                        f"{dn.lhs_ragged_dimensions}.")
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    ragged = dn.lhs_ragged_dimensions[0]
    if not 0 <= ragged < len(lhs_aval.shape):
        raise TypeError(f"ragged_dot_general: lhs ragged dimension {ragged} is out of range "
                        f"for lhs of shape {lhs_aval.shape}.")
    if ragged in lb:
        _check_no_group_dimension(dn)
        return dot_general(lhs, rhs, dn.dot_dimension_numbers, precision,
                           preferred_element_type, out_sharding=out_sharding)
    if ragged in lc:
        _check_no_group_dimension(dn)
        outer = [d for d in lc if d < ragged]
        mask = _group_mask(group_sizes, sizes_aval, lhs_aval.shape, ragged, list(lb) + outer,
                           None)
        masked = _masked(lhs, lhs_aval, mask)
        out = dot_general(masked, rhs, ((_bump(lc), rc), (_bump(lb), rb)), precision,
                          preferred_element_type, out_sharding=out_sharding)
        nb = len(lb)  # the group dimension lands after the batch dimensions: move it first
        return transpose(out, (nb, *range(nb), *range(nb + 1, len(get_aval(out).shape))))
    if len(dn.rhs_group_dimensions) != 1:
        raise TypeError("ragged_dot_general requires exactly one rhs group dimension when lhs "
                        f"ragged dimension is noncontracting, got {dn.rhs_group_dimensions}.")
    group = dn.rhs_group_dimensions[0]
    if group in rc or group in rb or not 0 <= group < len(rhs_aval.shape):
        raise TypeError(f"ragged_dot_general: rhs group dimension {group} must be an rhs "
                        f"dimension that is neither contracting nor batch, for rhs of shape "
                        f"{rhs_aval.shape} and dimension numbers {dn.dot_dimension_numbers}.")
    outer = [d for d in range(ragged) if d not in lc and d not in lb]
    mask = _group_mask(group_sizes, sizes_aval, lhs_aval.shape, ragged, list(lb) + outer,
                       rhs_aval.shape[group])
    masked = _masked(lhs, lhs_aval, mask)
    rhs_order = (group, *(d for d in range(len(rhs_aval.shape)) if d != group))
    grouped_rhs = transpose(rhs, rhs_order)  # the group dimension first, to batch over it
    moved = {d: i for i, d in enumerate(rhs_order)}
    out = dot_general(masked, grouped_rhs,
                      ((_bump(lc), tuple(moved[d] for d in rc)),
                       ((0, *_bump(lb)), (0, *(moved[d] for d in rb)))),
                      precision, preferred_element_type, out_sharding=out_sharding)
    return reduce_sum(out, (0,))


def _bump(dims) -> tuple:
    return tuple(d + 1 for d in dims)


def _masked(lhs, lhs_aval, mask):
    """[g, *lhs.shape]: lhs where it lies in group g, else zero."""
    shape = get_aval(mask).shape
    everywhere = broadcast_in_dim(lhs, shape, tuple(range(1, len(shape))))
    return select_n(mask, full(shape, 0, lhs_aval.dtype), everywhere)


def _check_no_group_dimension(dn):
    if dn.rhs_group_dimensions:
        raise TypeError("ragged_dot_general requires zero group dimensions in the rhs when lhs "
                        "ragged dimension is contracting or batch, got "
                        f"{dn.rhs_group_dimensions}.")


def _group_mask(group_sizes, sizes_aval, lhs_shape, ragged, outer_dims, num_groups):
    """Booleans [g, *lhs_shape]: whether lhs's element lies in group g along `ragged`, with
    the group sizes chosen by the lhs dimensions `outer_dims` (when group_sizes has them)."""
    sizes_shape = sizes_aval.shape
    if len(sizes_shape) == 0:
        raise TypeError("ragged_dot_general: group_sizes must have at least one dimension "
                        "(the groups), got a scalar.")
    g = sizes_shape[-1]
    if num_groups is not None and g != num_groups:
        raise TypeError(f"ragged_dot_general: expected rhs group dimension size to be {g} "
                        f"(the groups in group_sizes of shape {sizes_shape}), got {num_groups}.")
    leading = sizes_shape[:-1]
    if leading:
        expected = tuple(lhs_shape[d] for d in outer_dims)
        if leading != expected:
            raise TypeError(f"ragged_dot_general: group_sizes of shape {sizes_shape} must be "
                            f"[g] or {list(expected) + [g]} (the lhs batch dimensions and the "
                            "lhs dimensions of the ragged one's kind outer to it, then the "
                            f"groups) for lhs of shape {tuple(lhs_shape)}.")
    index_dtype = dtypes.promote_types(sizes_aval.dtype, np.int32)
    sizes = convert_element_type(group_sizes, index_dtype)
    ends = cumsum(sizes, axis=len(sizes_shape) - 1)
    starts = sub(ends, sizes)
    # [*leading, g] -> [g, *leading] in increasing lhs order, then broadcast over lhs's shape.
    placed = list(outer_dims) if leading else []
    order = sorted(range(len(placed)), key=placed.__getitem__)
    perm = (len(leading), *order)
    shape = (g, *lhs_shape)
    where = (0, *(1 + placed[i] for i in order))
    starts = broadcast_in_dim(transpose(starts, perm), shape, where)
    ends = broadcast_in_dim(transpose(ends, perm), shape, where)
    position = broadcasted_iota(index_dtype, shape, 1 + ragged)
    return bitwise_and(le(starts, position), lt(position, ends))
