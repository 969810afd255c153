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
from didax._src.base_prims import add_tangents, instantiate, transpose, zeros_like_aval
from didax._src.compiler.codegen import codegen_rule, tuple_text
from didax._src.compiler.loop_passes import hoist_accumulated_products, rewrite_stacked_loop
from didax._src.compiler.native import control
from didax._src.compiler.native.rules import native_rule
from didax._src.core import ShapedArray, Zero, get_aval
from didax._src.errors import user_error
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.partial_eval import PartialEvalInterpreter, partial_eval_jaxpr
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, transpose_jaxpr
from didax._src.ir import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr, hoist_consts
from didax._src.lax.control_flow import eager_bodies
from didax._src.lax.control_flow.carry_types import (
    carry_structure_error,
    carry_type_error,
    promote_weak_carry,
)
from didax._src.lax.dot import dot_general
from didax._src.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

scan_p = core.primitive("scan", multiple_results=True)
# jit moves work out of its loop (compiler/loop_passes.py), knowing it by these params
scan_p.def_traits(loop=True, stacked_loop=core.StackedLoop(
    body="jaxpr", length="length", reverse="reverse", num_consts="num_consts",
    num_carry="num_carry"))
scan_p.def_rule("rewrite", rewrite_stacked_loop)


def _split(seq, num_consts, num_carry):
    seq = list(seq)
    return seq[:num_consts], seq[num_consts:num_consts + num_carry], seq[num_consts + num_carry:]


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    consts, carry, xs = _split(args, num_consts, num_carry)
    body = (eager_bodies.compiled(jaxpr, "scan_body") if length > eager_bodies.COMPILE_AFTER
            else eager_bodies.interpreted(jaxpr))
    ys = []
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = body(*consts, *carry, *[x[i, ...] for x in xs])
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
               hoist_accumulated_products(body, n_kc, n_lc, num_carry))
    if hoisted is not None:  # products summed over the loop: one product after it
        body, kept, sums, n_new = hoisted
        n_kept = len(kept)
        outer_xs = k_xs + ct_ys
        zeros = [zeros_like_aval(lc_avals[a]) for a in kept]
        outs = _bind_scan(body, k_consts, zeros + ct_carry, outer_xs, length, not reverse)
        ys_out = outs[len(outs) - n_new:]
        ct_lin_consts = _stacked_sums(sums, kept, outs[:n_kept], outer_xs, ys_out, n_lc)
        ct_init = outs[n_kept:n_kept + num_carry]
        ct_lin_xs = iter(outs[n_kept + num_carry:len(outs) - n_new])
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


def _stacked_sums(sums, kept, kept_vals, outer_xs, ys_out, n_acc):
    """The accumulators' cotangents after a transposed loop whose accumulations of products
    were hoisted (loop_passes.hoist_accumulated_products): each moved one is a product over
    the stacked axis of its factors; `kept_vals` are the others'."""
    new_ys = list(ys_out)
    vals = dict(zip(kept, kept_vals))
    for s in sums:
        x, y = [outer_xs[k] if src == "xs" else new_ys[k] for src, k in s.sources]
        (lc, rc), _ = s.params["dimension_numbers"]
        dn = (((0, *[d + 1 for d in lc]), (0, *[d + 1 for d in rc])), ((), ()))
        total = dot_general(x, y, dn, preferred_element_type=s.params.get(
            "preferred_element_type"))
        vals[s.acc] = total if s.perm is None else transpose(total, s.perm)
    return [vals[a] for a in range(n_acc)]


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
    fb.loop_iteration()
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
