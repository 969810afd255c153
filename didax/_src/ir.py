"""The typed IR: variables, literals, equations and jaxprs; evaluation and type checking.

A jaxpr is a straight-line program in A-normal form. Evaluating one binds its
primitives under whatever interpreter is current, so a staged program can be
differentiated, staged or evaluated again (the round trip of the seed document).
"""
from __future__ import annotations

import itertools
from types import FunctionType
from typing import Any

import numpy as np

from didax._src import caches, dtypes
from didax._src.core import PP_ALWAYS_HIDE, Array, ShapedArray
from didax._src.pretty import Brk, Concat, Doc, Group, Nest, Text, encode_name, format_doc, join

_var_ids = itertools.count()
next_var_id = _var_ids.__next__  # a new variable's id (eager/vjp builds variables inline)


class Var:
    """A variable, identified by object identity; named only when printed."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.id = next_var_id()

    def __repr__(self):
        return f"Var({self.id}:{self.aval.str_short()})"


class DropVar(Var):
    """An output nobody uses; prints as `_`."""

    __slots__ = ()


class Literal:
    """A scalar constant inlined into an equation, printed as `value:type`."""

    __slots__ = ("val", "aval", "_weak_value")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval
        self._weak_value = None

    def __repr__(self):
        return f"Literal({self.val})"


class JaxprEqn:
    __slots__ = ("primitive", "invars", "outvars", "params", "source_info", "phase")

    def __init__(self, primitive, invars, outvars, params, source_info=None, phase=None):
        self.primitive = primitive
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.params = params
        self.source_info = source_info
        self.phase = phase  # "backward" if staged by a backward pass

    @classmethod
    def owning(cls, primitive, invars: list, outvars: list, params, source_info, phase):
        """An equation that takes `invars` and `outvars` as they are: lists made for it,
        which nothing else holds (the constructor copies them; interpreters staging an
        equation per operation skip that)."""
        eqn = object.__new__(cls)
        eqn.primitive = primitive
        eqn.invars = invars
        eqn.outvars = outvars
        eqn.params = params
        eqn.source_info = source_info
        eqn.phase = phase
        return eqn

    def __repr__(self):
        return pp_eqn_str(self)


class Jaxpr:
    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(self, constvars, invars, outvars, eqns):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        return pp_jaxpr_str(self)

    __repr__ = __str__

    def pretty_print(self, width: int = 80) -> str:
        return pp_jaxpr_str(self, width)


UNKNOWN = object()  # (a memo slot not filled in yet)


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "discharged", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts):
        assert len(consts) == len(jaxpr.constvars)
        self.jaxpr = jaxpr
        self.consts = list(consts)
        self.discharged = UNKNOWN  # its form with mutable references discharged, or None
        # when it has none (state/discharge.py fills it in: read on every jit call's eval)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    literals = property(lambda self: self.consts)  # (JAX's other name for them)

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, width: int = 80) -> str:
        return self.jaxpr.pretty_print(width)

    def __call__(self, *args):
        return eval_jaxpr(self.jaxpr, self.consts, *args)


_derived = caches.memo("ir.derived", weak=True)  # closed jaxpr -> {key: what was derived}


def derived(closed: ClosedJaxpr, key, make):
    """What `make()` derives from `closed` (a transformed jaxpr, compiled code...), made
    once per `key` and kept as long as the jaxpr lives."""
    table = _derived.get(closed)
    if table is None:
        table = caches.add(_derived, closed, {})
    found = table.get(key)
    if found is None:
        found = caches.add(table, key, make())  # (the first made is every thread's)
    return found


def hoist_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """`closed` with its constants turned into leading inputs, and those constants: the form
    of sub-jaxprs in equation parameters, whose constants travel as operands."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), []), closed.consts


