"""What the native rules of control flow (scan, while, cond) are written with: the C of
carries held in two buffers that swap roles each iteration, slices of stacked values as
windows moved along them, and the test of which loops are worth compiling.

A loop's body is a C function of the module (emit.Function) that writes its results into
arrays it is handed: the carries into the buffer not being read, a scan's per-iteration
results straight into their row of the stacked output. So a loop allocates its buffers
once, not per iteration, and runs no Python unless its body has equations without native
rules (those run as NumPy-tier segments the body calls).
"""
from __future__ import annotations

import math

from didax._src.compiler.native.emit import native_counts
from didax._src.compiler.native.rules import C_TYPES

# A body with equations on the NumPy tier is still compiled (the loop in C, calling those
# segments back) when at least this share of its equations runs natively; below it the
# whole loop stays on the NumPy tier, whose Python loop costs less than the crossings.
MIN_NATIVE_SHARE = 0.5


def typed_for_c(eqn) -> bool:
    """All operands and results of dtypes the native tier handles."""
    return all(a.aval.dtype in C_TYPES for a in (*eqn.invars, *eqn.outvars))


def worth_compiling(*bodies) -> bool:
    """Whether loops over `bodies` (closed jaxprs) run natively: native equations are at
    least MIN_NATIVE_SHARE of them, or there is none on the NumPy tier (branches that only
    pass operands on, choosing among them: a select)."""
    native = python = 0
    for b in bodies:
        n, p = native_counts(b)
        native, python = native + n, python + p
    return native >= MIN_NATIVE_SHARE * (native + python)  # (true for none of either)


def counts_of(*bodies) -> tuple:
    native = python = 0
    for b in bodies:
        n, p = native_counts(b)
        native, python = native + n, python + p
    return native, python


class Carries:
    """C for loop-carried values: `buf<id>[2k]` and `buf<id>[2k+1]` hold carry k; `cur`
    says which one the next iteration reads; the other receives its result."""

    def __init__(self, em, avals, inits, failed: str):
        self.em, self.avals, self.failed = em, list(avals), failed
        self.name = em.fresh("buf")
        self.cur = em.fresh("cur")
        n = max(2 * len(self.avals), 1)
        em.line(f"PyObject *{self.name}[{n}] = {{NULL}};")
        em.line(f"int {self.cur} = 0;")
        for k, (aval, init) in enumerate(zip(self.avals, inits)):
            _, typenum, shape = em.ctype(aval)
            em.line(f"if (!{failed}) {{")
            em.line(f"    {self.name}[{2 * k}] = fresh_copy({init}, {typenum}, {aval.ndim}, "
                    f"{shape});")
            em.line(f"    {self.name}[{2 * k + 1}] = PyArray_SimpleNew({aval.ndim}, {shape}, "
                    f"{typenum});")
            em.line(f"    if ({self.name}[{2 * k}] == NULL || {self.name}[{2 * k + 1}] == NULL) "
                    f"{failed} = 1;")
            em.line("}")

    def reading(self) -> list:
        return [f"{self.name}[{2 * k} + {self.cur}]" for k in range(len(self.avals))]

    def writing(self) -> list:
        return [f"{self.name}[{2 * k + 1} - {self.cur}]" for k in range(len(self.avals))]

    def make_writable(self):
        """Before an iteration: a buffer to be written that something else still holds is
        replaced (it never is in practice; this keeps it so)."""
        em = self.em
        for aval, w in zip(self.avals, self.writing()):
            _, typenum, shape = em.ctype(aval)
            em.line(f"    if (Py_REFCNT({w}) != 1) {{")
            em.line(f"        Py_DECREF({w});")
            em.line(f"        {w} = PyArray_SimpleNew({aval.ndim}, {shape}, {typenum});")
            em.line(f"        if ({w} == NULL) {{ {self.failed} = 1; break; }}")
            em.line("    }")

    def swap(self):
        self.em.line(f"    {self.cur} ^= 1;")

    def finish(self, results):
        """Hands the last values to the result slots `results`; frees the buffers."""
        em = self.em
        for r, last in zip(results, self.reading()):
            em.line(f"{r} = {last}; {last} = NULL;")
        em.line(f"for (int k = 0; k < {max(2 * len(self.avals), 1)}; k++) "
                f"Py_XDECREF({self.name}[k]);")


def call(em, fn, io: list, keep: str, failed: str | None, indent: str = "    "):
    """C calling body `fn` on the io objects `io` (C expressions); if it fails, breaks out of
    the enclosing loop with `failed` set, or (`failed` None) leaves the function."""
    io_name = em.fresh("io")
    on_error = f"{failed} = 1; break;" if failed else "goto done;"
    em.line(f"{indent}PyObject *{io_name}[{max(len(io), 1)}] = {{{', '.join(io) or 'NULL'}}};")
    em.line(f"{indent}if ({fn.name}(segments, consts, {io_name}, {keep}) < 0) {{ {on_error} }}")


def slice_bytes(aval) -> int:
    """Bytes of one slice of a stacked value whose slices have type `aval`."""
    return math.prod(aval.shape) * aval.dtype.itemsize
