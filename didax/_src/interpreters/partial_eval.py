"""Partial evaluation: compute what is known now, stage what is not.

The interpreter stages an equation only when one of its inputs is one of its own
tracers (an *unknown*); every other application is handed to the parent interpreter
and so happens now. Known values that staged equations use become the jaxpr's
constants: the residuals. Run under JVP with unknown tangents, this splits a JVP into
the primal computation (done) and a linear jaxpr from input to output tangents: that
is `linearize`, and reverse mode transposes the linear jaxpr.
"""
from __future__ import annotations

from didax._src import core
from didax._src.core import Zero, get_aval
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer
from didax._src.ir import eval_jaxpr, hoist_consts

_ctx = core._ctx
_eval = core.eval_interpreter


class PartialEvalInterpreter(StagingInterpreter):
    record_source = False

    def describe(self):
        return "partial evaluation (linearize/vjp/grad)"

    def process_primitive(self, prim, args, params):
        for x in args:
            if type(x) is StagingTracer and x._interp is self:
                rule = prim.rules.get("partial_eval")
                if rule is not None:  # control flow splits itself into known and unknown
                    return rule(self, args, params)
                return StagingInterpreter.process_primitive(self, prim, args, params)
        parent = self.parent
        if parent is _eval:  # known: evaluated now (the impl's own binds come back here)
            return _eval.process_primitive(prim, args, params)
        ctx = _ctx
        prev = ctx.interp
        ctx.interp = parent
        try:  # what `prim.bind` would do with the parent current, without re-packing
            return parent.process_primitive(prim, args, params)
        finally:
            ctx.interp = prev


class LinearizeResult:
    """The primal outputs of a function and the linear jaxpr of its JVP.

    `jaxpr` maps the tangents of `tangent_avals` (the differentiable inputs) to the
    output tangents; `zero_outputs[i]` is True where output i's tangent is known zero.
    """

    __slots__ = ("primals_out", "jaxpr", "in_avals", "zero_outputs", "out_avals")

    def __init__(self, primals_out, jaxpr, in_avals, zero_outputs, out_avals):
        self.primals_out = primals_out
        self.jaxpr = jaxpr
        self.in_avals = in_avals
        self.zero_outputs = zero_outputs
        self.out_avals = out_avals


def linearize_flat(fun, primals, differentiable,
                   jvp_interpreter=jvp_interp.JVPInterpreter) -> LinearizeResult:
    """Runs `fun` under JVP with staged tangents for the `differentiable` inputs.

    Returns the primal outputs (computed now) and the linear jaxpr of the tangents.
    `jvp_interpreter` is the JVP interpreter's class (eager vjp's takes compiled steps).
    """
    pe = core.new_level(PartialEvalInterpreter())
    with core.transformation(pe):
        in_avals = []
        tangents = []
        for p, d in zip(primals, differentiable):
            aval = p.aval if type(p) is core.Array else get_aval(p)
            if aval.dtype.kind not in "fc":
                aval = aval.to_tangent_aval()
            if d:
                tangents.append(pe.new_arg(aval))
                in_avals.append(aval)
            else:
                tangents.append(Zero(aval))
        jvp = core.new_level(jvp_interpreter())
        with core.transformation(jvp):
            ins = [jvp.pack(p, t) for p, t in zip(primals, tangents)]
            outs = fun(*ins)
            pairs = [jvp.unpack(o) for o in outs]
    primals_out = [p for p, _ in pairs]
    zero_outputs = [type(t) is Zero for _, t in pairs]
    out_avals = [get_aval(p).to_tangent_aval() for p in primals_out]
    staged = [t for _, t in pairs if type(t) is not Zero]
    closed = pe.build(staged)
    return LinearizeResult(primals_out, closed, in_avals, zero_outputs, out_avals)


def partial_eval_jaxpr(closed, unknowns, instantiate=False):
    """Splits `closed` into what can be computed from its known inputs and what needs the
    unknown ones.

    Returns (known, unknown, out_unknowns, num_res): `known` takes the known inputs and
    returns the known outputs, then `num_res` residuals; `unknown` takes the residuals,
    then the unknown inputs, and returns the unknown outputs (also those marked in
    `instantiate`, a bool or one bool per output). Both halves are traced: a staging
    interpreter records the known part and a partial evaluator under it the unknown part,
    so residuals are exactly the known values the unknown part reads.
    """
    avals = closed.in_avals
    known_interp = core.new_level(StagingInterpreter())
    with core.transformation(known_interp):
        args = [None if u else known_interp.new_arg(a) for a, u in zip(avals, unknowns)]
        pe = core.new_level(PartialEvalInterpreter())
        with core.transformation(pe):
            for i, (a, u) in enumerate(zip(avals, unknowns)):
                if u:
                    args[i] = pe.new_arg(a)
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        force = (instantiate if isinstance(instantiate, (list, tuple))
                 else [instantiate] * len(outs))
        out_unknowns = [f or (type(o) is StagingTracer and o._interp is pe)
                        for o, f in zip(outs, force)]
        unknown_part = pe.build([o for o, u in zip(outs, out_unknowns) if u])
        residuals = unknown_part.consts
        known_part = known_interp.build([o for o, u in zip(outs, out_unknowns) if not u]
                                        + list(residuals))
    unknown, _ = hoist_consts(unknown_part)  # residuals become its leading inputs
    return known_part, unknown, out_unknowns, len(residuals)
