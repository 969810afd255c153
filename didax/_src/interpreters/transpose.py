"""Transposition: running a linear jaxpr backwards, from output cotangents to inputs.

Each equation of a linear jaxpr is linear in its *undefined* inputs (those computed
from the jaxpr's inputs) and may also read known values (residuals and literals).
Its primitive's transpose rule maps the output cotangent to cotangents of the
undefined inputs. Cotangents accumulate with `add_any`; zeros stay symbolic (`Zero`)
and are only materialised when a rule or the caller needs an array. The backward
pass binds primitives under the current interpreter, so it can itself be
differentiated, staged or evaluated.
"""
from __future__ import annotations

from didax._src import caches, core
from didax._src.base_prims import (
    add_tangents,
    convert_element_type,
    instantiate,
    reduce_sum,
    reshape,
)
from didax._src.core import ShapedArray, Zero, get_aval, is_zero
from didax._src.dtypes import float0
from didax._src.interpreters.partial_eval import PartialEvalInterpreter
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, literal_value


class UndefinedPrimal:
    """Stands for a linear input of an equation whose value is not known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


_undefined = caches.memo("transpose.undefined")  # aval -> its UndefinedPrimal (holds nothing else)


def undefined_primal(aval: ShapedArray) -> UndefinedPrimal:
    u = _undefined.get(aval)
    if u is None:
        u = caches.add(_undefined, aval, UndefinedPrimal(aval))
    return u


def backward_pass(jaxpr: Jaxpr, consts, cts_out) -> list:
    """Cotangents of `jaxpr`'s inputs, given cotangents (or Zeros) of its outputs; what it
    stages is marked as the backward pass."""
    ctx = core._ctx
    prev, ctx.phase = ctx.phase, "backward"
    try:
        return _backward_pass(jaxpr, consts, cts_out)
    finally:
        ctx.phase = prev


def _backward_pass(jaxpr: Jaxpr, consts, cts_out) -> list:
    """Cotangents of `jaxpr`'s inputs, given cotangents (or Zeros) of its outputs."""
    known, eqns = linear_equations(jaxpr, consts)
    ct_env: dict = {}

    def accumulate(v, ct):
        if type(v) is Literal or type(v) is DropVar or v in known or type(ct) is Zero:
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        accumulate(v, ct)
    pop = ct_env.pop
    get_known = known.get
    for eqn in reversed(eqns):
        if not eqn.primitive.multiple_results:
            ct = pop(eqn.outvars[0], None)
            if ct is None:
                continue
        else:
            for v in eqn.outvars:
                if v in ct_env:
                    break
            else:
                continue
            ct = []
            for v in eqn.outvars:
                c = pop(v, None)
                ct.append(Zero(v.aval) if c is None else c)
        for v, ct_in in transpose_equation(eqn, ct, get_known):
            prev = ct_env.get(v)
            ct_env[v] = ct_in if prev is None else add_tangents(prev, ct_in)
    return [ct_env.get(v, Zero(v.aval)) for v in jaxpr.invars]


def linear_equations(jaxpr: Jaxpr, consts) -> tuple[dict, list]:
    """The known values of a linear jaxpr (its constants, and what equations reading only
    them compute) and its other equations, every variable of which is linear: there are no
    known equations in what linearize stages, but a jaxpr written by hand or traced whole
    may have some. Evaluating now, permutations a product can absorb are dropped."""
    known: dict = dict(zip(jaxpr.constvars, consts))
    eqns = _eval_known_equations(jaxpr.eqns, known)
    if core.current_interpreter() is core.eval_interpreter:
        eqns = _drop_permutations(eqns, jaxpr.outvars)
    return known, eqns


def transpose_equation(eqn, ct, get_known) -> list:
    """(operand variable, cotangent) for each undefined operand of `eqn` with a nonzero
    cotangent, given the cotangent of its output (a list of them for several outputs)."""
    args = []
    for v in eqn.invars:
        if type(v) is Literal:
            args.append(literal_value(v))
        else:
            value = get_known(v, v)
            args.append(undefined_primal(v.aval) if value is v else value)
    prim = eqn.primitive
    rule = prim.rules.get("transpose") or prim.get_rule("transpose")
    cts_in = rule(ct, *args, **eqn.params)
    # `x` undefined: `v` is a variable that is not known
    return [(v, ct_in) for v, x, ct_in in zip(eqn.invars, args, cts_in)
            if ct_in is not None and type(x) is UndefinedPrimal and type(ct_in) is not Zero]


