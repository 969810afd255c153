"""Checkpointing (`checkpoint`/`remat`): recompute in the backward pass instead of storing.

Reverse mode stores residuals: the known values the linear (tangent) jaxpr reads. Under
JVP, a checkpointed function computes its outputs now but emits its tangent as one
`remat_jvp` equation whose only known operands are the function's *inputs*. Transposing
it re-runs the function's JVP at those inputs, recomputing the intermediates it needs
during the backward pass. So a checkpointed block stores its inputs instead of its
intermediates (`saved_residuals` shows the difference).
"""
from __future__ import annotations

import functools

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import instantiate
from didax._src.core import Zero, asarray_value, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.jvp import JVPInterpreter
from didax._src.interpreters.partial_eval import PartialEvalInterpreter, linearize_flat
from didax._src.interpreters.staging import StagingInterpreter, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, linear_transpose_flat
from didax._src.ir import eval_jaxpr, hoist_consts
from didax._src.tree_util import tree_flatten, tree_unflatten


class checkpoint_policies:
    """Which intermediates a checkpointed function may save (as `jax.checkpoint_policies`)."""

    @staticmethod
    def everything_saveable(*_, **__):
        return True

    @staticmethod
    def nothing_saveable(*_, **__):
        return False

    @staticmethod
    def save_only_these_names(*names):
        return _NamePolicy("save_only_these_names", names)

    @staticmethod
    def save_any_names_but_these(*names):
        return _NamePolicy("save_any_names_but_these", names)

    @staticmethod
    def save_and_offload_only_these_names(*, names_which_can_be_saved=(),
                                          names_which_can_be_offloaded=(), **_):
        return _NamePolicy("save_and_offload_only_these_names",
                           tuple(names_which_can_be_saved) + tuple(names_which_can_be_offloaded))


class _NamePolicy:
    """A policy deciding by `checkpoint_name` labels. checkpoint saves all of a block's
    intermediates or none, so it refuses these (NotImplementedError) rather than ignore them."""

    def __init__(self, kind, names):
        self.__name__ = kind
        self.names = tuple(names)


_POLICIES = (None, checkpoint_policies.everything_saveable, checkpoint_policies.nothing_saveable)


class FlatCheckpoint:
    def __init__(self, name, call, policy):
        self.name = name
        self.call = call
        self.policy = policy


def checkpoint(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """Marks `fun` for recomputation in reverse mode (`policy` None or nothing_saveable:
    save only its inputs; everything_saveable: differentiate it normally)."""
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    if isinstance(policy, _NamePolicy):
        raise NotImplementedError(
            f"checkpoint: the name-based policy {policy.__name__}{policy.names} is not "
            "implemented: didax's checkpoint saves all of a block's intermediates or none. Use "
            "policy=None (recompute all but the inputs) or split the block with nested "
            "checkpoints around the values you would name.")
    if policy not in _POLICIES:
        raise NotImplementedError(
            f"checkpoint: policy {getattr(policy, '__name__', policy)!r} is not supported; use "
            "None, checkpoint_policies.nothing_saveable or checkpoint_policies.everything_saveable")
    static = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
    name = getattr(fun, "__name__", "checkpointed")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        fixed = {i: a for i, a in enumerate(args) if i in static}
        dyn = [a for i, a in enumerate(args) if i not in static]
        flat, in_tree = tree_flatten((dyn, kwargs))
        box = []

        def call(*flat_args):
            dyn_args, kw = tree_unflatten(in_tree, flat_args)
            it = iter(dyn_args)
            full = [fixed[i] if i in fixed else next(it) for i in range(len(args))]
            flat_out, out_tree = tree_flatten(fun(*full, **kw))
            box.append(out_tree)
            return flat_out

        interp = core.current_interpreter()
        if isinstance(interp, core.EvalInterpreter):  # nothing traced to close over
            outs = interp.process_checkpoint(FlatCheckpoint(name, call, policy), flat)
            return tree_unflatten(box[-1], outs)
        converted, closed_over = _closure_converted(call, flat)
        outs = interp.process_checkpoint(FlatCheckpoint(name, converted, policy),
                                         [*closed_over, *flat])
        return tree_unflatten(box[-1], outs)

    return wrapped


remat = checkpoint


def _closure_converted(call, flat):
    """`call` as a function of the traced values it closes over, then of its arguments.

    The rules below run `call` again later (in the parent interpreter, in the backward
    pass), where a tracer it closes over would have escaped its transformation; as explicit
    operands those values are transformed like the arguments (their tangents flow too)."""
    closed, _ = trace_to_jaxpr(call, [get_aval(x) for x in flat])
    jaxpr, consts = hoist_consts(closed)
    traced = [i for i, c in enumerate(consts) if isinstance(c, core.Tracer)]

    def converted(*args):
        full = list(consts)
        for i, v in zip(traced, args):
            full[i] = v
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *full, *args[len(traced):])

    return converted, [consts[i] for i in traced]


