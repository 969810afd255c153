"""`lax.scan`: a loop carrying state over the leading axis of its inputs, as a primitive.

The body is a closed jaxpr `(consts, carry, x) -> (carry, y)`. Every rule transforms the
body and emits a scan again, so nothing is unrolled: the JVP of a scan is a scan of the
JVP'd body; under partial evaluation a known scan runs now and stacks the residuals the
unknown scan reads; the transpose is a scan running backwards over those residuals; the
batched scan carries the batch in every carry.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.base_prims import add_tangents, instantiate, zeros_like_aval
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.partial_eval import PartialEvalInterpreter, partial_eval_jaxpr
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, transpose_jaxpr
from didax._src.ir import (
    ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr, hoist_consts,
)
from didax._src.errors import user_error
from didax._src.lax.control_flow.carry_types import (
    carry_structure_error, carry_type_error, promote_weak_carry,
)
from didax._src.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from didax._src.base_prims import add_any_p, transpose, transpose_p
from didax._src.lax.dot import dot_general, dot_general_p
from didax._src.lax.elementwise import add_p, integer_pow_p, mul_p, neg_p, square_p, sub_p
from didax._src.compiler.codegen import codegen_rule, tuple_text
from didax._src.compiler.passes import cse, forward_trivial
from didax._src.compiler.native import control
from didax._src.compiler.native.rules import native_rule

scan_p = core.primitive("scan", multiple_results=True)


def _split(seq, num_consts, num_carry):
    seq = list(seq)
    return seq[:num_consts], seq[num_consts:num_consts + num_carry], seq[num_consts + num_carry:]


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, carry, xs = _split(args, num_consts, num_carry)
    consts = [core.Array(c) for c in consts]
    carry = [core.Array(c) for c in carry]
    ys = []
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *carry,
                          *[core.Array(x[i]) for x in xs])
        carry, y = outs[:num_carry], outs[num_carry:]
        ys.append([np.asarray(v) for v in y])
    if reverse:
        ys.reverse()
    y_avals = jaxpr.out_avals[num_carry:]
    stacked = [np.stack([y[k] for y in ys]) if ys else np.zeros((0,) + a.shape, a.dtype)
               for k, a in enumerate(y_avals)]
    return [np.asarray(c) for c in carry] + stacked


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _scan_aval(*avals, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, carry, xs = _split(avals, num_consts, num_carry)
    body_in = jaxpr.in_avals
    for i, (a, b) in enumerate(zip(carry, jaxpr.out_avals[:num_carry])):
        if not _same_type(a, b):
            raise TypeError(f"scan body function carry input and carry output must have equal "
                            f"types, but carry {i} goes in as {a.str_short()} and comes out as "
                            f"{b.str_short()}")
    for x, b in zip(xs, body_in[num_consts + num_carry:]):
        if x.shape[:1] != (length,) or x.shape[1:] != b.shape:
            raise TypeError(f"scan: an input of type {x.str_short()} does not match length "
                            f"{length} and the body's slice type {b.str_short()}")
    ys = [ShapedArray((length,) + a.shape, a.dtype, a.weak_type)
          for a in jaxpr.out_avals[num_carry:]]
    return list(jaxpr.out_avals[:num_carry]) + ys


scan_p.def_impl(_scan_impl)
scan_p.def_abstract_eval(_scan_aval)


def _reordered(closed, in_order, out_order, in_avals):
    """`closed` with inputs taken in `in_order` (indices into its inputs) and outputs
    returned in `out_order`, as a new closed jaxpr without constants."""

    def fun(*args):
        ins = [None] * len(in_order)
        for pos, idx in enumerate(in_order):
            ins[idx] = args[pos]
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
        return [outs[i] for i in out_order]

    return _no_consts(trace_to_jaxpr(fun, in_avals)[0])


def _no_consts(closed):
    """Closed jaxprs in scan params carry no constants (a traced one has none left)."""
    if not closed.consts:
        return closed
    return _Bound(*hoist_consts(closed))


class _Bound:
    """A jaxpr whose constants must be passed as leading scan constants."""

    def __init__(self, closed, consts):
        self.closed, self.consts = closed, consts


def _bind_scan(body, consts, carry, xs, length, reverse, stage_in=None):
    """Binds scan with `body`, moving any constants of the traced body into the operands
    (or, with `stage_in`, records the equation in that staging interpreter directly)."""
    if isinstance(body, _Bound):
        consts = list(body.consts) + list(consts)
        body = body.closed
    params = dict(jaxpr=body, length=length, reverse=reverse, num_consts=len(consts),
                  num_carry=len(carry), unroll=1)
    operands = [*consts, *carry, *xs]
    if stage_in is not None:
        return StagingInterpreter.process_primitive(stage_in, scan_p, operands, params)
    return scan_p.bind(*operands, **params)


# --------------------------------------------------------------------------------------
# JVP: a scan of the JVP'd body (every carry gets a tangent)


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, carry, xs = _split(primals, num_consts, num_carry)
    t_consts, t_carry, t_xs = _split(tangents, num_consts, num_carry)
    nz_consts = [type(t) is not Zero for t in t_consts]
    nz_xs = [type(t) is not Zero for t in t_xs]
    jvp_closed, _ = jvp_interp.jvp_jaxpr(jaxpr, nz_consts + [True] * num_carry + nz_xs,
                                         instantiate_out=True)
    n_in = len(primals)
    n_tc, n_tx = sum(nz_consts), sum(nz_xs)
    # jvp body inputs: consts carry xs | t_consts t_carry t_xs; outputs: carry ys | t_carry t_ys
    tc_idx = list(range(n_in, n_in + n_tc))
    tcar_idx = list(range(n_in + n_tc, n_in + n_tc + num_carry))
    tx_idx = list(range(n_in + n_tc + num_carry, n_in + n_tc + num_carry + n_tx))
    in_order = (list(range(num_consts)) + tc_idx + list(range(num_consts, num_consts + num_carry))
                + tcar_idx + list(range(num_consts + num_carry, n_in)) + tx_idx)
    n_out = len(jaxpr.out_avals)
    num_ys = n_out - num_carry
    out_order = (list(range(num_carry)) + list(range(n_out, n_out + num_carry))
                 + list(range(num_carry, n_out)) + list(range(n_out + num_carry, 2 * n_out)))
    avals = jvp_closed.in_avals
    body = _reordered(jvp_closed, in_order, out_order, [avals[i] for i in in_order])
    new_consts = consts + [t for t in t_consts if type(t) is not Zero]
    new_carry = carry + [instantiate(t) for t in t_carry]
    new_xs = xs + [t for t in t_xs if type(t) is not Zero]
    outs = _bind_scan(body, new_consts, new_carry, new_xs, length, reverse)
    c_out, tc_out = outs[:num_carry], outs[num_carry:2 * num_carry]
    ys, t_ys = outs[2 * num_carry:2 * num_carry + num_ys], outs[2 * num_carry + num_ys:]
    return c_out + ys, tc_out + t_ys


scan_p.def_jvp(_scan_jvp)


# --------------------------------------------------------------------------------------
# Partial evaluation: run the known scan now, stage the unknown one over stacked residuals


def _pe_scan(self: PartialEvalInterpreter, args, params):
    jaxpr, length, reverse = params["jaxpr"], params["length"], params["reverse"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    unknown = [type(x) is StagingTracer and x._interp is self for x in args]
    u_consts, u_carry, u_xs = _split(unknown, num_consts, num_carry)
    while True:  # a carry is unknown if it is unknown after any iteration
        _, _, out_u, _ = partial_eval_jaxpr(jaxpr, u_consts + u_carry + u_xs)
        grown = [a or b for a, b in zip(u_carry, out_u[:num_carry])]
        if grown == u_carry:
            break
        u_carry = grown
    n_out = len(jaxpr.out_avals)
    force = u_carry + [False] * (n_out - num_carry)
    known, unk, out_u, num_res = partial_eval_jaxpr(jaxpr, u_consts + u_carry + u_xs, force)
    consts, carry, xs = _split(args, num_consts, num_carry)
    pick = lambda vals, mask, want: [v for v, m in zip(vals, mask) if m == want]  # noqa: E731
    with core.interpreter_context(self.parent):
        known, invariant = _hoist_invariant_residuals(known, num_res,
                                                      pick(consts, u_consts, False))
    known, forwarded = _forward_xs_residuals(
        known, num_res, invariant, len(pick(consts, u_consts, False)) +
        len(pick(carry, u_carry, False)), pick(xs, u_xs, False))
    k_out_carry = [not u for u in out_u[:num_carry]]
    num_k_carry = sum(k_out_carry)
    num_k_ys = sum(not u for u in out_u[num_carry:])
    # The known body: (consts, carry, xs) -> (carry, ys, residuals as extra ys).
    known_body = _no_consts(known)
    with core.interpreter_context(self.parent):
        k_outs = _bind_scan(known_body, pick(consts, u_consts, False),
                            pick(carry, u_carry, False), pick(xs, u_xs, False), length, reverse)
    k_carry_out = k_outs[:num_k_carry]
    k_ys = k_outs[num_k_carry:num_k_carry + num_k_ys]
    stacked = iter(k_outs[num_k_carry + num_k_ys:])
    var_values = [forwarded[i] if i in forwarded else next(stacked)
                  for i in range(num_res) if i not in invariant]
    # The unknown body takes (residuals, unknown inputs); scan wants (consts, carry, xs):
    # loop-invariant residuals are constants, the others per-iteration inputs (xs).
    n_uc, n_ucar = sum(u_consts), sum(u_carry)
    u_avals = unk.in_avals
    inv_idx = [i for i in range(num_res) if i in invariant]
    var_idx = [i for i in range(num_res) if i not in invariant]
    in_order = (inv_idx + list(range(num_res, num_res + n_uc)) +
                list(range(num_res + n_uc, num_res + n_uc + n_ucar)) +
                var_idx + list(range(num_res + n_uc + n_ucar, len(u_avals))))
    unknown_body = _reordered(unk, in_order, list(range(len(unk.out_avals))),
                              [u_avals[i] for i in in_order])
    u_outs = _bind_scan(unknown_body, [invariant[i] for i in inv_idx] +
                        pick(consts, u_consts, True), pick(carry, u_carry, True),
                        var_values + pick(xs, u_xs, True), length,
                        reverse, stage_in=self)
    u_carry_out, u_ys = u_outs[:n_ucar], u_outs[n_ucar:]
    carry_out, ys = [], []
    kc, uc, ky, uy = iter(k_carry_out), iter(u_carry_out), iter(k_ys), iter(u_ys)
    for u in out_u[:num_carry]:
        carry_out.append(next(uc) if u else next(kc))
    for u in out_u[num_carry:]:
        ys.append(next(uy) if u else next(ky))
    return carry_out + ys


scan_p.def_rule("partial_eval", _pe_scan)


def _forward_xs_residuals(known, num_res, invariant, num_leading, known_xs):
    """Residuals that are just the known body's per-iteration inputs (its xs) are not
    stacked again: the unknown scan reads the original xs. Returns the known body without
    those outputs and {residual index: xs value}."""
    j = known.jaxpr
    # the residual outputs still present (invariant ones were removed), in order
    remaining = [i for i in range(num_res) if i not in invariant]
    n_out = len(j.outvars) - len(remaining)
    xs_vars = {v: x for v, x in zip(j.invars[num_leading:], known_xs)}
    forwarded = {}
    keep = []
    for i, r in zip(remaining, j.outvars[n_out:]):
        if r in xs_vars:
            forwarded[i] = xs_vars[r]
        else:
            keep.append(r)
    if not forwarded:
        return known, forwarded
    return (ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.outvars[:n_out] + keep, j.eqns),
                        known.consts), forwarded)


def _hoist_invariant_residuals(known, num_res, known_consts):
    """Residuals that depend only on the known body's constants are the same every
    iteration: they are computed once, outside the loop, and passed to the unknown scan as
    constants instead of being stacked `length` times. Returns the known body without those
    outputs and {residual index: value}; runs under the interpreter the known scan runs in."""
    j = known.jaxpr
    n_out = len(j.outvars) - num_res
    const_vars = list(j.constvars) + list(j.invars[:len(known_consts)])
    loop_invariant = set(const_vars)
    eqns = []
    for eqn in j.eqns:
        if all(type(a) is Literal or a in loop_invariant for a in eqn.invars):
            loop_invariant.update(eqn.outvars)
            eqns.append(eqn)
    res = j.outvars[n_out:]
    hoisted = [i for i, r in enumerate(res) if type(r) is Literal or r in loop_invariant]
    if not hoisted:
        return known, {}
    once = Jaxpr([], const_vars, [res[i] for i in hoisted], eqns)
    values = eval_jaxpr(once, [], *known.consts, *known_consts)
    invariant = dict(zip(hoisted, values))
    outvars = j.outvars[:n_out] + [r for i, r in enumerate(res) if i not in invariant]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, j.eqns), known.consts), invariant


# --------------------------------------------------------------------------------------
# Transpose: a scan running backwards over the residuals


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, carry, xs = _split(args, num_consts, num_carry)
    # A carry whose initial value is known (e.g. a zero tangent) still runs through the
    # loop linearly; its constant start has no cotangent.
    lin_consts = [is_undefined(c) for c in consts]
    lin_xs = [is_undefined(x) for x in xs]
    ct_carry = [instantiate(c) for c in cts[:num_carry]]
    ct_ys = [instantiate(c) for c in cts[num_carry:]]
    linear = lin_consts + [True] * num_carry + lin_xs
    body_t = transpose_jaxpr(jaxpr, linear)
    # body_t: (known consts, known xs, ct_carry, ct_ys) -> (ct lin consts, ct carry, ct lin xs)
    n_kc = num_consts - sum(lin_consts)
    n_kx = len(xs) - sum(lin_xs)
    n_lc = sum(lin_consts)
    k_consts = [c for c in consts if not is_undefined(c)]
    k_xs = [x for x in xs if not is_undefined(x)]
    lc_avals = [c.aval for c in consts if is_undefined(c)]

    def step(*a):
        kc = a[:n_kc]
        acc = a[n_kc:n_kc + n_lc]
        ctc = a[n_kc + n_lc:n_kc + n_lc + num_carry]
        kx = a[n_kc + n_lc + num_carry:n_kc + n_lc + num_carry + n_kx]
        cty = a[n_kc + n_lc + num_carry + n_kx:]
        outs = eval_jaxpr(body_t.jaxpr, body_t.consts, *kc, *kx, *ctc, *cty)
        d_consts, d_carry, d_xs = outs[:n_lc], outs[n_lc:n_lc + num_carry], outs[n_lc + num_carry:]
        return ([add_tangents(s, d) for s, d in zip(acc, d_consts)] + list(d_carry)
                + list(d_xs))

    x_avals = [get_aval(x) for x in k_xs]
    in_avals = ([get_aval(c) for c in k_consts] + lc_avals + [get_aval(c) for c in ct_carry]
                + [ShapedArray(a.shape[1:], a.dtype) for a in x_avals]
                + [ShapedArray(get_aval(c).shape[1:], get_aval(c).dtype) for c in ct_ys])
    body = _no_consts(trace_to_jaxpr(step, in_avals)[0])
    hoisted = (None if isinstance(body, _Bound) else
                _hoist_products(body, n_kc, n_lc, num_carry))
    if hoisted is not None:  # products summed over the loop: one product after it
        body, kept, stacked = hoisted
        n_kept = len(kept)
        outer_xs = k_xs + ct_ys
        zeros = [zeros_like_aval(lc_avals[a]) for a in kept]
        outs = _bind_scan(body, k_consts, zeros + ct_carry, outer_xs, length, not reverse)
        ys_out = outs[len(outs) - stacked.n_new:]
        ct_lin_consts = stacked.finish(kept, outs[:n_kept], outer_xs, ys_out, n_lc)
        ct_init = outs[n_kept:n_kept + num_carry]
        ct_lin_xs = iter(outs[n_kept + num_carry:len(outs) - stacked.n_new])
    else:
        zeros = [zeros_like_aval(a) for a in lc_avals]
        outs = _bind_scan(body, k_consts, zeros + ct_carry, k_xs + ct_ys, length, not reverse)
        ct_lin_consts, ct_init = outs[:n_lc], outs[n_lc:n_lc + num_carry]
        ct_lin_xs = iter(outs[n_lc + num_carry:])
    lc = iter(ct_lin_consts)
    result = [next(lc) if lin else None for lin in lin_consts]
    result += [ct if is_undefined(c) else None for c, ct in zip(carry, ct_init)]
    result += [next(ct_lin_xs) if lin else None for lin in lin_xs]
    return result


scan_p.def_transpose(_scan_transpose)


class _Stacked:
    """Accumulators hoisted out of a transposed scan: for each, its index among the
    accumulators, the product's parameters and where its two factors come from per step
    (("xs", k): the scan's k-th stacked input, read directly; ("ys", k): a stacked output
    the body now returns); after the loop each sum is one product over the stacked axis."""

    def __init__(self):
        self.hoisted = []  # (acc index, dot params, transpose permutation or None, (src, src))
        self.n_new = 0

    def finish(self, kept, kept_vals, outer_xs, ys_out, n_acc):
        new_ys = list(ys_out)
        vals = dict(zip(kept, kept_vals))
        for a, params, perm, sources in self.hoisted:
            x, y = [outer_xs[k] if src == "xs" else new_ys[k] for src, k in sources]
            (lc, rc), _ = params["dimension_numbers"]
            dn = (((0, *[d + 1 for d in lc]), (0, *[d + 1 for d in rc])), ((), ()))
            total = dot_general(x, y, dn, preferred_element_type=params.get(
                "preferred_element_type"))
            vals[a] = total if perm is None else transpose(total, perm)
        return [vals[a] for a in range(n_acc)]


def _hoist_products(body, n_lead, n_acc, n_carry):
    """Accumulators of a transposed scan's body (inputs n_lead.. n_lead + n_acc, outputs
    0.. n_acc; then n_carry other carries, then the stacked inputs) updated as `acc + product(x, y)` (a dot_general without batch dimensions,
    perhaps transposed) of per-iteration values: the weight gradients of a recurrent cell.
    The sum over steps of those small products is one large product of the stacked
    factors, far faster (and it needs the factors stacked, not a carry per step). Returns
    (new body without those carries, the kept accumulators' indices, _Stacked) or None."""
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
        if dot.primitive is transpose_p:
            perm = dot.params["permutation"]
            inner = dot.invars[0]
            if type(inner) is Literal or uses.get(inner) != 1 or inner not in producer:
                continue
            found.append(dot)
            dot = producer[inner]
        if dot.primitive is not dot_general_p or any(dot.params["dimension_numbers"][1]):
            continue
        x, y = dot.invars
        if any(type(v) is Literal or v in consts or v in accs for v in (x, y)):
            continue
        drop.update(found + [dot])
        plan.append((a, dot.params, perm, (x, y)))
    if not plan:
        return None
    stacked = _Stacked()
    new_outs = []
    for a, params, perm, factors in plan:
        sources = []
        for v in factors:
            if v in stacked_in:
                sources.append(("xs", stacked_in[v]))
            else:
                sources.append(("ys", len(new_outs)))
                new_outs.append(v)
        stacked.hoisted.append((a, params, perm, tuple(sources)))
    stacked.n_new = len(new_outs)
    gone = {p[0] for p in plan}
    kept = [a for a in range(n_acc) if a not in gone]
    invars = [v for k, v in enumerate(j.invars) if not (n_lead <= k < n_lead + n_acc and
                                                         k - n_lead in gone)]
    outvars = [v for k, v in enumerate(j.outvars) if k not in gone] + new_outs
    eqns = [e for e in j.eqns if e not in drop]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, outvars, eqns), body.consts), kept, stacked


