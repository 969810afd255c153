"""What `native` rules are written with; the rules themselves sit beside their primitives.

A native rule gives the C expression of one element of an equation's result from the C
expressions (local names or constants) of its operands' elements: `rule(c, eqn, *args)`,
where `c` (a `CExpr`) formats constants in the equation's dtype, calls NumPy's own loops
for the functions NumPy computes (`c.call`), and binds subexpressions to locals (`c.let`).
Equations `when` rejects, or of dtypes the tier does not handle, run on the NumPy tier
inside the native function.

Each rule computes exactly what the primitive's impl computes, rounding as NumPy rounds:
the generated code keeps IEEE semantics (no contraction into fused multiply-adds), and the
functions C's libm would compute differently from NumPy (exp, tanh, sin...) are NumPy's
loops themselves. This module knows no primitive (so declaring one may import it).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# The dtypes native loops handle, and their C types.
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
INTS = tuple(np.dtype(f"{k}{n}") for k in "iu" for n in (1, 2, 4, 8))
C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
           np.dtype(np.bool_): "npy_bool",
           **{d: f"npy_{'u' if d.kind == 'u' else ''}int{8 * d.itemsize}" for d in INTS}}
C_TYPENUMS = {d: f"NPY_{d.name.upper()}" for d in C_TYPES}
C_TYPENUMS[np.dtype(np.bool_)] = "NPY_BOOL"


def _floats(eqn) -> bool:
    return all(v.aval.dtype in FLOATS for v in (*eqn.invars, *eqn.outvars))


def numeric(eqn) -> bool:
    """All operands and results float or integer (of the widths C_TYPES has)."""
    return all(v.aval.dtype in FLOATS or v.aval.dtype in INTS
               for v in (*eqn.invars, *eqn.outvars))


class ViewAt(NamedTuple):
    """What a view rule returns for a view starting inside its operand: element strides,
    and the offset in elements of its first element."""
    strides: tuple
    offset: int


class _InOrder:
    """What a view rule returns for a result no strides of its operand's base express (a
    view of a view): the operand's elements copied in order, as an array of the result's
    shape."""

    def __repr__(self):
        return "IN_ORDER"


IN_ORDER = _InOrder()


class Matmul(NamedTuple):
    """What a "gemm" rule returns: the product as the NumPy tier computes it, NumPy's
    matmul loop over `batch` products (M x K) @ (K x N) of matrices read from the row-major
    operands with these byte strides (batch, row, column); the loop's first operand is the
    equation's lhs, or its rhs if `swapped`: then the loop computes the transposed product
    (M and N are the loop's), transposed into the result."""
    batch: int
    M: int
    K: int
    N: int
    first: tuple
    second: tuple
    swapped: bool
    # (for reading views in place, see matrix_views) the number of batch dimensions, and
    # each operand's matrix as the row-major reading has it: (rows, columns), transposed?
    nb: int = 0
    targets: tuple = ()
    transposed: tuple = ()


def native_rule(prim, *, when=_floats, kind="elementwise", counts=None, any_order=False):
    """Registers the decorated function as `prim`'s native rule for equations `when`
    accepts (by default: all operands and results float32 or float64). The kind says what
    the emitter asks of it: "elementwise" (a C expression of the operands' elements),
    "view" (`rule(eqn, strides)`: the result's element strides over the operand's, a
    ViewAt if it starts elsewhere than the operand's first element, IN_ORDER if it is a
    copy of its operand in order, or None), "reduce"
    (`rule(c, eqn)`: (initial value, combining template {0} acc {1} value)),
    "gemm" (`rule(eqn)`: a Matmul), "block" (`rule(emitter,
    eqn)` writes the C of the whole equation with the emitter's helpers: a loop or branch
    calling its bodies compiled as C functions, a pad; `counts(eqn)`: how many equations,
    its bodies' included, run natively and on the NumPy tier). `any_order` (a "reduce"): the
    combination gives the same value in any order and grouping (a maximum, a minimum), so a
    loop may accumulate it in vector lanes."""
    def register(fn):
        fn.when = when
        fn.kind = kind
        fn.counts = counts
        fn.any_order = any_order
        prim.def_rule("native", fn)
        return fn
    return register


def wrapped(dtype, op: str, x: str, y: str) -> str:
    """The C expression `x op y` for + - * in `dtype`: IEEE on floats; on integers computed
    in the unsigned type (wrapping, as NumPy does; signed overflow would be undefined in C)."""
    if dtype.kind in "iu":
        u = "npy_uint64" if dtype.itemsize == 8 else "npy_uint32"  # never promoted
        return f"(({C_TYPES[dtype]})(({u}){x} {op} ({u}){y}))"
    return f"({x} {op} {y})"


def wrapping(op: str):
    """An elementwise rule for + - * (see `wrapped`)."""
    def rule(c, eqn, x, y):
        return wrapped(c.dtype, op, x, y)
    return rule


def c_expr(template: str):
    """A rule that is a C expression: `{0}`, `{1}`... are the operands."""
    def rule(c, eqn, *args):
        return template.format(*args)
    return rule


def c_function(name: str):
    """A rule computing the NumPy function `name` (np.exp, np.tanh...) of its operands."""
    def rule(c, eqn, *args):
        return c.call(name, *args)
    return rule


# Functions correctly rounded by IEEE 754, hence the same in C and in NumPy: instructions.
_C_EXACT = {"sqrt": "sqrt", "absolute": "fabs"}


class CExpr:
    """What a native rule formats its expression with, for one equation of `dtype`:
    `block` records the statements of the loop's body (see loops.Body); `loop(name, dtype)`
    is the number of NumPy's loop of the function `name` over `dtype` in the module."""

    def __init__(self, dtype, block, loop):
        self.dtype = np.dtype(dtype)
        self.ctype = C_TYPES[self.dtype]
        self._block = block
        self._loop = loop

    def const(self, value) -> str:
        """`value` as a C constant of this equation's dtype."""
        return c_constant(value, self.dtype)

    def call(self, name: str, *args, where: str | None = None) -> str:
        """NumPy's `name` (a ufunc of numpy, such as "exp") of `args`, elementwise; with
        `where` (a C condition), needed only where it holds (blocks where it nowhere does
        skip the call)."""
        if name in _C_EXACT:
            fn = _C_EXACT[name] + ("f" if self.dtype == np.float32 else "")
            return f"{fn}({', '.join(args)})"
        return self._block.call(self._loop(name, self.dtype), self.ctype, args, where)

    def let(self, expression: str) -> str:
        """Binds `expression` to a fresh local; its name."""
        return self._block.let(self.ctype, expression)


def c_constant(value, dtype) -> str:
    """An exact C constant of `dtype` (hexadecimal floats: no decimal rounding)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "1" if bool(value) else "0"
    if dtype.kind in "iu":
        n = int(np.asarray(value, dtype))
        return f"(({C_TYPES[dtype]}){n}{'ULL' if dtype.kind == 'u' else 'LL'})" if n >= 0 else \
            f"(({C_TYPES[dtype]})(-{-n - 1}LL - 1))"
    x = float(np.asarray(value, dtype))
    suffix = "f" if dtype == np.float32 else ""
    ctype = C_TYPES[dtype]
    if math.isnan(x):  # (its own sign and payload, never folded: see toolchain's prelude)
        bits = int(np.asarray(value, dtype).view(f"u{dtype.itemsize}"))
        return f"didax_nan_f{8 * dtype.itemsize}({bits:#x}{'ULL' if dtype.itemsize == 8 else 'u'})"
    if math.isinf(x):
        return f"(({ctype})INFINITY)" if x > 0 else f"(-({ctype})INFINITY)"
    text = x.hex() + suffix
    return f"({text})" if x < 0 or text.startswith("-") else text