def _eval_known_equations(eqns, known: dict) -> list:
    """Evaluates (binds) the equations whose inputs are all known, recording their outputs
    in `known`; returns the others, which depend on the linear inputs."""
    rest = []
    for eqn in eqns:
        for v in eqn.invars:
            if type(v) is not Literal and v not in known:
                rest.append(eqn)
                break
        else:
            outs = eqn.primitive.bind(*[literal_value(v) if type(v) is Literal else known[v]
                                        for v in eqn.invars], **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = (outs,)
            for v, x in zip(eqn.outvars, outs):
                known[v] = x
    return rest


def _drop_permutations(eqns, outvars) -> list:
    """Evaluating now, a permutation (`permutation_param`) read only by an equation that can
    read its operand instead (`permuted_operand`: a product, renumbering its dimensions) is
    dropped, so that equation's cotangent comes out in the operand's layout rather than as
    a transposed view (`x @ W.T` gives a row-major W cotangent). Staged, the jaxpr stays as
    JAX writes it (and jit's passes compose the transposes)."""
    for e in eqns:
        if e.primitive.traits.permutation_param:
            break
    else:
        return eqns
    uses: dict = {a: 1 for a in outvars if type(a) is not Literal}
    for eqn in eqns:
        for a in eqn.invars:
            if type(a) is not Literal:
                uses[a] = uses.get(a, 0) + 1
    permutations: dict = {}  # a permutation's result -> (its index, operand, permutation)
    rewritten: dict = {}
    for k, eqn in enumerate(eqns):
        param = eqn.primitive.traits.permutation_param
        if param is not None and type(eqn.invars[0]) is not Literal:
            permutations[eqn.outvars[0]] = (k, eqn.invars[0], tuple(eqn.params[param]))
        if eqn.primitive.traits.permuted_operand is None:
            continue
        for i, a in enumerate(eqn.invars):
            found = permutations.get(a) if type(a) is not Literal and uses[a] == 1 else None
            params = found and eqn.primitive.traits.permuted_operand(eqn, i, found[2])
            if params:
                invars = list(eqn.invars)
                invars[i] = found[1]
                eqn = JaxprEqn(eqn.primitive, invars, eqn.outvars, params, eqn.source_info)
                rewritten[k] = eqn
                rewritten[found[0]] = None
    if not rewritten:
        return eqns
    return [rewritten.get(k, e) for k, e in enumerate(eqns) if rewritten.get(k, e) is not None]


def transpose_jaxpr(closed: ClosedJaxpr, linear: list[bool]) -> ClosedJaxpr:
    """A jaxpr for the transpose of `closed` in its `linear` inputs: it takes the other
    inputs, then one cotangent per output, and returns the linear inputs' cotangents."""
    jaxpr = closed.jaxpr
    nonlin_vars = [v for v, lin in zip(jaxpr.invars, linear) if not lin]
    lin_vars = [v for v, lin in zip(jaxpr.invars, linear) if lin]
    as_linear = Jaxpr(jaxpr.constvars + nonlin_vars, lin_vars, jaxpr.outvars, jaxpr.eqns)

    def transposed(*args):
        nonlin, cts = args[:len(nonlin_vars)], args[len(nonlin_vars):]
        # (an integer output's cotangent, float0, carries nothing: a symbolic zero inside,
        # as rules expect; a library's rule may test for one)
        cts = [Zero(v.aval) if v.aval.dtype == float0 else c
               for c, v in zip(cts, jaxpr.outvars)]
        cts_in = backward_pass(as_linear, list(closed.consts) + list(nonlin), list(cts))
        return [instantiate(c) for c in cts_in]

    in_avals = [v.aval for v in nonlin_vars] + [v.aval for v in jaxpr.outvars]
    return trace_to_jaxpr(transposed, in_avals)[0]


def linear_transpose_flat(fun, in_avals):
    """Traces `fun` (flat, linear in all its arguments) at `in_avals`. Returns the output
    types and the transposed map: flat cotangents of the outputs -> of the inputs."""
    pe = core.new_level(PartialEvalInterpreter())
    with core.transformation(pe):
        args = [pe.new_arg(a) for a in in_avals]
        outs = fun(*args)
    out_avals = [get_aval(o) for o in outs]
    closed = pe.build(outs)

    def transposed(cts):
        cts_in = backward_pass(closed.jaxpr, closed.consts, list(cts))
        return [instantiate(c) if type(c) is Zero else core.asarray_value(c) for c in cts_in]

    return out_avals, transposed


# --------------------------------------------------------------------------------------
# Helpers for declaring transpose rules


def deflinear_transpose(prim, fn):
    """A unary linear primitive: `fn(ct, **params)` is the transposed map; zero in, zero out."""

    def rule(ct, x, **params):
        if is_zero(ct):
            return [Zero(x.aval)]
        return [fn(ct, x.aval, **params)]

    prim.def_transpose(rule)


def unbroadcast(ct, aval: ShapedArray):
    """The cotangent of an operand that an elementwise primitive broadcast to `ct`'s
    shape: summed over the broadcast dimensions, in the operand's shape and dtype."""
    if type(ct) is Zero:
        return Zero(aval)
    ct_aval = ct.aval if isinstance(ct, core.ArrayBase) else get_aval(ct)
    if ct_aval.shape == aval.shape and ct_aval.dtype == aval.dtype:
        return ct
    if ct_aval.shape != aval.shape:
        if not aval.shape:
            ct = reduce_sum(ct, tuple(range(ct_aval.ndim)))
        else:
            dims = tuple(i for i, (a, b) in enumerate(zip(aval.shape, ct_aval.shape))
                         if a != b)
            ct = reduce_sum(ct, dims)
            ct = reshape(ct, aval.shape)
    if get_aval(ct).dtype != aval.dtype:
        ct = convert_element_type(ct, aval.dtype, aval.weak_type)
    return ct