def eval_jaxpr(jaxpr: Jaxpr, consts, *args) -> list:
    """Interprets `jaxpr` by binding each primitive under the current interpreter."""
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    env: dict[Var, Any] = {}

    def read(v):
        if type(v) is Literal:
            return literal_value(v)
        return env[v]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        outs = eqn.primitive.bind(*ins, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        for v, x in zip(eqn.outvars, outs):
            env[v] = x
    return [read(v) for v in jaxpr.outvars]


def literal_value(v: Literal):
    """A literal's value to bind: weakly typed literals must stay weak (NumPy scalars
    are strongly typed)."""
    if not v.aval.weak_type:
        return v.val
    value = v._weak_value
    if value is None:  # made once per literal: arrays are immutable
        value = v._weak_value = Array.from_numpy(np.asarray(v.val, v.aval.dtype), v.aval)
    return value


# --------------------------------------------------------------------------------------
# Type checking


class JaxprTypeError(TypeError):
    pass


def _types_match(expected: ShapedArray, actual: ShapedArray) -> bool:
    # Weak types are an inference hint for promotion, not part of a jaxpr's typing.
    return (expected.shape == actual.shape and expected.dtype == actual.dtype
            and type(expected) is type(actual))


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Validates scoping and types of every equation, recursing into sub-jaxprs."""
    defined: set[Var] = set()

    def define(v, where):
        if type(v) is DropVar:
            return
        if v in defined:
            raise JaxprTypeError(f"{where}: variable {v} defined twice")
        defined.add(v)

    def read(v, where):
        if type(v) is Literal:
            val = np.asarray(v.val)
            if val.shape != v.aval.shape or val.dtype != v.aval.dtype:
                raise JaxprTypeError(f"{where}: literal {v.val!r} does not have type "
                                     f"{v.aval.str_short()}")
            return v.aval
        if v not in defined:
            raise JaxprTypeError(f"{where}: variable {v} used before it is defined")
        return v.aval

    for v in jaxpr.constvars:
        define(v, "constvars")
    for v in jaxpr.invars:
        define(v, "invars")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i} ({eqn.primitive.name})"
        in_avals = [read(v, where) for v in eqn.invars]
        try:
            out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        except (TypeError, ValueError) as e:
            raise JaxprTypeError(f"{where}: ill-typed: {e}") from e
        outs = out if eqn.primitive.multiple_results else [out]
        if len(outs) != len(eqn.outvars):
            raise JaxprTypeError(f"{where}: {len(outs)} outputs but {len(eqn.outvars)} binders")
        for v, a in zip(eqn.outvars, outs):
            if not _types_match(a, v.aval):
                raise JaxprTypeError(
                    f"{where}: binder has type {v.aval.str_short()} but the primitive "
                    f"produces {a.str_short()}")
            define(v, where)
        for sub in subjaxprs(eqn.params):
            check_jaxpr(sub)
    for v in jaxpr.outvars:
        read(v, "outvars")


def subjaxprs(params: dict):
    """The jaxprs held in an equation's parameters (for control flow, calls...)."""
    for v in params.values():
        if isinstance(v, Jaxpr):
            yield v
        elif isinstance(v, ClosedJaxpr):
            yield v.jaxpr
        elif isinstance(v, tuple):  # (also named tuples: linear_solve_p's `jaxprs`)
            for x in v:
                if isinstance(x, Jaxpr):
                    yield x
                elif isinstance(x, ClosedJaxpr):
                    yield x.jaxpr


# --------------------------------------------------------------------------------------
# Printing, in JAX's text format


class _Names:
    """One naming context for a jaxpr and all its sub-jaxprs."""

    def __init__(self):
        self.names = {}
        self.count = 0

    def __call__(self, v) -> str:
        if type(v) is Literal:
            return f"{_literal_str(v.val)}:{pp_aval(v.aval)}"
        if type(v) is DropVar:
            return "_"
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = encode_name(self.count)
            self.count += 1
        return name

    def suggest(self, for_vars, like_vars):
        """Names `for_vars` (a sub-jaxpr's binders) after the `like_vars` bound to them."""
        if len(for_vars) != len(like_vars):
            return
        used = set()
        for f, like in zip(for_vars, like_vars):
            if (type(like) is not Literal and like not in used and type(f) is not Literal
                    and f not in self.names):
                used.add(like)
                self.names[f] = self(like)


def _literal_str(val) -> str:
    return str(val.item() if hasattr(val, "item") else val)


def pp_aval(aval) -> str:
    if type(aval) is not ShapedArray:  # a mutable array reference's type: Ref{f32[3]}
        return aval.str_short()
    return f"{dtypes.short_name(aval.dtype)}[{','.join(map(str, aval.shape))}]"


def _pp_vars(vs, names, separator="", shapes=False) -> Doc:
    items = []
    for v in vs:
        s = names(v)
        if shapes and type(v) is not Literal:
            s = f"{s}:{pp_aval(v.aval)}"
        items.append(Text(s))
    return Nest(2, Group(join(Concat([Text(separator), Group(Brk())]), items)))


def _param_str(v) -> str:
    if isinstance(v, type):
        return v.__name__
    return str(v)


def _pp_param(k, v, names) -> Doc:
    if type(v) is tuple and v and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
        body = Group(Concat([
            Nest(2, Concat([Text("("), Brk(""), join(Brk(), [_pp_jaxpr(j, names) for j in v])])),
            Brk(""), Text(")"),
        ]))
    elif isinstance(v, (Jaxpr, ClosedJaxpr)):
        body = _pp_jaxpr(v, names)
    else:
        body = Text(_param_str(v))
    return Concat([Text(f"{k}="), body])


_SHOWN = object()


def _visible_params(eqn):
    prim = eqn.primitive
    hidden = prim.pp_hidden
    fmt = getattr(prim, "pp_format", None)
    out = []
    first = prim.pp_first
    for k in [*first, *sorted(k for k in eqn.params if k not in first)]:
        v = eqn.params[k]
        h = hidden.get(k, _SHOWN)
        if h is PP_ALWAYS_HIDE or (type(h) is FunctionType and h(v)) or _same(h, v):
            continue
        if fmt is not None and k in fmt:
            v = fmt[k](v)
        out.append((k, v))
    return out


def _same(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _pp_eqn(eqn, names) -> Doc:
    rule = getattr(eqn.primitive, "pp_rule", None)  # a primitive's own text (JAX's
    if rule is not None:  # `pp_eqn_rules`): rule(eqn, names) -> str
        return Text(rule(eqn, names))
    same = eqn.primitive.pp_same_names
    if same is not None:
        inner = eqn.params[same]
        inner = getattr(inner, "jaxpr", inner)
        names.suggest(inner.invars, eqn.invars)
        names.suggest(inner.outvars, eqn.outvars)
    lhs = _pp_vars(eqn.outvars, names, shapes=True)
    params = _visible_params(eqn)
    rhs = [Text(eqn.primitive.name)]
    if params:
        rhs.append(Group(Concat([
            Nest(2, Concat([Text("["), Brk(""), join(Brk(), [_pp_param(k, v, names)
                                                             for k, v in params])])),
            Brk(""), Text("]"),
        ])))
    rhs.append(Concat([Text(" "), _pp_vars(eqn.invars, names)]))
    if eqn.outvars:
        return Concat([lhs, Text(" = "), *rhs])
    return Concat(rhs)


def _pp_jaxpr(jaxpr, names) -> Doc:
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    constvars = _pp_vars(jaxpr.constvars, names, shapes=True)
    invars = _pp_vars(jaxpr.invars, names, shapes=True)
    eqns = join(Brk("; "), [_pp_eqn(e, names) for e in jaxpr.eqns])
    n_out = len(jaxpr.outvars)
    outvars = Concat([Text("("), _pp_vars(jaxpr.outvars, names, separator=","),
                      Text(",)" if n_out == 1 else ")")])
    return Group(Concat([
        Nest(2, Concat([
            Text("{ "), Text("lambda "), constvars, Text("; "), invars, Text(". "), Text("let"),
            Nest(2, Concat([Brk(), eqns])), Brk(), Text("in "), outvars,
        ])),
        Text(" }"),
    ]))


def pp_jaxpr_str(jaxpr, width: int = 80) -> str:
    return format_doc(_pp_jaxpr(jaxpr, _Names()), width)


def pp_eqn_str(eqn, width: int = 80) -> str:
    return format_doc(_pp_eqn(eqn, _Names()), width)
