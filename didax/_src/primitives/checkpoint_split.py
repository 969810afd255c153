"""A checkpointed function's JVP split by its policy: what the forward pass computes and
keeps, and what the backward pass computes again.

An equation whose inputs are all known (primal) is computed in the forward pass. The tangent
equations read known values; each such value is kept (a residual) when it is an input of the
function or the policy saves the equation computing it, and is otherwise computed again in
the backward pass from values that are, in turn, kept or computed again.
"""
from __future__ import annotations

from didax._src.compiler.passes import dce, inline_calls
from didax._src.ir import ClosedJaxpr, Jaxpr, Literal
from didax._src.primitives.checkpoint_policies import saves


class PolicySplit:
    """`known`: the known inputs -> the first outputs, then the residuals. `unknown`: the
    residuals, then the unknown inputs -> the other outputs (computing again what it needs
    and was not kept). `residual_eqns[i]` is the equation computing residual i (None for an
    input or constant of the function)."""

    __slots__ = ("known", "unknown", "residual_eqns")

    def __init__(self, known, unknown, residual_eqns):
        self.known = known
        self.unknown = unknown
        self.residual_eqns = residual_eqns


def split_by_policy(closed: ClosedJaxpr, unknowns, num_known_out: int, policy) -> PolicySplit:
    """Splits `closed`, whose inputs marked in `unknowns` are not known yet and whose first
    `num_known_out` outputs do not depend on them."""
    closed = inline_calls(closed)  # a policy sees the equations of the jit calls inside too
    j = closed.jaxpr
    unknown_vars = {v for v, u in zip(j.invars, unknowns) if u}
    producer = {}
    unknown_eqns = set()
    for eqn in j.eqns:
        if any(type(a) is not Literal and a in unknown_vars for a in eqn.invars):
            unknown_vars.update(eqn.outvars)
            unknown_eqns.add(eqn)
        else:
            for v in eqn.outvars:
                producer[v] = eqn
    known_outs, unknown_outs = j.outvars[:num_known_out], j.outvars[num_known_out:]
    assert not any(a in unknown_vars for a in known_outs if type(a) is not Literal)

    # What the unknown side reads of the known values: kept, or computed again.
    kept, again = {}, set()
    pending = [a for eqn in unknown_eqns for a in eqn.invars] + list(unknown_outs)
    while pending:
        a = pending.pop()
        if type(a) is Literal or a in unknown_vars or a in kept:
            continue
        eqn = producer.get(a)
        if eqn is None:  # an input or a constant of the function
            kept[a] = None
        elif eqn in again:
            continue
        elif not eqn.primitive.traits.effectful and not saves(
                policy, eqn.primitive, [v.aval for v in eqn.invars], eqn.params):
            again.add(eqn)
            pending.extend(eqn.invars)
        else:
            kept[a] = eqn
    order = {v: i for i, v in enumerate(j.constvars + j.invars)}
    for k, eqn in enumerate(j.eqns):
        for v in eqn.outvars:
            order[v] = len(order) + k
    residuals = sorted(kept, key=order.__getitem__)

    known_ins = [v for v, u in zip(j.invars, unknowns) if not u]
    known = dce(ClosedJaxpr(
        Jaxpr(j.constvars, known_ins, known_outs + residuals,
              [e for e in j.eqns if e not in unknown_eqns]), closed.consts))
    unknown_ins = [v for v, u in zip(j.invars, unknowns) if u]
    unknown = dce(ClosedJaxpr(
        Jaxpr([], residuals + unknown_ins, unknown_outs,
              [e for e in j.eqns if e in again or e in unknown_eqns]), []))
    return PolicySplit(known, unknown, [kept[v] for v in residuals])
