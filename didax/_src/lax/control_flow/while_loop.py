"""`lax.while_loop`: repeat a body while a predicate holds, as a primitive.

The JVP is a while loop carrying tangents too. Under vmap, a batched predicate runs the
loop until every lane is done, updating only the lanes still running. Reverse mode (past
JAX, which refuses it) is in while_reverse.py.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.base_prims import instantiate
from didax._src.compiler.codegen import codegen_rule, tuple_text
from didax._src.compiler.native import control
from didax._src.compiler.native.rules import native_rule
from didax._src.core import Zero, get_aval
from didax._src.errors import function_site, user_error
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import eval_jaxpr, hoist_consts
from didax._src.lax.control_flow import eager_bodies
from didax._src.lax.control_flow.carry_types import (
    carry_structure_error,
    carry_type_error,
    promote_weak_carry,
)
from didax._src.lax.elementwise import select_n
from didax._src.lax.reduction import reduce_or
from didax._src.tree_util import tree_flatten, tree_unflatten

while_p = core.primitive("while", multiple_results=True)


def _split(args, cond_nconsts, body_nconsts):
    args = list(args)
    return (args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts],
            args[cond_nconsts + body_nconsts:])


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, snapshots=None):
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    cond, body = eager_bodies.interpreted(cond_jaxpr), eager_bodies.interpreted(body_jaxpr)
    for _ in range(eager_bodies.COMPILE_AFTER):
        if not cond(*cc, *carry)[0]:
            return [np.asarray(c) for c in carry]
        carry = body(*bc, *carry)
    cond = eager_bodies.compiled(cond_jaxpr, "while_cond")
    body = eager_bodies.compiled(body_jaxpr, "while_body")
    while cond(*cc, *carry)[0]:
        carry = body(*bc, *carry)
    return [np.asarray(c) for c in carry]


def _while_aval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, snapshots=None):
    _, _, carry = _split(avals, cond_nconsts, body_nconsts)
    (pred,) = cond_jaxpr.out_avals
    if pred.shape != () or pred.dtype != np.bool_:
        raise TypeError(f"while_loop: the condition must return a boolean scalar, got "
                        f"{pred.str_short()}")
    for i, (a, b) in enumerate(zip(carry, body_jaxpr.out_avals)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"while_loop body function carry input and carry output must have "
                            f"equal types, but carry {i} goes in as {a.str_short()} and comes "
                            f"out as {b.str_short()}")
    return list(body_jaxpr.out_avals)


while_p.def_impl(_while_impl)
while_p.def_traits(loop=True)
while_p.def_abstract_eval(_while_aval)


def bind_while(cond_closed, body_closed, cond_consts, body_consts, carry, snapshots=None):
    cond_j, cc = hoist_consts(cond_closed)
    body_j, bc = hoist_consts(body_closed)
    cond_consts, body_consts = list(cc) + list(cond_consts), list(bc) + list(body_consts)
    return while_p.bind(*cond_consts, *body_consts, *carry, cond_jaxpr=cond_j, body_jaxpr=body_j,
                        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts),
                        **snapshots_param(snapshots))


def snapshots_param(snapshots):
    """The `snapshots` parameter (didax's own): on an equation only where it is set, so a
    loop's equation has JAX's parameters."""
    return {} if snapshots is None else {"snapshots": snapshots}


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
               snapshots=None):
    cc, bc, carry = _split(primals, cond_nconsts, body_nconsts)
    _, t_bc, t_carry = _split(tangents, cond_nconsts, body_nconsts)
    nz_bc = [type(t) is not Zero for t in t_bc]
    jvp_body, _ = jvp_interp.jvp_jaxpr(body_jaxpr, nz_bc + [True] * len(carry),
                                       instantiate_out=True)
    n_bc, n_tbc, n_c = len(bc), sum(nz_bc), len(carry)
    avals = jvp_body.in_avals

    def body(*args):  # (bc, t_bc, carry, t_carry) -> (carry, t_carry)
        b, tb = args[:n_bc], args[n_bc:n_bc + n_tbc]
        c, tc = args[n_bc + n_tbc:n_bc + n_tbc + n_c], args[n_bc + n_tbc + n_c:]
        return eval_jaxpr(jvp_body.jaxpr, jvp_body.consts, *b, *c, *tb, *tc)

    order = (list(range(n_bc)) + list(range(n_bc + n_c, n_bc + n_c + n_tbc)) +
             list(range(n_bc, n_bc + n_c)) + list(range(n_bc + n_c + n_tbc, len(avals))))
    new_body = trace_to_jaxpr(body, [avals[i] for i in order])[0]

    def cond(*args):  # tangents are ignored by the predicate
        return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *args[:cond_nconsts + n_c])

    c_avals = cond_jaxpr.in_avals
    new_cond = trace_to_jaxpr(cond, list(c_avals) + [a.to_tangent_aval() for a in
                                                     body_jaxpr.out_avals])[0]
    outs = bind_while(new_cond, new_body, cc,
                      list(bc) + [t for t in t_bc if type(t) is not Zero],
                      list(carry) + [instantiate(t) for t in t_carry], snapshots)
    return outs[:n_c], outs[n_c:]


while_p.def_jvp(_while_jvp)


def _while_batch(size, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
                 snapshots=None):
    cc, bc, carry = _split(vals, cond_nconsts, body_nconsts)
    d_cc, d_bc, d_carry = _split(dims, cond_nconsts, body_nconsts)
    carry_b = [d is not None for d in d_carry]
    while True:  # a carry is batched if it is batched after any iteration
        _, out_b = batching.batch_jaxpr_outs(body_jaxpr, size, list(d_bc) +
                                             [0 if b else None for b in carry_b])
        grown = [a or b for a, b in zip(carry_b, out_b)]
        if grown == carry_b:
            break
        carry_b = grown
    c_dims = list(d_cc) + [0 if b else None for b in carry_b]
    _, (pred_batched,) = batching.batch_jaxpr_outs(cond_jaxpr, size, c_dims)
    if not pred_batched:  # every lane stops together: a plain loop over batched values
        b_body, _ = batching.batch_jaxpr_outs(body_jaxpr, size, list(d_bc) +
                                              [0 if b else None for b in carry_b], carry_b)
        b_cond, _ = batching.batch_jaxpr_outs(cond_jaxpr, size, c_dims)
        carry = [batching.bdim_at_front(c, d, size) if b else c
                 for c, d, b in zip(carry, d_carry, carry_b)]
        outs = bind_while(b_cond, b_body, cc, bc, carry, snapshots)
        return outs, [0 if b else None for b in carry_b]
    carry = [batching.bdim_at_front(c, d, size) for c, d in zip(carry, d_carry)]
    b_body = batching.batch_jaxpr(body_jaxpr, size, list(d_bc) + [0] * len(carry))
    b_cond = batching.batch_jaxpr(cond_jaxpr, size, list(d_cc) + [0] * len(carry))
    n_cc, n_bc = len(cc), len(bc)

    def any_running(*args):  # the loop goes on while any lane's predicate holds
        pred = eval_jaxpr(b_cond.jaxpr, b_cond.consts, *args)[0]
        return [reduce_or(pred, (0,))]

    def masked_body(*args):  # lanes whose predicate is false keep their carry
        c_args, b_args, state = args[:n_cc], args[n_cc:n_cc + n_bc], args[n_cc + n_bc:]
        pred = eval_jaxpr(b_cond.jaxpr, b_cond.consts, *c_args, *state)[0]
        new = eval_jaxpr(b_body.jaxpr, b_body.consts, *b_args, *state)
        out = []
        for old, upd in zip(state, new):
            shape = get_aval(upd).shape
            which = pred if len(shape) == 1 else batching.broadcast_front(pred, shape)
            out.append(select_n(which, old, upd))
        return out

    carry_avals = [get_aval(c) for c in carry]
    new_cond = trace_to_jaxpr(any_running, b_cond.in_avals)[0]
    new_body = trace_to_jaxpr(masked_body, list(b_cond.in_avals[:n_cc]) +
                              list(b_body.in_avals[:n_bc]) + carry_avals)[0]
    outs = bind_while(new_cond, new_body, cc, list(cc) + list(bc), carry, snapshots)
    return outs, [0] * len(outs)


while_p.def_batch(_while_batch)


# --------------------------------------------------------------------------------------
# Code generation rule (jit): a while loop over functions generated for cond and body



@codegen_rule(while_p)
def _while_codegen(fb, k, eqn, outs):
    p = eqn.params
    cond = fb.call_sub(p["cond_jaxpr"], f"{fb.fname}_while_cond")
    body = fb.call_sub(p["body_jaxpr"], f"{fb.fname}_while_body")
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    args = [fb.typed(a) for a in eqn.invars]
    cc, bc, init = args[:nc], args[nc:nc + nb], args[nc + nb:]
    fb.line(f"{tuple_text(outs)} = {tuple_text(init)}")
    fb.line(f"while {cond}({', '.join(cc + outs)})[0]:")
    fb.indent += 1
    fb.loop_iteration()
    fb.line(f"{tuple_text(outs)} = {body}({', '.join(bc + outs)})")
    fb.indent -= 1


# Native rule (the native tier of jit): the loop in C, predicate and body compiled as C,
# carries in two buffers swapping roles. It checks for signals (Ctrl-C) each iteration, as
# the Python loop of the NumPy tier would.


def _while_native_when(eqn):
    p = eqn.params
    return control.typed_for_c(eqn) and control.worth_compiling(p["cond_jaxpr"],
                                                                p["body_jaxpr"])


@native_rule(while_p, kind="block", when=_while_native_when,
             counts=lambda eqn: control.counts_of(eqn.params["cond_jaxpr"],
                                                  eqn.params["body_jaxpr"]))
def _while_native(em, eqn):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cond_fn, body_fn = em.function(p["cond_jaxpr"]), em.function(p["body_jaxpr"])
    cond_keep, body_keep = em.keep_range(cond_fn.n_keep), em.keep_range(body_fn.n_keep)
    cc, bc, init = _split([em.operand(a) for a in eqn.invars], nc, nb)
    failed, pred = em.fresh("failed"), em.fresh("pred")
    em.line(f"int {failed} = 0;")
    em.line(f"PyObject *{pred} = PyArray_SimpleNew(0, NULL, NPY_BOOL);")
    em.line(f"if ({pred} == NULL) goto done;")
    carries = control.Carries(em, [v.aval for v in eqn.outvars], init, failed)
    em.line(f"while (!{failed}) {{")
    control.call(em, cond_fn, cc + carries.reading() + [pred], cond_keep, failed)
    em.line(f"    if (!*(npy_bool *)PyArray_DATA((PyArrayObject *){pred})) break;")
    em.line(f"    if (PyErr_CheckSignals() < 0) {{ {failed} = 1; break; }}")
    carries.make_writable()
    control.call(em, body_fn, bc + carries.reading() + carries.writing(), body_keep, failed)
    carries.swap()
    em.line("}")
    em.line(f"Py_DECREF({pred});")
    carries.finish([em.result(v) for v in eqn.outvars])
    em.line(f"if ({failed}) goto done;")


def while_loop(cond_fun, body_fun, init_val, *, snapshots: int | None = None):
    """`while cond_fun(val): val = body_fun(val)`, as one primitive.

    `snapshots` (didax's own) bounds the memory of reverse mode inside `jit`: the backward
    pass keeps at most that many copies of the carry and computes the others again from them
    (see while_reverse.py). None keeps one per iteration."""
    if snapshots is not None and (not isinstance(snapshots, int) or snapshots < 2):
        raise ValueError(f"while_loop: snapshots must be an int >= 2 or None, got {snapshots!r}")
    flat, tree = tree_flatten(init_val)
    avals = [get_aval(x) for x in flat]

    def cond(*args):
        out = cond_fun(tree_unflatten(tree, args))
        aval = get_aval(out)
        if aval.shape != () or aval.dtype != np.bool_:
            raise user_error(TypeError, (
                f"while_loop: cond_fun must return a boolean scalar, got {aval.str_short()} "
                f"from {function_site(cond_fun)}.\nWhat to do: return one bool (`i < n`, "
                "`jnp.all(...)`, `jnp.any(...)`)."))
        return [out]

    def body(*args):
        out = body_fun(tree_unflatten(tree, args))
        leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise carry_structure_error("while_loop", body_fun, tree, out_tree)
        return leaves

    body_closed = trace_to_jaxpr(body, avals)[0]
    promoted = promote_weak_carry(flat, avals, body_closed.out_avals)
    if promoted is not None:  # trace again with the initial carry the body implies
        flat, avals = promoted, [get_aval(x) for x in promoted]
        body_closed = trace_to_jaxpr(body, avals)[0]
    cond_closed = trace_to_jaxpr(cond, avals)[0]
    for i, (a, b) in enumerate(zip(avals, body_closed.out_avals)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise carry_type_error("while_loop", body_fun, tree, i, a, b)
    outs = bind_while(cond_closed, body_closed, [], [], flat, snapshots)
    return tree_unflatten(tree, outs)
