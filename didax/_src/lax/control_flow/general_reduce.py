"""`lax.reduce`: a reduction by any computation, over pytrees of operands.

As in JAX, a computation that is one of lax's monoid functions (lax.add, lax.mul, lax.max,
lax.min, lax.bitwise_and/or/xor, compared by identity) started from a concrete initial value
equal to its identity becomes that monoid's reduction (reduce_sum, reduce_max...), so it prints
and differentiates as they do. Any other computation stages one `reduce` equation holding the
computation's jaxpr (reduce_general.py: its fold order, JVP and batching).
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.base_prims import reduce_sum
from didax._src.core import get_aval
from didax._src.lax import elementwise as ew
from didax._src.lax import reduction as red
from didax._src.lax.reduce_general import bind_reduce
from didax._src.tree_util import tree_flatten, tree_unflatten


def _all_ones(dtype):
    return True if dtype == np.bool_ else np.array(-1).astype(dtype)


# lax's function -> (its reduction, the identity for a dtype)
_MONOIDS = {
    ew.add: (reduce_sum, lambda dt: 0),
    ew.mul: (red.reduce_prod, lambda dt: 1),
    ew.max: (red.reduce_max, red.max_identity),
    ew.min: (red.reduce_min, red.min_identity),
    ew.bitwise_and: (red.reduce_and, _all_ones),
    ew.bitwise_or: (red.reduce_or, lambda dt: False if dt == np.bool_ else 0),
    ew.bitwise_xor: (red.reduce_xor, lambda dt: False if dt == np.bool_ else 0),
}


def _monoid_reducer(computation, aval, init):
    """The reduction `computation` is, if it is one of lax's monoid functions and `init` a
    concrete scalar equal to its identity (JAX's test); else None."""
    try:
        monoid = _MONOIDS.get(computation)
    except TypeError:  # an unhashable callable is no monoid
        return None
    if monoid is None:
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
    dims = tuple(d % ndim for d in dims) if ndim else ()  # (in the given order, as JAX's)
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
        reducer = _monoid_reducer(computation, get_aval(flat_ops[0]), flat_init[0])
        if reducer is not None:
            return tree_unflatten(tree, [reducer(flat_ops[0], tuple(sorted(dims)))])
    return tree_unflatten(tree, bind_reduce(flat_ops, inits, computation, tree, dims))


__all__ = ["reduce"]
