"""`lax.cond` and `lax.switch`: choose one of several closed jaxprs by an integer index.

Every rule transforms the branches alike and emits a cond again: the JVP is a cond of JVP'd
branches; partial evaluation splits each branch, with one residual slot per branch (zeros
in the slots of the branches not taken); the transpose is a cond of transposed branches;
under vmap a batched index turns the cond into a select of every branch's result.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import instantiate, zeros_like_aval
from didax._src.core import Zero, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.partial_eval import partial_eval_jaxpr
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, transpose_jaxpr
from didax._src.ir import eval_jaxpr, hoist_consts
from didax._src.lax.elementwise import clamp, convert_element_type, ne, select_n
from didax._src.tree_util import tree_flatten, tree_unflatten
from didax._src.jit.codegen import codegen_rule, tuple_text

cond_p = core.primitive("cond", multiple_results=True)


def _uniform(closed_list):
    """Branches that all take every branch's constants first (each reads its own), and
    those constants: cond's branches must share one signature."""
    parts = [hoist_consts(c) for c in closed_list]
    consts = [c for _, cs in parts for c in cs]
    const_avals = [get_aval(c) for c in consts]
    out, lo = [], 0
    for b, cs in parts:
        n = len(cs)

        def fun(*args, b=b, lo=lo, n=n):
            c, rest = args[:len(consts)], args[len(consts):]
            return eval_jaxpr(b.jaxpr, [], *c[lo:lo + n], *rest)

        traced = trace_to_jaxpr(fun, const_avals + b.in_avals[n:])[0]
        assert not traced.consts
        out.append(traced)
        lo += n
    return tuple(out), consts


def _bind_cond(index, branches, operands, stage_in=None):
    params = dict(branches=tuple(branches))
    if stage_in is not None:
        return StagingInterpreter.process_primitive(stage_in, cond_p, [index, *operands], params)
    return cond_p.bind(index, *operands, **params)


def _cond_impl(index, *ops, branches):
    i = int(np.clip(index, 0, len(branches) - 1))
    outs = eval_jaxpr(branches[i].jaxpr, branches[i].consts, *[core.Array(o) for o in ops])
    return [np.asarray(o) for o in outs]


def _cond_aval(index, *ops, branches):
    if index.shape != () or dtypes.kind(index.dtype) not in "iu":
        raise TypeError(f"cond: the branch index must be an integer scalar, got "
                        f"{index.str_short()}")
    first = branches[0].out_avals
    for k, b in enumerate(branches[1:], 1):
        outs = b.out_avals
        if len(outs) != len(first) or any(a.shape != c.shape or a.dtype != c.dtype
                                           for a, c in zip(first, outs)):
            raise TypeError(
                "cond branches must have equal output types, but branch 0 gives "
                f"({', '.join(a.str_short() for a in first)}) and branch {k} gives "
                f"({', '.join(a.str_short() for a in outs)})")
    return [a.update(weak_type=all(b.out_avals[i].weak_type for b in branches))
            for i, a in enumerate(first)]


cond_p.def_impl(_cond_impl)
cond_p.def_abstract_eval(_cond_aval)


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    t_ops = tangents[1:]
    nonzeros = [type(t) is not Zero for t in t_ops]
    new = tuple(jvp_interp.jvp_jaxpr(b, nonzeros, instantiate_out=True)[0] for b in branches)
    outs = _bind_cond(index, new, list(ops) + [t for t in t_ops if type(t) is not Zero])
    n = len(branches[0].out_avals)
    return outs[:n], outs[n:]


cond_p.def_jvp(_cond_jvp)


def _pe_cond(self, args, params):
    branches = params["branches"]
    index, ops = args[0], list(args[1:])
    own = lambda x: type(x) is StagingTracer and x._interp is self  # noqa: E731
    if own(index):  # an unknown index: the whole choice is staged
        return StagingInterpreter.process_primitive(self, cond_p, args, params)
    unknowns = [own(x) for x in ops]
    out_u = [False] * len(branches[0].out_avals)
    for b in branches:
        out_u = [a or c for a, c in zip(out_u, partial_eval_jaxpr(b, unknowns)[2])]
    splits = [partial_eval_jaxpr(b, unknowns, instantiate=out_u) for b in branches]
    res_avals = [k.out_avals[len(k.out_avals) - nres:] for k, _, _, nres in splits]
    known_ops = [x for x, u in zip(ops, unknowns) if not u]
    unknown_ops = [x for x, u in zip(ops, unknowns) if u]
    num_known_out = out_u.count(False)

    def known_branch(i):  # known outputs, then every branch's residual slot
        k, _, _, nres = splits[i]

        def fun(*args):
            outs = eval_jaxpr(k.jaxpr, k.consts, *args)
            slots = []
            for j, avals in enumerate(res_avals):
                slots += (outs[num_known_out:] if j == i else
                          [zeros_like_aval(a) for a in avals])
            return outs[:num_known_out] + slots

        return trace_to_jaxpr(fun, [get_aval(x) for x in known_ops])[0]

    def unknown_branch(i):  # every slot, then the unknown operands
        _, u, _, nres = splits[i]
        lo = sum(len(a) for a in res_avals[:i])
        all_res = [a for avals in res_avals for a in avals]

        def fun(*args):
            res, rest = args[:len(all_res)], args[len(all_res):]
            return eval_jaxpr(u.jaxpr, u.consts, *res[lo:lo + nres], *rest)

        return trace_to_jaxpr(fun, all_res + [get_aval(x) for x in unknown_ops])[0]

    known, k_consts = _uniform([known_branch(i) for i in range(len(branches))])
    with core.interpreter_context(self.parent):
        k_outs = _bind_cond(index, known, k_consts + known_ops)
    residuals = k_outs[num_known_out:]
    unknown, u_consts = _uniform([unknown_branch(i) for i in range(len(branches))])
    u_outs = _bind_cond(index, unknown, u_consts + residuals + unknown_ops, stage_in=self)
    k_it, u_it = iter(k_outs[:num_known_out]), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_u]


