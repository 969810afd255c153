"""Forward mode: the JVP interpreter and helpers to declare JVP rules.

A JVP tracer carries a primal and a tangent and is tagged with its interpreter; any
other value (including another JVP interpreter's tracer) is a constant with a zero
tangent. Rules run with the parent interpreter current, so their own operations are
interpreted by it: nesting gives higher-order derivatives.
"""
from __future__ import annotations

from didax._src import core, dtypes
from didax._src.base_prims import add_tangents, broadcast_in_dim, instantiate
from didax._src.core import Tracer, Zero, get_aval, zero_tangent
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import eval_jaxpr


class JVPTracer(Tracer):
    __slots__ = ("aval", "primal", "tangent")  # (`aval`, the primal's, a slot: read on
    # every operation)

    def __init__(self, interp, primal, tangent):
        self._interp = interp
        self.primal = primal
        self.tangent = tangent
        self.aval = primal.aval if type(primal) is core.Array else get_aval(primal)

    def to_concrete_value(self):
        return core.concrete_value(self.primal)

    def carries_tangent(self):
        # (an integer's tangent is float0: converting it drops nothing)
        return type(self.tangent) is not Zero and dtypes.kind(self.aval.dtype) in "fc"

    def abstract_source(self):
        p = self.primal
        return p.abstract_source() if isinstance(p, Tracer) else self

    def creation_site(self):
        p = self.primal
        return p.creation_site() if isinstance(p, Tracer) else ""


class JVPInterpreter(core.Interpreter):
    def describe(self):
        return "jvp"

    def process_primitive(self, prim, args, params):
        primals = []
        tangents = []
        any_tangent = False
        any_const = False
        for x in args:
            if type(x) is JVPTracer and x._interp is self:
                primals.append(x.primal)
                t = x.tangent
                tangents.append(t)
                if type(t) is not Zero:
                    any_tangent = True
            else:
                if isinstance(x, Tracer):
                    self.check_foreign(x)
                primals.append(x)
                tangents.append(None)
                any_const = True
        ctx = core._ctx
        prev = ctx.interp
        parent = ctx.interp = self.parent
        try:
            if not any_tangent and not prim.traits.refs:  # what `prim.bind` would do
                return parent.process_primitive(prim, primals, params)
            if any_const:
                tangents = [zero_tangent(get_aval(p)) if t is None else t
                            for p, t in zip(primals, tangents)]
            rule = prim.rules.get("jvp") or prim.get_rule("jvp")
            primal_out, tangent_out = rule(primals, tangents, **params)
        finally:
            ctx.interp = prev
        if prim.multiple_results:
            return [self.pack(p, t) for p, t in zip(primal_out, tangent_out)]
        if type(tangent_out) is Zero:
            return primal_out
        return JVPTracer(self, primal_out, tangent_out)

    def pack(self, primal, tangent):
        if type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)

    def unpack(self, x):
        """(primal, tangent) of an output; constants get a symbolic zero tangent."""
        if type(x) is JVPTracer and x._interp is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer):
            self.check_foreign(x)
        return x, Zero(get_aval(x).to_tangent_aval())


