"""Passes over jaxprs, run before code generation.

Each pass takes a closed jaxpr and returns an equivalent one; `optimize` runs them in
order: inline nested calls (so the others see one flat program), forward trivial
equations, fold constants, eliminate common subexpressions, eliminate dead code, the
rewrites primitives declare for their own equations (a loop moving work out of its body,
loop_passes.py; twice when the first round changed something, with the passes before it
in between), compute transposed products in their transposed order, and run the readers of
each value as soon as it is computed (consume_early).
Sub-jaxprs of control flow are optimised when their own code is generated. The passes
know primitives only by the traits they declare (`effectful`, `call_jaxpr_param`,
`returns_operand`, `unit`, `involution`, `permutation_param`, `permuted_result`; see
core.Traits) and their "rewrite" rules, never by name.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, subjaxprs

FOLD_MAX_SIZE = 1 << 16  # constants larger than this stay computed at run time


def optimize(closed: ClosedJaxpr) -> ClosedJaxpr:
    closed = inline_calls(closed)
    closed = forward_trivial(closed)
    closed = fold_constants(closed)
    closed = dce(cse(closed))
    rewritten = rewrite_equations(closed)
    if rewritten is not closed:  # (a permutation moved out of a loop may cancel another;
        # what a rewrite left unread is dropped, and then the equation computing it may
        # be rewritten again without it)
        closed = rewrite_equations(dce(cse(forward_trivial(rewritten))))
    return consume_early(permute_products(dce(closed)))


def _subst(env, a):
    if env is None or type(a) is Literal:
        return a
    return env.get(a, a)


# --------------------------------------------------------------------------------------
# Inlining


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Replaces every call equation (jit, custom-rule calls, checkpoint) by its body, with
    fresh variables, recursively. After differentiation, custom rules have done their job:
    evaluating a custom call is evaluating its function."""
    j = closed.jaxpr
    if not any(e.primitive.traits.call_jaxpr_param for e in j.eqns):
        return closed
    constvars, consts = list(j.constvars), list(closed.consts)
    eqns: list[JaxprEqn] = []
    alias: dict = {}  # a call's result binder -> the atom the inlined body computed

    def expand(eqn_list, local):
        for eqn in eqn_list:
            ins = [_subst(local, a) for a in eqn.invars]
            key = eqn.primitive.traits.call_jaxpr_param
            if key is None:
                outs = []
                for v in eqn.outvars:
                    nv = v if local is None else (DropVar(v.aval) if type(v) is DropVar
                                                  else Var(v.aval))
                    if local is not None:
                        local[v] = nv
                    outs.append(nv)
                eqns.append(JaxprEqn(eqn.primitive, ins, outs, eqn.params, eqn.source_info))
                continue
            sub = eqn.params[key]
            inner = {}
            for v, c in zip(sub.jaxpr.constvars, sub.consts):
                nv = inner[v] = Var(v.aval)
                constvars.append(nv)
                consts.append(c)
            inner.update(zip(sub.jaxpr.invars, ins))
            expand(sub.jaxpr.eqns, inner)
            for binder, v in zip(eqn.outvars, sub.jaxpr.outvars):
                result = _subst(inner, v)
                if local is None:
                    alias[binder] = result
                else:
                    local[binder] = result

    expand(j.eqns, None)
    eqns = [JaxprEqn(e.primitive, [_resolve(alias, a) for a in e.invars], e.outvars, e.params,
                     e.source_info) for e in eqns]
    outvars = [_resolve(alias, a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(constvars, j.invars, outvars, eqns), consts)


def _resolve(env, a):
    while type(a) is not Literal and a in env:
        a = env[a]
    return a


# --------------------------------------------------------------------------------------
# Forwarding: equations that return their input unchanged


def _identity_input(eqn) -> int | None:
    """Index of the operand `eqn` returns unchanged, or None."""
    returns_operand = eqn.primitive.traits.returns_operand
    if returns_operand is None or len(eqn.invars) != 1 or len(eqn.outvars) != 1:
        return None
    x, out = eqn.invars[0].aval, eqn.outvars[0].aval
    if x.shape != out.shape or x.dtype != out.dtype:
        return None
    return returns_operand(eqn)


def forward_trivial(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Forwards equations that return an operand unchanged (identity reshapes, conversions
    to the same type, x * 1...), cancels double negations and makes a permutation of a
    permutation one (so a product transposed twice is not transposed at all)."""
    env: dict = {}
    applied: dict = {}  # (involution, its result) -> its operand
    permuted: dict = {}  # result of a permutation -> (its operand, the permutation)
    eqns = []
    for eqn in closed.jaxpr.eqns:
        ins = [_subst(env, a) for a in eqn.invars]
        if eqn.primitive.traits.permutation_param is not None:
            eqn = _composed_permutation(eqn, ins, permuted)
            ins = eqn.invars
        i = _identity_input(eqn)
        if i is not None and not eqn.primitive.traits.effectful:
            env[eqn.outvars[0]] = ins[i]
            continue
        x = _unit_operand(eqn, ins, {})  # (so double negations around it cancel below)
        if x is not None:
            env[eqn.outvars[0]] = x
            continue
        if eqn.primitive.traits.involution:
            key = (eqn.primitive, ins[0])
            if type(ins[0]) is not Literal and key in applied:
                env[eqn.outvars[0]] = applied[key]
                continue
            applied[(eqn.primitive, eqn.outvars[0])] = ins[0]
        eqns.append(JaxprEqn(eqn.primitive, ins, eqn.outvars, eqn.params, eqn.source_info))
    j = closed.jaxpr
    outvars = [_subst(env, a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, eqns), closed.consts)


def _composed_permutation(eqn, ins, permuted):
    """`eqn` on operands `ins`; a permutation of a permutation's result (as recorded in
    `permuted`) becomes one permutation of the first one's operand (forwarded below if it
    is the identity; the first one is left to DCE)."""
    param = eqn.primitive.traits.permutation_param
    perm = tuple(int(p) for p in eqn.params[param])
    x = ins[0]
    if type(x) is not Literal and x in permuted:
        x, first = permuted[x]
        perm = tuple(first[p] for p in perm)
    permuted[eqn.outvars[0]] = (x, perm)
    return JaxprEqn(eqn.primitive, [x], eqn.outvars, dict(eqn.params, **{param: perm}),
                    eqn.source_info)


# --------------------------------------------------------------------------------------
# Constant folding


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Evaluates, at compile time, equations whose operands are all literals or constants,
    and forwards products with constant arrays of ones (and other units)."""
    j = closed.jaxpr
    known = {v: c for v, c in zip(j.constvars, closed.consts) if not isinstance(c, core.Tracer)}
    env: dict = {}
    eqns = []
    new_constvars, new_consts = list(j.constvars), list(closed.consts)
    by_value: dict = {}
    for eqn in j.eqns:
        ins = [_subst(env, a) for a in eqn.invars]
        prim = eqn.primitive
        if (not prim.traits.effectful and prim.impl is not None and ins
                and prim.traits.axis_name_param is None  # (a collective runs among its shards)
                and all(type(a) is Literal or a in known for a in ins)
                and all(v.aval.size <= FOLD_MAX_SIZE for v in eqn.outvars)):
            vals = [np.asarray(a.val, a.aval.dtype) if type(a) is Literal
                    else np.asarray(known[a]) for a in ins]
            try:
                outs = prim.impl(*vals, **eqn.params)
            except Exception:  # leave it to run time, where the error gets its context
                outs = None
            if outs is not None:
                outs = outs if prim.multiple_results else [outs]
                for v, o in zip(eqn.outvars, outs):
                    o = np.asarray(o, v.aval.dtype)
                    if v.aval.shape == ():
                        env[v] = Literal(o[()], v.aval)
                        continue
                    key = (o.dtype.str, o.shape, o.tobytes())  # equal constants: one var,
                    same = by_value.get(key)  # so CSE can merge what reads them
                    if same is not None:
                        env[v] = same
                        continue
                    by_value[key] = v
                    known[v] = o
                    new_constvars.append(v)
                    new_consts.append(core.Array.from_numpy(o, v.aval))
                continue
        x = _unit_operand(eqn, ins, known)
        if x is not None:
            env[eqn.outvars[0]] = x
            continue
        eqns.append(JaxprEqn(prim, ins, eqn.outvars, eqn.params, eqn.source_info))
    outvars = [_subst(env, a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(new_constvars, j.invars, outvars, eqns), new_consts)


def _unit_operand(eqn, ins, known):
    """For `op(x, u)` or `op(u, x)` with `u` the unit of `op` (a literal, or a constant array
    of units among `known`), as `x * 1` is: x, which it is exactly (NaN, inf and -0 too);
    otherwise None."""
    unit = eqn.primitive.traits.unit
    if unit is None or len(ins) != 2:
        return None
    out = eqn.outvars[0].aval
    for u, x in ((ins[0], ins[1]), (ins[1], ins[0])):
        if (dtypes.kind(out.dtype) in "fc" and type(x) is not Literal
                and x.aval.shape == out.shape and x.aval.dtype == out.dtype
                and (u.val == unit if type(u) is Literal else
                     u in known and bool(np.all(np.asarray(known[u]) == unit)))):
            return x
    return None


# --------------------------------------------------------------------------------------
# Common subexpression elimination


def _hashable(x):
    if isinstance(x, (tuple, list)):
        return tuple(_hashable(y) for y in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    if isinstance(x, np.ndarray):
        return ("array", id(x))
    try:
        hash(x)
    except TypeError:
        return ("object", id(x))
    return x


def _atom_key(a):
    if type(a) is Literal:
        return ("lit", a.aval.dtype.str, np.asarray(a.val).tobytes())
    return a


def cse(closed: ClosedJaxpr) -> ClosedJaxpr:
    env: dict = {}
    seen: dict = {}
    eqns = []
    for eqn in closed.jaxpr.eqns:
        ins = [_subst(env, a) for a in eqn.invars]
        if not eqn.primitive.traits.effectful:
            key = (eqn.primitive, tuple(_atom_key(a) for a in ins), _hashable(eqn.params))
            prev = seen.get(key)
            if prev is not None:
                for v, p in zip(eqn.outvars, prev):
                    env[v] = p
                continue
            seen[key] = eqn.outvars
        eqns.append(JaxprEqn(eqn.primitive, ins, eqn.outvars, eqn.params, eqn.source_info))
    j = closed.jaxpr
    outvars = [_subst(env, a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, eqns), closed.consts)


# --------------------------------------------------------------------------------------
# Dead code elimination


def dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drops equations none of whose outputs are used (unless effectful); unused outputs of
    the equations kept become `_`; unused constants are dropped."""
    j = closed.jaxpr
    live = {a for a in j.outvars if type(a) is not Literal}
    kept = []
    for eqn in reversed(j.eqns):
        used = [v in live for v in eqn.outvars]
        if not any(used) and not eqn.primitive.traits.effectful:
            continue
        outs = [v if u or type(v) is DropVar else DropVar(v.aval)
                for v, u in zip(eqn.outvars, used)]
        kept.append(JaxprEqn(eqn.primitive, eqn.invars, outs, eqn.params, eqn.source_info))
        live.update(a for a in eqn.invars if type(a) is not Literal)
    kept.reverse()
    pairs = [(v, c) for v, c in zip(j.constvars, closed.consts) if v in live]
    return ClosedJaxpr(Jaxpr([v for v, _ in pairs], j.invars, j.outvars, kept),
                       [c for _, c in pairs])


# --------------------------------------------------------------------------------------
# Transposed products


def permute_products(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`transpose(p)`, where `p` is read only there and its primitive can compute the
    permuted result itself (`permuted_result`: a product with its operands swapped), becomes
    that one equation. dot_general's transpose rule stages such pairs (as JAX's does); as a
    transposed view, the result would make the elementwise statements reading it strided."""
    j = closed.jaxpr
    if not any(e.primitive.traits.permutation_param for e in j.eqns):
        return closed
    uses: dict = {a: 1 for a in j.outvars if type(a) is not Literal}
    producer: dict = {}
    for k, eqn in enumerate(j.eqns):
        for a in eqn.invars:
            if type(a) is not Literal:
                uses[a] = uses.get(a, 0) + 1
        if len(eqn.outvars) == 1 and eqn.primitive.traits.permuted_result is not None:
            producer[eqn.outvars[0]] = k
    fused: dict = {}  # index of a product -> the equation replacing it
    dropped = set()  # indices of the transposes fused into their product
    for k, eqn in enumerate(j.eqns):
        param = eqn.primitive.traits.permutation_param
        x = eqn.invars[0] if param is not None else None
        p = producer.get(x) if type(x) is Var and uses[x] == 1 else None
        if p is None:
            continue
        product = j.eqns[p]
        new = product.primitive.traits.permuted_result(product, tuple(eqn.params[param]))
        if new is not None:
            invars, params = new
            fused[p] = JaxprEqn(product.primitive, invars, eqn.outvars, params,
                                product.source_info)
            dropped.add(k)
    if not fused:
        return closed
    eqns = [fused.get(k, e) for k, e in enumerate(j.eqns) if k not in dropped]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.outvars, eqns), closed.consts)