def _tangent_of(call, primals, tangents):
    """The output tangents of `call` at `primals` along `tangents` (zeros materialised)."""
    _, t_out = jvp_interp.jvp_flat(call, list(primals), list(tangents))
    return [instantiate(t) for t in t_out]


def _jvp_checkpoint(self: JVPInterpreter, fn, args):
    if fn.policy is checkpoint_policies.everything_saveable:
        return fn.call(*args)
    primals, tangents = [], []
    for x in args:
        p, t = self.unpack(x)
        primals.append(p)
        tangents.append(t)
    if all(type(t) is Zero for t in tangents):
        return self.run_in_parent("process_checkpoint", fn, primals)
    with core.interpreter_context(self.parent):
        outs = fn.call(*primals)
        out_avals = tuple(get_aval(o).to_tangent_aval() for o in outs)
        t_out = remat_jvp_p.bind(*primals, *[instantiate(t) for t in tangents],
                                 call=fn.call, name=fn.name, num_primals=len(primals),
                                 out_avals=out_avals)
    return [self.pack(p, t) for p, t in zip(outs, t_out)]


JVPInterpreter.process_checkpoint = _jvp_checkpoint

# remat_jvp: the tangent map of a checkpointed function, linear in its tangent operands.

remat_jvp_p = core.primitive("remat_jvp", multiple_results=True, linear=True)
remat_jvp_p.pp_hidden = {"call": core.PP_ALWAYS_HIDE, "out_avals": core.PP_ALWAYS_HIDE}


def _remat_impl(*vals, call, name, num_primals, out_avals):
    arrays = [core.Array(v) for v in vals]
    outs = _tangent_of(call, arrays[:num_primals], arrays[num_primals:])
    return [np.asarray(o) for o in outs]


def _remat_jvp(primals, tangents, *, call, name, num_primals, out_avals):
    return jvp_interp.jvp_flat(
        lambda *a: _tangent_of(call, a[:num_primals], a[num_primals:]), primals, tangents)


def _remat_transpose(cts, *args, call, name, num_primals, out_avals):
    primals = list(args[:num_primals])
    tangents = list(args[num_primals:])
    undefined = [i for i, t in enumerate(tangents) if is_undefined(t)]
    if any(is_undefined(p) for p in primals):
        raise NotImplementedError("transpose of 'remat_jvp': primal inputs must be known")

    def tangent_map(*ts):  # linear in the undefined tangents; re-runs the forward pass
        full = list(tangents)
        for i, t in zip(undefined, ts):
            full[i] = t
        return _tangent_of(call, primals, full)

    _, transposed = linear_transpose_flat(
        tangent_map, [tangents[i].aval.strip_weak_type() for i in undefined])
    cts_in = transposed([instantiate(c) for c in cts])
    out = [None] * len(args)
    for i, ct in zip(undefined, cts_in):
        out[num_primals + i] = ct
    return out


remat_jvp_p.def_impl(_remat_impl)
remat_jvp_p.def_abstract_eval(lambda *avals, call, name, num_primals, out_avals: list(out_avals))
remat_jvp_p.def_jvp(_remat_jvp)
remat_jvp_p.def_transpose(_remat_transpose)


