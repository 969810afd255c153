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
from didax._src.core import ShapedArray, Tracer, eval_interpreter, interpreter_context
from didax._src.interpreters.staging import ensure_compile_time_eval  # noqa: F401
from didax._src.ir import Literal, Var, eval_jaxpr  # noqa: F401

AbstractValue = ShapedArray
Atom = Var | Literal
Value = Any
ParamDict = dict[str, Any]

__all__ = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
           "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "max_dim", "min_dim"]


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
