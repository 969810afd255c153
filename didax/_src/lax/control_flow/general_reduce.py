"""`lax.reduce`: a reduction by any computation, over pytrees of operands.

A computation that is one monoid primitive (add, mul, max, min, and, or) started from its
identity becomes that primitive's reduction (reduce_sum, reduce_max...), so it prints and
differentiates as they do. Any other computation is a fold: a scan over the reduced elements
(in row-major order) whose body applies the scalar computation to every kept position at once
(through vmap); being a scan, it differentiates in both modes like the computation does.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core
from didax._src.base_prims import broadcast_in_dim, reduce_sum, reshape, transpose
from didax._src.core import ShapedArray, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.lax import elementwise as ew
from didax._src.lax import reduction as red
from didax._src.lax.control_flow.scan import scan
from didax._src.tree_util import tree_flatten, tree_unflatten


def _all_ones(dtype):
    return True if dtype == np.bool_ else np.array(-1).astype(dtype)


# primitive of the computation -> (its reduction, the identity for a dtype)
_MONOIDS = {
    ew.add_p: (reduce_sum, lambda dt: 0),
    ew.mul_p: (red.reduce_prod, lambda dt: 1),
    ew.max_p: (red.reduce_max, red.max_identity),
    ew.min_p: (red.reduce_min, red.min_identity),
    ew.and_p: (red.reduce_and, _all_ones),
    ew.or_p: (red.reduce_or, lambda dt: False),
}


def _monoid_reducer(computation, tree, aval, init):
    """The reduction `computation` amounts to, if it is one monoid primitive of its two
    scalar arguments and `init` is that monoid's identity; else None."""
    scalar = ShapedArray((), aval.dtype)

    def flat(a, b):
        out, _ = tree_flatten(computation(tree_unflatten(tree, [a]), tree_unflatten(tree, [b])))
        return out

    try:
        closed, _ = trace_to_jaxpr(flat, [scalar, scalar])
    except Exception:  # noqa: BLE001 - not traceable on scalars: the general fold decides
        return None
    jaxpr = closed.jaxpr
    if len(jaxpr.eqns) != 1 or jaxpr.constvars or len(jaxpr.outvars) != 1:
        return None
    (eqn,) = jaxpr.eqns
    monoid = _MONOIDS.get(eqn.primitive)
    if monoid is None or eqn.outvars[0] is not jaxpr.outvars[0] or \
            {id(v) for v in eqn.invars} != {id(v) for v in jaxpr.invars} or \
            eqn.outvars[0].aval.dtype != aval.dtype:
        return None
    init_value = core.concrete_value(init)
    if init_value is None or np.shape(init_value) != ():
        return None
    identity = np.asarray(monoid[1](aval.dtype)).astype(aval.dtype)
    if not np.array_equal(np.asarray(init_value).astype(aval.dtype), identity):
        return None
    return monoid[0]


def reduce(operands, init_values, computation, dimensions):  # noqa: A001 - lax.reduce
    """Reduces `operands` (an array or a pytree of arrays of one shape) over `dimensions`
    with `computation(accumulated, element)` (pytrees like `operands`), starting from
    `init_values` (scalars, one per operand)."""
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise ValueError(f"lax.reduce: operands and init_values must have the same structure; "
                         f"got {tree} and {init_tree}")
    if not flat_ops:
        raise ValueError("lax.reduce: needs at least one operand")
    flat_ops = [core.asarray_value(x) for x in flat_ops]
    shapes = {get_aval(x).shape for x in flat_ops}
    if len(shapes) != 1:
        raise ValueError(f"lax.reduce: operands must all have one shape; got {sorted(shapes)}")
    (shape,) = shapes
    ndim = len(shape)
    dims = tuple(int(d) for d in dimensions)
    if any(not -ndim <= d < ndim for d in dims) or len({d % max(ndim, 1) for d in dims}) \
            != len(dims):
        raise ValueError(f"lax.reduce: dimensions {dims} are not distinct axes of an operand "
                         f"of shape {shape}")
    dims = tuple(sorted(d % ndim for d in dims)) if ndim else ()
    inits = []
    for x, init in zip(flat_ops, flat_init):
        aval, init_aval = get_aval(x), get_aval(init)
        if init_aval.shape != ():
            raise ValueError(f"lax.reduce: init values must be scalars, got shape "
                             f"{init_aval.shape}")
        if init_aval.dtype != aval.dtype and not init_aval.weak_type:
            raise TypeError(f"lax.reduce: init value of dtype {init_aval.dtype} for an operand "
                            f"of dtype {aval.dtype}; they must match")
        inits.append(ew.convert_element_type(init, aval.dtype))
    if len(flat_ops) == 1:
        reducer = _monoid_reducer(computation, tree, get_aval(flat_ops[0]), flat_init[0])
        if reducer is not None:
            return tree_unflatten(tree, [reducer(flat_ops[0], dims)])
    return tree_unflatten(tree, _fold(flat_ops, inits, computation, tree, shape, dims))


def _fold(ops, inits, computation, tree, shape, dims):
    kept = tuple(d for d in range(len(shape)) if d not in dims)
    out_shape = tuple(shape[d] for d in kept)
    n, m = math.prod(shape[d] for d in dims), math.prod(out_shape)
    starts = [broadcast_in_dim(i, out_shape, ()) for i in inits]
    if n == 0 or m == 0:
        return starts
    # Reduced axes first, flattened: (n, m); a scan over the n rows, m positions at a time.
    rows = [reshape(transpose(x, dims + kept), (n, m)) for x in ops]

    def apply(*flat):  # the scalar computation, on one position
        k = len(flat) // 2
        acc, elem = tree_unflatten(tree, list(flat[:k])), tree_unflatten(tree, list(flat[k:]))
        out, out_tree = tree_flatten(computation(acc, elem))
        if out_tree != tree or len(out) != k:
            raise TypeError(f"lax.reduce: computation must return the operands' structure "
                            f"{tree}; got {out_tree}")
        return out

    def body(carry, xs):
        out = batching.vmap_flat(apply, list(carry) + list(xs), [0] * (2 * len(carry)), m)
        return [ew.convert_element_type(o, get_aval(c).dtype) for o, c in zip(out, carry)], None

    carry0 = [reshape(s, (m,)) for s in starts]
    final, _ = scan(body, carry0, rows)
    return [reshape(c, out_shape) for c in final]


__all__ = ["reduce"]
