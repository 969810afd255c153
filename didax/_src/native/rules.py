"""What `native` rules are written with; the rules themselves sit beside their primitives.

A native rule gives the C expression of one element of an equation's result from the C
expressions (local names or constants) of its operands' elements: `rule(c, eqn, *args)`,
where `c` (a `CExpr`) formats constants in the equation's dtype, names libm functions in
it, and binds subexpressions to locals (`c.let`) so libm calls are never conditional (gcc
vectorizes only unconditional calls). Equations `when` rejects, or of dtypes the tier does
not handle, run on the NumPy tier inside the native function.

Each rule computes exactly what the primitive's impl computes, rounding as NumPy rounds
(the generated code keeps IEEE semantics); libm functions may differ from NumPy's by a few
ulps. This module knows no primitive (so declaring one may import it).
"""
from __future__ import annotations

import math

import numpy as np

# The dtypes native loops handle, and their C types.
C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
           np.dtype(np.bool_): "npy_bool"}
C_TYPENUMS = {np.dtype(np.float32): "NPY_FLOAT32", np.dtype(np.float64): "NPY_FLOAT64",
              np.dtype(np.bool_): "NPY_BOOL"}
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _floats(eqn) -> bool:
    return all(v.aval.dtype in FLOATS for v in (*eqn.invars, *eqn.outvars))


def native_rule(prim, *, when=_floats):
    """Registers the decorated function as `prim`'s native rule for elementwise equations
    `when` accepts (by default: all operands and results float32 or float64)."""
    def register(fn):
        fn.when = when
        prim.def_rule("native", fn)
        return fn
    return register


def c_expr(template: str):
    """A rule that is a C expression: `{0}`, `{1}`... are the operands."""
    def rule(c, eqn, *args):
        return template.format(*args)
    return rule


def c_function(name: str):
    """A rule calling the libm function `name` (`namef` on float32)."""
    def rule(c, eqn, *args):
        return c.call(name, *args)
    return rule


class CExpr:
    """What a native rule formats its expression with, for one equation of `dtype`."""

    def __init__(self, dtype, fresh_local, functions: set):
        self.dtype = np.dtype(dtype)
        self.ctype = C_TYPES[self.dtype]
        self._fresh_local = fresh_local  # (ctype, expression) -> the local's name
        self._functions = functions       # libm functions the module calls

    def const(self, value) -> str:
        """`value` as a C constant of this equation's dtype."""
        return c_constant(value, self.dtype)

    def call(self, name: str, *args) -> str:
        fn = name + ("f" if self.dtype == np.float32 else "")
        self._functions.add(fn)
        return f"{fn}({', '.join(args)})"

    def let(self, expression: str) -> str:
        """Binds `expression` to a fresh local (computed unconditionally); its name."""
        return self._fresh_local(self.ctype, expression)


def c_constant(value, dtype) -> str:
    """An exact C constant of `dtype` (hexadecimal floats: no decimal rounding)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "1" if bool(value) else "0"
    x = float(np.asarray(value, dtype))
    suffix = "f" if dtype == np.float32 else ""
    ctype = C_TYPES[dtype]
    if math.isnan(x):
        return f"(({ctype})NAN)"
    if math.isinf(x):
        return f"(({ctype})INFINITY)" if x > 0 else f"(-({ctype})INFINITY)"
    text = x.hex() + suffix
    return f"({text})" if x < 0 or text.startswith("-") else text
