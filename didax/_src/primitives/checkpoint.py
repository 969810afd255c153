"""Checkpointing (`checkpoint`/`remat`): recompute in the backward pass instead of storing.

Reverse mode stores residuals: the known values the linear (tangent) jaxpr reads. Under
JVP, a checkpointed function computes its outputs now but emits its tangent as one
`remat_jvp` equation whose only known operands are the function's *inputs*. Transposing
it re-runs the function's JVP at those inputs, recomputing the intermediates it needs
during the backward pass. So a checkpointed block stores its inputs instead of its
intermediates (`saved_residuals` shows the difference). A policy saves some intermediates
too (checkpoint_policies.py), and the backward pass computes only the others again
(checkpoint_split.py).
"""
from __future__ import annotations

import functools

import numpy as np

from didax._src import core
from didax._src.base_prims import instantiate
from didax._src.core import Zero, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters import jvp as jvp_interp
from didax._src.interpreters.jvp import JVPInterpreter
from didax._src.interpreters.partial_eval import PartialEvalInterpreter
from didax._src.interpreters.staging import StagingInterpreter, trace_to_jaxpr
from didax._src.interpreters.transpose import is_undefined, linear_transpose_flat
from didax._src.ir import Literal, eval_jaxpr, hoist_consts, literal_value
from didax._src.primitives.checkpoint_policies import checkpoint_policies
from didax._src.primitives.checkpoint_split import split_by_policy
from didax._src.tree_util import tree_flatten, tree_unflatten

_ALL_OR_NOTHING = (None, checkpoint_policies.nothing_saveable)


class FlatCheckpoint:
    def __init__(self, name, call, policy):
        self.name = name
        self.call = call
        self.policy = policy


def checkpoint(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """Marks `fun` for recomputation in reverse mode: reverse mode keeps its inputs and the
    values `policy` saves (None: none), and computes the rest again in the backward pass."""
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    if policy is not None and not callable(policy):
        raise TypeError(
            f"checkpoint: policy must be None or a function (prim, *avals, **params) -> bool, "
            f"as those of jax.checkpoint_policies; got {policy!r}")
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
        return eval_at_sources(jaxpr, [*full, *args[len(traced):]])

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
    nonzero = [t for t in tangents if type(t) is not Zero]  # (the others stay symbolic)
    if fn.policy in _ALL_OR_NOTHING:
        with core.interpreter_context(self.parent):
            outs = fn.call(*primals)
            residuals, lin = primals, _RecomputeAll(fn.call, tangents)
    else:
        split = _split(fn, primals, tangents)
        with core.interpreter_context(self.parent):
            known = eval_at_sources(split.known, primals)
            n = len(known) - len(split.residual_eqns)
            outs, residuals = known[:n], known[n:]
            lin = _EvalJaxpr(split.unknown)
    with core.interpreter_context(self.parent):
        out_avals = tuple(get_aval(o).to_tangent_aval() for o in outs)
        t_out = remat_jvp_p.bind(*residuals, *nonzero, lin=lin, name=fn.name,
                                 num_res=len(residuals), out_avals=out_avals)
    return [self.pack(p, t) for p, t in zip(outs, t_out)]


def _split(fn, primals, tangents):
    """The function's JVP, staged and split by its policy: primals known, the tangents that
    are not symbolic zeros unknown."""
    n = len(primals)
    present = [i for i, t in enumerate(tangents) if type(t) is not Zero]

    def jvp_of_call(*xs):
        ts = list(tangents)
        for i, t in zip(present, xs[n:]):
            ts[i] = t
        outs, t_outs = jvp_interp.jvp_flat(fn.call, list(xs[:n]), ts)
        return [*outs, *[instantiate(t) for t in t_outs]]

    in_avals = [get_aval(x) for x in primals] + [get_aval(tangents[i]) for i in present]
    closed, outs = trace_to_jaxpr(jvp_of_call, in_avals)
    return split_by_policy(closed, [False] * n + [True] * len(present), len(outs) // 2,
                           fn.policy)


def eval_at_sources(closed, args):
    """Evaluates `closed` under the current interpreter; a staging one records each equation
    at the user's line the jaxpr recorded, not at the line evaluating it."""
    ctx = core._ctx
    prev = ctx.source_info
    env = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))
    read = lambda a: literal_value(a) if type(a) is Literal else env[a]  # noqa: E731
    try:
        for eqn in closed.jaxpr.eqns:
            ctx.source_info = eqn.source_info
            outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
            env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else (outs,)))
    finally:
        ctx.source_info = prev
    return [read(a) for a in closed.jaxpr.outvars]


