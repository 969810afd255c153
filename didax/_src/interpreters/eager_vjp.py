"""Eager reverse mode with each primitive's linearization built once per signature.

`vjp` evaluated with nothing staged around it runs the usual JVP over partial evaluation,
whose cost is dispatch: every user primitive becomes its primal, the coefficients its JVP
rule evaluates, the staged tangent equations and, on the way back, their transposes, each a
trip through the interpreter stack around a small NumPy call. Here that work is done once per
*signature* (primitive, operand types, parameters, which operands carry tangents) with the
same transformations, on a one-equation jaxpr: `jvp_jaxpr`, then `partial_eval_jaxpr` (the
known part computes the primal outputs and the residuals, the unknown part is linear in the
tangents), then `transpose_jaxpr`; the known part and the transpose are compiled by jit's
NumPy tier. Each later application with that signature calls the compiled known part on the
operands' NumPy values and stages one `linearized` equation holding the step and its
residuals; the backward pass transposes it by calling the compiled transpose.

Nothing about the user's program is cached: it runs, with its Python side effects, on every
call, and the interpreters see every primitive it binds. A signature is built at its second
sighting (a function differentiated once pays nothing for it), and a primitive whose rules
need more than types (control flow, calls, effects, collectives, values that must be
concrete) keeps the general path, as does every application with an operand that is not a
concrete array.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.base_prims import instantiate
from didax._src.config import config
from didax._src.core import Array, Zero
from didax._src.interpreters.jvp import JVPInterpreter, JVPTracer, deflinear, jvp_jaxpr
from didax._src.interpreters.partial_eval import partial_eval_jaxpr
from didax._src.interpreters.staging import StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import transpose_jaxpr
from didax._src.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Var, _var_ids, eval_jaxpr
from didax._src.jit.compiler import compile_jaxpr

_ctx = core._ctx
_eval = core.eval_interpreter
_new = object.__new__


class LinearizedStep:
    """One signature's linearization: `forward(*operands) -> (*outputs, *residuals)` and
    `backward(*residuals, *output cotangents) -> operand cotangents`, both compiled, with the
    jaxprs they came from (the backward pass under a transformation evaluates `transposed`)."""

    __slots__ = ("primitive", "forward", "backward", "n_out", "out_avals", "tangent_out",
                 "lin_out_avals", "res_avals", "ct_in_avals", "linear", "transposed",
                 "forwarded", "staged")

    def __repr__(self):
        return f"LinearizedStep({self.primitive})"


_UNCACHEABLE = object()  # a signature kept on the general path
_steps: dict = {}  # signature -> LinearizedStep or _UNCACHEABLE
_sightings: dict = {}  # signature -> how often seen before it was built
_STEPS_LIMIT = 4096


@config.on_change
def _clear_steps(name, value):
    _steps.clear()
    _sightings.clear()


def _keeps_general_path(prim, params) -> bool:
    """Primitives whose rules need more than operand types, or that must not be re-run."""
    if (prim.effectful or prim.axis_name_param or prim.types_depend_on_context
            or prim.call_jaxpr_param or "partial_eval" in prim.rules
            or "jvp" not in prim.rules):
        return True
    return any(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in params.values())


def _step_for(key, prim, avals, params, mask):
    """The step of a signature not yet built: None until its second sighting."""
    count = _sightings.get(key, 0) + 1
    if (count < 2 and config.didax_eager_vjp_steps == "second"
            and not _keeps_general_path(prim, params)):
        if len(_sightings) >= _STEPS_LIMIT:
            _sightings.clear()
        _sightings[key] = count
        return None
    _sightings.pop(key, None)
    step = _UNCACHEABLE
    if not _keeps_general_path(prim, params):
        prev, prev_phase = _ctx.interp, _ctx.phase
        _ctx.interp, _ctx.phase = _eval, None  # built apart from the transformations running
        try:
            step = _build(prim, avals, params, mask)
        except Exception:  # noqa: BLE001 - rules that need concrete values, missing rules...
            step = _UNCACHEABLE  # ... the general path runs (and raises what it raises)
        finally:
            _ctx.interp, _ctx.phase = prev, prev_phase
    if len(_steps) >= _STEPS_LIMIT:
        _steps.clear()
    _steps[key] = step
    return step


def _build(prim, avals, params, mask):
    n = len(avals)
    nonzeros = [bool(mask >> i & 1) for i in range(n)]
    k = sum(nonzeros)

    def apply(*xs):
        out = prim.bind(*xs, **params)
        return list(out) if prim.multiple_results else [out]

    closed, _ = trace_to_jaxpr(apply, avals)
    n_out = len(closed.jaxpr.outvars)
    jvp, out_nonzeros = jvp_jaxpr(closed, nonzeros)
    known, unknown, out_unknowns, n_res = partial_eval_jaxpr(jvp, [False] * n + [True] * k)
    if any(out_unknowns[:n_out]) or not all(out_unknowns[n_out:]):
        return _UNCACHEABLE  # (a tangent that does not depend on the operands' tangents)
    transposed = transpose_jaxpr(unknown, [False] * n_res + [True] * k)
    step = LinearizedStep()
    step.primitive = prim
    step.n_out = n_out
    step.out_avals = tuple(closed.jaxpr.out_avals)
    lin_out_avals = tuple(unknown.jaxpr.out_avals)
    tangent_out = []
    j = 0
    for nz in out_nonzeros:
        tangent_out.append(j if nz else None)
        j += nz
    step.tangent_out = tuple(tangent_out)
    step.lin_out_avals = lin_out_avals
    step.staged = linearized_p if len(lin_out_avals) == 1 else linearized_n_p
    step.res_avals = tuple(known.jaxpr.out_avals[n_out:])
    step.ct_in_avals = tuple(transposed.jaxpr.out_avals)
    step.linear = unknown
    step.transposed = transposed
    # A linear part that only forwards operand tangents (x + c, a tangent passed through)
    # stages nothing: the outputs' tangents are those operands' tangents.
    lin = unknown.jaxpr
    tangent_vars = lin.invars[n_res:]
    step.forwarded = None
    if not lin.eqns and all(v in tangent_vars for v in lin.outvars):
        step.forwarded = tuple(tangent_vars.index(v) for v in lin.outvars)
    step.forward = _returning_arrays(compile_jaxpr(known, f"{prim.name}_forward").run,
                                     [n_out + i for i, a in enumerate(step.res_avals)
                                      if not a.shape])
    step.backward = compile_jaxpr(transposed, f"{prim.name}_backward").run
    return step


def _returning_arrays(run, zero_d):
    """`run`, with the 0-d residuals it may compute as NumPy scalars made arrays: the
    backward code, like all generated code, is handed arrays."""
    if not zero_d:
        return run

    def forward(*vals):
        outs = list(run(*vals))
        for i in zero_d:
            if type(outs[i]) is not np.ndarray:
                outs[i] = np.asarray(outs[i])
        return outs

    return forward


_wrap = Array.from_numpy


class EagerVJPInterpreter(JVPInterpreter):
    """The JVP interpreter of an eager `vjp`: its parent is a partial evaluator over
    evaluation. Applications of a built signature take the compiled step."""

    def process_primitive(self, prim, args, params):
        general = JVPInterpreter.process_primitive
        pe = self.parent
        vals = []
        tans = []
        tvars = []
        key = [prim, 0]
        mask = 0
        bit = 1
        for x in args:
            tx = type(x)
            if tx is JVPTracer and x._interp is self:
                p = x.primal
                if type(p) is not Array:
                    return general(self, prim, args, params)
                t = x.tangent
                if type(t) is not Zero:
                    if type(t) is not StagingTracer or t._interp is not pe:
                        return general(self, prim, args, params)
                    mask |= bit
                    tans.append(t)
                    tvars.append(t._var)
            elif tx is Array:
                p = x
            else:
                return general(self, prim, args, params)
            vals.append(p._value)
            try:
                key.append(p._aval)
            except AttributeError:
                key.append(p.aval)
            bit <<= 1
        if not mask:
            return general(self, prim, args, params)
        key[1] = mask
        if params:
            key.extend(params.items())
        key = tuple(key)
        try:
            step = _steps.get(key)
        except TypeError:  # an unhashable parameter
            return general(self, prim, args, params)
        if step is None:
            step = _step_for(key, prim, key[2:2 + len(args)], params, mask)
            if step is None:
                return general(self, prim, args, params)
        if step is _UNCACHEABLE:
            return general(self, prim, args, params)
        outs = step.forward(*vals)
        n_out = step.n_out
        forwarded = step.forwarded
        eqn = None
        if forwarded is None:  # one `linearized` equation (its outputs are set below)
            eqn = _new(JaxprEqn)
            eqn.primitive = step.staged
            eqn.invars = tvars
            eqn.params = {"step": step, "residuals": outs[n_out:]}
            eqn.source_info = None
            eqn.phase = _ctx.phase
            pe.eqns.append(eqn)
        if n_out == 1 and not prim.multiple_results:
            aval = step.out_avals[0]
            primal = _wrap(outs[0], aval)
            if step.tangent_out[0] is None:
                return primal
            if eqn is None:
                tangent = tans[forwarded[0]]
            else:
                tangent = _staged(pe, step.lin_out_avals[0])
                eqn.outvars = [tangent._var]
            out = _new(JVPTracer)
            out._interp = self
            out.primal = primal
            out.tangent = tangent
            out.aval = aval
            return out
        if eqn is None:
            lin_outs = [tans[i] for i in forwarded]
        else:
            lin_outs = [_staged(pe, a) for a in step.lin_out_avals]
            eqn.outvars = [t._var for t in lin_outs]
        results = []
        for o, a, j in zip(outs[:n_out], step.out_avals, step.tangent_out):
            primal = _wrap(o, a)
            results.append(primal if j is None else JVPTracer(self, primal, lin_outs[j]))
        return results


def _staged(pe, aval):
    """A new variable of `pe`'s jaxpr and its tracer."""
    v = _new(Var)
    v.aval = aval
    v.id = next(_var_ids)
    t = _new(StagingTracer)
    t._interp = pe
    t.aval = aval
    t._var = v
    t._src = None
    return t