# --------------------------------------------------------------------------------------
# Order


def consume_early(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Runs the equations reading a value right after the equation computing it, when all
    of them can (their other operands computed, or computed by equations that only program
    inputs determine, which come along): the rest of the order is kept. Traced programs
    compute an optimizer's updates after every gradient, when each gradient has long left
    the cache; run beside the products computing the gradients, an MLP's SGD step took 10 %
    less time at batch 1 and 3-10 % at batch 16, the LSTM and the Transformer's Adam step
    about 1 % (pulling readers one by one split Adam's updates into more loops: 3 % slower).
    Only pure equations without sub-programs move, and none whose result is larger than its
    largest operand (nothing computed early takes more memory than it reads)."""
    j = closed.jaxpr
    eqns = j.eqns
    producer: dict = {}
    readers: dict = {}
    for k, eqn in enumerate(eqns):
        for a in eqn.invars:
            if type(a) is Var:
                at = readers.setdefault(a, [])
                if not at or at[-1] != k:
                    at.append(k)
        for v in eqn.outvars:
            producer[v] = k
    movable = [_movable(e) for e in eqns]
    if not any(movable):
        return closed
    placed = [False] * len(eqns)
    order: list[int] = []

    def plan(k) -> list | None:
        """Equation `k` and the unplaced ones it needs first (movable ones that only inputs
        and placed equations determine, at most four deep), in order; None if it must wait."""
        need, stack = [], [(k, 0, False)]
        seen = set()
        while stack:
            q, depth, expanded = stack.pop()
            if expanded:
                need.append(q)
                continue
            if q in seen:
                continue
            seen.add(q)
            stack.append((q, depth, True))
            for a in eqns[q].invars:
                p = producer.get(a) if type(a) is Var else None
                if p is None or placed[p] or p in seen:
                    continue
                if not movable[p] or depth >= 4:
                    return None
                stack.append((p, depth + 1, False))
        return need

    for k in range(len(eqns)):
        if placed[k]:
            continue
        work = [k]
        while work:
            q = work.pop()
            if placed[q]:
                continue
            placed[q] = True
            order.append(q)
            for v in reversed(eqns[q].outvars):  # (pushed in reverse: read in order)
                waiting = [r for r in readers.get(v, ()) if not placed[r]]
                if not waiting or not all(movable[r] for r in waiting):
                    continue
                plans = [plan(r) for r in waiting]
                if any(p is None for p in plans):
                    continue
                for r, pulled in zip(reversed(waiting), reversed(plans)):
                    for p in pulled[:-1]:  # (its operands' equations first)
                        if not placed[p]:
                            placed[p] = True
                            order.append(p)
                    work.append(r)
    if order == list(range(len(eqns))):
        return closed
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.outvars, [eqns[k] for k in order]),
                       closed.consts)


def _movable(eqn) -> bool:
    t = eqn.primitive.traits
    if (t.effectful or t.tokens or t.refs or t.loop or t.stacked_loop is not None
            or t.call_jaxpr_param is not None or any(subjaxprs(eqn.params))):
        return False
    sizes = [getattr(a.aval, "size", 1) for a in eqn.invars]  # (a token's is 1)
    return bool(sizes) and all(getattr(v.aval, "size", 1) <= max(sizes) for v in eqn.outvars)


# --------------------------------------------------------------------------------------
# The rewrites primitives declare for their own equations


class Program:
    """What a rewrite may know of the program around its equation: `producer`, {variable:
    the equation before it (as rewritten) that binds it}; `uses`, {variable: how many
    operands of equations and results of the program read it} (before rewriting)."""

    def __init__(self, uses):
        self.producer: dict = {}
        self.uses = uses


def rewrite_equations(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Replaces each equation whose primitive has a "rewrite" rule by what the rule returns.
    `rule(eqn, program)` (`program`, a Program, tells what the equations before `eqn`
    compute) returns None (no change) or `(eqns, aliases)`: equations computing what `eqn`
    does (new variables for anything else they bind; `eqn`'s own result variables, or
    DropVars, for its results), and {result variable of `eqn` the equations do not bind:
    the atom equal to it}."""
    j = closed.jaxpr
    if not any("rewrite" in e.primitive.rules for e in j.eqns):
        return closed
    uses: dict = {}
    for a in [a for e in j.eqns for a in e.invars] + list(j.outvars):
        if type(a) is not Literal:
            uses[a] = uses.get(a, 0) + 1
    program = Program(uses)
    env: dict = {}
    eqns = []
    changed = False
    for eqn in j.eqns:
        ins = [_subst(env, a) for a in eqn.invars]
        if ins != eqn.invars:
            eqn = JaxprEqn(eqn.primitive, ins, eqn.outvars, eqn.params, eqn.source_info,
                           eqn.phase)
        rewrite = eqn.primitive.rules.get("rewrite")
        new = rewrite(eqn, program) if rewrite is not None else None
        if new is None:
            new_eqns = [eqn]
        else:
            changed = True
            new_eqns, aliases = new
            env.update(aliases)
        eqns.extend(new_eqns)
        for e in new_eqns:
            program.producer.update((v, e) for v in e.outvars if type(v) is not DropVar)
    if not changed:
        return closed
    outvars = [_subst(env, a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, eqns), closed.consts)
