"""Functions with user-defined derivative rules: `custom_jvp` and `custom_vjp`.

A call is handed whole to the current interpreter (`process_custom_jvp/_vjp`). Evaluation
just runs the function; JVP runs the user's rule; staging records one equation that
keeps the rule, so the staged program can be differentiated later.

`custom_vjp` under JVP runs `fwd` now and emits `custom_lin`, an equation linear in the
tangents whose transpose is the user's `bwd`. Reverse mode transposes it (calling `bwd`,
which is itself differentiable: higher orders work). Forward mode (which JAX refuses)
evaluates `custom_lin` by transposing `bwd`: `bwd` is linear in the cotangent, so its
transpose maps input tangents to output tangents, J u = (u -> J^T)^T.
"""
from __future__ import annotations

import copy
import functools
import inspect

import numpy as np

from didax._src import core
from didax._src.base_prims import instantiate, reduce_sum, zeros_like_aval
from didax._src.core import Zero, get_aval
from didax._src.errors import function_site, user_error
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.batching import BatchInterpreter, moveaxis
from didax._src.interpreters.jvp import JVPInterpreter
from didax._src.interpreters.partial_eval import PartialEvalInterpreter
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, linear_transpose_flat, transpose_jaxpr
from didax._src.ir import derived, eval_jaxpr, hoist_consts
from didax._src.primitives.jit_call import bind_call, call_cotangents
from didax._src.tree_util import (
    first_difference,
    tree_flatten,
    tree_map,
    tree_structure,
    tree_unflatten,
)


class _Named:
    """A callable parameter that prints as its name in jaxprs (`jvp=f_jvp`)."""

    def __init__(self, fn, name):
        self.fn = fn
        self.name = name

    def __call__(self, *args):
        return self.fn(*args)

    def __str__(self):
        return self.name


def _fn_name(f) -> str:
    return getattr(f, "__name__", type(f).__name__).strip("<>")


def _resolve_args(fun, args, kwargs):
    """Keyword arguments bound to positions, as JAX's custom functions require."""
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"calling {_fn_name(fun)}: {e}") from None
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _split(args, nondiff_argnums):
    nondiff = set(nondiff_argnums)
    static = [(i, a) for i, a in enumerate(args) if i in nondiff]
    dyn = [a for i, a in enumerate(args) if i not in nondiff]
    return static, dyn


def _merge(static, dyn, n):
    it = iter(dyn)
    fixed = dict(static)
    return [fixed[i] if i in fixed else next(it) for i in range(n)]


def _zeros_like(x):
    aval = get_aval(x)
    return zeros_like_aval(aval.to_tangent_aval())


# --------------------------------------------------------------------------------------
# custom_jvp


