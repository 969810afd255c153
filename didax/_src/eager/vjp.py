"""Eager reverse mode with each application's linearization built once per signature.

`vjp` evaluated with nothing staged around it runs the usual JVP over partial evaluation,
whose cost is dispatch: every user primitive becomes its primal, the coefficients its JVP
rule evaluates, the staged tangent equations and, on the way back, their transposes, each a
trip through the interpreter stack around a small NumPy call. Here that work is done once per
*signature* with the same transformations, on the jaxpr of one application: `jvp_jaxpr`, then
`partial_eval_jaxpr` (the known part computes the primal outputs and the residuals, the
unknown part is linear in the tangents), then `transpose_jaxpr`; the known part and the
transpose are compiled by jit's NumPy tier (and, where several equations fuse and the C code
computes the same bits, by its native tier). An application is a primitive's, or a call of a
pure library function declared a step (`registry.step`: jnp's arithmetic, reductions and
products, nn's activations): its signature is the primitive or function, its array
operands' types, its other arguments' values and which operands carry tangents. Each later
application with that signature calls the compiled known part on the operands' NumPy values
and stages one `linearized` equation holding the step and its residuals; the backward pass
(`eager_backward_pass`) calls the compiled transpose on NumPy cotangents.

Nothing about the user's program is cached: it runs, with its Python side effects, on every
call. A signature is built when a vjp first sees it (`didax_eager_vjp_steps`: a step may
round differently from the general path, which adds a function's cotangents in another
grouping, so building at the second sighting would let a program's first call differ from
its later ones, and its results depend on what ran before it). Whatever needs more than
types (control flow, calls, custom rules, effects, collectives, values that must be
concrete) keeps the general path, as does every application with an operand that is not a
concrete array: the same backward pass transposes both kinds of equation.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from didax._src import caches, core
from didax._src.base_prims import instantiate
from didax._src.compiler.native import tier
from didax._src.compiler.numpy_tier import compile_jaxpr
from didax._src.config import config
from didax._src.config_states import float_checks
from didax._src.core import Array, Zero, get_aval
from didax._src.interpreters.jvp import JVPInterpreter, JVPTracer, deflinear, jvp_jaxpr
from didax._src.interpreters.partial_eval import partial_eval_jaxpr
from didax._src.interpreters.staging import StagingTracer, trace_to_jaxpr
from didax._src.interpreters.transpose import (
    add_tangents,
    linear_equations,
    transpose_equation,
    transpose_jaxpr,
)
from didax._src.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr, next_var_id
from didax._src.tree_util import tree_flatten, tree_unflatten

_ctx = core._ctx
_eval = core.eval_interpreter


class LinearizedStep:
    """One signature's linearization: `forward(*operands) -> (*outputs, *residuals)` and
    `backward(*residuals, *output cotangents) -> operand cotangents`, both compiled, with the
    jaxprs they came from (the backward pass under a transformation evaluates `transposed`)."""

    __slots__ = ("jaxpr", "sources", "out_tree", "forward", "backward", "n_out", "out_avals",
                 "tangent_out", "lin_out_avals", "res_avals", "ct_in_avals", "linear",
                 "transposed", "forwarded", "staged", "single")

    def __repr__(self):
        return f"LinearizedStep({self.forward})"


_UNCACHEABLE = object()  # a signature kept on the general path
_steps = caches.memo("eager.steps", limit=4096)  # signature -> LinearizedStep or _UNCACHEABLE
# signature -> the vjp (its number) that first saw it, until built
_sightings = caches.memo("eager.sightings", limit=4096)
_runs = itertools.count()


@config.on_change
def _clear_steps(name, value):
    _steps.clear()
    _sightings.clear()


def _keeps_general_path(prim, params) -> bool:
    """Primitives whose rules need more than operand types, or that must not be re-run."""
    if (prim.traits.effectful or prim.traits.axis_name_param or prim.types_depend_on_context
            or prim.traits.call_jaxpr_param or "partial_eval" in prim.rules
            or "jvp" not in prim.rules):
        return True
    return any(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in params.values())


def _step_for(key, build, avals, mask, run, general=False):
    """The step of a signature not yet built, or `_UNCACHEABLE`; in "second" mode None until
    a second vjp sees it (`run` numbers the vjp: one differentiated call builds nothing, even
    of a signature it applies many times). `build(*tracers)` stages the application on
    `avals`, returning the flat outputs and their tree; `general`: it is known to keep the
    general path."""
    if config.didax_eager_vjp_steps == "second" and not general:
        first = _sightings.get(key)
        if first is None or first == run:
            caches.add(_sightings, key, run)
            return None
    _sightings.pop(key, None)
    step = _UNCACHEABLE
    if not general:
        prev, prev_phase = _ctx.interp, _ctx.phase
        _ctx.interp, _ctx.phase = _eval, None  # built apart from the transformations running
        try:
            step = _build(build, avals, mask)
        except Exception:  # noqa: BLE001 - rules that need concrete values, missing rules...
            step = _UNCACHEABLE  # ... the general path runs (and raises what it raises)
        finally:
            _ctx.interp, _ctx.phase = prev, prev_phase
    return caches.add(_steps, key, step)


def _primitive_application(prim, params):
    def apply(*xs):
        out = prim.bind(*xs, **params)
        return (list(out), _MANY) if prim.multiple_results else ([out], None)

    apply.__name__ = prim.name
    return apply


_MANY = object()  # the output tree of a primitive with multiple results: a list


def _build(build, avals, mask):
    """The step of `build` applied to operands of types `avals`, those in `mask` carrying
    tangents, or `_UNCACHEABLE`."""
    n = len(avals)
    nonzeros = [bool(mask >> i & 1) for i in range(n)]
    k = sum(nonzeros)
    tree = []

    def apply(*xs):
        outs, out_tree = build(*xs)
        tree.append(out_tree)
        return outs

    closed, _ = trace_to_jaxpr(apply, avals)
    if any(e.primitive.traits.effectful for e in closed.jaxpr.eqns):
        return _UNCACHEABLE  # (effects run on every call, where they are)
    n_out = len(closed.jaxpr.outvars)
    jvp, out_nonzeros = jvp_jaxpr(closed, nonzeros)
    known, unknown, out_unknowns, n_res = partial_eval_jaxpr(jvp, [False] * n + [True] * k)
    if any(out_unknowns[:n_out]) or not all(out_unknowns[n_out:]):
        return _UNCACHEABLE  # (a tangent that does not depend on the operands' tangents)
    transposed = transpose_jaxpr(unknown, [False] * n_res + [True] * k)
    step = LinearizedStep()
    step.jaxpr = closed
    step.out_tree = tree[0]
    step.n_out = n_out
    step.out_avals = tuple(closed.jaxpr.out_avals)
    lin_out_avals = tuple(unknown.jaxpr.out_avals)
    tangent_out = []
    j = 0
    for nz in out_nonzeros:
        tangent_out.append(j if nz else None)
        j += nz
    step.tangent_out = tuple(tangent_out)
    step.lin_out_avals = lin_out_avals
    step.staged = linearized_p if len(lin_out_avals) == 1 else linearized_n_p
    step.res_avals = tuple(known.jaxpr.out_avals[n_out:])
    step.ct_in_avals = tuple(transposed.jaxpr.out_avals)
    step.linear = unknown
    step.transposed = transposed
    # A linear part that only forwards operand tangents (x + c, a tangent passed through)
    # stages nothing: the outputs' tangents are those operands' tangents.
    lin = unknown.jaxpr
    tangent_vars = lin.invars[n_res:]
    step.forwarded = None
    if not lin.eqns and all(v in tangent_vars for v in lin.outvars):
        step.forwarded = tuple(tangent_vars.index(v) for v in lin.outvars)
    step.single = (n_out == 1 and step.out_tree is None and tangent_out == [0]
                   and len(lin_out_avals) == 1)
    name = getattr(build, "__name__", "step")
    forward = compile_jaxpr(known, f"{name}_forward")
    backward = compile_jaxpr(transposed, f"{name}_backward")
    step.sources = (forward.source, backward.source)  # (to read what a step computes)
    zero_d = [n_out + i for i, a in enumerate(step.res_avals) if not a.shape]
    mode = config.read("didax_native_tier")
    if mode != "off" and not any(float_checks()):
        # Several equations fuse into one native loop (a max's tie-splitting coefficient:
        # 8 us against 32 us), computing the NumPy tier's bits; in the background only for
        # steps a loop runs many times (a build takes a compiler the best part of a second,
        # once: its code is cached on disk).
        for exe, attr in ((forward, "forward"), (backward, "backward")):
            if len(exe.jaxpr.eqns) >= _NATIVE_MIN_EQUATIONS:
                tier.attach(exe, mode, calls=_NATIVE_CALLS, on_ready=functools.partial(
                    _native_ready, step, attr, exe, zero_d if attr == "forward" else ()))
    step.forward = _returning_arrays(forward.run, zero_d)
    step.backward = backward.run
    return step


_NATIVE_MIN_EQUATIONS = 3
_NATIVE_CALLS = 200


def _native_ready(step, attr, exe, zero_d):
    setattr(step, attr, _returning_arrays(exe.run, zero_d))


def _returning_arrays(run, zero_d):
    """`run`, with the 0-d residuals it may compute as NumPy scalars made arrays: the
    backward code, like all generated code, is handed arrays."""
    if not zero_d:
        return run

    def forward(*vals):
        outs = list(run(*vals))
        for i in zero_d:
            if type(outs[i]) is not np.ndarray:
                outs[i] = np.asarray(outs[i])
        return outs

    return forward


class EagerVJPInterpreter(JVPInterpreter):
    """The JVP interpreter of an eager `vjp`: its parent is a partial evaluator over
    evaluation. Applications of a built signature, of a primitive or of a function declared
    a step (`registry.step`), take the compiled step."""

    def __init__(self):
        self.run = next(_runs)  # (which vjp saw a signature first)

    def process_primitive(self, prim, args, params):
        got = self._operands(prim, args, False)
        if got is not None:
            key, vals, tans = got
            if params:
                key.extend(params.items())
            key = tuple(key)
            try:
                step = _steps.get(key)
            except TypeError:  # an unhashable parameter
                step = _UNCACHEABLE
            if step is None:
                step = _step_for(key, _primitive_application(prim, params),
                                 key[2:2 + len(args)], key[1], self.run,
                                 _keeps_general_path(prim, params))
            if step is not None and step is not _UNCACHEABLE:
                return self._results(step, step.forward(*vals), tans)
        return JVPInterpreter.process_primitive(self, prim, args, params)

    def _results(self, step, outs, tans):
        """The outputs of a step's application: Arrays, and tracers where they have tangents
        (one `linearized` equation computes those, unless the step forwards them)."""
        if step.single:  # one output, its tangent computed by one equation or forwarded
            return _single_output(self, step, outs, tans)
        return self._outputs(step, outs, tans)

    def apply_step(self, fn, args, kwargs):
        """`fn(*args, **kwargs)` for a pure library function `fn` of arrays and static
        arguments (declared with `registry.step`): one step per signature (the types of its
        array arguments, the values of the others) for the whole function, rather than one per
        primitive it binds; its Python runs only to build the step. Anything else runs `fn`
        as it is."""
        got = self._operands(fn, args, True)
        if got is None:
            return fn(*args, **kwargs)
        key, vals, tans = got
        if kwargs:
            for name, x in kwargs.items():
                d = _static(x)
                if d is _NOT_STATIC:  # (an array passed by keyword, rare: run as it is)
                    return fn(*args, **kwargs)
                key.append(name)
                key.append(d)
        key = tuple(key)
        try:
            step = _steps.get(key)
        except TypeError:
            return fn(*args, **kwargs)
        if step is None:
            where = [i for i, x in enumerate(args) if isinstance(x, (core.ArrayBase, np.ndarray))]
            step = _step_for(key, _function_application(fn, args, kwargs, where),
                             [get_aval(args[i]) for i in where], key[1], self.run)
            if step is None:
                return fn(*args, **kwargs)
        if step is _UNCACHEABLE:
            return fn(*args, **kwargs)
        return self._results(step, step.forward(*vals), tans)

    def _operands(self, head, args, statics):
        """(key, NumPy values, tangent tracers) of an application: the key (a list) is `head`,
        the mask of the operands carrying tangents, each array operand's type and, with
        `statics`, each other argument's type and value (-0.0 apart from 0.0, True from 1).
        None where no operand carries a tangent, or one is neither a concrete array nor one of
        our tracers with a staged tangent, or (without `statics`) is not an array."""
        key = [head, 0]
        vals = []
        tans = []
        pe = self.parent
        mask = 0
        bit = 1
        for x in args:
            tx = type(x)
            if tx is JVPTracer and x._interp is self:
                t = x.tangent
                p = x.primal
                if type(t) is not StagingTracer or t._interp is not pe or type(p) is not Array:
                    return None
                key.append(x.aval)
                vals.append(p._value)
                mask |= bit
                tans.append(t)
                bit <<= 1
            elif tx is Array:
                key.append(x.aval)
                vals.append(x._value)
                bit <<= 1
            elif tx is np.ndarray:
                a, v = _constant(x)
                key.append(a)
                vals.append(v)
                bit <<= 1
            elif not statics:
                return None
            elif tx is float:  # (a static's type, then its value)
                key.append(float)
                key.append(x.hex())
            elif tx is int or tx is bool or x is None:
                key.append(tx)
                key.append(x)
            else:
                d = _static(x)
                if d is _NOT_STATIC:
                    return None
                key.append(tx)
                key.append(d)
        if not mask:
            return None
        key[1] = mask
        return key, vals, tans

    def _outputs(self, step, outs, tans):
        """The results of a step with several outputs or tangents, or none."""
        pe = self.parent
        n_out = step.n_out
        forwarded = step.forwarded
        if forwarded is not None:
            lin_outs = [tans[i] for i in forwarded]
        else:
            lin_outs = [_staged(pe, a) for a in step.lin_out_avals]
            pe.eqns.append(JaxprEqn.owning(
                step.staged, [t._var for t in tans], [t._var for t in lin_outs],
                {"step": step, "residuals": tuple(outs[n_out:])}, None, _ctx.phase))
        results = [Array.from_numpy(o, a) for o, a in zip(outs[:n_out], step.out_avals)]
        for i, j in enumerate(step.tangent_out):
            if j is not None:
                results[i] = JVPTracer(self, results[i], lin_outs[j])
        tree = step.out_tree
        if tree is None:
            return results[0]
        return results if tree is _MANY else tree_unflatten(tree, results)


_NOT_STATIC = object()


def _static(x):
    """A hashable description of a static argument that tells apart every value a library
    function could treat differently (-0.0 from 0.0, True from 1), or `_NOT_STATIC`."""
    t = type(x)
    if t is float:
        return (float, x.hex())
    if t is int or t is bool or t is str or x is None:
        return (t, x)
    if t is tuple or t is list:
        parts = tuple(_static(e) for e in x)
        return _NOT_STATIC if _NOT_STATIC in parts else (t, parts)
    if t is complex:
        return (complex, x.real.hex(), x.imag.hex())
    if t is np.dtype or t is type:
        return (t, x)
    return _NOT_STATIC


def _function_application(fn, args, kwargs, where):
    """Builds a step of `fn` applied to `args` with the array arguments at `where` traced."""
    def apply(*xs):
        a = list(args)
        for i, x in zip(where, xs):
            a[i] = x
        out = fn(*a, **kwargs)
        if isinstance(out, core.ArrayBase):
            return [out], None
        return tree_flatten(out)

    apply.__name__ = getattr(fn, "__name__", "function")
    return apply


def _constant(x: np.ndarray):
    """The type and value of a NumPy array operand (of its canonical dtype)."""
    aval = get_aval(x)
    return aval, (x if x.dtype is aval.dtype else np.asarray(x, aval.dtype))


def _staged(pe, aval):
    """A new variable of `pe`'s jaxpr and its tracer."""
    return StagingTracer(pe, aval, Var(aval))


