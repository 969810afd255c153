"""Loops built from the control-flow primitives: `map` and `fori_loop` (a scan, or a while
loop when the trip count is known only at run time), and `associative_scan`.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.core import get_aval
from didax._src.lax.control_flow.scan import scan
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.lax.elementwise import add, convert_element_type, lt
from didax._src.lax.reduction import associative_scan_flat
from didax._src.tree_util import tree_flatten, tree_unflatten


def map(f, xs, *, batch_size=None):  # noqa: A001 - mirrors lax.map
    """`f` applied to each slice of `xs` along its leading axis (a scan with no carry)."""
    if batch_size is not None:
        raise NotImplementedError("lax.map: batch_size is not supported yet")
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`body_fun(i, val)` for i in [lower, upper). With bounds known at trace time (Python
    ints or concrete arrays) this is a scan over the indices, reverse-differentiable as in
    JAX; with traced bounds, a while loop."""
    lo, hi = core.concrete_value(lower), core.concrete_value(upper)
    if lo is None or hi is None:  # a trip count known only at run time: a while loop
        i0 = convert_element_type(lower, np.int32)
        n = convert_element_type(upper, np.int32)
        _, val = while_loop(lambda s: lt(s[0], n),
                            lambda s: (add(s[0], np.int32(1)), body_fun(s[0], s[1])),
                            (i0, init_val))
        return val
    lo, hi = int(lo), int(hi)

    dtype = np.result_type(*[np.asarray(b).dtype for b in (lower, upper)
                             if not isinstance(b, int)] or [np.int32])

    def step(carry, _):
        i, val = carry
        return (add(i, np.asarray(1, i.dtype)), body_fun(i, val)), None

    start = core.Array(np.asarray(lo, dtype if dtypes.issubdtype(dtype, np.integer) else np.int32))
    (_, val), _ = scan(step, (start, init_val), None, length=max(hi - lo, 0))
    return val


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive prefix combination of `elems` (a pytree of arrays) by the associative `fn`,
    in logarithmic depth (the parallel scan of JAX's `lax.associative_scan`)."""
    flat, tree = tree_flatten(elems)
    if not flat:
        return elems
    ndim = get_aval(flat[0]).ndim
    axis = axis % ndim if ndim else 0
    sizes = {get_aval(x).shape[axis] for x in flat}
    if len(sizes) != 1:
        raise ValueError(f"associative_scan: every array needs the same length along axis "
                         f"{axis}, got {sorted(sizes)}")

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure of elems, {tree}; "
                            f"got {out_tree}")
        return leaves

    return tree_unflatten(tree, associative_scan_flat(combine, flat, axis, bool(reverse)))