# --------------------------------------------------------------------------------------
# The staged equation: a step's linear part, closed over its residuals. `linearized` has
# one tangent output (most primitives), `linearized_n` several.


linearized_p = core.primitive("linearized")
linearized_n_p = core.primitive("linearized_n", multiple_results=True)


def _residual_arrays(step, residuals):
    return [_wrap(r if type(r) is np.ndarray else np.asarray(r), a)
            for r, a in zip(residuals, step.res_avals)]


def _linearized_impl(*tangents, step, residuals):
    """The tangent map evaluated forwards (the backward pass never needs it)."""
    prev = _ctx.interp
    _ctx.interp = _eval
    try:
        lin = step.linear
        outs = eval_jaxpr(lin.jaxpr, lin.consts, *_residual_arrays(step, residuals),
                          *[Array.from_numpy(t, a) for t, a in
                            zip(tangents, lin.jaxpr.in_avals[len(residuals):])])
    finally:
        _ctx.interp = prev
    return [o._value for o in outs]


def _transposed_elsewhere(step, residuals, cts):
    """The transpose under a transformation (jit or vmap of a vjp function), or of a
    cotangent that is not an Array: the transposed equations are bound where they run."""
    t = step.transposed
    return eval_jaxpr(t.jaxpr, t.consts, *_residual_arrays(step, residuals),
                      *[instantiate(ct) for ct in cts])