def jvp_flat(fun, primals, tangents):
    """Runs `fun` on dual numbers; returns flat lists of primal and tangent outputs.

    Tangents may be `Zero`s; output tangents are `Zero` where they are known zero.
    """
    interp = core.new_level(JVPInterpreter())
    with core.transformation(interp):
        ins = [interp.pack(p, t) for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        pairs = [interp.unpack(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


# --------------------------------------------------------------------------------------
# Tangent arithmetic

# --------------------------------------------------------------------------------------
# Helpers that keep a typical primitive's JVP rule to one line


def _to_shape(t, shape):
    """A tangent contribution broadcast to the output's shape (operands of elementwise
    primitives may broadcast: size-1 dimensions or rank 0)."""
    t_shape = get_aval(t).shape
    if t_shape == shape:
        return t
    # one broadcast: operand dimensions of size 1 stretch (the ranks are equal, or t is 0-d)
    return broadcast_in_dim(t, shape, tuple(range(len(shape) - len(t_shape), len(shape))))


def defjvp(prim, *per_arg):
    """JVP from one function per argument: `fn(tangent, *primals, **params)`.

    A `None` entry marks an argument the output does not depend on differentiably.
    """
    _defjvp(prim, per_arg, pass_out=False)


def defjvp2(prim, *per_arg):
    """Like `defjvp`, but each function also receives the primal output first:
    `fn(tangent, out, *primals, **params)` (for exp, tanh, sqrt...)."""
    _defjvp(prim, per_arg, pass_out=True)


def _defjvp(prim, per_arg, pass_out: bool):
    """The JVP rule summing the contributions of the operands whose tangents are not zero,
    each broadcast to the output's shape (a loop, not a comprehension: this runs for most
    operations of every derivative)."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        total = None
        for fn, t in zip(per_arg, tangents):
            if fn is None or type(t) is Zero:
                continue
            c = fn(t, out, *primals, **params) if pass_out else fn(t, *primals, **params)
            c = _to_shape(c, get_aval(out).shape)
            total = c if total is None else add_tangents(total, c)
        if total is None:
            return out, Zero(get_aval(out).to_tangent_aval())
        return out, total

    prim.def_jvp(rule)


def defjvp_zero(prim):
    """The output does not vary with the inputs (comparisons, floor, integer ops...)."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [Zero(get_aval(o).to_tangent_aval()) for o in out]
        return out, Zero(get_aval(out).to_tangent_aval())

    prim.def_jvp(rule)


def deflinear(prim):
    """The primitive is linear in all its array arguments: its JVP is itself."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t_out = prim.bind(*[instantiate(t) for t in tangents], **params)
        return out, t_out

    prim.def_jvp(rule)
    prim.linear = True
def defbilinear(prim):
    """JVP of a product-like primitive: d prim(x, y) = prim(dx, y) + prim(x, dy)."""

    def rule(primals, tangents, **params):
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y, **params)
        t_out = Zero(get_aval(out).to_tangent_aval())
        if t_out.aval.dtype == dtypes.float0:  # integer or boolean output
            return out, t_out
        if type(tx) is not Zero:
            t_out = add_tangents(t_out, prim.bind(tx, y, **params))
        if type(ty) is not Zero:
            t_out = add_tangents(t_out, prim.bind(x, ty, **params))
        return out, t_out

    prim.def_jvp(rule)


def jvp_jaxpr(closed, nonzeros, instantiate_out: bool = False):
    """A jaxpr for the JVP of `closed`: it takes the primals, then the tangents of the inputs
    marked in `nonzeros`, and returns the primal outputs, then the tangents that are not
    known to be zero (all of them with `instantiate_out`). Returns (jaxpr, out_nonzeros)."""
    avals = closed.in_avals
    n = len(avals)
    t_avals = [a.to_tangent_aval() for a, nz in zip(avals, nonzeros) if nz]
    out_nonzeros = []

    def fun(*args):
        primals, given = args[:n], iter(args[n:])
        # A float0 tangent (of an integer or boolean input) carries nothing: it is a symbolic
        # zero inside, so rules never see float0 operands.
        tangents = [t if nz and dtypes.is_inexact(a.dtype) else Zero(a.to_tangent_aval())
                    for a, nz in zip(avals, nonzeros)
                    for t in [next(given) if nz else None]]
        p_out, t_out = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                primals, tangents)
        if instantiate_out:
            t_out = [instantiate(t) for t in t_out]
        out_nonzeros[:] = [type(t) is not Zero for t in t_out]
        return list(p_out) + [t for t in t_out if type(t) is not Zero]

    jaxpr, _ = trace_to_jaxpr(fun, list(avals) + t_avals)
    return jaxpr, out_nonzeros