cond_p.def_rule("partial_eval", _pe_cond)


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise NotImplementedError("transpose of cond: the index must be known")
    linear = [is_undefined(x) for x in ops]
    cts = [instantiate(c) for c in cts]
    known_ops = [x for x in ops if not is_undefined(x)]
    new, consts = _uniform([transpose_jaxpr(b, linear) for b in branches])
    outs = iter(_bind_cond(index, new, consts + known_ops + cts))
    return [None] + [next(outs) if lin else None for lin in linear]


cond_p.def_transpose(_cond_transpose)


def _cond_batch(size, vals, dims, *, branches):
    index, ops = vals[0], vals[1:]
    d_index, d_ops = dims[0], dims[1:]
    if d_index is None:
        out_b = [False] * len(branches[0].out_avals)
        for b in branches:
            out_b = [x or y for x, y in zip(out_b, batching.batch_jaxpr_outs(
                b, size, list(d_ops))[1])]
        new = tuple(batching.batch_jaxpr_outs(b, size, list(d_ops), out_b)[0]
                    for b in branches)
        outs = _bind_cond(index, new, ops)
        return outs, [0 if b else None for b in out_b]
    # A batched index: every branch runs on every example, then a select picks per example.
    results = [batching_outs(b, size, ops, d_ops) for b in branches]
    idx = batching.moveaxis(index, d_index, 0)
    idx = clamp(np.int32(0), convert_element_type(idx, np.int32), np.int32(len(branches) - 1))
    outs = []
    for per_branch in zip(*results):
        shape = get_aval(per_branch[0]).shape
        which = idx if len(shape) == 1 else batching.broadcast_front(idx, shape)
        outs.append(select_n(which, *per_branch))
    return outs, [0] * len(outs)


def batching_outs(branch, size, ops, dims):
    return eval_jaxpr(batching.batch_jaxpr(branch, size, list(dims)).jaxpr, [], *ops)


cond_p.def_batch(_cond_batch)


# --------------------------------------------------------------------------------------
# Code generation rule (jit): an if/elif chain over functions generated for the branches



@codegen_rule(cond_p)
def _cond_codegen(fb, k, eqn, outs):
    branches = eqn.params["branches"]
    index, *ops = [fb.typed(a) for a in eqn.invars]
    names = [fb.call_sub(b, f"{fb.fname}_branch{i}") for i, b in enumerate(branches)]
    call = f"({', '.join(ops)})"
    lhs = tuple_text(outs)
    if len(names) == 1:
        fb.line(f"{lhs} = {names[0]}{call}")
        return
    for i, n in enumerate(names):
        if i == 0:
            fb.line(f"if {index} <= 0:")
        elif i == len(names) - 1:
            fb.line("else:")
        else:
            fb.line(f"elif {index} == {i}:")
        fb.indent += 1
        fb.line(f"{lhs} = {n}{call}")
        fb.indent -= 1


# --------------------------------------------------------------------------------------
# lax.cond and lax.switch


def switch(index, branches, *operands, _clamp=True):
    """`branches[index](*operands)`, the index clamped into range (as in JAX)."""
    branches = list(branches)
    if not branches:
        raise ValueError("switch: at least one branch is needed")
    flat, in_tree = tree_flatten(operands)
    in_avals = [get_aval(x) for x in flat]
    out_trees = []

    def flat_fun(f):
        def fun(*args):
            out = f(*tree_unflatten(in_tree, args))
            leaves, tree = tree_flatten(out)
            out_trees.append(tree)
            return leaves

        return fun

    traced, consts = _uniform([trace_to_jaxpr(flat_fun(f), in_avals)[0] for f in branches])
    if any(t != out_trees[0] for t in out_trees):
        raise TypeError("cond branches must return the same pytree structure, got "
                        + " and ".join(str(t) for t in out_trees))
    concrete = core.concrete_value(index)
    idx = convert_element_type(index, np.int32)
    if _clamp and len(branches) > 1 and concrete is None:
        idx = clamp(np.int32(0), idx, np.int32(len(branches) - 1))
    outs = _bind_cond(idx, traced, list(consts) + flat)
    return tree_unflatten(out_trees[0], outs)


def cond(pred, true_fun, false_fun, *operands, operand=None):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, as one primitive (both
    branches are traced; only one runs)."""
    if operand is not None:
        operands = (operand,)
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"cond: the predicate must be a scalar, got {aval.str_short()}; use "
                        "jnp.where for elementwise choices")
    if aval.dtype != np.bool_ and dtypes.kind(aval.dtype) not in "iu":
        raise TypeError(f"cond: the predicate must be a boolean or integer scalar, got "
                        f"{aval.dtype.name}")
    if aval.dtype != np.bool_:
        pred = ne(pred, np.asarray(0, aval.dtype))
    return switch(convert_element_type(pred, np.int32), [false_fun, true_fun], *operands,
                  _clamp=False)  # a boolean is always in range
