"""Shared by the indexing tests: random valid gather dimension numbers, as XLA defines them."""
from hypothesis import strategies as st

from didax._src.lax.indexing import GatherDimensionNumbers as GDN


def draw_gather_dims(draw, min_batch_size):
    """(operand shape, dimension numbers with batching dims, slice sizes, index batch shape,
    number of indexed dims) for a valid gather, drawn with hypothesis' `draw`."""
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    dims = draw(st.permutations(range(rank)))
    n_op_batch = draw(st.integers(0, min(rank, 1)))
    operand_batching = tuple(sorted(dims[:n_op_batch]))
    rest = dims[n_op_batch:]
    n_indexed = draw(st.integers(min(1, len(rest)), len(rest)))
    start_index_map = tuple(draw(st.permutations(rest))[:n_indexed])
    collapsed = tuple(d for d in sorted(rest) if draw(st.booleans()))
    slice_sizes = tuple(1 if d in collapsed or d in operand_batching
                        else draw(st.integers(0, shape[d])) for d in range(rank))
    n_batch = n_op_batch + draw(st.integers(0, 2))
    indices_batching = tuple(draw(st.permutations(range(n_batch)))[:n_op_batch])
    batch_shape = [draw(st.integers(min_batch_size, 3)) for _ in range(n_batch)]
    for o, i in zip(operand_batching, indices_batching):
        batch_shape[i] = shape[o]
    n_offset = rank - len(collapsed) - n_op_batch
    offset_dims = tuple(sorted(draw(st.permutations(range(n_batch + n_offset)))[:n_offset]))
    dn = GDN(offset_dims, collapsed, start_index_map, operand_batching, indices_batching)
    return shape, dn, slice_sizes, tuple(batch_shape), n_indexed
