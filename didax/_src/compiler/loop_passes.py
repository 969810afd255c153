"""jit's passes over loops on stacked values (lax.scan's form: `stacked_loop`): work moved
out of their bodies. Each step computes what it did; only where and how often changes.

`rewrite_stacked_loop` is the "rewrite" rule such a loop primitive declares (run by
passes.rewrite_equations); `hoist_accumulated_products` is what a transposed loop's rule
asks of its body. Both know the loop through its params as its `stacked_loop` trait names
them, products through `contraction_param`, permutations through `permutation_param` and
arithmetic through `is_addition` and `cheap`; a permutation they add is base_prims'
transpose, the core's own.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from didax._src.base_prims import transpose_p
from didax._src.compiler.passes import cse, forward_trivial
from didax._src.core import ShapedArray
from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var


def _split(seq, num_consts, num_carry):
    seq = list(seq)
    return seq[:num_consts], seq[num_consts:num_consts + num_carry], seq[num_consts + num_carry:]


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


# --------------------------------------------------------------------------------------
# A loop's equation rewritten

# A product of a step's slice of a stacked input with a loop-invariant operand is computed
# for all steps as one product before the loop (the loop reads its rows as a new stacked
# input) when one step's product has at most this many multiply-adds (M * N * K): there a
# BLAS call per step costs more than its arithmetic. Above it the per-step product, its
# operands and result in cache, is as fast per multiply-add as one large product whose
# result streams through memory, and the rows cost reading back (W6's 32 x 32 x 512 input
# projection runs slower hoisted).
HOIST_PRODUCT_MAX = 1 << 15


def _product_sizes(eqn):
    """(M, N, K) of a product without batch dimensions."""
    (lc, rc), _ = eqn.params[eqn.primitive.traits.contraction_param]
    lhs, rhs = (a.aval for a in eqn.invars)
    k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    m = int(np.prod([n for d, n in enumerate(lhs.shape) if d not in lc], dtype=np.int64))
    n = int(np.prod([n for d, n in enumerate(rhs.shape) if d not in rc], dtype=np.int64))
    return m, n, k


def _unbatched_product(eqn):
    """Whether `eqn` is a product (`contraction_param`) without batch dimensions."""
    param = eqn.primitive.traits.contraction_param
    return param is not None and not any(eqn.params[param][1])


def rewrite_stacked_loop(eqn, program):
    """The "rewrite" rule of a loop over stacked operands (`stacked_loop`): its equation
    `eqn` with work moved out of its loop, as (equations, aliases) for
    passes.rewrite_equations, or None if there is none to move:

    - equations of the loop's constants alone run once before it (a transposed weight
      becomes a weight stored transposed);
    - a stacked output that is a stacked input's slice is that input; one that another
      stacked output also returns is that output (the loop stacks it once);
    - a product of a stacked input's slice with an operand the loop reads unchanged (one of
      its constants), small enough (HOIST_PRODUCT_MAX), is one product before the loop;
    - a 2-D constant the loop multiplies by transposed (contracting its last dimension as
      a product's right operand, its first as the left one) is transposed once before the
      loop, so BLAS reads it in order every step;
    - a stacked input that an earlier loop stacked for this one alone, computing it by a
      little arithmetic (`cheap`) from values it stacks for this one anyway, is computed
      again here from those (a gradient's residuals such as `s * (1 - s)` beside `s`: one
      array fewer written and read back);
    - stacked inputs and constants the body no longer reads, and stacked outputs nobody
      reads, are dropped.
    """
    p, loop = eqn.params, eqn.primitive.traits.stacked_loop
    body, length = cse(forward_trivial(p[loop.body])), p[loop.length]  # (as its code will be)
    nc, nk = p[loop.num_consts], p[loop.num_carry]
    j = body.jaxpr
    consts, carry, xs = (list(zip(b, o)) for b, o in zip(_split(j.invars, nc, nk),
                                                          _split(eqn.invars, nc, nk)))
    carry_out, ys = j.outvars[:nk], list(zip(j.outvars[nk:], eqn.outvars[nk:]))
    outer, aliases, eqns = [], {}, list(j.eqns)
    changed = False

    def outer_eqn(prim, ins, aval, params):
        v = Var(aval)
        outer.append(JaxprEqn(prim, ins, [v], params, eqn.source_info, eqn.phase))
        return v

    # stacked outputs: unused, a stacked input, or stacked already
    x_of = {b: o for b, o in xs}
    kept, first = [], {}
    for a, out in ys:
        if type(out) is DropVar:
            changed = True
        elif type(a) is Var and a in x_of and _same_type(x_of[a].aval, out.aval):
            aliases[out], changed = x_of[a], True
        elif type(a) is Var and a in first:
            aliases[out], changed = first[a], True
        else:
            if type(a) is Var:
                first[a] = out
            kept.append((a, out))
    ys = kept
    const_of = {b: o for b, o in consts if type(o) is not Literal}
    if length >= 2:
        # equations of constants only: computed once, before the loop (unless their result
        # is larger than their operands: a broadcast is read in place, not stored)
        for k, e in enumerate(eqns):
            ins = [a for a in e.invars if type(a) is not Literal]
            if (e.primitive.traits.effectful or not ins or any(a not in const_of for a in ins)
                    or sum(v.aval.size for v in e.outvars) > sum(a.aval.size for a in ins)):
                continue
            outs = [Var(v.aval) for v in e.outvars]
            outer.append(JaxprEqn(e.primitive, [const_of.get(a, a) for a in e.invars], outs,
                                  e.params, e.source_info, e.phase))
            for v, o in zip(e.outvars, outs):
                b = Var(v.aval) if type(v) is DropVar else v  # (the body reads it as a constant)
                consts.append((b, o))
                const_of[b] = o
            eqns[k] = None
            changed = True
        eqns = [e for e in eqns if e is not None]
        # products of a step's slice with a constant: one product before the loop
        for k, e in enumerate(eqns):
            if not _unbatched_product(e) or type(e.outvars[0]) is DropVar:
                continue
            lhs, rhs = e.invars
            m, n, kk = _product_sizes(e)
            if m * n * kk > HOIST_PRODUCT_MAX:
                continue
            param = e.primitive.traits.contraction_param
            (lc, rc), _ = e.params[param]
            res = e.outvars[0].aval
            stacked = ShapedArray((length,) + res.shape, res.dtype, res.weak_type)
            if lhs in x_of and rhs in const_of:
                dn = ((tuple(d + 1 for d in lc), tuple(rc)), ((), ()))
                total = outer_eqn(e.primitive, [x_of[lhs], const_of[rhs]], stacked,
                                  dict(e.params, **{param: dn}))
            elif rhs in x_of and lhs in const_of:
                # (lhs free, steps, slice free), then the steps first
                n_lf = lhs.aval.ndim - len(lc)
                dn = ((tuple(lc), tuple(d + 1 for d in rc)), ((), ()))
                shape = res.shape[:n_lf] + (length,) + res.shape[n_lf:]
                product = outer_eqn(e.primitive, [const_of[lhs], x_of[rhs]],
                                    ShapedArray(shape, res.dtype, res.weak_type),
                                    dict(e.params, **{param: dn}))
                perm = (n_lf,) + tuple(range(n_lf)) + tuple(range(n_lf + 1, len(shape)))
                total = outer_eqn(transpose_p, [product], stacked, {"permutation": perm})
            else:
                continue
            xs.append((e.outvars[0], total))  # the body reads the product's row instead
            x_of[e.outvars[0]] = total
            eqns[k] = None
            changed = True
        eqns = [e for e in eqns if e is not None]
        # constants read transposed by products: transposed once
        transposed = {}

        def in_order(w):
            if w not in transposed:
                wt = Var(ShapedArray(w.aval.shape[::-1], w.aval.dtype, w.aval.weak_type))
                transposed[w] = wt
                t = outer_eqn(transpose_p, [const_of[w]], wt.aval, {"permutation": (1, 0)})
                consts.append((wt, t))
            return transposed[w]

        for k, e in enumerate(eqns):
            if not _unbatched_product(e):
                continue
            param = e.primitive.traits.contraction_param
            (lc, rc), dn_batch = e.params[param]
            lhs, rhs = e.invars
            if (rhs in const_of and rhs.aval.ndim == 2 and tuple(rc) == (1,)
                    and rhs.aval.shape[0] > 1):
                rhs, rc = in_order(rhs), (0,)
            if (lhs in const_of and lhs.aval.ndim == 2 and tuple(lc) == (0,)
                    and lhs.aval.shape[1] > 1):
                lhs, lc = in_order(lhs), (1,)
            if [lhs, rhs] != e.invars:
                eqns[k] = JaxprEqn(e.primitive, [lhs, rhs], e.outvars,
                                   dict(e.params, **{param: ((lc, rc), dn_batch)}),
                                   e.source_info, e.phase)
                changed = True
    recomputed = _recompute_stacked(consts, xs, program)
    if recomputed:
        eqns = recomputed + eqns
        changed = True
    # inputs the body does not read
    read = {a for e in eqns for a in e.invars if type(a) is not Literal}
    read.update(a for a in carry_out if type(a) is not Literal)
    read.update(a for a, _ in ys if type(a) is not Literal)
    n_before = len(consts) + len(xs)
    consts = [(b, o) for b, o in consts if b in read]
    xs = [(b, o) for b, o in xs if b in read]
    changed = changed or len(consts) + len(xs) != n_before
    if not changed:
        return None
    invars = [b for b, _ in consts + carry + xs]
    new_body = ClosedJaxpr(Jaxpr(j.constvars, invars, carry_out + [a for a, _ in ys], eqns),
                           body.consts)
    params = dict(p, **{loop.body: new_body, loop.num_consts: len(consts)})
    rewritten = JaxprEqn(eqn.primitive, [o for _, o in consts + carry + xs],
                         eqn.outvars[:nk] + [out for _, out in ys], params, eqn.source_info,
                         eqn.phase)
    return outer + [rewritten], aliases


# What a loop computes again from stacked values rather than read stacked (see
# _recompute_stacked): at most this many equations per value, each `cheap` (cheaper per
# element than reading it back from memory).
RECOMPUTE_MAX = 3


def _recompute_stacked(consts, xs, program):
    """For each stacked input (body variable, operand) in `xs` that an earlier loop's
    stacked output is, read by nothing else, and that loop's body computes by `cheap`
    equations from its constants and from stacked outputs `xs` holds too: those equations,
    copied to compute it in this body from the stacked inputs' slices, the input removed
    from `xs` (constants they need added to `consts`). Row i of both is what step i
    computed, whichever way each loop runs, and the same equations on the same values give
    the same value."""
    copied = []
    for bx, o in list(xs):
        a = program.producer.get(o) if type(o) is not Literal else None
        if a is None or a.primitive.traits.stacked_loop is None or program.uses.get(o) != 1:
            continue
        pa, aloop = a.params, a.primitive.traits.stacked_loop
        anc, ank = pa[aloop.num_consts], pa[aloop.num_carry]
        aj = pa[aloop.body].jaxpr
        k = next(i for i, v in enumerate(a.outvars) if v is o)
        if k < ank or aj.constvars:
            continue
        slice_of = {ob: b for b, ob in xs}  # operand -> this body's variable
        leaves = {}  # variable of the earlier body -> this body's variable or operand
        for yv, ov in zip(aj.outvars[ank:], a.outvars[ank:]):
            if type(yv) is Var and ov is not o and ov in slice_of:
                leaves.setdefault(yv, slice_of[ov])
        a_consts = dict(zip(aj.invars[:anc], a.invars[:anc]))
        y = aj.outvars[k]
        if type(y) is not Var or y in leaves:
            continue
        chain = _cheap_chain(y, aj, set(leaves) | set(a_consts))
        if not chain:
            continue
        env = dict(leaves)
        for v, c in a_consts.items():
            env[v] = next((b for b, ob in consts if ob is c), None)
            if env[v] is None:
                env[v] = Var(v.aval)
                consts.append((env[v], c))
        for e in chain:
            outs = [bx if v is y else Var(v.aval) for v in e.outvars]
            env.update(zip(e.outvars, outs))
            copied.append(JaxprEqn(e.primitive, [env.get(u, u) for u in e.invars], outs,
                                   e.params, e.source_info, e.phase))
        xs.remove((bx, o))
    # (a value computed again may be what another one is computed from: definitions first)
    by_result = {v: e for e in copied for v in e.outvars}
    ordered, placed = [], set()

    def place(e):
        if id(e) in placed:
            return
        placed.add(id(e))
        for u in e.invars:
            if type(u) is not Literal and u in by_result:
                place(by_result[u])
        ordered.append(e)

    for e in copied:
        place(e)
    return ordered


def _cheap_chain(y, jaxpr, known) -> list:
    """The `cheap` equations of `jaxpr` computing its variable `y` from the variables
    `known` and literals, at most RECOMPUTE_MAX of them, each after those it reads; or
    an empty list."""
    defined = {v: e for e in jaxpr.eqns for v in e.outvars}
    chain = []

    def computable(v):
        if type(v) is Literal or v in known:
            return True
        e = defined.get(v)
        if e is None or not e.primitive.traits.cheap or len(chain) >= RECOMPUTE_MAX:
            return False
        if not all(computable(u) for u in e.invars):
            return False
        if e not in chain:
            chain.append(e)
        return True

    return chain if computable(y) else []


# --------------------------------------------------------------------------------------
# Accumulations of products in a loop's body: one product of the stacked factors after it


class StackedSum(NamedTuple):
    """An accumulator moved out of a loop's body: its index among the accumulators, the
    params of the product it accumulated, the permutation applied to each step's product
    (or None), and where the product's two factors come from per step (("xs", k): the
    loop's k-th stacked input, read directly; ("ys", k): a stacked output the body now
    returns). After the loop the sum is one product over the stacked axis."""
    acc: int
    params: dict
    perm: tuple | None
    sources: tuple


def hoist_accumulated_products(body, n_lead, n_acc, n_carry):
    """Accumulators of a loop body over stacked values (a transposed scan's: inputs
    n_lead.. n_lead + n_acc, outputs 0.. n_acc; then n_carry other carries, then the
    stacked inputs) updated as `acc + product(x, y)` (an addition, `is_addition`, of a
    product without batch dimensions, `contraction_param`, perhaps permuted) of
    per-iteration values: the weight gradients of a recurrent cell. The sum over steps of
    those small products is one large product of the stacked factors, far faster (and it
    needs the factors stacked, not a carry per step). Returns (new body without those
    carries, the kept accumulators' indices, [StackedSum], how many stacked outputs the
    body now returns after its others) or None."""
    j = body.jaxpr
    uses: dict = {}
    for eqn in j.eqns:
        for a in eqn.invars:
            if type(a) is not Literal:
                uses[a] = uses.get(a, 0) + 1
    for a in j.outvars:
        if type(a) is not Literal:
            uses[a] = uses.get(a, 0) + 1
    producer = {v: e for e in j.eqns for v in e.outvars}
    consts = set(j.invars[:n_lead]) | set(j.constvars)
    accs = set(j.invars[n_lead:n_lead + n_acc])
    stacked_in = {v: k for k, v in enumerate(j.invars[n_lead + n_acc + n_carry:])}
    drop, plan = set(), []
    for a in range(n_acc):
        acc_in, acc_out = j.invars[n_lead + a], j.outvars[a]
        add = producer.get(acc_out)
        if (add is None or not add.primitive.traits.is_addition or uses.get(acc_in) != 1
                or uses.get(acc_out) != 1 or acc_in not in add.invars):
            continue
        t = add.invars[1] if add.invars[0] is acc_in else add.invars[0]
        if type(t) is Literal or uses.get(t) != 1 or t not in producer:
            continue
        perm, dot, found = None, producer[t], [add]
        if dot.primitive.traits.permutation_param is not None:
            perm = dot.params[dot.primitive.traits.permutation_param]
            inner = dot.invars[0]
            if type(inner) is Literal or uses.get(inner) != 1 or inner not in producer:
                continue
            found.append(dot)
            dot = producer[inner]
        if not _unbatched_product(dot):
            continue
        x, y = dot.invars
        if any(type(v) is Literal or v in consts or v in accs for v in (x, y)):
            continue
        drop.update(found + [dot])
        plan.append((a, dot.params, perm, (x, y)))
    if not plan:
        return None
    sums, new_outs = [], []
    for a, params, perm, factors in plan:
        sources = []
        for v in factors:
            if v in stacked_in:
                sources.append(("xs", stacked_in[v]))
            else:
                sources.append(("ys", len(new_outs)))
                new_outs.append(v)
        sums.append(StackedSum(a, params, perm, tuple(sources)))
    gone = {p[0] for p in plan}
    kept = [a for a in range(n_acc) if a not in gone]
    invars = [v for k, v in enumerate(j.invars) if not (n_lead <= k < n_lead + n_acc and
                                                         k - n_lead in gone)]
    outvars = [v for k, v in enumerate(j.outvars) if k not in gone] + new_outs
    eqns = [e for e in j.eqns if e not in drop]
    return (ClosedJaxpr(Jaxpr(j.constvars, invars, outvars, eqns), body.consts), kept, sums,
            len(new_outs))
