"""`jax.interpreters.partial_eval`'s entry points for libraries: trace a function with some
inputs known (values) and others unknown (types), learning which outputs are known (flax
checks its scan's broadcast variables and its lazy initialisation this way)."""
from __future__ import annotations

from didax._src import core
from didax._src.core import ShapedArray, get_aval
from didax._src.interpreters.partial_eval import PartialEvalInterpreter
from didax._src.interpreters.staging import StagingTracer, trace_to_jaxpr

__all__ = ["PartialVal", "trace_to_jaxpr_nounits", "trace_to_jaxpr_dynamic"]


class PartialVal(tuple):
    """`(aval, None)` for an unknown value, `(None, value)` for a known one."""

    def __new__(cls, xs):
        pv, const = xs
        if pv is not None and not isinstance(pv, ShapedArray):
            raise TypeError(f"PartialVal: the first entry must be an abstract value or None, "
                            f"got {pv!r}")
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const):
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval):
        return PartialVal((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        return get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Runs `fun` (a `WrappedFun` or callable on flat arguments) with the known inputs'
    values and the unknown inputs traced: returns `(jaxpr, out_pvals, consts)`, the jaxpr
    computing the unknown outputs from the unknown inputs (its constants, the known values it
    reads, in `consts`), and each output's PartialVal. `instantiate` (a bool or one per
    output) makes known outputs unknown."""
    call = getattr(fun, "call_wrapped", fun)
    pe = core.new_level(PartialEvalInterpreter())
    with core.transformation(pe):
        args = [pe.new_arg(pv[0]) if pv[0] is not None else pv[1] for pv in pvals]
        outs = list(call(*args))
        force = (instantiate if isinstance(instantiate, (list, tuple))
                 else [instantiate] * len(outs))
        unknown = [(type(o) is StagingTracer and o._interp is pe) or bool(f)
                   for o, f in zip(outs, force)]
        closed = pe.build([o for o, u in zip(outs, unknown) if u])
    out_pvals = [PartialVal.unknown(get_aval(o))
                 if u else PartialVal.known(o) for o, u in zip(outs, unknown)]
    return closed.jaxpr, out_pvals, list(closed.consts)


def trace_to_jaxpr_dynamic(fun, in_avals, *args, **kwargs):
    """Traces `fun` (a `WrappedFun` or callable on flat arguments) at the types `in_avals`:
    returns `(jaxpr, out_avals, consts)`."""
    call = getattr(fun, "call_wrapped", fun)
    closed, _ = trace_to_jaxpr(lambda *a: list(call(*a)), list(in_avals))
    return closed.jaxpr, closed.jaxpr.out_avals, list(closed.consts)