def saved_residuals(fun, *args, **kwargs) -> list[tuple[core.ShapedArray, str]]:
    """What reverse mode stores for `fun(*args)`: each residual's type and origin."""
    flat, in_tree = tree_flatten((args, kwargs))
    flat = [asarray_value(x) for x in flat]  # residuals are recognised by identity
    differentiable = [dtypes.kind(get_aval(x).dtype) in "fc" for x in flat]

    def flat_fun(*xs):
        a, k = tree_unflatten(in_tree, xs)
        return tree_flatten(fun(*a, **k))[0]

    lin = linearize_flat(flat_fun, flat, differentiable)
    ids = {id(x): i for i, x in enumerate(flat)}
    out = []
    for c in lin.jaxpr.consts:
        where = f"argument {ids[id(c)]}" if id(c) in ids else "an intermediate value"
        out.append((get_aval(c), where))
    return out


def _remat_batch(size, vals, dims, *, call, name, num_primals, out_avals):
    outs = batching.vmap_flat(lambda *a: _tangent_of(call, a[:num_primals], a[num_primals:]),
                              vals, dims, size, batching.rule_axis_name())
    return outs, [0] * len(outs)


remat_jvp_p.def_batch(_remat_batch)


# --------------------------------------------------------------------------------------
# Staging keeps the checkpoint: a `checkpoint` equation holding the function's jaxpr, which
# re-binding (eval_jaxpr, or a control-flow rule transforming a body) hands back to the
# current interpreter's process_checkpoint.


class _CheckpointPrimitive(core.Primitive):
    def bind(self, *args, jaxpr, policy, prevent_cse):
        fn = FlatCheckpoint("checkpoint",
                            lambda *a: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *a), policy)
        return core.current_interpreter().process_checkpoint(fn, list(args))


checkpoint_p = _CheckpointPrimitive("checkpoint", multiple_results=True)
core.all_primitives["checkpoint"] = checkpoint_p
checkpoint_p.def_abstract_eval(lambda *avals, jaxpr, policy, prevent_cse: jaxpr.out_avals)
checkpoint_p.pp_format = {"policy": lambda p: _PolicyName(p)}
checkpoint_p.def_traits(call_jaxpr_param="jaxpr")
for _kind in ("impl", "jvp", "batch"):
    checkpoint_p.mark_absent(_kind, "handled by the interpreter's process_checkpoint (see bind)")


class _PolicyName:
    def __init__(self, policy):
        self.policy = policy

    def __str__(self):
        return "None" if self.policy is None else getattr(self.policy, "__name__", "policy")


def _staging_checkpoint(self, fn, args):
    jaxpr, consts = hoist_consts(trace_to_jaxpr(fn.call, [get_aval(a) for a in args])[0])
    ctx = core._ctx
    prev, ctx.interp = ctx.interp, self
    try:
        return core.Primitive.bind(checkpoint_p, *consts, *args, jaxpr=jaxpr,
                                   policy=fn.policy, prevent_cse=True)
    finally:
        ctx.interp = prev


def _inline_checkpoint(self, fn, args):
    return fn.call(*args)


StagingInterpreter.process_checkpoint = _staging_checkpoint
PartialEvalInterpreter.process_checkpoint = _inline_checkpoint  # only on unknown values


# --------------------------------------------------------------------------------------
# name: an identity that labels a value (`checkpoint_name`), for name-based policies

name_p = core.primitive("name")
name_p.def_impl(lambda x, *, name: x)
name_p.def_abstract_eval(lambda x, *, name: x)
name_p.def_traits(returns_operand=lambda eqn: 0)  # jit forwards it: it only labels


@name_p.def_jvp
def _name_jvp(primals, tangents, *, name):
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t  # the tangent is not labelled (as in JAX)


@name_p.def_batch
def _name_batch(size, vals, dims, *, name):
    return name_p.bind(vals[0], name=name), dims[0]


def checkpoint_name(x, name: str):
    """`x`, labelled `name` in the jaxpr (every array leaf of a pytree `x`)."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {name!r}")
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [name_p.bind(leaf, name=name) for leaf in leaves])