class SymbolicZero:
    """The tangent of an input that is not being differentiated, handed to a `custom_jvp`
    rule defined with `symbolic_zeros=True` (not an array: test for it with isinstance); a
    rule may return one for an output whose tangent is zero. Attributes other than `aval`
    (shape, dtype...) come from the aval."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return "SymbolicZero"

    def __bool__(self):
        return False

    def __getattr__(self, name):
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    def instantiate(self):
        return zeros_like_aval(self.aval)

    @staticmethod
    def from_primal_value(val) -> SymbolicZero:
        return SymbolicZero(get_aval(val).to_tangent_aval())


class CustomVJPPrimal:
    """An argument as a `custom_vjp` fwd rule with `symbolic_zeros=True` sees it: its
    `value`, and whether a derivative flows into it (`perturbed`)."""

    def __init__(self, value, perturbed: bool):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def _is_symbolic_zero(x) -> bool:
    return isinstance(x, SymbolicZero)


class FlatCustomJVP:
    """A custom_jvp call on flat arguments: `call(*args)` and `jvp(primals, tangents)`."""

    def __init__(self, name, call, jvp, symbolic_zeros=False):
        self.name = name
        self.call = call
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros


class custom_jvp:
    """Decorates a function whose JVP is given by `defjvp` (or per-argument `defjvps`)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        """`jvp(primals, tangents) -> (primal_out, tangent_out)`. With `symbolic_zeros`, the
        tangent of an input not being differentiated arrives as a `SymbolicZero` (so the rule
        can skip its work), and the rule may return `SymbolicZero`s too."""
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument, `jvp_i(tangent_i, primal_out, *primals)`; None for none."""

        def jvp(primals, tangents):
            out = self(*primals)
            acc = tree_map(_zeros_like, out)
            for rule, t in zip(jvps, tangents):
                if rule is not None:
                    acc = tree_map(lambda a, b: a + b, acc, rule(t, out, *primals))
            return out, acc

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        name = _fn_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_args(self.fun, args, kwargs)
        static, dyn = _split(args, self.nondiff_argnums)
        flat_args, in_tree = tree_flatten(dyn)
        n = len(args)
        out_tree_box = []

        def call(*flat):
            out = self.fun(*_merge(static, tree_unflatten(in_tree, flat), n))
            flat_out, out_tree = tree_flatten(out)
            out_tree_box.append(out_tree)
            return flat_out

        def jvp(flat_primals, flat_tangents):
            if self.symbolic_zeros:
                flat_tangents = [SymbolicZero(t.aval) if type(t) is Zero else t
                                 for t in flat_tangents]
            else:
                flat_tangents = [instantiate(t) for t in flat_tangents]
            primals = tree_unflatten(in_tree, flat_primals)
            tangents = tree_unflatten(in_tree, flat_tangents)
            static_vals = [a for _, a in static]
            out = self.jvp(*static_vals, tuple(primals), tuple(tangents))
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise user_error(TypeError, f"the custom JVP rule of {name} must return a pair "
                                f"(primal_out, tangent_out), got {type(out).__name__}")
            p_out, t_out = out
            flat_p, p_tree = tree_flatten(p_out)
            flat_t, t_tree = tree_flatten(t_out, is_leaf=_is_symbolic_zero)
            flat_t = [instantiate(Zero(t.aval)) if isinstance(t, SymbolicZero) else t
                      for t in flat_t]
            if p_tree != t_tree:
                path, has_p, has_t = first_difference(p_out, t_out)
                raise user_error(TypeError, (
                    f"the custom JVP rule of {name}, {function_site(self.jvp)}, must produce "
                    f"primal and tangent outputs with equal structures, got {p_tree} and "
                    f"{t_tree}: {f'at output{path} ' if path else ''}the primal output is "
                    f"{has_p} and the tangent {has_t}.\nWhat to do: return "
                    "`(primal_out, tangent_out)` where tangent_out has primal_out's structure, "
                    "one tangent per output."))
            for i, (p, t) in enumerate(zip(flat_p, flat_t)):
                pa, ta = get_aval(p), get_aval(t)
                if pa.shape != ta.shape:
                    raise user_error(TypeError, (
                        f"the custom JVP rule of {name}, {function_site(self.jvp)}, returned a "
                        f"tangent of shape {ta.shape} ({ta.str_short()}) for primal output {i} "
                        f"of shape {pa.shape} ({pa.str_short()}).\nWhat to do: each tangent "
                        "must have its primal output's shape (and its tangent dtype)."))
            out_tree_box.append(p_tree)
            return flat_p, flat_t

        fn = FlatCustomJVP(name, call, _Named(jvp, _fn_name(self.jvp)))
        fn.symbolic_zeros = self.symbolic_zeros
        outs = core.current_interpreter().process_custom_jvp(fn, flat_args)
        return tree_unflatten(out_tree_box[-1], outs)


def _jvp_custom_jvp(self: JVPInterpreter, fn, args):
    primals, tangents = _unpack_duals(self, args)
    if all(type(t) is Zero for t in tangents):
        return self.run_in_parent("process_custom_jvp", fn, primals)
    if not getattr(fn, "symbolic_zeros", False):
        tangents = [instantiate(t) for t in tangents]
    with core.interpreter_context(self.parent):
        p_out, t_out = fn.jvp(primals, tangents)
    return [self.pack(p, t) for p, t in zip(p_out, t_out)]


def _unpack_duals(interp, args):
    """Primals and tangents of the arguments (constants get zero tangents)."""
    pairs = [interp.unpack(x) for x in args]
    return [p for p, _ in pairs], [t for _, t in pairs]


class _CallPrimitive(core.Primitive):
    """A staged custom-rule call: re-binding it (as eval_jaxpr does) hands the function back
    to the current interpreter, so the rule survives staging."""

    def __init__(self, name, method, rebuild):
        super().__init__(name, multiple_results=True)
        self.method = method
        self.rebuild = rebuild
        core.all_primitives[name] = self
        self.mark_absent("impl", "evaluated by re-running the staged function (see bind)")
        self.mark_absent("jvp", "differentiated through its custom rule (see bind)")
        self.mark_absent("batch", "batched by the interpreter's process method (see bind)")

    def bind(self, *args, **params):
        fn = self.rebuild(params)
        consts, args = args[:params["num_consts"]], args[params["num_consts"]:]
        fn = _with_consts(fn, consts)
        return getattr(core.current_interpreter(), self.method)(fn, list(args))


def _with_consts(fn, consts):
    if not consts:
        return fn
    call = fn.call
    fn = copy.copy(fn)
    fn.call = lambda *a: call(*consts, *a)
    return fn


def _stage_call(interp: StagingInterpreter, prim, fn, args, extra_params):
    """Records a custom-rule call as one equation holding the traced function."""
    avals = [get_aval(a) for a in args]
    call_jaxpr, consts = hoist_consts(trace_to_jaxpr(fn.call, avals)[0])
    params = dict(name=fn.name, call_jaxpr=call_jaxpr, num_consts=len(consts),
                  **extra_params)
    ctx = core._ctx
    prev = ctx.interp
    ctx.interp = interp
    try:
        return core.Primitive.bind(prim, *consts, *args, **params)
    finally:
        ctx.interp = prev


def _abstract_call(*avals, call_jaxpr, **params):
    return call_jaxpr.out_avals


def _call_from_jaxpr(params):
    cj = params["call_jaxpr"]
    return lambda *a: eval_jaxpr(cj.jaxpr, cj.consts, *a)


custom_jvp_call_p = _CallPrimitive(
    "custom_jvp_call", "process_custom_jvp",
    lambda params: FlatCustomJVP(params["name"], _call_from_jaxpr(params), params["jvp"],
                                 params["symbolic_zeros"]))
custom_jvp_call_p.def_abstract_eval(_abstract_call)
custom_jvp_call_p.pp_hidden = {"num_consts": 0}
custom_jvp_call_p.def_traits(call_jaxpr_param="call_jaxpr")


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, name, num_consts, **params):
    """A custom_jvp call inside a linear function (lineax stages one) is linear in its
    undefined operands: its transpose is that of the function it calls; the JVP rule, a
    rule for differentiating, has no part in it."""
    linear = tuple(is_undefined(x) for x in args)
    new = derived(call_jaxpr, ("transpose", linear),
                  lambda: transpose_jaxpr(call_jaxpr, list(linear)))
    cts = [instantiate(c) for c in cts]
    outs = bind_call([x for x in args if not is_undefined(x)] + cts, jaxpr=new,
                     name=f"transpose({name})")
    return call_cotangents(outs, args, linear)


custom_jvp_call_p.def_transpose(_custom_jvp_call_transpose)


def _staging_custom_jvp(self: StagingInterpreter, fn, args):
    return _stage_call(self, custom_jvp_call_p, fn, args,
                       dict(jvp=fn.jvp, symbolic_zeros=fn.symbolic_zeros))


def _pe_custom(method, staging_method):
    """Partial evaluation stages a custom call only when an input is unknown."""

    def process(self: PartialEvalInterpreter, fn, args):
        if any(type(x) is StagingTracer and x._interp is self for x in args):
            return staging_method(self, fn, args)
        return self.run_in_parent(method, fn, args)

    return process


# --------------------------------------------------------------------------------------
# custom_vjp


class FlatCustomVJP:
    """A custom_vjp call on flat arguments: `call`, `fwd -> (outs, residuals)`, and
    `bwd(residuals, cotangents) -> input cotangents`."""

    def __init__(self, name, call, fwd, bwd, symbolic_zeros=False):
        self.name = name
        self.call = call
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros


class custom_vjp:
    """Decorates a function whose VJP is given by `defvjp(fwd, bwd)`."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False, optimize_remat: bool = False):
        """`fwd(*args) -> (out, residuals)`, `bwd(residuals, out_cotangent) -> one cotangent
        per argument` (None for zero). With `symbolic_zeros`, `fwd` gets each differentiable
        argument as a `CustomVJPPrimal` (`.value`, and `.perturbed`: False when no derivative
        flows into it), and `bwd` may return `SymbolicZero`s."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    def __call__(self, *args, **kwargs):
        name = _fn_name(self.fun)
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_args(self.fun, args, kwargs)
        static, dyn = _split(args, self.nondiff_argnums)
        flat_args, in_tree = tree_flatten(dyn)
        in_avals = [get_aval(a) for a in flat_args]
        n = len(args)
        trees = {}

        def call(*flat):
            out = self.fun(*_merge(static, tree_unflatten(in_tree, flat), n))
            flat_out, trees["out"] = tree_flatten(out)
            return flat_out

        def fwd(*flat, perturbed=None):
            if self.symbolic_zeros:
                perturbed = [True] * len(flat) if perturbed is None else perturbed
                flat = [CustomVJPPrimal(x, p) for x, p in zip(flat, perturbed)]
            res_out = self.fwd(*_merge(static, tree_unflatten(in_tree, flat), n))
            if not (isinstance(res_out, (tuple, list)) and len(res_out) == 2):
                raise TypeError(f"the custom_vjp fwd rule of {name} must return a pair "
                                f"(output, residuals), got {type(res_out).__name__}")
            out, res = res_out
            flat_out, trees["out"] = tree_flatten(out)
            flat_res, trees["res"] = tree_flatten(res)
            return flat_out, flat_res

        def bwd(flat_res, flat_cts):
            res = tree_unflatten(trees["res"], flat_res)
            cts = tree_unflatten(trees["out"], flat_cts)
            cts_in = self.bwd(*[a for _, a in static], res, cts)
            if not isinstance(cts_in, (tuple, list)):
                raise user_error(TypeError, (
                    f"the custom_vjp bwd rule of {name} must return a tuple with one "
                    f"cotangent per differentiable argument, got "
                    f"{type(cts_in).__name__}"))
            if len(cts_in) != len(dyn):
                raise user_error(TypeError, (
                    f"the custom_vjp bwd rule of {name}, {function_site(self.bwd)}, returned "
                    f"{len(cts_in)} cotangents for {len(dyn)} arguments.\nWhat to do: return "
                    f"a tuple of {len(dyn)} cotangents, one per argument of {name} in order "
                    "(None for an argument with no cotangent), even when there is one: "
                    "`return (g,)`."))
            flat = []
            for ct, arg in zip(cts_in, dyn):
                arg_leaves = tree_flatten(arg)[0]
                if ct is None or isinstance(ct, SymbolicZero):
                    flat.extend(_zeros_like(a) for a in arg_leaves)
                else:
                    leaves = [_zeros_like(a) if isinstance(c, SymbolicZero) else c
                              for c, a in zip(tree_flatten(ct, is_leaf=_is_symbolic_zero)[0],
                                              arg_leaves)]
                    if len(leaves) != len(arg_leaves):
                        raise TypeError(f"the custom_vjp bwd rule of {name} returned a "
                                        f"cotangent of structure {tree_structure(ct)} for an "
                                        f"argument of structure {tree_structure(arg)}")
                    flat.extend(leaves)
            return flat

        fn = FlatCustomVJP(name, call, fwd, _Named(bwd, _fn_name(self.bwd)))
        fn.in_avals = in_avals
        fn.symbolic_zeros = self.symbolic_zeros
        outs = core.current_interpreter().process_custom_vjp(fn, flat_args)
        return tree_unflatten(trees["out"], outs)


def _jvp_custom_vjp(self: JVPInterpreter, fn, args):
    primals, tangents = _unpack_duals(self, args)
    if all(type(t) is Zero for t in tangents):
        return self.run_in_parent("process_custom_vjp", fn, primals)
    with core.interpreter_context(self.parent):
        if getattr(fn, "symbolic_zeros", False):
            outs, res = fn.fwd(*primals, perturbed=[type(t) is not Zero for t in tangents])
        else:
            outs, res = fn.fwd(*primals)
        in_avals = [get_aval(p).to_tangent_aval() for p in primals]
        out_avals = [get_aval(o).to_tangent_aval() for o in outs]
        res, bwd = _python_residuals_kept(res, fn.bwd)
        t_out = custom_lin_p.bind(*res, *[instantiate(t) for t in tangents],
                                  num_res=len(res), bwd=bwd, in_avals=tuple(in_avals),
                                  out_avals=tuple(out_avals))
    return [self.pack(p, t) for p, t in zip(outs, t_out)]


def _python_residuals_kept(res, bwd):
    """Residuals that are Python scalars (flags a fwd rule passes to its bwd: equinox's
    `perturbed`) reach bwd as the very objects fwd made, as constants do in JAX, not as
    arrays: only the others are operands of the linear map."""
    kept = {i: r for i, r in enumerate(res) if type(r) in (bool, int, float, complex)}
    if not kept:
        return res, bwd
    n = len(res)

    def bwd_with_kept(dynamic, cts):
        it = iter(dynamic)
        return bwd([kept[i] if i in kept else next(it) for i in range(n)], cts)

    return [r for i, r in enumerate(res) if i not in kept], _Named(bwd_with_kept, str(bwd))


custom_vjp_call_p = _CallPrimitive(
    "custom_vjp_call", "process_custom_vjp",
    lambda params: FlatCustomVJP(params["name"], _call_from_jaxpr(params), params["fwd"],
                                 params["bwd"], params["symbolic_zeros"]))
custom_vjp_call_p.def_abstract_eval(_abstract_call)
custom_vjp_call_p.pp_hidden = {"num_consts": 0, "fwd": core.PP_ALWAYS_HIDE}
custom_vjp_call_p.def_traits(call_jaxpr_param="call_jaxpr")


def _staging_custom_vjp(self: StagingInterpreter, fn, args):
    return _stage_call(self, custom_vjp_call_p, fn, args,
                       dict(fwd=fn.fwd, bwd=fn.bwd, symbolic_zeros=fn.symbolic_zeros))


# custom_lin: the linear map t -> J t of a custom_vjp function, known through bwd = J^T.

custom_lin_p = core.primitive("custom_lin", multiple_results=True, linear=True)
custom_lin_p.pp_hidden = {"in_avals": core.PP_ALWAYS_HIDE, "out_avals": core.PP_ALWAYS_HIDE}


def _custom_lin_forward(res, tangents, *, bwd, in_avals, out_avals):
    """J t from bwd = (ct -> J^T ct): transpose bwd, which is linear in ct."""
    _, transposed = linear_transpose_flat(lambda *cts: bwd(list(res), list(cts)),
                                          [a.strip_weak_type() for a in out_avals])
    return transposed(tangents)


def _custom_lin_impl(*vals, num_res, bwd, in_avals, out_avals):
    arrays = [core.Array(v) for v in vals]
    outs = _custom_lin_forward(arrays[:num_res], arrays[num_res:], bwd=bwd, in_avals=in_avals,
                               out_avals=out_avals)
    return [np.asarray(o) for o in outs]


def _custom_lin_jvp(primals, tangents, *, num_res, bwd, in_avals, out_avals):
    def forward(*args):
        return _custom_lin_forward(args[:num_res], args[num_res:], bwd=bwd, in_avals=in_avals,
                                   out_avals=out_avals)

    return jvp_interp.jvp_flat(forward, primals, tangents)


def _custom_lin_transpose(cts, *args, num_res, bwd, in_avals, out_avals):
    res = args[:num_res]
    cts = [instantiate(c) for c in cts]
    cts_in = bwd(list(res), cts)
    return [None] * num_res + list(cts_in)


custom_lin_p.def_impl(_custom_lin_impl)
custom_lin_p.def_abstract_eval(lambda *avals, num_res, bwd, in_avals, out_avals: list(out_avals))
custom_lin_p.def_jvp(_custom_lin_jvp)
custom_lin_p.def_transpose(_custom_lin_transpose)


# --------------------------------------------------------------------------------------
# Interpreters: how each handles a custom-rule call (registered here, beside the rules)

JVPInterpreter.process_custom_jvp = _jvp_custom_jvp
JVPInterpreter.process_custom_vjp = _jvp_custom_vjp
StagingInterpreter.process_custom_jvp = _staging_custom_jvp
StagingInterpreter.process_custom_vjp = _staging_custom_vjp
PartialEvalInterpreter.process_custom_jvp = _pe_custom("process_custom_jvp",
                                                       _staging_custom_jvp)
PartialEvalInterpreter.process_custom_vjp = _pe_custom("process_custom_vjp",
                                                       _staging_custom_vjp)



def _custom_lin_batch(size, vals, dims, *, num_res, bwd, in_avals, out_avals):
    def forward(*args):
        return _custom_lin_forward(args[:num_res], args[num_res:], bwd=bwd, in_avals=in_avals,
                                   out_avals=out_avals)

    outs = batching.vmap_flat(forward, vals, dims, size, batching.rule_axis_name())
    return outs, [0] * len(outs)


custom_lin_p.def_batch(_custom_lin_batch)


# Under vmap a custom function stays custom: the function and its rules are batched alike
# (with vmap) and handed to the parent interpreter, so outer differentiation still uses them.


def _batch_custom_jvp(self: BatchInterpreter, fn, args):
    vals, dims = zip(*[self.unpack(x) for x in args]) if args else ((), ())
    if all(d is None for d in dims) and self.axis_name is None:  # (else: collectives inside)
        return self.run_in_parent("process_custom_jvp", fn, list(vals))
    size, name = self.axis_size, self.axis_name  # (a named axis: its collectives resolve)

    def call(*xs):
        return batching.vmap_flat(fn.call, xs, dims, size, name)

    def jvp(primals, tangents):
        n = len(primals)

        def both(*a):
            p_out, t_out = fn.jvp(list(a[:n]), list(a[n:]))
            return list(p_out) + list(t_out)

        outs = batching.vmap_flat(both, list(primals) + list(tangents), list(dims) * 2, size,
                                  name)
        return outs[:len(outs) // 2], outs[len(outs) // 2:]

    batched = FlatCustomJVP(fn.name, call, _Named(jvp, str(fn.jvp)))
    outs = self.run_in_parent("process_custom_jvp", batched, list(vals))
    return [self.pack(o, 0) for o in outs]


def _batch_custom_vjp(self: BatchInterpreter, fn, args):
    vals, dims = zip(*[self.unpack(x) for x in args]) if args else ((), ())
    if all(d is None for d in dims) and self.axis_name is None:  # (else: collectives inside)
        return self.run_in_parent("process_custom_vjp", fn, list(vals))
    size, name = self.axis_size, self.axis_name  # (a named axis: its collectives resolve)

    def call(*xs):
        return batching.vmap_flat(fn.call, xs, dims, size, name)

    def fwd(*xs, perturbed=None):
        n_out = []
        which = {} if perturbed is None else {"perturbed": perturbed}  # (symbolic zeros')

        def both(*a):
            outs, res = fn.fwd(*a, **which)
            n_out[:] = [len(outs)]
            return list(outs) + list(res)

        flat = batching.vmap_flat(both, xs, dims, size, name)
        return flat[:n_out[0]], flat[n_out[0]:]

    def bwd(res, cts):
        nr = len(res)
        cts_in = batching.vmap_flat(lambda *a: fn.bwd(list(a[:nr]), list(a[nr:])),
                                    list(res) + list(cts), [0] * (nr + len(cts)), size, name)
        # Cotangents take their inputs' layout: summed where an input was not batched.
        return [reduce_sum(c, (0,)) if d is None else moveaxis(c, 0, d)
                for c, d in zip(cts_in, dims)]

    batched = FlatCustomVJP(fn.name, call, fwd, _Named(bwd, str(fn.bwd)),
                            getattr(fn, "symbolic_zeros", False))
    outs = self.run_in_parent("process_custom_vjp", batched, list(vals))
    return [self.pack(o, 0) for o in outs]


BatchInterpreter.process_custom_jvp = _batch_custom_jvp
BatchInterpreter.process_custom_vjp = _batch_custom_vjp
