"""The pass the native tier runs over a jaxpr before emitting it: a `cheap` elementwise
equation (an add, a product, a negation: cheaper per element than a read from memory) whose
result a later loop reads is computed again in that loop, from operands that are stored
anyway, instead of being stored by its own loop and read back. After differentiation the
forward pass's loops store every intermediate the backward pass reads (tanh-gelu's loop
stored eight arrays, five of them one operation away from the other three); now they store
what the backward pass cannot cheaply compute.

The copy computes exactly what the equation computes, from the same operands, so results
keep their bits. An operand is only read by a loop that reads it anyway or later (or is one
of the function's inputs, or a copy made for the same loop), so no array outlives the loops
that read it. The NumPy tier computes the equations as they are.
"""
from __future__ import annotations

from didax._src.compiler.passes import dce
from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var

LOOP_KINDS = ("elementwise", "reduce")


def _loops(eqns, kind_of) -> tuple[list, list]:
    """For each equation, a number naming the run of loop equations it belongs to and the
    shape that loop runs over (None if it is not a loop equation). Runs are maximal runs of
    loop equations of one shape (views between them do not end them): the emitter's loops
    are these or parts of them, so equations in different runs are in different loops."""
    group, shape = [], []
    g, open_shape = 0, None
    for e in eqns:
        kind = kind_of(e)
        s = None
        if kind in LOOP_KINDS:
            s = e.outvars[0].aval.shape if kind == "elementwise" else e.invars[0].aval.shape
            if s != open_shape:
                g, open_shape = g + 1, s
        elif kind != "view":
            g, open_shape = g + 1, None
        group.append(g)
        shape.append(s)
    return group, shape


def _cheap(e) -> bool:
    """A `cheap` primitive's equation, or one of literals alone (a constant broadcast to an
    array, as a masked fill's or a gradient's zeros: computed again, it reads nothing)."""
    return e.primitive.traits.cheap or (bool(e.invars)
                                        and all(type(a) is Literal for a in e.invars))


def recomputed_in_readers(closed: ClosedJaxpr, kind_of) -> ClosedJaxpr:
    """`closed` with each `cheap` elementwise equation copied into the later loops that read
    its result (before the first reader in each), where its operands are available there;
    those readers read the copy. `kind_of`: the emitter's classification of an equation."""
    j = closed.jaxpr
    eqns = j.eqns
    if not any(map(_cheap, eqns)):
        return closed
    group, shape = _loops(eqns, kind_of)
    readers: dict = {}
    for k, e in enumerate(eqns):
        for a in e.invars:
            if type(a) is not Literal:
                readers.setdefault(a, []).append(k)
    last_read = {a: ks[-1] for a, ks in readers.items()}
    free = set(j.invars) | set(j.constvars)
    results = {a for a in j.outvars if type(a) is not Literal}
    before: dict = {}   # index of an equation -> copies placed before it
    renamed: dict = {}  # index of an equation -> {variable: its copy} for its operands
    made: dict = {}     # (run, variable) -> (its copy, index the copy is placed before)
    copies: dict = {}   # (run, variable) -> the equation computing its copy

    def move_before(g, a, k):
        """Moves the copy of `a` in run `g` (placed before a later equation) to just before
        equation `k`, its operands' copies first: a copy made before `k` reads it."""
        copy, at = made[(g, a)]
        eqn = copies[(g, a)]
        before[at].remove(eqn)
        for b in eqn.invars:
            if type(b) is not Literal and (g, b) in made and made[(g, b)][1] > k:
                move_before(g, b, k)
        before.setdefault(k, []).append(eqn)
        made[(g, a)] = (copy, k)

    for i, e in enumerate(eqns):
        v = e.outvars[0] if len(e.outvars) == 1 else None
        if (v is None or type(v) is DropVar or v in results or not _cheap(e)
                or kind_of(e) != "elementwise"):
            continue
        for k in readers.get(v, ()):
            if group[k] == group[i] or shape[k] != v.aval.shape:
                continue
            copy = made.get((group[k], v))
            if copy is None:
                ins, later = [], []
                for a in e.invars:
                    known = made.get((group[k], a)) if type(a) is not Literal else None
                    if known is not None:  # (its copy; moved before k if it comes later)
                        ins.append(known[0])
                        if known[1] > k:
                            later.append(a)
                    elif (type(a) is Literal or a in free or last_read[a] >= k
                          or group[last_read[a]] == group[k]):
                        ins.append(a)
                    else:
                        break
                else:
                    for a in later:
                        if made[(group[k], a)][1] > k:
                            move_before(group[k], a, k)
                    copy = (Var(v.aval), k)
                    made[(group[k], v)] = copy
                    copies[(group[k], v)] = JaxprEqn(e.primitive, ins, [copy[0]], e.params,
                                                     e.source_info)
                    before.setdefault(k, []).append(copies[(group[k], v)])
            if copy is not None:
                renamed.setdefault(k, {})[v] = copy[0]
    if not before:
        return closed
    out = []
    for k, e in enumerate(eqns):
        out += before.get(k, [])
        names = renamed.get(k)
        if names:
            e = JaxprEqn(e.primitive, [names.get(a, a) if type(a) is not Literal else a
                                       for a in e.invars], e.outvars, e.params, e.source_info)
        out.append(e)
    return dce(ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.outvars, out), closed.consts))
