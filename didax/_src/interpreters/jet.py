"""Taylor mode: the jet interpreter, behind `jax.experimental.jet.jet`.

A jet tracer carries a primal `x0` and the Taylor coefficients `[x1, ..., xK]` of a curve
`x(t) = x0 + x1 t + ... + xK t^K` through it (unscaled: `xk` is the k-th derivative over
k!). Each primitive's rule maps its operands' truncated series to its result's, from the
primitive's series identities, so one pass gives every order at once (repeated `jvp` takes
2^K passes). Values of other interpreters are constants: their series are zero (`None`).

The interpreter is given its rules: one table, primitive -> entry (`jet` passes the table
of `didax._src.transforms.jet_rules`, whose rules are written with lax's primitives, a
layer above this one). An entry is a rule run with the parent interpreter current (so its
operations compose with jit, vmap and differentiation around it), a `Composite` (the
primitive rewritten in primitives with rules, run by this interpreter), or a `Call` (a
primitive applying a jaxpr: the jaxpr is jet-transformed and applied again, so
`jet(jit(f))` ends in compiled code).
"""
from __future__ import annotations

from didax._src import core, dtypes
from didax._src.core import ArrayBase, Tracer, get_aval
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import derived, eval_jaxpr


class Composite:
    """A table entry for a primitive rewritten in primitives that have rules: the jet
    interpreter runs `fn(*operands, **params)` itself."""

    def __init__(self, fn):
        self.fn = fn


class Call:
    """A table entry for a primitive applying the jaxpr in its param `param`: the jet
    interpreter transforms the jaxpr and applies it with `rebind(prim, args, jaxpr,
    params)`."""

    def __init__(self, param, rebind):
        self.param = param
        self.rebind = rebind


class JetTracer(Tracer):
    __slots__ = ("aval", "primal", "terms")  # terms: [x1, ..., xK], never all absent

    def __init__(self, interp, primal, terms):
        self._interp = interp
        self.primal = primal
        self.terms = terms
        self.aval = get_aval(primal)

    def to_concrete_value(self):
        return core.concrete_value(self.primal)

    def carries_tangent(self):
        return dtypes.kind(self.aval.dtype) in "fc"

    def abstract_source(self):
        p = self.primal
        return p.abstract_source() if isinstance(p, Tracer) else self

    def creation_site(self):
        p = self.primal
        return p.creation_site() if isinstance(p, Tracer) else ""


def no_rule_error(prim) -> NotImplementedError:
    return NotImplementedError(
        f"jet has no rule for the primitive '{prim.name}': Taylor-mode differentiation "
        f"(jax.experimental.jet) of a function applying '{prim.name}' to a value with a "
        "series is not implemented (as in JAX, whose jet has no rule for it either).\n"
        "What to do: compute these derivatives with nested `jax.jvp` (or jacfwd), or write "
        "the operation with primitives jet supports (for control flow: `jnp.where` for a "
        "`cond`, a Python loop for a `scan` or `while_loop` of known length).")


class JetInterpreter(core.Interpreter):
    def __init__(self, order: int, rules: dict):
        self.order = order
        self.rules = rules  # primitive -> rule, Composite or Call

    def describe(self):
        return "jet"

    def process_primitive(self, prim, args, params):
        primals = []
        series = []
        any_series = False
        for x in args:
            if type(x) is JetTracer and x._interp is self:
                primals.append(x.primal)
                series.append(x.terms)
                any_series = True
            else:
                if isinstance(x, Tracer):
                    self.check_foreign(x)
                primals.append(x if isinstance(x, ArrayBase) else core.asarray_value(x))
                series.append(None)
        entry = self.rules.get(prim)
        if any_series and type(entry) is Composite:  # rewritten: this interpreter runs it
            return entry.fn(*args, **params)
        ctx = core._ctx
        prev = ctx.interp
        ctx.interp = self.parent
        try:
            if not any_series:
                return self.parent.process_primitive(prim, primals, params)
            if entry is None:
                raise no_rule_error(prim)
            if type(entry) is Call:
                out, out_series = self._call(entry, prim, primals, series, params)
            else:
                out, out_series = entry(primals, series, **params)
        finally:
            ctx.interp = prev
        if prim.multiple_results:
            return [self.pack(o, s) for o, s in zip(out, out_series)]
        return self.pack(out, out_series)

    def _call(self, entry, prim, primals, series, params):
        """A primitive applying a jaxpr: applies the jaxpr's jet to primals and series."""
        closed = params[entry.param]
        nonzeros = tuple(s is not None for s in series)
        k = self.order
        new, out_nz = derived(closed, ("jet", k, nonzeros),
                              lambda: jet_jaxpr(closed, nonzeros, k, self.rules))
        args = list(primals) + [t for s in series if s is not None for t in s]
        outs = entry.rebind(prim, args, new, params)
        n = len(closed.out_avals)
        it = iter(outs[n:])
        return outs[:n], [[next(it) for _ in range(k)] if nz else None for nz in out_nz]

    def pack(self, primal, terms):
        if not terms:  # (no series, or order 0)
            return primal
        return JetTracer(self, primal, terms)

    def unpack(self, x):
        """(primal, terms) of an output; constants have no series (None)."""
        if type(x) is JetTracer and x._interp is self:
            return x.primal, x.terms
        if isinstance(x, Tracer):
            self.check_foreign(x)
        return x, None


def jet_flat(fun, primals, series, order: int, rules: dict):
    """Runs `fun` (flat arguments in, a flat list out) on truncated Taylor series of
    `order`, by the jet rules `rules`; returns the primal outputs and their series (None
    where known zero)."""
    interp = core.new_level(JetInterpreter(order, rules))
    with core.transformation(interp):
        outs = fun(*[interp.pack(p, s) for p, s in zip(primals, series)])
        pairs = [interp.unpack(o) for o in outs]
    return [p for p, _ in pairs], [s for _, s in pairs]


def jet_jaxpr(closed, nonzeros, order: int, rules: dict):
    """A jaxpr for the jet of `closed`: it takes the primals, then the `order` coefficients
    of each input marked in `nonzeros`, and returns the primal outputs, then the
    coefficients of the outputs whose series are not known zero. Returns (jaxpr,
    out_nonzeros)."""
    avals = closed.in_avals
    n = len(avals)
    term_avals = [a for a, nz in zip(avals, nonzeros) if nz for _ in range(order)]
    out_nonzeros = []

    def fun(*args):
        given = iter(args[n:])
        series = [[next(given) for _ in range(order)] if nz else None for nz in nonzeros]
        p_out, s_out = jet_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                args[:n], series, order, rules)
        out_nonzeros[:] = [s is not None for s in s_out]
        return list(p_out) + [t for s in s_out if s is not None for t in s]

    jaxpr, _ = trace_to_jaxpr(fun, list(avals) + term_avals)
    return jaxpr, out_nonzeros
