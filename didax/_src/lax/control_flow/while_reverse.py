"""Reverse mode of `while_loop`, which JAX refuses: the loop's rules for partial evaluation
and transposition, and `while_transpose`, the backward loop.

Linearizing a while loop splits it into the loop of its known (primal) carries and the loop
of its tangents, which reads the primal carry of each iteration. Two ways to give the
backward pass those carries:

- Eager differentiation, where the trip count is known at linearization: the primal loop
  runs now and records its iterates; the tangent recurrence is a `scan` over them, which
  transposes like any scan (one copy of the carry per iteration, plus the body's residuals
  unless the body is checkpointed).
- Otherwise (inside `jit`, or when the loop asks for `snapshots`): the linear part is the
  whole loop, primal and tangent, whose residuals are only its initial values. Transposing
  it gives a `while_transpose` equation, which runs the primal loop again, keeping what the
  backward pass needs in storage that grows as the loop runs, then walks the iterations
  backwards, each a transposed step of the body at its recorded carry.
  - With `snapshots=None`, it keeps every iteration's carry: memory n carries; time one
    more primal loop, plus a step of the body's JVP and its transpose per iteration.
  - With `snapshots=s`, it keeps at most s carries. While the loop runs (its trip count
    unknown), it keeps a snapshot every d iterations in half of them, doubling d whenever
    they fill; then, interval by interval from the last, it reverses each interval by
    binomial checkpointing (revolve) in the slots left, computing carries again from the
    snapshots. The cotangents are the same bits either way: the steps run in the same
    order on the same values.
Under vmap each lane runs the backward loop for its own number of iterations.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import core
from didax._src.base_prims import instantiate, zeros_like_aval
from didax._src.compiler.numpy_tier import numpy_executable
from didax._src.core import Zero, asarray_value, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.partial_eval import partial_eval_jaxpr
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, linear_transpose_flat
from didax._src.ir import derived, eval_jaxpr
from didax._src.lax.control_flow.scan import scan
from didax._src.lax.control_flow.while_loop import (
    bind_while,
    snapshots_param,
    while_loop,
    while_p,
)
from didax._src.lax.shape import concatenate, expand_dims


def _split(args, cond_nconsts, body_nconsts):
    args = list(args)
    return (args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts],
            args[cond_nconsts + body_nconsts:])


def _unknown_carries(body_jaxpr, u_bc, u_carry):
    """Which carries depend on the unknown inputs after any number of iterations."""
    while True:
        out_u = partial_eval_jaxpr(body_jaxpr, list(u_bc) + list(u_carry))[2]
        grown = [a or b for a, b in zip(u_carry, out_u)]
        if grown == list(u_carry):
            return grown
        u_carry = grown


def _assemble(known_idx, known, unknown_idx, unknown):
    full = [None] * (len(known_idx) + len(unknown_idx))
    for i, v in zip(known_idx, known):
        full[i] = v
    for i, v in zip(unknown_idx, unknown):
        full[i] = v
    return full


# --------------------------------------------------------------------------------------
# Partial evaluation


def _pe_while(self, args, params):
    cond_j, body_j = params["cond_jaxpr"], params["body_jaxpr"]
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    own = [type(x) is StagingTracer and x._interp is self for x in args]
    cc, bc, carry = _split(args, cn, bn)
    u_cc, u_bc, u_carry = _split(own, cn, bn)
    u_carry = _unknown_carries(body_j, u_bc, u_carry)
    if any(u_cc) or partial_eval_jaxpr(cond_j, list(u_cc) + u_carry)[2][0]:
        raise NotImplementedError("reverse-mode differentiation of a while_loop whose trip "
                                  "count depends on differentiated values")
    known_idx = [i for i, u in enumerate(u_carry) if not u]
    known = [*cc, *[x for x, u in zip(bc, u_bc) if not u], *[carry[i] for i in known_idx]]
    concrete = all(core.concrete_value(x) is not None for x in known)
    if concrete and params.get("snapshots") is None:
        return _pe_recorded(self, cc, bc, carry, u_bc, u_carry, params)
    return _pe_staged(self, args, cc, bc, carry, u_bc, u_carry, params)


def _pe_recorded(self, cc, bc, carry, u_bc, u_carry, params):
    """The trip count is known now: run the known loop, recording its iterates, and express
    the unknown (tangent) recurrence as a scan over them."""
    cond_j, body_j = params["cond_jaxpr"], params["body_jaxpr"]
    known_idx = [i for i, u in enumerate(u_carry) if not u]
    unknown_idx = [i for i, u in enumerate(u_carry) if u]
    zeros = {i: zeros_like_aval(get_aval(carry[i])) for i in unknown_idx}
    ctx = core._ctx
    prev, ctx.interp = ctx.interp, self.parent
    try:  # the known loop, now, recording its iterates (unknown carries stand in as zeros)
        iterates = []
        state = [zeros.get(i, c) for i, c in enumerate(carry)]
        known_bc = [zeros_like_aval(get_aval(x)) if u else x for x, u in zip(bc, u_bc)]
        while bool(eval_jaxpr(cond_j.jaxpr, cond_j.consts, *cc, *state)[0]):
            iterates.append([state[i] for i in known_idx])
            state = eval_jaxpr(body_j.jaxpr, body_j.consts, *known_bc, *state)
    finally:
        ctx.interp = prev
    if not iterates:
        return list(carry)
    stacked = [concatenate([expand_dims(asarray_value(it[k]), (0,)) for it in iterates], 0)
               for k in range(len(known_idx))]

    def step(unknown_state, known_state):
        full = _assemble(known_idx, known_state, unknown_idx, unknown_state)
        outs = eval_jaxpr(body_j.jaxpr, body_j.consts, *bc, *full)
        return [outs[i] for i in unknown_idx], None

    final_unknown, _ = scan(step, [carry[i] for i in unknown_idx], stacked)
    result = list(state)
    for i, v in zip(unknown_idx, final_unknown):
        result[i] = v
    return result


def _pe_staged(self, args, cc, bc, carry, u_bc, u_carry, params):
    """The trip count is not known now: the known loop is staged on its own, and the linear
    part is the whole loop (its residuals: the loop's known initial values), which
    transposes to a `while_transpose`."""
    cond_j, body_j = params["cond_jaxpr"], params["body_jaxpr"]
    kb = [i for i, u in enumerate(u_bc) if not u]
    ub = [i for i, u in enumerate(u_bc) if u]
    kc = [i for i, u in enumerate(u_carry) if not u]
    uc = [i for i, u in enumerate(u_carry) if u]
    steps = _step_jaxprs(cond_j, body_j, len(cc), tuple(kb), tuple(ub), tuple(kc), tuple(uc))
    ctx = core._ctx
    prev, ctx.interp = ctx.interp, self.parent
    try:
        known = bind_while(steps.pred, steps.kstep, cc, [bc[i] for i in kb],
                           [carry[i] for i in kc], params.get("snapshots"))
    finally:
        ctx.interp = prev
    whole = StagingInterpreter.process_primitive(self, while_p, args, params)
    return _assemble(kc, known, uc, [whole[i] for i in uc])


while_p.def_rule("partial_eval", _pe_while)


# --------------------------------------------------------------------------------------
# The step functions the backward loop calls


class _Steps:
    """The loop's pieces as jaxprs: `pred(cc, kc)`, the known step `kstep(kb, kc) -> kc`
    and the transposed step `tstep(kb, kc, ct_uc) -> (ct_ub, ct_uc)` at one iteration."""

    __slots__ = ("pred", "kstep", "tstep", "_run")

    def __init__(self, pred, kstep, tstep):
        self.pred, self.kstep, self.tstep = pred, kstep, tstep
        self._run = None

    def executables(self):
        if self._run is None:
            self._run = tuple(numpy_executable(j, name).run for j, name in (
                (self.pred, "while_pred"), (self.kstep, "while_step"),
                (self.tstep, "while_step_transposed")))
        return self._run


def _step_jaxprs(cond_j, body_j, nc, kb, ub, kc, uc) -> _Steps:
    return derived(body_j, ("while_reverse_steps", cond_j, nc, kb, ub, kc, uc),
                   lambda: _make_steps(cond_j, body_j, nc, kb, ub, kc, uc))


def _make_steps(cond_j, body_j, nc, kb, ub, kc, uc):
    nb = len(kb) + len(ub)
    b_avals, c_avals = body_j.in_avals[:nb], body_j.in_avals[nb:]
    zb = lambda: [zeros_like_aval(b_avals[i]) for i in ub]  # noqa: E731
    zc = lambda: [zeros_like_aval(c_avals[i]) for i in uc]  # noqa: E731

    def pred(*a):
        carry = _assemble(kc, a[nc:], uc, zc())
        return eval_jaxpr(cond_j.jaxpr, cond_j.consts, *a[:nc], *carry)

    def kstep(*a):
        bcs, carry = _assemble(kb, a[:len(kb)], ub, zb()), _assemble(kc, a[len(kb):], uc, zc())
        outs = eval_jaxpr(body_j.jaxpr, body_j.consts, *bcs, *carry)
        return [outs[i] for i in kc]

    def tstep(*a):
        known_b, known_c, ct = a[:len(kb)], a[len(kb):len(kb) + len(kc)], a[len(kb) + len(kc):]

        def linear(*u):
            bcs = _assemble(kb, known_b, ub, u[:len(ub)])
            outs = eval_jaxpr(body_j.jaxpr, body_j.consts, *bcs,
                              *_assemble(kc, known_c, uc, u[len(ub):]))
            return [outs[i] for i in uc]

        avals = [b_avals[i] for i in ub] + [c_avals[i] for i in uc]
        _, transposed = linear_transpose_flat(linear, [a.strip_weak_type() for a in avals])
        return transposed(list(ct))

    kb_avals, kc_avals = [b_avals[i] for i in kb], [c_avals[i] for i in kc]
    uc_avals = [c_avals[i] for i in uc]
    return _Steps(trace_to_jaxpr(pred, list(cond_j.in_avals[:nc]) + kc_avals)[0],
                  trace_to_jaxpr(kstep, kb_avals + kc_avals)[0],
                  trace_to_jaxpr(tstep, kb_avals + kc_avals + uc_avals)[0])


# --------------------------------------------------------------------------------------
# Transposition: while_transpose(cc, kb, kc, ct_uc) -> (ct_ub, ct_uc)


def _while_transpose_rule(cts, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
                          snapshots=None):
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    if any(is_undefined(x) for x in cc):
        raise NotImplementedError("transpose of a while_loop whose predicate reads a linear "
                                  "input")
    u_bc = [is_undefined(x) for x in bc]
    # (a carry whose initial value is known and which the linear inputs reach is linear too:
    # a tangent that starts at zero; its initial value is no input of the linear map)
    u_carry = _unknown_carries(body_jaxpr, u_bc, [is_undefined(x) for x in carry])
    kb = tuple(i for i, u in enumerate(u_bc) if not u)
    ub = tuple(i for i, u in enumerate(u_bc) if u)
    kc = tuple(i for i, u in enumerate(u_carry) if not u)
    uc = tuple(i for i, u in enumerate(u_carry) if u)
    if any(type(cts[i]) is not Zero for i in kc):
        raise NotImplementedError("transpose of a while_loop with a cotangent for a carry "
                                  "that is not linear")
    ct_uc = [instantiate(cts[i]) for i in uc]
    outs = while_transpose_p.bind(
        *cc, *[bc[i] for i in kb], *[carry[i] for i in kc], *ct_uc,
        cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
        kb=kb, ub=ub, kc=kc, uc=uc, snapshots=snapshots, lanes=())
    result = [None] * len(args)
    base = cond_nconsts
    for i, ct in zip(ub, outs[:len(ub)]):
        result[base + i] = ct
    for i, ct in zip(uc, outs[len(ub):]):
        if is_undefined(carry[i]):
            result[base + body_nconsts + i] = ct
    return result


while_p.def_transpose(_while_transpose_rule)

while_transpose_p = core.primitive("while_transpose", multiple_results=True)
while_transpose_p.pp_hidden = {"snapshots": None, "lanes": ()}


def _operands(args, cond_nconsts, kb, kc):
    args = list(args)
    a, b = cond_nconsts, cond_nconsts + len(kb)
    return args[:a], args[a:b], args[b:b + len(kc)], args[b + len(kc):]


def _transpose_aval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, kb, ub, kc, uc, snapshots,
                    lanes):
    nb = len(kb) + len(ub)
    b_avals, c_avals = body_jaxpr.in_avals[:nb], body_jaxpr.in_avals[nb:]
    front = tuple(size for size, _ in lanes)
    return [core.ShapedArray(front + a.shape, a.dtype, a.weak_type)
            for a in [b_avals[i] for i in ub] + [c_avals[i] for i in uc]]


def _transpose_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, kb, ub, kc, uc, snapshots,
                    lanes):
    if lanes:  # vmapped: each lane runs its own backward loop
        (size, batched), inner = lanes[0], lanes[1:]
        per_lane = [_transpose_impl(*[a[b] if m else a for a, m in zip(args, batched)],
                                    cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                                    cond_nconsts=cond_nconsts, kb=kb, ub=ub, kc=kc, uc=uc,
                                    snapshots=snapshots, lanes=inner)
                    for b in range(size)]
        return [np.stack(outs) for outs in zip(*per_lane)]
    steps = _step_jaxprs(cond_jaxpr, body_jaxpr, cond_nconsts, kb, ub, kc, uc)
    cc, known_b, known_c, ct = _operands(args, cond_nconsts, kb, kc)
    zeros = [np.zeros(body_jaxpr.in_avals[i].shape, body_jaxpr.in_avals[i].dtype) for i in ub]
    walk = _Backward(steps.executables(), cc, known_b, list(ct), zeros)
    if snapshots is None:
        walk.every_iteration(known_c)
    else:
        walk.with_snapshots(known_c, snapshots)
    return [*walk.ct_b, *walk.ct_c]


class _Backward:
    """The backward loop: cotangents walked back through the iterations, last first."""

    def __init__(self, run, cc, known_b, ct_c, ct_b):
        self.pred, self.kstep, self.tstep = run
        self.cc, self.known_b = cc, known_b
        self.ct_c, self.ct_b = ct_c, ct_b
        self.nb = len(ct_b)

    def running(self, state):
        return bool(self.pred(*self.cc, *state)[0])

    def advance(self, state, steps=1):
        for _ in range(steps):
            state = list(self.kstep(*self.known_b, *state))
        return state

    def back(self, state):
        """The transposed step of the iteration that starts at `state`."""
        outs = self.tstep(*self.known_b, *state, *self.ct_c)
        self.ct_b = [a + b for a, b in zip(self.ct_b, outs[:self.nb])]
        self.ct_c = list(outs[self.nb:])

    def every_iteration(self, state):
        tape = []
        while self.running(state):
            tape.append(state)
            state = self.advance(state)
        for state in reversed(tape):
            self.back(state)

    def with_snapshots(self, state, slots):
        held = max(1, slots // 2)  # (the others are for reversing between snapshots)
        snaps, every, i = [(0, state)], 1, 0
        while self.running(state):
            state = self.advance(state)
            i += 1
            if i % every == 0:
                snaps.append((i, state))
                if len(snaps) > held:
                    every *= 2
                    snaps = [s for s in snaps if s[0] % every == 0]
        del state
        ends = [s[0] for s in snaps[1:]] + [i]
        for k in reversed(range(len(snaps))):
            start, first = snaps.pop()
            if ends[k] > start:
                self.revolve(first, ends[k] - start, slots - (k + 1))

    def revolve(self, first, length, free):
        """Reverses `length` iterations from the carry `first`, keeping at most `free` more
        carries (binomial checkpointing)."""
        if length == 1:
            self.back(first)
        elif length - 1 <= free:  # every carry fits
            states = [first]
            for _ in range(length - 1):
                states.append(self.advance(states[-1]))
            for state in reversed(states):
                self.back(state)
        elif free == 0:  # each carry computed again from the first
            for j in reversed(range(length)):
                self.back(self.advance(first, j))
        else:
            m = length - _later_part(length, free)
            middle = self.advance(first, m)
            self.revolve(middle, length - m, free - 1)
            del middle
            self.revolve(first, m, free)


def _later_part(length, free):
    """How many of `length` iterations to reverse first, with one slot fewer: revolve's
    split, where `free` slots and t sweeps reverse C(free + t, t) iterations."""
    t = 1
    while math.comb(free + t, t) < length:
        t += 1
    return max(1, min(math.comb(free - 1 + t, t), length - 1))


def _transpose_jvp(primals, tangents, **params):
    cn, kb, kc = params["cond_nconsts"], params["kb"], params["kc"]
    _, _, _, t_ct = _operands(tangents, cn, kb, kc)
    outs = while_transpose_p.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents[:len(tangents) - len(t_ct)]):
        # linear in the cotangents: the same backward loop carries their tangents
        c_part = list(primals[:len(primals) - len(t_ct)])
        t_out = while_transpose_p.bind(*c_part, *[instantiate(t) for t in t_ct], **params)
        return outs, t_out
    _, t_out = jvp_interp.jvp_flat(lambda *a: _recomputing(a, params["lanes"], params),
                                   list(primals), list(tangents))
    return outs, t_out


def _recomputing(args, lanes, params):
    if not lanes:
        return _transpose_by_recomputing(args, **params)
    (size, batched), inner = lanes[0], lanes[1:]
    return batching.vmap_flat(lambda *a: _recomputing(a, inner, params), list(args),
                              [0 if b else None for b in batched], size)


def _transpose_by_recomputing(args, *, cond_jaxpr, body_jaxpr, cond_nconsts, kb, ub, kc, uc,
                              snapshots, lanes):
    """The backward loop as while loops (differentiable, hence what forward mode
    differentiates), computing each iteration's carry again from the first: quadratic in
    the trip count."""
    steps = _step_jaxprs(cond_jaxpr, body_jaxpr, cond_nconsts, kb, ub, kc, uc)
    cc, known_b, known_c, ct = _operands(args, cond_nconsts, kb, kc)
    pred = lambda c: eval_jaxpr(steps.pred.jaxpr, steps.pred.consts, *cc, *c)[0]  # noqa: E731
    kstep = lambda c: eval_jaxpr(steps.kstep.jaxpr, steps.kstep.consts,  # noqa: E731
                                 *known_b, *c)
    n = while_loop(lambda s: pred(s[1]), lambda s: (s[0] + 1, kstep(s[1])),
                   (np.int32(0), list(known_c)))[0]

    def carry_at(j):
        return while_loop(lambda s: s[0] < j, lambda s: (s[0] + 1, kstep(s[1])),
                          (np.int32(0), list(known_c)))[1]

    def back(s):
        j, ct_b, ct_c = s
        outs = eval_jaxpr(steps.tstep.jaxpr, steps.tstep.consts, *known_b, *carry_at(j), *ct_c)
        nb = len(ct_b)
        return j - 1, [a + b for a, b in zip(ct_b, outs[:nb])], list(outs[nb:])

    zeros = [zeros_like_aval(body_jaxpr.in_avals[i]) for i in ub]
    _, ct_b, ct_c = while_loop(lambda s: s[0] >= 0, back, (n - 1, zeros, list(ct)))
    return [*ct_b, *ct_c]


def _transpose_transpose(cts, *args, cond_jaxpr, body_jaxpr, cond_nconsts, kb, ub, kc, uc,
                         snapshots, lanes):
    """Linear in the cotangents it walks back: its transpose is the tangent loop."""
    cc, known_b, known_c, ct = _operands(args, cond_nconsts, kb, kc)
    if any(is_undefined(x) for x in [*cc, *known_b, *known_c]) or lanes:
        raise NotImplementedError("transpose of while_transpose with respect to the loop's "
                                  "inputs")
    t_b, t_c = [instantiate(c) for c in cts[:len(ub)]], [instantiate(c) for c in cts[len(ub):]]
    bc = _assemble(list(kb), known_b, list(ub), t_b)
    carry = _assemble(list(kc), known_c, list(uc), t_c)
    outs = while_p.bind(*cc, *bc, *carry, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                        cond_nconsts=cond_nconsts, body_nconsts=len(bc),
                        **snapshots_param(snapshots))
    return [None] * (len(args) - len(ct)) + [outs[i] for i in uc]


def _transpose_batch(size, vals, dims, **params):
    batched = tuple(d is not None for d in dims)
    vals = [batching.bdim_at_front(v, d, size) if d is not None else v
            for v, d in zip(vals, dims)]
    lanes = ((size, batched),) + params["lanes"]
    outs = while_transpose_p.bind(*vals, **dict(params, lanes=lanes))
    return outs, [0] * len(outs)


while_transpose_p.def_impl(_transpose_impl)
while_transpose_p.def_abstract_eval(_transpose_aval)
while_transpose_p.def_jvp(_transpose_jvp)
while_transpose_p.def_transpose(_transpose_transpose)
while_transpose_p.def_batch(_transpose_batch)