# A step's output is five objects (its Array; the tangent's variable and tracer; the equation
# computing the tangent; the JVP tracer pairing them), made for every eager operation under
# `grad`. They are built here without their constructors' calls: 0.43 µs an output against
# 0.70, 3 % of an MLP's eager gradient. Their constructors' checks are the step's, made once
# when it was built. test_vjp's `test_step_outputs_are_what_constructors_make` holds this to
# the constructors, field by field.
_new = object.__new__


def _single_output(interp, step, outs, tans):
    """The JVP tracer of a step's one output (its tangent staged, or forwarded)."""
    aval = step.out_avals[0]
    value = outs[0]
    if type(value) is np.ndarray and value.dtype is aval.dtype and value.shape == aval.shape:
        primal = _new(Array)
        primal._value = value
        primal.aval = aval
    else:
        primal = Array.from_numpy(value, aval)
    forwarded = step.forwarded
    if forwarded is None:
        pe = interp.parent
        lin_aval = step.lin_out_avals[0]
        var = _new(Var)
        var.aval = lin_aval
        var.id = next_var_id()
        tangent = _new(StagingTracer)
        tangent._interp = pe
        tangent.aval = lin_aval
        tangent._var = var
        tangent._src = None
        eqn = _new(JaxprEqn)
        eqn.primitive = linearized_p
        eqn.invars = [t._var for t in tans]
        eqn.outvars = [var]
        eqn.params = {"step": step, "residuals": outs[1:]}
        eqn.source_info = None
        eqn.phase = _ctx.phase
        pe.eqns.append(eqn)
    else:
        tangent = tans[forwarded[0]]
    out = _new(JVPTracer)
    out._interp = interp
    out.primal = primal
    out.tangent = tangent
    out.aval = aval
    return out




