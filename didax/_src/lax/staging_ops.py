"""Values into traces and out of the dead-code eliminator's reach: `stage`, `dce_sink`,
`shape_as_value`."""
from __future__ import annotations

import operator

import numpy as np

from didax._src.core import Tracer, asarray_value, get_aval
from didax._src.tree_util import tree_leaves


def stage(x, /):
    """`x` as a didax value: a tracer stays as it is; a Python scalar or NumPy array becomes a
    didax Array (with its weak type), which any trace it meets treats as a constant."""
    if isinstance(x, Tracer):
        return x
    try:
        get_aval(x)
    except TypeError:
        raise TypeError("Error interpreting argument to stage as a JAX value. The problematic "
                        f"value is of type {type(x)} and was passed to stage at position 0."
                        ) from None
    return asarray_value(x)


def dce_sink(val, *, prevent_mlir_dce: bool = False):
    """Marks `val` as used, so that dead-code elimination keeps what computes it; returns
    None. JAX records a `dce_sink` equation for it; didax's jaxprs are pure dataflow and keep
    no equation, so this only checks that `val` holds didax values."""
    for leaf in tree_leaves(val):
        get_aval(leaf)


def shape_as_value(shape):
    """A shape as an int32 vector: a NumPy array as in JAX (an empty shape gives an empty
    didax Array, as JAX's does). didax's shapes are always static integers."""
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape_as_value: expected a shape (a sequence of ints), got {shape!r}"
                        ) from None
    if not dims:
        return asarray_value(np.zeros((0,), np.int32))
    return np.array(dims, np.int32)