# --------------------------------------------------------------------------------------
# Batching: the batch rides in every carry (at axis 0) and in axis 1 of stacked inputs


def _scan_batch(size, vals, dims, *, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, carry, xs = _split(vals, num_consts, num_carry)
    c_dims, k_dims, x_dims = _split(dims, num_consts, num_carry)
    x_in = [None if d is None else 0 for d in x_dims]
    carry_b = [d is not None for d in k_dims]
    while True:  # a carry is batched if it is batched after any iteration
        _, out_b = batching.batch_jaxpr_outs(
            jaxpr, size, list(c_dims) + [0 if b else None for b in carry_b] + x_in)
        grown = [a or b for a, b in zip(carry_b, out_b[:num_carry])]
        if grown == carry_b:
            break
        carry_b = grown
    body, out_b = batching.batch_jaxpr_outs(
        jaxpr, size, list(c_dims) + [0 if b else None for b in carry_b] + x_in,
        carry_b + [False] * (len(jaxpr.out_avals) - num_carry))
    carry = [batching.bdim_at_front(c, d, size) if b else c
             for c, d, b in zip(carry, k_dims, carry_b)]
    xs = [x if d is None else batching.moveaxis(x, d, 1) for x, d in zip(xs, x_dims)]
    outs = _bind_scan(_no_consts(body), consts, carry, xs, length, reverse)
    return outs, ([0 if b else None for b in carry_b]
                  + [1 if b else None for b in out_b[num_carry:]])


scan_p.def_batch(_scan_batch)


# --------------------------------------------------------------------------------------
# jit's rewrite of a scan equation (see compiler/passes.py): work moved out of the loop. Each
# step computes what it did; only where and how often changes.

# A product of a step's slice of a stacked input with a loop-invariant operand is computed
# for all steps as one product before the loop (the loop reads its rows as a new stacked
# input) when one step's product has at most this many multiply-adds (M * N * K): there a
# BLAS call per step costs more than its arithmetic. Above it the per-step product, its
# operands and result in cache, is as fast per multiply-add as one large product whose
# result streams through memory, and the rows cost reading back (W6's 32 x 32 x 512 input
# projection runs slower hoisted).
HOIST_PRODUCT_MAX = 1 << 15


def _dot_sizes(eqn):
    """(M, N, K) of a dot_general without batch dimensions."""
    (lc, rc), _ = eqn.params["dimension_numbers"]
    lhs, rhs = (a.aval for a in eqn.invars)
    k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    m = int(np.prod([n for d, n in enumerate(lhs.shape) if d not in lc], dtype=np.int64))
    n = int(np.prod([n for d, n in enumerate(rhs.shape) if d not in rc], dtype=np.int64))
    return m, n, k


def _unbatched_dot(eqn):
    return eqn.primitive is dot_general_p and not any(eqn.params["dimension_numbers"][1])


def _rewrite_scan(eqn, program):
    """The scan equation `eqn` with work moved out of its loop, as (equations, aliases) for
    compiler/passes.rewrite_equations, or None if there is none to move:

    - equations of the loop's constants alone run once before it (a transposed weight
      becomes a weight stored transposed);
    - a stacked output that is a stacked input's slice is that input; one that another
      stacked output also returns is that output (the loop stacks it once);
    - a product of a stacked input's slice with an operand the loop reads unchanged (one of
      its constants), small enough (HOIST_PRODUCT_MAX), is one product before the loop;
    - a 2-D constant the loop multiplies by transposed (contracting its last dimension as
      a product's right operand, its first as the left one) is transposed once before the
      loop, so BLAS reads it in order every step;
    - a stacked input that an earlier scan stacked for this one alone, computing it by a
      little arithmetic (RECOMPUTED) from values it stacks for this one anyway, is computed
      again here from those (a gradient's residuals such as `s * (1 - s)` beside `s`: one
      array fewer written and read back);
    - stacked inputs and constants the body no longer reads, and stacked outputs nobody
      reads, are dropped.
    """
    p = eqn.params
    body, length = cse(forward_trivial(p["jaxpr"])), p["length"]  # (as its code will be)
    nc, nk = p["num_consts"], p["num_carry"]
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
            if not _unbatched_dot(e) or type(e.outvars[0]) is DropVar:
                continue
            lhs, rhs = e.invars
            m, n, kk = _dot_sizes(e)
            if m * n * kk > HOIST_PRODUCT_MAX:
                continue
            (lc, rc), _ = e.params["dimension_numbers"]
            res = e.outvars[0].aval
            stacked = ShapedArray((length,) + res.shape, res.dtype, res.weak_type)
            if lhs in x_of and rhs in const_of:
                dn = ((tuple(d + 1 for d in lc), tuple(rc)), ((), ()))
                total = outer_eqn(dot_general_p, [x_of[lhs], const_of[rhs]], stacked,
                                  dict(e.params, dimension_numbers=dn))
            elif rhs in x_of and lhs in const_of:
                # (lhs free, steps, slice free), then the steps first
                n_lf = lhs.aval.ndim - len(lc)
                dn = ((tuple(lc), tuple(d + 1 for d in rc)), ((), ()))
                shape = res.shape[:n_lf] + (length,) + res.shape[n_lf:]
                product = outer_eqn(dot_general_p, [const_of[lhs], x_of[rhs]],
                                    ShapedArray(shape, res.dtype, res.weak_type),
                                    dict(e.params, dimension_numbers=dn))
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
            if not _unbatched_dot(e):
                continue
            (lc, rc), dn_batch = e.params["dimension_numbers"]
            lhs, rhs = e.invars
            if (rhs in const_of and rhs.aval.ndim == 2 and tuple(rc) == (1,)
                    and rhs.aval.shape[0] > 1):
                rhs, rc = in_order(rhs), (0,)
            if (lhs in const_of and lhs.aval.ndim == 2 and tuple(lc) == (0,)
                    and lhs.aval.shape[1] > 1):
                lhs, lc = in_order(lhs), (1,)
            if [lhs, rhs] != e.invars:
                eqns[k] = JaxprEqn(e.primitive, [lhs, rhs], e.outvars,
                                   dict(e.params, dimension_numbers=((lc, rc), dn_batch)),
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
    params = dict(p, jaxpr=new_body, num_consts=len(consts))
    scan = JaxprEqn(scan_p, [o for _, o in consts + carry + xs],
                    eqn.outvars[:nk] + [out for _, out in ys], params, eqn.source_info,
                    eqn.phase)
    return outer + [scan], aliases


scan_p.def_rule("rewrite", _rewrite_scan)

# What a scan computes again from stacked values rather than read stacked (see
# _recompute_stacked): arithmetic of at most RECOMPUTE_MAX equations per value, each
# cheaper per element than reading it back from memory.
RECOMPUTED = (add_p, sub_p, mul_p, neg_p, square_p, integer_pow_p, add_any_p)
RECOMPUTE_MAX = 3


def _recompute_stacked(consts, xs, program):
    """For each stacked input (body variable, operand) in `xs` that an earlier scan's
    stacked output is, read by nothing else, and that scan's body computes by RECOMPUTED
    equations from its constants and from stacked outputs `xs` holds too: those equations,
    copied to compute it in this body from the stacked inputs' slices, the input removed
    from `xs` (constants they need added to `consts`). Row i of both is what step i
    computed, whichever way each loop runs, and the same equations on the same values give
    the same value."""
    copied = []
    for bx, o in list(xs):
        a = program.producer.get(o) if type(o) is not Literal else None
        if a is None or a.primitive is not scan_p or program.uses.get(o) != 1:
            continue
        pa = a.params
        anc, ank = pa["num_consts"], pa["num_carry"]
        aj = pa["jaxpr"].jaxpr
        k = next(i for i, v in enumerate(a.outvars) if v is o)
        if k < ank or aj.constvars:
            continue
        slice_of = {ob: b for b, ob in xs}  # operand -> this body's variable
        leaves = {}  # variable of the earlier body -> this body's variable or operand
        for yv, ov in zip(aj.outvars[ank:], a.outvars[ank:]):
            if type(yv) is Var and ov is not o and ov in slice_of:
                leaves.setdefault(yv, slice_of[ov])
        a_consts = dict(zip(aj.invars[:anc], a.invars[:anc]))
        defined = {v: e for e in aj.eqns for v in e.outvars}
        chain = []

        def computable(v):
            if type(v) is Literal or v in leaves or v in a_consts:
                return True
            e = defined.get(v)
            if e is None or e.primitive not in RECOMPUTED or len(chain) >= RECOMPUTE_MAX:
                return False
            if not all(computable(u) for u in e.invars):
                return False
            if e not in chain:
                chain.append(e)
            return True

        y = aj.outvars[k]
        if type(y) is not Var or y in leaves or not computable(y) or not chain:
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


# --------------------------------------------------------------------------------------
# Code generation rule (jit): a for loop over a function generated for the body



@codegen_rule(scan_p)
def _scan_codegen(fb, k, eqn, outs):
    p = eqn.params
    body = fb.call_sub(p["jaxpr"], f"{fb.fname}_scan_body")
    nc, nk = p["num_consts"], p["num_carry"]
    length, reverse = p["length"], p["reverse"]
    args = [fb.typed(a) for a in eqn.invars]
    consts, init, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    carry, ys = outs[:nk], outs[nk:]
    if carry:
        fb.line(f"{tuple_text(carry)} = {tuple_text(init)}")
    y_vars = eqn.outvars[nk:]
    for v, n in zip(y_vars, ys):
        dtype = fb.module.global_name(v.aval.dtype, v.aval.dtype.name)
        fb.line(f"{n} = np.empty({v.aval.shape}, {dtype})")
    steps = f"range({length - 1}, -1, -1)" if reverse else f"range({length})"
    fb.line(f"for i in {steps}:")
    fb.indent += 1
    y_tmp = [f"{n}_i" for n in ys]
    call = f"{body}({', '.join(consts + carry + [f'{x}[i]' for x in xs])})"
    fb.line(f"{tuple_text(carry + y_tmp)} = {call}" if carry or y_tmp else call)
    for n, t in zip(ys, y_tmp):
        fb.line(f"{n}[i] = {t}")
    fb.indent -= 1


# --------------------------------------------------------------------------------------
# Native rule (the native tier of jit): the loop in C over the body compiled as C; carries
# in two buffers swapping roles, each step's ys written into its row of the stacked output.
# `unroll` changes no value, so the loop is not unrolled (gcc sees one body call per step).


def _scan_native_when(eqn):
    return control.typed_for_c(eqn) and control.worth_compiling(eqn.params["jaxpr"])


@native_rule(scan_p, kind="block", when=_scan_native_when,
             counts=lambda eqn: control.counts_of(eqn.params["jaxpr"]))
def _scan_native(em, eqn):
    p = eqn.params
    nc, nk, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    fn = em.function(p["jaxpr"])
    keep = em.keep_range(fn.n_keep)
    ops = [em.operand(a) for a in eqn.invars]
    consts, init, xs = _split(ops, nc, nk)
    x_avals = [a.aval for a in eqn.invars[nc + nk:]]
    y_vars = eqn.outvars[nk:]
    failed = em.fresh("failed")
    em.line(f"int {failed} = 0;")
    for x, a in zip(xs, x_avals):  # stacked inputs, C-contiguous
        _, typenum, shape = em.ctype(a)
        em.line(f"if (as_carray(&{x}, {typenum}, {a.ndim}, {shape}) < 0) goto done;")
    ys = []
    for v in y_vars:
        em.new_array(em.slot(v), v.aval, var=v)
        ys.append(em.result(v))
    carries = control.Carries(em, [v.aval for v in eqn.outvars[:nk]], init, failed)
    xw, yw = em.fresh("xw"), em.fresh("yw")
    em.line(f"PyObject *{xw}[{max(len(xs), 1)}] = {{NULL}}, *{yw}[{max(len(ys), 1)}] = {{NULL}};")
    step = em.fresh("step")
    em.line(f"for (npy_intp {step} = 0; !{failed} && {step} < {length}; {step}++) {{")
    at = f"{length - 1} - {step}" if reverse else step
    stacked = [(xw, n, x, a) for n, (x, a) in enumerate(zip(xs, x_avals))]
    stacked += [(yw, n, y, v.aval) for n, (y, v) in enumerate(zip(ys, y_vars))]
    for w, n, arr, a in stacked:  # this step's slices
        row = ShapedArray(a.shape[1:], a.dtype)
        _, typenum, shape = em.ctype(row)
        em.line(f"    if (window(&{w}[{n}], {arr}, (char *)PyArray_DATA((PyArrayObject *)"
                f"{arr}) + ({at}) * {control.slice_bytes(row)}, {row.ndim}, {shape}, "
                f"{typenum}) < 0) {{ {failed} = 1; break; }}")
    carries.make_writable()
    io = (consts + carries.reading() + [f"{xw}[{n}]" for n in range(len(xs))]
          + carries.writing() + [f"{yw}[{n}]" for n in range(len(ys))])
    control.call(em, fn, io, keep, failed)
    carries.swap()
    em.line("}")
    carries.finish([em.result(v) for v in eqn.outvars[:nk]])
    em.line(f"for (int k = 0; k < {max(len(xs), 1)}; k++) Py_XDECREF({xw}[k]);")
    em.line(f"for (int k = 0; k < {max(len(ys), 1)}; k++) Py_XDECREF({yw}[k]);")
    em.line(f"if ({failed}) goto done;")


# --------------------------------------------------------------------------------------
# lax.scan


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loops `f(carry, x) -> (carry, y)` over the leading axis of `xs` (pytrees), returning
    the final carry and the stacked `y`s."""
    flat_xs, xs_tree = tree_flatten(xs)
    lengths = {get_aval(x).shape[0] for x in flat_xs if get_aval(x).ndim}
    if any(get_aval(x).ndim == 0 for x in flat_xs):
        scalars = [keystr(p) for p, x in tree_flatten_with_path(xs)[0] if get_aval(x).ndim == 0]
        raise user_error(ValueError, (
            f"scan got an xs value with no leading axis to scan over: xs{scalars[0]} is a "
            "scalar.\nWhat to do: scan runs over the leading axis of every array in xs; pass a "
            "value the body reads whole through the carry or a closure instead."))
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        if not lengths:
            raise user_error(ValueError, (
                "scan got no values to scan over (xs is None or empty) and no `length`.\n"
                "What to do: pass `length=n` to run the body n times with x=None."))
        sizes = ", ".join(f"xs{keystr(p)} has length {get_aval(x).shape[0]}"
                          for p, x in tree_flatten_with_path(xs)[0])
        given = f"; length={length}" if length is not None else ""
        raise user_error(ValueError, (
            f"scan got inconsistent lengths {sorted(lengths)}: {sizes}{given}.\n"
            "What to do: every array in xs is scanned over its leading axis, so their leading "
            "axes (and `length`, if given) must agree."))
    (n,) = lengths
    flat_init, init_tree = tree_flatten(init)
    init_avals = [get_aval(c) for c in flat_init]
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype, get_aval(x).weak_type)
               for x in flat_xs]
    out_tree_box = []

    def body(*args):
        c = tree_unflatten(init_tree, args[:len(flat_init)])
        x = tree_unflatten(xs_tree, args[len(flat_init):])
        out = f(c, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("scan body function must return a pair (carry, y), got "
                            f"{type(out).__name__}")
        new_c, y = out
        flat_c, c_tree = tree_flatten(new_c)
        if c_tree != init_tree:
            raise carry_structure_error("scan", f, init_tree, c_tree)
        flat_y, y_tree = tree_flatten(y)
        out_tree_box.append(y_tree)
        return flat_c + flat_y

    closed, outs = trace_to_jaxpr(body, init_avals + x_avals)
    promoted = promote_weak_carry(flat_init, init_avals, closed.out_avals)
    if promoted is not None:  # trace again with the initial carry the body implies
        flat_init, init_avals = promoted, [get_aval(c) for c in promoted]
        closed, outs = trace_to_jaxpr(body, init_avals + x_avals)
    for i, (a, b) in enumerate(zip(init_avals, closed.out_avals)):
        if not _same_type(a, b):
            raise carry_type_error("scan", f, init_tree, i, a, b)
    outs = _bind_scan(_no_consts(closed), [], flat_init, flat_xs, n, bool(reverse))
    carry = tree_unflatten(init_tree, outs[:len(flat_init)])
    ys = tree_unflatten(out_tree_box[-1], outs[len(flat_init):])
    return carry, ys