def _cotangents(step, outs):
    avals = step.ct_in_avals
    if len(avals) == 1:
        return [_wrap(outs[0], avals[0])]
    return [_wrap(o, a) for o, a in zip(outs, avals)]


def _linearized_transpose(ct, *undefined, step, residuals):
    if type(ct) is Array and _ctx.interp is _eval:
        v = ct._value
        dtype = step.lin_out_avals[0].dtype
        return _cotangents(step, step.backward(*residuals, v if v.dtype is dtype
                                               else v.astype(dtype)))
    return _transposed_elsewhere(step, residuals, [ct])


def _linearized_n_transpose(cts, *undefined, step, residuals):
    if _ctx.interp is _eval:
        vals = []
        for ct, a in zip(cts, step.lin_out_avals):
            tc = type(ct)
            if tc is Array:
                v = ct._value
                vals.append(v if v.dtype is a.dtype else v.astype(a.dtype))
            elif tc is Zero:
                vals.append(np.zeros(a.shape, a.dtype))
            else:
                break
        else:
            return _cotangents(step, step.backward(*residuals, *vals))
    return _transposed_elsewhere(step, residuals, cts)


linearized_p.def_impl(lambda *ts, step, residuals: _linearized_impl(
    *ts, step=step, residuals=residuals)[0])
linearized_p.def_abstract_eval(lambda *avals, step, residuals: step.lin_out_avals[0])
linearized_p.def_transpose(_linearized_transpose)
linearized_n_p.def_impl(_linearized_impl)
linearized_n_p.def_abstract_eval(lambda *avals, step, residuals: step.lin_out_avals)
linearized_n_p.def_transpose(_linearized_n_transpose)
for _p in (linearized_p, linearized_n_p):
    _p.pp_hidden = {"residuals": core.PP_ALWAYS_HIDE}
    deflinear(_p)
    _p.mark_absent("batch", "the equation exists only inside an eager vjp's linear jaxpr, "
                            "which is transposed, never batched")
    _p.mark_absent("codegen", "the equation exists only inside an eager vjp's linear jaxpr, "
                              "which is never compiled")
