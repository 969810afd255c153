"""Loops built from the control-flow primitives: `map` and `fori_loop` (a scan, or a while
loop when the trip count is known only at run time), and `associative_scan`.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import reshape
from didax._src.core import get_aval
from didax._src.errors import user_error
from didax._src.interpreters import batching
from didax._src.lax.control_flow.scan import scan
from didax._src.lax.control_flow.while_loop import while_loop
from didax._src.lax.elementwise import add, convert_element_type, lt
from didax._src.lax.reduction import associative_scan_flat
from didax._src.lax.shape import concatenate, slice_in_dim
from didax._src.tree_util import tree_flatten, tree_unflatten


def map(f, xs, *, batch_size=None):  # noqa: A001 - mirrors lax.map
    """`f` applied to each slice of `xs` along its leading axis (a scan with no carry).

    With `batch_size`, the scan runs over batches of that many slices, each mapped by a
    vmap of `f`, and the slices left over (length % batch_size) go through one more vmap.
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    flat, tree = tree_flatten(xs)
    lengths = {get_aval(x).shape[0] for x in flat if get_aval(x).ndim}
    if len(lengths) != 1 or any(not get_aval(x).ndim for x in flat):
        raise ValueError(f"lax.map: every leaf of xs needs the same leading axis length; got "
                         f"shapes {[get_aval(x).shape for x in flat]}")
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"lax.map: batch_size must be a positive integer, got {batch_size!r}")
    (n,) = lengths
    batch_size = min(int(batch_size), n)
    steps, extra = divmod(n, batch_size)
    out_tree = []

    def mapped(*leaves):  # f over a batch of slices, as flat leaves
        size = get_aval(leaves[0]).shape[0]

        def per_slice(*xs_flat):
            ys, t = tree_flatten(f(tree_unflatten(tree, list(xs_flat))))
            out_tree[:] = [t]
            return ys

        return batching.vmap_flat(per_slice, list(leaves), [0] * len(leaves), size)

    main = [reshape(slice_in_dim(x, 0, steps * batch_size),
                    (steps, batch_size) + get_aval(x).shape[1:]) for x in flat]
    _, ys = scan(lambda _, b: ((), mapped(*b)), (), main)
    ys = [reshape(y, (steps * batch_size,) + get_aval(y).shape[2:]) for y in ys]
    if extra:
        rest = mapped(*[slice_in_dim(x, steps * batch_size, n) for x in flat])
        ys = [concatenate([y, r], 0) for y, r in zip(ys, rest)]
    return tree_unflatten(out_tree[0], ys)


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`body_fun(i, val)` for i in [lower, upper). With bounds known at trace time (Python
    ints or concrete arrays) this is a scan over the indices, reverse-differentiable as in
    JAX; with traced bounds, a while loop."""
    la, ua = get_aval(lower), get_aval(upper)
    if la.dtype.kind != ua.dtype.kind or (la.dtype != ua.dtype and not (la.weak_type or
                                                                      ua.weak_type)):
        raise user_error(TypeError, (
            f"fori_loop: lower and upper must have the same dtype, got lower {la.str_short()} "
            f"and upper {ua.str_short()}.\nWhat to do: pass integer bounds "
            "(`int(n)` for a Python number, `n.astype(jnp.int32)` for a traced one)."))
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
                             if not isinstance(b, int)] or [dtypes.default_int_dtype()])

    def step(carry, _):
        i, val = carry
        return (add(i, np.asarray(1, i.dtype)), body_fun(i, val)), None

    start = core.Array(np.asarray(lo, dtype if dtypes.issubdtype(dtype, np.integer)
                                  else dtypes.default_int_dtype()))
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
