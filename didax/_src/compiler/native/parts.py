"""A long generated C function cut into parts, each a function of its own, so that the C
compiler's time grows linearly with the program.

gcc's optimisation of one function is superlinear in its length: a module of 1,200
equations took 5.8 s, one of 4,700 took 45 s, all in one `run`. Its segments (blocks that
compute values into the array slots `v`, see emit.py) share nothing but those slots, the
kept arrays and the module's tables, so runs of them move into functions of PART_LINES
lines or so, called in order; an error (`goto done`) becomes a return of -1 that the caller
turns back into `goto done`.
"""
from __future__ import annotations

import re

PART_LINES = 400
NOINLINE = "#define DIDAX_NOINLINE __attribute__((noinline))"
# A module whose parts add up to more lines than this is built as several translation units
# of about as many lines, compiled in parallel (and cached one by one): see toolchain.build.
UNIT_LINES = 3000
# Parts calling the module's own static functions (the bodies of control flow) stay in it.
_CALLS_BODY = re.compile(r"\bbody\d+\(")
# What a part may read of the function it was cut from (its parameters).
_PARAMS = "PyObject **v, PyObject **keep, PyObject *segments, PyObject *consts"
_ARGS = "v, keep, segments, consts"
# A block naming any other local of the function stays in it.
_OTHER_LOCALS = re.compile(r"\b(io|result|nargs|own|mine|kept_busy|state)\b")


def cut(lines: list, name: str) -> tuple[list, list]:
    """(the functions of the parts, `lines` calling them instead): `lines` is a function's
    body at four spaces' indentation; its top-level blocks are cut out, together with the
    `Py_CLEAR`s between them, in order."""
    parts: list = []
    body: list = []
    current: list = []

    def flush():
        if not current:
            return
        fn = f"{name}_part{len(parts)}"
        parts.append("\n".join([f"static DIDAX_NOINLINE int {fn}({_PARAMS}) {{",
                                *(line.replace("goto done;", "return -1;") for line in current),
                                "    return 0;", "}", ""]))
        body.append(f"    if ({fn}({_ARGS}) < 0) goto done;")
        current.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        end = _block_end(lines, i) if line.startswith("    {") else None
        if end is not None and not any(_OTHER_LOCALS.search(x) for x in lines[i:end]):
            current.extend(lines[i:end])
            i = end
            if len(current) >= PART_LINES:
                flush()
        elif current and line.startswith("    Py_CLEAR(v["):
            current.append(line)
            i += 1
        else:
            flush()
            body.append(line)
            i += 1
    flush()
    return parts, body


def _block_end(lines, start) -> int | None:
    """The index after the block opening at `start` (its closing line: four spaces and a
    brace), or None."""
    depth = 0
    for j in range(start, len(lines)):
        depth += lines[j].count("{") - lines[j].count("}")
        if depth == 0:
            return j + 1 if lines[j] == "    }" else None
    return None


def spread(functions: list) -> tuple[list, list]:
    """(the parts the module's own unit keeps, the other units' parts: [[part, ...], ...]):
    nothing moves unless the parts add up to more than UNIT_LINES lines."""
    size = sum(f.count("\n") for f in functions)
    if size <= UNIT_LINES:
        return functions, []
    kept, units, unit, lines = [], [], [], 0
    for f in functions:
        if _CALLS_BODY.search(f):
            kept.append(f)
            continue
        unit.append(f)
        lines += f.count("\n")
        if lines >= UNIT_LINES:
            units.append(unit)
            unit, lines = [], 0
    if unit:
        units.append(unit)
    return kept, units


def shared(function: str) -> str:
    """A part defined in another unit: visible to the module's other units (not beyond)."""
    return function.replace("static DIDAX_NOINLINE int", "DIDAX_SHARED DIDAX_NOINLINE int", 1)


def prototype(function: str) -> str:
    return shared(function).split("{", 1)[0].rstrip() + ";"
