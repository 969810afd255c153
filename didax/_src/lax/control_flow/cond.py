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
from didax._src.compiler.codegen import codegen_rule, tuple_text
from didax._src.compiler.native import control
from didax._src.compiler.native.rules import native_rule
from didax._src.core import Zero, get_aval
from didax._src.errors import function_site, user_error
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.partial_eval import partial_eval_jaxpr
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, transpose_jaxpr
from didax._src.ir import eval_jaxpr, hoist_consts
from didax._src.lax.control_flow import eager_bodies
from didax._src.lax.elementwise import clamp, convert_element_type, ne, select_n
from didax._src.tree_util import (
    first_difference,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)

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
    return eager_bodies.interpreted(branches[i])(*ops)


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
# Native rule (the native tier of jit): a C switch over the branches compiled as C, each
# writing the results into the same arrays; the index clamped as the impl clamps it.


def _cond_native_when(eqn):
    return (control.typed_for_c(eqn) and eqn.invars[0].aval.dtype.kind in "iub"
            and control.worth_compiling(*eqn.params["branches"]))


@native_rule(cond_p, kind="block", when=_cond_native_when,
             counts=lambda eqn: control.counts_of(*eqn.params["branches"]))
def _cond_native(em, eqn):
    branches = eqn.params["branches"]
    fns = [em.function(b) for b in branches]
    keeps = [em.keep_range(f.n_keep) for f in fns]
    index, *ops = [em.operand(a) for a in eqn.invars]
    a = eqn.invars[0].aval
    ctype, typenum, shape = em.ctype(a)
    at = em.fresh("branch")
    em.line(f"if (as_carray(&{index}, {typenum}, 0, {shape}) < 0) goto done;")
    value = f"*({ctype} *)PyArray_DATA((PyArrayObject *){index})"
    em.line(f"npy_intp {at} = {len(fns) - 1};")  # clamped into range, as the impl does
    if a.dtype.kind == "u" or a.dtype == np.bool_:
        em.line(f"if ((npy_uint64){value} < {len(fns)}ULL) {at} = (npy_intp){value};")
    else:
        em.line(f"if ((npy_int64){value} < 0) {at} = 0;")
        em.line(f"else if ((npy_int64){value} < {len(fns)}LL) {at} = (npy_intp){value};")
    for v in eqn.outvars:
        em.new_array(em.slot(v), v.aval, var=v)
    io = ops + [em.result(v) for v in eqn.outvars]
    em.line(f"switch ({at}) {{")
    for k, (fn, keep) in enumerate(zip(fns, keeps)):
        em.line(f"case {k}: {{")
        control.call(em, fn, io, keep, None, indent="    ")
        em.line("    break;")
        em.line("}")
    em.line("}")


# --------------------------------------------------------------------------------------
# lax.cond and lax.switch


def _branch_label(names, k, f) -> str:
    label, site = names[k] if names else f"branch {k}", function_site(f)
    return site if site.split(" ")[0] == label else f"{label} = {site}"


def _check_branch_outputs(op, branches, names, out_trees, traced):
    """The branches' outputs must agree in structure, shapes and dtypes: name the first
    output that differs and the two branch functions, as defined by the user."""
    dummies = [tree_unflatten(t, range(t.num_leaves)) for t in out_trees]
    base = names.index("true_fun") if names else 0  # cond reads true_fun first
    for k in range(len(branches)):
        if k == base:
            continue
        diff = first_difference(dummies[base], dummies[k])
        if diff is not None:
            path, has_base, has_k = diff
            at = f" at output{path}" if path else ""
            raise user_error(TypeError, (
                f"{op} branch outputs must have the same pytree structure, but they differ{at}: "
                f"{_branch_label(names, base, branches[base])} returns {has_base}, and "
                f"{_branch_label(names, k, branches[k])} returns {has_k}.\n"
                "What to do: make every branch return the same structure (the same "
                "containers, keys and number of entries)."))
        paths = [keystr(p) for p, _ in tree_flatten_with_path(dummies[base])[0]]
        for path, a, b in zip(paths, traced[base].out_avals, traced[k].out_avals):
            if a.shape != b.shape or a.dtype != b.dtype:
                what = "shapes" if a.shape != b.shape else "dtypes"
                out = f"output{path}" if path else "the output"
                raise user_error(TypeError, (
                    f"{op} branches must have equal output types, but {out} of "
                    f"{_branch_label(names, base, branches[base])} is {a.str_short()} and of "
                    f"{_branch_label(names, k, branches[k])} is {b.str_short()}: the {what} "
                    "differ.\nWhat to do: make the branches agree on every output's shape and "
                    "dtype (e.g. `.astype(...)`, `jnp.broadcast_to(...)`, `jnp.zeros_like(...)`)."))


def switch(index, branches, *operands, _clamp=True, _names=None):
    """`branches[index](*operands)`, the index clamped into range (as in JAX)."""
    branches = list(branches)
    if not branches:
        raise ValueError("switch: at least one branch is needed")
    index_aval = get_aval(index)
    if index_aval.shape != () or index_aval.dtype.kind not in "iub":
        raise user_error(TypeError, (
            f"switch: the branch index must be an integer scalar, got {index_aval.str_short()}."
            "\nWhat to do: convert it (`i.astype(jnp.int32)`, `int(i)` for a Python number)."))
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

    raw = [trace_to_jaxpr(flat_fun(f), in_avals)[0] for f in branches]
    _check_branch_outputs("cond" if _names else "switch", branches, _names, out_trees, raw)
    traced, consts = _uniform(raw)
    concrete = core.concrete_value(index)
    idx = convert_element_type(index, np.int32)
    if _clamp and len(branches) > 1 and concrete is None:
        idx = clamp(np.int32(0), idx, np.int32(len(branches) - 1))
    outs = _bind_cond(idx, traced, list(consts) + flat)
    return tree_unflatten(out_trees[0], outs)


def cond(pred, true_fun, false_fun, *operands, operand=None):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, as one primitive (both
    branches are traced; only one runs). The older form
    `cond(pred, true_operand, true_fun, false_operand, false_fun)` is accepted too."""
    if (len(operands) == 2 and not callable(true_fun) and callable(false_fun)
            and callable(operands[1])):
        (true_operand, true_fun), (false_operand, false_fun) = ((true_fun, false_fun),
                                                                 operands)
        return cond(pred, lambda ops: true_fun(ops[0]), lambda ops: false_fun(ops[1]),
                    (true_operand, false_operand))
    if operand is not None:
        operands = (operand,)
    aval = get_aval(pred)
    if aval.shape != ():
        raise user_error(TypeError, (
            f"cond: the predicate must be a scalar, got {aval.str_short()} (shape "
            f"{aval.shape}).\nWhat to do: for an elementwise choice use "
            "`jnp.where(pred, a, b)`; for one decision reduce the predicate first "
            "(`jnp.all(pred)`, `jnp.any(pred)`); under vmap, cond already chooses per element."))
    if aval.dtype != np.bool_ and dtypes.kind(aval.dtype) not in "iu":
        raise user_error(TypeError, f"cond: the predicate must be a boolean or integer scalar, "
                         f"got {aval.str_short()}; compare it (`x > 0`) to get a boolean")
    if aval.dtype != np.bool_:
        pred = ne(pred, np.asarray(0, aval.dtype))
    return switch(convert_element_type(pred, np.int32), [false_fun, true_fun], *operands,
                  _clamp=False, _names=("false_fun", "true_fun"))  # a bool is in range
