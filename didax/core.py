"""Mirrors `jax.core`: the names JAX programs use, mapped onto didax's own core.

didax's core differs from JAX's internals, so some names are the closest didax object:
`Trace` is didax's `Interpreter` (what gives primitives a meaning), `AbstractValue` is
`ShapedArray` (didax's only abstract value), `Atom` is a jaxpr `Var` or `Literal`, and `Value`
and `ParamDict` are the type aliases JAX defines. `isinstance(x, Tracer)` tells a traced value
from a concrete one, as in JAX.
"""
from __future__ import annotations

from typing import Any

from didax._src.core import Interpreter as Trace  # noqa: F401
from didax._src.core import (
    ShapedArray,
    Tracer,
    current_interpreter,
    eval_interpreter,
    get_aval,
    interpreter_context,
    pytype_aval_mappings,
)
from didax._src.interpreters.staging import ensure_compile_time_eval  # noqa: F401
from didax._src.ir import Literal, Var, eval_jaxpr  # noqa: F401

AbstractValue = ShapedArray
Atom = Var | Literal
Value = Any
ParamDict = dict[str, Any]

__all__ = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
           "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "find_top_trace",
           "get_opaque_trace_state", "mapped_aval", "max_dim", "min_dim",
           "pytype_aval_mappings", "trace_state_clean", "unmapped_aval", "valid_jaxtype"]


def valid_jaxtype(x) -> bool:
    """Whether `x` is a value transformations take (an array, a NumPy array or scalar, a
    Python number), not some other object."""
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def find_top_trace(xs=None):
    """The innermost transformation running now (evaluation outside any): as in JAX, the
    arguments are not consulted. Its `.main` identifies it; a tracer's `._trace` is its own."""
    del xs
    return current_interpreter()


def trace_state_clean() -> bool:
    """Whether no transformation is running (code at the top level, outside jit, grad...)."""
    return current_interpreter() is eval_interpreter


class OpaqueTraceState:
    """Which transformation was current when it was taken; equal to another taken under the
    same one. Libraries (flax) keep one to tell whether they are still at the level where a
    module was made."""

    __slots__ = ("_interp",)

    def __init__(self, interp):
        self._interp = interp

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._interp is other._interp

    def __hash__(self):
        return id(self._interp)


def get_opaque_trace_state(convention=None):
    del convention
    return OpaqueTraceState(current_interpreter())


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
