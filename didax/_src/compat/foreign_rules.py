"""Rules registered the way libraries written for JAX register them.

Such libraries declare primitives through `jax.extend.core.Primitive` with implementations
written in `jax.numpy`, and add rules by item assignment into tables
(`ad.primitive_jvps[p] = rule`, `batching.primitive_batchers[p] = rule`,
`mlir.register_lowering(p, ...)`). The tables here are views onto the rules the primitives
themselves hold, so a rule set through them is the one didax's interpreters look up.
"""
from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np

from didax._src import core
from didax._src.core import Array, Primitive, eval_interpreter, interpreter_context
from didax._src.interpreters.batching import rule_axis_name

__all__ = ["LibraryPrimitive", "RuleTable", "primitive_jvps", "primitive_transposes",
           "primitive_batchers", "axis_primitive_batchers", "fancy_primitive_batchers",
           "AxisData",
           "register_lowering", "lower_fun", "lowerings"]


def _to_arrays(vals):
    return [v if isinstance(v, (Array, core.Tracer)) else Array(np.asarray(v)) for v in vals]


def _to_numpy(out):
    return np.asarray(out)


class LibraryPrimitive(Primitive):
    """A primitive declared by a library: its impl is written with `jax.numpy` operations on
    arrays, so it is handed didax arrays (evaluated at once) and its results are turned back
    into the NumPy values didax's evaluator and compiled code exchange; an abstract
    evaluation may also return `(avals, effects)`, whose effects didax does not track."""

    def __init__(self, name: str, *, multiple_results: bool = False):
        super().__init__(name, multiple_results=multiple_results)

    def def_impl(self, fn):
        def impl(*vals, **params):
            with interpreter_context(eval_interpreter):
                out = fn(*_to_arrays(vals), **params)
            if self.multiple_results:
                return [_to_numpy(o) for o in out]
            return _to_numpy(out)
        impl.library_impl = fn
        self.def_rule("impl", impl)
        return fn

    def def_abstract_eval(self, fn):
        def abstract(*avals, **params):
            out = fn(*avals, **params)
            return list(out) if self.multiple_results else out
        self.def_rule("abstract_eval", abstract)
        return fn

    def def_effectful_abstract_eval(self, fn):
        def abstract(*avals, **params):
            out, _effects = fn(*avals, **params)
            return list(out) if self.multiple_results else out
        self.def_rule("abstract_eval", abstract)
        return fn

    def bind(self, *args, **params):
        out = super().bind(*args, **params)
        return list(out) if self.multiple_results else out


class RuleTable(MutableMapping):
    """`table[primitive]` is the primitive's rule of one kind; assigning sets it (through
    `adapt`, which turns JAX's calling convention into didax's)."""

    def __init__(self, kind: str, adapt=None, describe: str = ""):
        self.kind = kind
        self.adapt = adapt or (lambda fn: fn)
        self.describe = describe or kind

    def __getitem__(self, prim):
        rule = prim.rules.get(self.kind) if isinstance(prim, Primitive) else None
        if rule is None:
            raise KeyError(prim)
        return getattr(rule, "library_rule", rule)

    def __setitem__(self, prim, fn):
        if not isinstance(prim, Primitive):
            raise TypeError(f"{self.describe} rules are set on primitives, got "
                            f"{type(prim).__name__}; declare it with "
                            "jax.extend.core.Primitive(name)")
        rule = self.adapt(fn)
        if rule is not fn:
            rule.library_rule = fn
        prim.def_rule(self.kind, rule)

    def __delitem__(self, prim):
        del prim.rules[self.kind]

    def __iter__(self):
        return (p for p in core.all_primitives.values() if self.kind in p.rules)

    def __len__(self):
        return sum(1 for _ in self)

    def __contains__(self, prim):
        return isinstance(prim, Primitive) and self.kind in prim.rules


def _batch_rule(fn):
    """JAX's batch rules take (values, batch dims); didax's also get the axis size first."""
    def rule(axis_size, vals, dims, **params):
        return fn(vals, dims, **params)
    return rule


class AxisData:
    """The mapped axis a batch rule of `axis_primitive_batchers` is told about."""

    def __init__(self, name, size, spmd_name=None, explicit_mesh_axis=None):
        self.name = name
        self.size = size
        self.spmd_name = spmd_name
        self.explicit_mesh_axis = explicit_mesh_axis


def _fancy_batch_rule(fn):
    """Rules that also want the mapped axis: `rule(axis_data, values, batch_dims)`."""
    def rule(axis_size, vals, dims, **params):
        return fn(AxisData(rule_axis_name(), axis_size), vals, dims, **params)
    return rule


def _axis_batch_rule(fn):
    """The older form of rules wanting the axis, which JAX still calls (equinox's):
    `rule(axis_size, axis_name, trace_type, values, batch_dims)`, the trace type None."""
    def rule(axis_size, vals, dims, **params):
        return fn(axis_size, rule_axis_name(), None, vals, dims, **params)
    return rule


primitive_jvps = RuleTable("jvp", describe="JVP")
primitive_transposes = RuleTable("transpose")
primitive_batchers = RuleTable("batch", _batch_rule, "batching")
axis_primitive_batchers = RuleTable("batch", _axis_batch_rule, "batching")
fancy_primitive_batchers = RuleTable("batch", _fancy_batch_rule, "batching")

# Lowerings compile to XLA in JAX; didax's jit runs a primitive's impl (or codegen rule), so a
# lowering is recorded and, for a primitive with no impl yet, a `lower_fun` lowering gives it
# one.
lowerings: dict = {}


class _LoweredFunction:
    def __init__(self, fun, multiple_results):
        self.fun = fun
        self.multiple_results = multiple_results

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            "MLIR lowering rules do not run under didax: jit calls the primitive's impl")


def lower_fun(fun, multiple_results: bool = True):
    """A lowering that computes `fun`; under didax it becomes the primitive's impl when it
    has none."""
    return _LoweredFunction(fun, multiple_results)


def register_lowering(prim, rule, platform: str | None = None, **kwargs):
    lowerings[(prim, platform)] = rule
    if isinstance(rule, _LoweredFunction) and "impl" not in prim.rules:
        prim.def_impl(rule.fun)
    return rule