JVPInterpreter.process_checkpoint = _jvp_checkpoint

# remat_jvp: the tangent map of a checkpointed function, `lin(*residuals, *tangents)`, linear
# in its tangent operands. Transposing it computes again, from the residuals, the values the
# backward pass needs.

remat_jvp_p = core.primitive("remat_jvp", multiple_results=True, linear=True)
remat_jvp_p.pp_hidden = {"lin": core.PP_ALWAYS_HIDE, "out_avals": core.PP_ALWAYS_HIDE}


class _RecomputeAll:
    """The tangent map of `call` with its inputs as the only residuals, taking the tangents
    that were not symbolic zeros."""

    def __init__(self, call, tangents):
        self.call = call
        self.tangents = [t if type(t) is Zero else None for t in tangents]

    def __call__(self, *args):
        n = len(self.tangents)
        given = iter(args[n:])
        tangents = [next(given) if t is None else t for t in self.tangents]
        return _tangent_of(self.call, args[:n], tangents)


class _EvalJaxpr:
    """The tangent map of a policy's split: its backward part, a jaxpr."""

    def __init__(self, closed):
        self.closed = closed

    def __call__(self, *args):
        return eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)


def _remat_impl(*vals, lin, name, num_res, out_avals):
    outs = lin(*[core.Array(v) for v in vals])
    return [np.asarray(instantiate(o)) for o in outs]


def _remat_jvp(primals, tangents, *, lin, name, num_res, out_avals):
    return jvp_interp.jvp_flat(lambda *a: [instantiate(o) for o in lin(*a)], primals, tangents)


def _remat_transpose(cts, *args, lin, name, num_res, out_avals):
    residuals = list(args[:num_res])
    tangents = list(args[num_res:])
    undefined = [i for i, t in enumerate(tangents) if is_undefined(t)]
    if any(is_undefined(r) for r in residuals):
        raise NotImplementedError("transpose of 'remat_jvp': its residuals must be known")

    def tangent_map(*ts):  # linear in the undefined tangents; computes residuals' uses again
        full = list(tangents)
        for i, t in zip(undefined, ts):
            full[i] = t
        return [instantiate(o) for o in lin(*residuals, *full)]

    _, transposed = linear_transpose_flat(
        tangent_map, [tangents[i].aval.strip_weak_type() for i in undefined])
    cts_in = transposed([instantiate(c) for c in cts])
    out = [None] * len(args)
    for i, ct in zip(undefined, cts_in):
        out[num_res + i] = ct
    return out


remat_jvp_p.def_impl(_remat_impl)
remat_jvp_p.def_abstract_eval(lambda *avals, lin, name, num_res, out_avals: list(out_avals))
remat_jvp_p.def_jvp(_remat_jvp)
remat_jvp_p.def_transpose(_remat_transpose)


def _remat_batch(size, vals, dims, *, lin, name, num_res, out_avals):
    outs = batching.vmap_flat(lambda *a: [instantiate(o) for o in lin(*a)],
                              vals, dims, size, batching.rule_axis_name())
    return outs, [0] * len(outs)


remat_jvp_p.def_batch(_remat_batch)


# --------------------------------------------------------------------------------------
# Staging keeps the checkpoint: a `checkpoint` equation holding the function's jaxpr, which
# re-binding (eval_jaxpr, or a control-flow rule transforming a body) hands back to the
# current interpreter's process_checkpoint.


class _CheckpointPrimitive(core.Primitive):
    def bind(self, *args, jaxpr, policy, prevent_cse):
        fn = FlatCheckpoint("checkpoint", lambda *a: eval_at_sources(jaxpr, a), policy)
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
