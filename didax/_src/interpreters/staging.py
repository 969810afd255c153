"""Staging: an interpreter that records primitives into a typed jaxpr.

Every primitive bound while it is current becomes an equation, whether or not its
inputs are traced (as with JAX's omnistaging). Values from outside (arrays, tracers
of enclosing interpreters) are hoisted as constvars; scalars become literals.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.core import ShapedArray, Tracer, _ctx, get_aval
from didax._src.errors import format_source_info, user_source_info
from didax._src.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var


class StagingTracer(Tracer):
    __slots__ = ("aval", "_var", "_src")  # (`aval` a slot: read on every operation)

    def __init__(self, interp, aval: ShapedArray, var: Var, src=None):
        self._interp = interp
        self.aval = aval
        self._var = var
        self._src = src

    def creation_site(self):
        return format_source_info(self._src) if self._src else "an argument of the traced function"

    def dependence(self) -> str:
        """Where the value comes from, for concretization errors: an argument of the traced
        function or a value computed from its inputs, named when jit named them."""
        interp = self._interp
        if interp.arg_name is None:
            return ""
        if self._src is None and self._var in interp.invars:
            return (f"It is argument `{interp.arg_name(interp.invars.index(self._var))}` of "
                    f"{interp.traced_fun}")
        return f"It is computed from the arguments of {interp.traced_fun}"


class StagingInterpreter(core.Interpreter):
    def __init__(self):
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list = []
        self._const_ids: dict[int, Var] = {}

    arg_name = None  # flat argument index -> the user's name for it (set by jit)
    traced_fun = ""  # the function being traced, as `errors.function_site` gives it
    traced_by = ""  # the transformation tracing it, for messages ("jit")

    def describe(self):
        return "staging (make_jaxpr/jit)"

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, aval, var)

    def atom(self, x):
        """The IR atom for a value: our tracer's variable, a literal, or a constvar."""
        if type(x) is StagingTracer and x._interp is self:
            return x._var
        if isinstance(x, Tracer):
            self.check_foreign(x)
        else:
            aval = get_aval(x)
            if aval.shape == () and type(aval) is ShapedArray:  # (never a reference)
                value = x._value if type(x) is core.Array else core.concrete_value(x)
                return Literal(np.asarray(value, aval.dtype)[()], aval)
        var = self._const_ids.get(id(x))
        if var is None:
            aval = get_aval(x)
            var = Var(aval)
            self._const_ids[id(x)] = var
            self.constvars.append(var)
            if not isinstance(x, (core.Array, Tracer)) and type(aval) is ShapedArray:
                x = core.Array(np.asarray(x, aval.dtype), aval.weak_type)
            self.consts.append(x)
        return var

    record_source = True  # partial evaluation's linear jaxprs are internal: it skips this

    def process_primitive(self, prim, args, params):
        if _ctx.compile_time_eval and not any(isinstance(x, Tracer) for x in args):
            return core.eval_interpreter.process_primitive(prim, args, params)
        in_atoms = []
        in_avals = []
        const_ids = self._const_ids
        for x in args:
            if type(x) is StagingTracer and x._interp is self:
                v = x._var
            else:  # (a constant seen before is a constvar already: `atom` would find it)
                v = const_ids.get(id(x)) or self.atom(x)
            in_atoms.append(v)
            in_avals.append(v.aval)
        out_aval = core.abstract_eval(prim, in_avals, params)
        src = (_ctx.source_info or user_source_info(2)) if self.record_source else None
        if prim.multiple_results:
            outvars = [Var(a) for a in out_aval]
            self.eqns.append(JaxprEqn.owning(prim, in_atoms, outvars, params, src,
                                             core._ctx.phase))
            return [StagingTracer(self, v.aval, v, src) for v in outvars]
        outvar = Var(out_aval)
        self.eqns.append(JaxprEqn.owning(prim, in_atoms, [outvar], params, src, core._ctx.phase))
        return StagingTracer(self, out_aval, outvar, src)

    def build(self, outs) -> ClosedJaxpr:
        outvars = [self.atom(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, self.consts)


class _CompileTimeEval:
    """`ensure_compile_time_eval`: while on (in this thread only), operations on concrete
    values are evaluated now, even while staging (as if outside jit), not recorded."""

    def __enter__(self):
        self.prev, _ctx.compile_time_eval = _ctx.compile_time_eval, True
        return self

    def __exit__(self, *exc):
        _ctx.compile_time_eval = self.prev


def ensure_compile_time_eval():
    return _CompileTimeEval()


def trace_to_jaxpr(fun, in_avals) -> tuple[ClosedJaxpr, list]:
    """Stages `fun(*tracers) -> list of outputs` into a closed jaxpr.

    Returns the jaxpr and the raw outputs (useful for their avals).
    """
    interp = core.new_level(StagingInterpreter())
    with core.transformation(interp):
        args = [interp.new_arg(a) for a in in_avals]
        outs = list(fun(*args))
    return interp.build(outs), outs