# --------------------------------------------------------------------------------------
# The staged equation: a step's linear part, closed over its residuals. `linearized` has
# one tangent output (most primitives), `linearized_n` several.


linearized_p = core.primitive("linearized")
linearized_n_p = core.primitive("linearized_n", multiple_results=True)


def _residual_arrays(step, residuals):
    return [Array.from_numpy(r, a) for r, a in zip(residuals, step.res_avals)]


def _linearized_impl(*tangents, step, residuals):
    """The tangent map evaluated forwards (the backward pass never needs it)."""
    prev = _ctx.interp
    _ctx.interp = _eval
    try:
        lin = step.linear
        outs = eval_jaxpr(lin.jaxpr, lin.consts, *_residual_arrays(step, residuals),
                          *[Array.from_numpy(t, a) for t, a in
                            zip(tangents, lin.jaxpr.in_avals[len(residuals):])])
    finally:
        _ctx.interp = prev
    return [o._value for o in outs]


def _linearized_transpose(cts, *undefined, step, residuals):
    """The transpose where `eager_backward_pass` does not run it (a pullback under jit, vmap
    or another derivative): the transposed equations are bound where they run."""
    t = step.transposed
    return eval_jaxpr(t.jaxpr, t.consts, *_residual_arrays(step, residuals),
                      *[instantiate(ct) for ct in cts])


