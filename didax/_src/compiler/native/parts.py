"""A long generated C function cut into parts, each a function of its own, so that the C
compiler's time grows linearly with the program.

gcc's optimisation of one function is superlinear in its length: a module of 1,200
equations took 5.8 s, one of 4,700 took 45 s, all in one `run`. Its segments (blocks that
compute values into the array slots `v`, see emit.py) share nothing but those slots, the
kept arrays and the module's tables, so runs of them move into functions of PART_LINES
lines or so, called in order; an error (`goto done`) becomes a return of -1 that the caller
turns back into `goto done`.

A block of a loop, a product or a view's copy that does not differ from another but in its
slots and the names it declares (a model's layers of one shape, its parameters' updates) is
compiled once: each block becomes a function of the slots it uses (`lift`), one per distinct
text, called where the block was. What stays between them is glue, kept cheap to compile
(slots dropped by a call, CLEAR). A 4,100-equation step built in 10.7 s before and builds
in 1.6 s now; the transformer step's cold first call fell from 1.16 of JAX's to 0.77
(benchmarks/README.md).
"""
from __future__ import annotations

import re

PART_LINES = 400
NOINLINE = "#define DIDAX_NOINLINE __attribute__((noinline))"
# A slot's value dropped: a call, not Py_CLEAR's inline code (gcc took 1.28 s over the 350 of
# the transformer step's glue inline, 0.70 s as calls).
CLEAR = """/* Drops a slot's value (once the last segment reading it has run). */
static DIDAX_NOINLINE void didax_clear(PyObject **slot) { Py_CLEAR(*slot); }"""


_CLEARED = "    didax_clear(&v["  # (how a line dropping a slot's value starts)


def clear(slot: int) -> str:
    return f"{_CLEARED}{slot}]);"

# A module whose parts add up to more lines than this is built as several translation units
# of about as many lines, compiled in parallel (and cached one by one): see toolchain.build.
UNIT_LINES = 3000
# Parts calling the module's own static functions (the bodies of control flow) stay in it.
_CALLS_BODY = re.compile(r"\bbody\d+\(")
# What a part may read of the function it was cut from (its parameters).
_PARAMS = "PyObject **v, PyObject **keep, PyObject *segments, PyObject *consts"
_ARGS = "v, keep, segments, consts"
# A block naming any other local of the function stays in it; one naming those, or the parts'
# other parameters, is not lifted.
_LOCALS = "io|result|nargs|own|mine|kept_busy|state"
_OTHER_LOCALS = re.compile(rf"\b({_LOCALS})\b")
_NOT_LIFTED = re.compile(rf"\b({_LOCALS}|segments|consts)\b")
# A block's slots (`v[3]`, `keep[0]`), and the names it declares, each numbered by a slot or
# a counter (`p3`, `t0`, `summed_7`, `summed_7_p`, `t2_a`); never part of a constant (the
# `a3` of `0x1.a3d70ap-7f`).
_SLOT_OR_NAME = re.compile(r"(?<![.\w])(?:(?:v|keep)\[\d+\]|"
                           r"(p|q|v|s|a|t|wl|bt|summed_|didax_r)\d+(?![0-9A-Za-z]))")
_PARAMETER = "slot"


def cut(lines: list, name: str) -> tuple[list, list]:
    """(the functions of the parts, `lines` calling them instead): `lines` is a function's
    body at four spaces' indentation; its top-level blocks are cut out, together with the
    slots cleared between them, in order."""
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
        elif current and line.startswith(_CLEARED):
            current.append(line)
            i += 1
        else:
            flush()
            body.append(line)
            i += 1
    flush()
    return parts, body


def lift(block: list) -> tuple[str, list] | None:
    """(`block` as the body of a function of the slots it uses, its own names numbered in
    order, the slots that function takes, in order), or None for a block that reads
    anything else of the function it is in. Blocks equal but for their slots and names
    (a model's layers, its parameters' updates) lift to one text: the module compiles it
    once and calls it from each place (see emit.py's _Module.shared)."""
    text = "\n".join(block)
    if _NOT_LIFTED.search(text):
        return None
    slots: dict = {}
    names: dict = {}

    def rename(match):
        found = match.group(0)
        if match.group(1) is None:
            return slots.setdefault(found, f"(*{_PARAMETER}{len(slots)})")
        return names.setdefault(found, f"{match.group(1)}{len(names)}")

    return _SLOT_OR_NAME.sub(rename, text), list(slots)


def lifted_function(name: str, text: str, n_slots: int) -> str:
    params = ", ".join(f"PyObject **{_PARAMETER}{k}" for k in range(n_slots)) or "void"
    return "\n".join([f"DIDAX_SHARED DIDAX_NOINLINE int {name}({params}) {{",
                      text.replace("goto done;", "return -1;"), "    return 0;", "}", ""])


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
