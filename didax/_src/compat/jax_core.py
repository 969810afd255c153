"""`jax.core`'s names mapped onto didax's own core (the public `didax.core` re-exports
`__all__`), and what libraries reach for in JAX's internal core module (`jax._src.core`
under `install_as_jax`): `trace_state_clean` and `physical_aval` too.

didax's core differs from JAX's internals, so some names are the closest didax object:
`Trace` is didax's `Interpreter` (what gives primitives a meaning), `AbstractValue` is
`ShapedArray` (didax's only abstract value), `Atom` is a jaxpr `Var` or `Literal`, and `Value`
and `ParamDict` are the type aliases JAX defines. `isinstance(x, Tracer)` tells a traced value
from a concrete one, as in JAX.
"""
from __future__ import annotations

from typing import Any

from didax._src.compat.trace_state import (  # noqa: F401
    find_top_trace,
    get_opaque_trace_state,
    trace_state_clean,
)
from didax._src.core import Interpreter as Trace  # noqa: F401
from didax._src.core import (
    ShapedArray,
    Tracer,
    eval_interpreter,
    get_aval,
    interpreter_context,
    pytype_aval_mappings,
)
from didax._src.interpreters.staging import ensure_compile_time_eval  # noqa: F401
from didax._src.ir import Literal, Var, eval_jaxpr  # noqa: F401
from didax._src.primitives.prng import KeyDtype

AbstractValue = ShapedArray
Atom = Var | Literal
Value = Any
ParamDict = dict[str, Any]

__all__ = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
           "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "find_top_trace",
           "get_opaque_trace_state", "mapped_aval", "max_dim", "min_dim",
           "pytype_aval_mappings", "unmapped_aval", "valid_jaxtype"]


def valid_jaxtype(x) -> bool:
    """Whether `x` is a value transformations take (an array, a NumPy array or scalar, a
    Python number), not some other object."""
    try:
        get_aval(x)
    except TypeError:
        return False
    return True



def eval_context():
    """A context in which operations on concrete values run now (evaluation is the current
    interpreter), even inside a transformation."""
    return interpreter_context(eval_interpreter)


def max_dim(d1, d2):
    """The larger of two dimensions (didax dimensions are always concrete integers)."""
    return max(d1, d2)


def min_dim(d1, d2):
    """The smaller of two dimensions."""
    return min(d1, d2)


def mapped_aval(size: int, axis, aval):
    """The type of one slice of `aval` along `axis` (as `vmap` sees its argument); `axis`
    None leaves it whole."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    if shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has size "
                         f"{shape[axis]}, not {size}")
    del shape[axis]
    return aval.update(shape=tuple(shape))


def unmapped_aval(size: int, axis, aval, *args):
    """The type of `size` values of type `aval` stacked along `axis`."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, size)
    return aval.update(shape=tuple(shape))


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """The type of the data behind values of `aval`: itself for NumPy dtypes; a typed key
    array's is its uint32 key words (two per key, in a last axis)."""
    if isinstance(aval.dtype, KeyDtype):
        return ShapedArray((*aval.shape, 2), "uint32")
    return aval
