"""Approximate top-k (`approx_max_k`, `approx_min_k`), as XLA computes it on CPU: exactly.

On accelerators XLA keeps the best of each window of the reduction dimension and may miss a
few of the true top k (at the `recall_target` rate). On CPU it sorts, so the results are the
exact top k, as `top_k` gives them, which is what didax computes. With
`aggregate_to_topk=False` the result keeps as many candidates as XLA's windowed reduction
would produce (`_reduction_output_size`, found from JAX's results), again the exact best ones,
in order. Differences from JAX: the jaxpr shows `top_k` (with `neg` for the minimum) rather than
an `approx_top_k` equation; NaNs order as in `top_k` (largest), where XLA's CPU sort leaves
them wherever its comparisons happen to put them; and -0 orders below 0, as in `top_k`, where
XLA's sort takes them as equal and keeps their order.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from didax._src import dtypes
from didax._src.core import get_aval
from didax._src.lax.elementwise import neg
from didax._src.lax.reduction import top_k


def _tile(rank: int) -> int:
    """The elements of one tile of the reduction dimension (XLA's TPU layout)."""
    return 1024 if rank == 1 else 128


def _windows_for_recall(k: int, recall_target: float) -> float:
    """How many windows keep k random top elements apart with probability recall_target:
    ((m - 1) / m) ** (k - 1) >= recall_target."""
    return 1.0 / (1.0 - recall_target ** (1.0 / (k - 1)))


def _reduction_output_size(size: int, rank: int, k: int, recall_target: float,
                           aggregate_to_topk: bool, size_override: int) -> int:
    """How many candidates the windowed reduction keeps along the reduction dimension."""
    if aggregate_to_topk:
        return k
    tile = _tile(rank)
    if size <= tile:
        return size
    if k == 1:  # one window holds the maximum: a single tile of candidates
        return tile
    if recall_target >= 1.0:
        return size
    logical = size_override if size_override >= 0 else size
    windows = max(math.ceil(_windows_for_recall(k, recall_target)), tile)
    log2_window = math.floor(math.log2(logical / windows)) if logical >= windows else 0
    if log2_window == 0:
        return size
    # No wider than the tiles the operand fills (which an override may claim more than).
    log2_window = min(log2_window, math.ceil(math.log2(size // tile)))
    tiles = -(-size // tile)
    return -(-tiles // (1 << log2_window)) * tile


def _approx_k(name, operand, k, reduction_dimension, recall_target,
              reduction_input_size_override, aggregate_to_topk, is_max):
    aval = get_aval(operand)
    if not dtypes.issubdtype(aval.dtype, np.floating):
        raise ValueError(f"{name}: operand must be a floating type, got {aval.dtype}.")
    k = operator.index(k)
    rank = len(aval.shape)
    dim = operator.index(reduction_dimension)
    if not -rank <= dim < rank:
        raise IndexError(f"{name}: reduction_dimension {dim} is out of range for an operand "
                         f"of shape {aval.shape}.")
    dim %= rank
    size = aval.shape[dim]
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if k > size:
        raise ValueError(f"k must be smaller than the size of reduction_dim {size}, got {k}")
    if not 0.0 < recall_target <= 1.0:
        raise ValueError(f"{name}: recall_target must be in (0, 1], got {recall_target}.")
    override = operator.index(reduction_input_size_override)
    if 0 <= override < size:
        raise ValueError(f"{name}: reduction_input_size_override {override} must be -1 or at "
                         f"least the size of the reduction dimension ({size}).")
    kept = _reduction_output_size(size, rank, k, float(recall_target),
                                  bool(aggregate_to_topk), override)
    if kept > size:  # (XLA's shape says so too, and then its slice fails when it runs)
        raise ValueError(f"{name}: with reduction_input_size_override={override}, the windowed "
                         f"reduction would keep {kept} candidates, more than the {size} of the "
                         "reduction dimension; use a smaller override.")
    if is_max:
        return top_k(operand, kept, axis=dim)
    values, indices = top_k(neg(operand), kept, axis=dim)
    return neg(values), indices


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k largest values along `reduction_dimension`, descending, and their int32 indices
    (exact on CPU; see the module doc)."""
    return _approx_k("approx_max_k", operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k smallest values along `reduction_dimension`, ascending, and their int32 indices
    (exact on CPU; see the module doc)."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False)
