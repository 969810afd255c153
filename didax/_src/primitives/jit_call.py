"""The `jit` call primitive: a closed jaxpr applied to operands, run by compiled code.

Every interpreter treats a call as a primitive whose parameter is a jaxpr, and every rule
transforms that jaxpr and emits a call again, so `grad(jit(f))`, `vmap(jit(f))` and
`jit(grad(f))` all end in compiled code: the JVP of a call is a call of the JVP'd jaxpr;
partial evaluation splits it into a known call (run now) and an unknown call (staged);
the transpose is a call of the transposed jaxpr; under vmap, a call of the batched jaxpr.
Transformed jaxprs are memoised per jaxpr, so an eager `grad(jit(f))` traces each
derivative once, not on every call.
"""
from __future__ import annotations

from didax._src import core
from didax._src.base_prims import instantiate
from didax._src.compiler.native.tier import tiered_executable
from didax._src.core import Zero
from didax._src.dtypes import float0
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.partial_eval import partial_eval_jaxpr
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer
from didax._src.interpreters.transpose import is_undefined, transpose_jaxpr
from didax._src.ir import derived, eval_jaxpr
from didax._src.state import discharge as state_discharge

jit_p = core.primitive("jit", multiple_results=True)
jit_p.pp_hidden = {"donated_invars": lambda d: not any(d)}
jit_p.pp_first = ("name",)  # JAX prints `name=` first, then the other parameters sorted
jit_p.pp_same_names = "jaxpr"  # inner variables take the names of the operands bound to them
jit_p.def_traits(call_jaxpr_param="jaxpr")




def bind_call(args, *, jaxpr, name, donated_invars=None, stage_in=None):
    params = dict(jaxpr=jaxpr, name=name,
                  donated_invars=donated_invars or (False,) * len(args))
    if stage_in is not None:
        return StagingInterpreter.process_primitive(stage_in, jit_p, list(args), params)
    return jit_p.bind(*args, **params)


def _call_impl(*vals, jaxpr, name, donated_invars):
    if any(type(v) is core.Token for v in vals):  # (compiled code holds its buffer)
        vals = [core.abstract_token.buffer if type(v) is core.Token else v for v in vals]
    d = state_discharge.discharge(jaxpr)  # (references: read before, written after)
    if d is not None:
        return state_discharge.run(d, vals, tiered_executable(d.jaxpr, name))
    return tiered_executable(jaxpr, name)(*vals)


def _call_aval(*avals, jaxpr, name, donated_invars):
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or any(a.shape != e.shape or a.dtype != e.dtype
                                          for a, e in zip(avals, expected)):
        raise TypeError(
            f"jit-compiled function {name} expects "
            f"({', '.join(a.str_short() for a in expected)}) but was applied to "
            f"({', '.join(a.str_short() for a in avals)})")
    return jaxpr.out_avals


jit_p.def_impl(_call_impl)
jit_p.def_abstract_eval(_call_aval)


def _call_jvp(primals, tangents, *, jaxpr, name, donated_invars):
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    new, out_nz = derived(jaxpr, ("jvp", nonzeros),
                            lambda: jvp_interp.jvp_jaxpr(jaxpr, list(nonzeros)))
    outs = bind_call(list(primals) + [t for t in tangents if type(t) is not Zero],
                     jaxpr=new, name=name)
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    t_out = [next(it) if nz else Zero(a.to_tangent_aval())
             for a, nz in zip(jaxpr.out_avals, out_nz)]
    return outs[:n], t_out


jit_p.def_jvp(_call_jvp)


def _call_partial_eval(self, args, params):
    jaxpr, name = params["jaxpr"], params["name"]
    unknowns = tuple(type(x) is StagingTracer and x._interp is self for x in args)
    known, unknown, out_u, nres = derived(jaxpr, ("pe", unknowns),
                                            lambda: partial_eval_jaxpr(jaxpr, list(unknowns)))
    with core.interpreter_context(self.parent):
        k_outs = bind_call([x for x, u in zip(args, unknowns) if not u], jaxpr=known, name=name)
    num_known = len(k_outs) - nres
    residuals = k_outs[num_known:]
    u_outs = bind_call(list(residuals) + [x for x, u in zip(args, unknowns) if u],
                       jaxpr=unknown, name=name, stage_in=self)
    k_it, u_it = iter(k_outs[:num_known]), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_u]


jit_p.def_rule("partial_eval", _call_partial_eval)


def _call_transpose(cts, *args, jaxpr, name, donated_invars):
    linear = tuple(is_undefined(x) for x in args)
    new = derived(jaxpr, ("transpose", linear), lambda: transpose_jaxpr(jaxpr, list(linear)))
    cts = [instantiate(c) for c in cts]
    outs = bind_call([x for x in args if not is_undefined(x)] + cts, jaxpr=new, name=name)
    return call_cotangents(outs, args, linear)


def call_cotangents(outs, args, linear):
    """The cotangents a call's transpose gives its operands, one per linear operand in
    `outs`; an integer operand's (float0) is a symbolic zero again, as rules expect."""
    outs = iter(outs)
    return [(None if x.aval.dtype == float0 else ct) if lin else None
            for x, lin in zip(args, linear) for ct in [next(outs) if lin else None]]


jit_p.def_transpose(_call_transpose)


def _call_batch(size, vals, dims, *, jaxpr, name, donated_invars):
    dims = tuple(dims)
    key = ("batch", size, dims, batching.rule_axis_name())  # the name its collectives meet
    new, out_batched = derived(jaxpr, key,
                                 lambda: batching.batch_jaxpr_outs(jaxpr, size, list(dims)))
    outs = bind_call(vals, jaxpr=new, name=name)
    return outs, [0 if b else None for b in out_batched]


jit_p.def_batch(_call_batch)



# closed_call: a closed jaxpr applied to operands, evaluated rather than compiled on its own
# (JAX's `core.closed_call_p`; libraries bind it and walk jaxprs holding it). Its derivative,
# transpose and batched form are those of the same jaxpr called by jit.
closed_call_p = core.primitive("closed_call", multiple_results=True)
closed_call_p.call_primitive = True
closed_call_p.def_traits(call_jaxpr_param="call_jaxpr")


def _as_jit_rule(rule):
    def adapted(*args, call_jaxpr, **params):
        return rule(*args, jaxpr=call_jaxpr, name="closed_call",
                    donated_invars=(False,) * len(call_jaxpr.in_avals))
    return adapted


closed_call_p.def_impl(lambda *vals, call_jaxpr: [
    core.concrete_value(x) for x in eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts,
                                               *map(core.Array, vals))])
closed_call_p.def_abstract_eval(lambda *avals, call_jaxpr: list(call_jaxpr.out_avals))
closed_call_p.def_jvp(_as_jit_rule(_call_jvp))
closed_call_p.def_transpose(_as_jit_rule(_call_transpose))
closed_call_p.def_batch(_as_jit_rule(_call_batch))