linearized_p.def_impl(lambda *ts, step, residuals: _linearized_impl(
    *ts, step=step, residuals=residuals)[0])
linearized_p.def_abstract_eval(lambda *avals, step, residuals: step.lin_out_avals[0])
linearized_p.def_transpose(lambda ct, *undefined, step, residuals: _linearized_transpose(
    [ct], step=step, residuals=residuals))
linearized_n_p.def_impl(_linearized_impl)
linearized_n_p.def_abstract_eval(lambda *avals, step, residuals: step.lin_out_avals)
linearized_n_p.def_transpose(_linearized_transpose)
for _p in (linearized_p, linearized_n_p):
    _p.pp_hidden = {"residuals": core.PP_ALWAYS_HIDE}
    deflinear(_p)
    _p.mark_absent("batch", "the equation exists only inside an eager vjp's linear jaxpr, "
                            "which is transposed, never batched")
    _p.mark_absent("codegen", "the equation exists only inside an eager vjp's linear jaxpr, "
                              "which is never compiled")


# --------------------------------------------------------------------------------------
# The backward pass of an eager vjp evaluated now


def eager_backward_pass(jaxpr, consts, cts_out) -> list:
    """`backward_pass` of an eager vjp's linear jaxpr, evaluated now (the interpreter current
    is evaluation; cotangents are Arrays, NumPy values or Zeros): the `linearized` equations this
    module staged call their compiled transposes on NumPy cotangents, which stay NumPy
    arrays between them; every other equation is transposed by its rule, as there."""
    prev_phase, _ctx.phase = _ctx.phase, "backward"
    try:
        known, eqns = linear_equations(jaxpr, consts)
        env: dict = {}
        for v, ct in zip(jaxpr.outvars, cts_out):
            if type(v) is Var and v not in known and type(ct) is not Zero:
                _accumulate(env, v, ct._value if type(ct) is Array else ct)
        pop = env.pop
        get_known = known.get
        for eqn in reversed(eqns):
            prim = eqn.primitive
            if prim is linearized_p:  # (this module's own equation: its cotangents as values)
                ct = pop(eqn.outvars[0], None)
                if ct is None:
                    continue
                params = eqn.params
                step = params["step"]
                outs = step.backward(*params["residuals"],
                                     _value(ct, step.lin_out_avals[0]))
                for v, o in zip(eqn.invars, outs):
                    _accumulate(env, v, o)
                continue
            if not prim.multiple_results:
                ct = pop(eqn.outvars[0], None)
                if ct is None:
                    continue
                ct = _array(ct, eqn.outvars[0].aval)
            else:
                cts = [pop(v, None) for v in eqn.outvars]
                if all(c is None for c in cts):
                    continue
                if prim is linearized_n_p:
                    step = eqn.params["step"]
                    vals = [np.zeros(a.shape, a.dtype) if c is None else _value(c, a)
                            for c, a in zip(cts, step.lin_out_avals)]
                    for v, o in zip(eqn.invars, step.backward(*eqn.params["residuals"], *vals)):
                        _accumulate(env, v, o)
                    continue
                ct = [Zero(v.aval) if c is None else _array(c, v.aval)
                      for v, c in zip(eqn.outvars, cts)]
            for v, ct_in in transpose_equation(eqn, ct, get_known):
                _accumulate(env, v, ct_in)
        return [Zero(v.aval) if (c := env.get(v)) is None else _array(c, v.aval)
                for v in jaxpr.invars]
    finally:
        _ctx.phase = prev_phase


def _accumulate(env, v, ct):
    prev = env.get(v)
    if prev is None:
        env[v] = ct
    elif type(prev) is np.ndarray and type(ct) is np.ndarray and prev.dtype is ct.dtype:
        env[v] = np.add(prev, ct)  # (add_any's impl, without the dispatch)
    else:
        env[v] = add_tangents(_array(prev, v.aval), _array(ct, v.aval))


def _value(ct, aval):
    """A cotangent as a NumPy array of its variable's dtype."""
    if type(ct) is not np.ndarray:
        ct = ct._value if type(ct) is Array else np.asarray(ct, aval.dtype)
    return ct if ct.dtype is aval.dtype else ct.astype(aval.dtype)


def _array(ct, aval):
    """A cotangent as an Array (NumPy values wrapped) for a transpose rule."""
    return Array.from_numpy(ct, aval) if type(ct) is np.ndarray or np.isscalar(ct) else ct
