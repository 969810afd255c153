"""Which views a product reads where they are, instead of from a row-major copy.

The NumPy tier gives NumPy's matmul row-major operands (lax.dot.gemm_plan): a view is
copied first. NumPy's loop hands BLAS each matrix with the unit stride along the same axis
either way (so with the same transposition flags) and only another leading dimension, and
OpenBLAS's sums do not depend on the leading dimension (its kernels read packed panels, or,
for small matrices, the same elements in the same order): a view whose matrices have unit
stride where the row-major copy has it gives the same bits, without the copy. Attention's
heads (a transposed view of (batch, tokens, heads, dim)) are such views: their matrices are
rows of every head's columns, their batch two dimensions that no one stride walks, so the
product's loop is called once per element of the outer ones.
"""
from __future__ import annotations

from typing import NamedTuple


class MatrixView(NamedTuple):
    """An operand of a product read in place: `outer` [(extent, element stride)] of the
    batch dimensions walked by C loops, then the product loop's batch stride, row stride
    and column stride in elements (after the plan's transposition)."""
    outer: tuple
    batch: int
    row: int
    col: int


def nocopy_reshape(shape, strides, target):
    """The element strides of the view of `shape` with `strides` reshaped to `target`
    without a copy (as NumPy's reshape makes them), or None if it needs one."""
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new = list(target)
    out = [0] * len(new)
    oi, ni = 0, 0
    while ni < len(new) and oi < len(old):
        if new[ni] == 1:
            ni += 1
            continue
        oj, nj = oi + 1, ni + 1
        op, np_ = old[oi][0], new[ni]
        while op != np_:
            if np_ < op:
                if nj >= len(new):
                    return None
                np_ *= new[nj]
                nj += 1
            else:
                if oj >= len(old):
                    return None
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):  # the old dimensions merged must be one run
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new[k]
        ni, oi = nj, oj
    return tuple(out)


def _merged(dims):
    """The one stride of consecutive (extent, stride) dimensions walked as one, or None."""
    dims = [(n, s) for n, s in dims if n != 1]
    if any(a[1] != b[0] * b[1] for a, b in zip(dims, dims[1:])):
        return None
    return dims[-1][1] if dims else 0


def matrix_views(shapes, strides, nb, targets, transposed):
    """For a product's operands of `shapes` read with element `strides` (their views;
    row-major strides for arrays), whose first `nb` dimensions are the batch and whose
    rest the plan reshapes to `targets[k]` (rows, columns; transposed where marked): each
    operand's MatrixView, or None if some matrix has not the row-major copy's unit stride
    (then the copies are read). The batch dimensions after the first that no operand can
    walk with one stride are walked by the loop; those before it, by C loops."""
    mats = []
    for shape, st, (rows, cols) in zip(shapes, strides, targets):
        m = nocopy_reshape(shape[nb:], st[nb:], (rows, cols))
        if m is None or rows < 2 or cols < 2 or m[1] != 1 or m[0] < cols:
            return None
        mats.append(m)
    lead = shapes[0][:nb]
    split = nb  # batch dimensions from `split` on are walked by the product's loop
    while split > 0 and all(_merged(list(zip(lead[split - 1:], st[split - 1:nb])))
                            is not None for st in strides):
        split -= 1
    views = []
    for st, (r, c), t in zip(strides, mats, transposed):
        b = _merged(list(zip(lead[split:], st[split:nb]))) if split < nb else 0
        outer = tuple((lead[d], st[d]) for d in range(split))
        views.append(MatrixView(outer, b, c, r) if t else MatrixView(outer, b, r, c))
    return views
