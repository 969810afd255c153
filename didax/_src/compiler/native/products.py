"""The pass the native tier runs over a jaxpr before emitting it: equations with an
elementwise form (`elementwise_form`: a product with nothing to sum, its operands read
broadcast and multiplied) become that form, moved down to just before their first reader,
so that they join its loop: `w - lr * outer(x, d)`, a layer's SGD update at batch 1, is
one pass over `w` with no product written out; per-example gradients likewise.

The form computes exactly what the NumPy tier computes for the equation; its views are
strided reads in the loop, never copies. The NumPy tier computes the equations as they are.
"""
from __future__ import annotations

from didax._src.ir import ClosedJaxpr, Jaxpr, Literal


def elementwise_products(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`closed` with every equation that has an elementwise form replaced by it, placed just
    before the first equation reading its result (in place if none does)."""
    j = closed.jaxpr
    forms = {}
    for k, eqn in enumerate(j.eqns):
        form = eqn.primitive.traits.elementwise_form
        new = form(eqn) if form is not None else None
        if new is not None:
            forms[k] = new
    if not forms:
        return closed
    first_use: dict = {}
    for k, eqn in enumerate(j.eqns):
        for a in eqn.invars:
            if type(a) is not Literal:
                first_use.setdefault(a, k)
    moved: dict = {}  # index of the first reader -> equations moved before it
    eqns = []
    for k, eqn in enumerate(j.eqns):
        eqns += moved.pop(k, [])
        if k not in forms:
            eqns.append(eqn)
        elif eqn.outvars[0] in first_use:
            moved.setdefault(first_use[eqn.outvars[0]], []).extend(forms[k])
        else:
            eqns += forms[k]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.outvars, eqns), closed.consts)
