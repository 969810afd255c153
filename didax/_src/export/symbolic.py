"""Symbolic dimension sizes: polynomials with integer coefficients over named dimension
variables (`b`, `2*b + 1`), the scopes that hold their constraints, and the parser of
shape specifications ("b, 3").

A didax program is traced at concrete sizes (see polymorphic.py); these expressions are
the exported program's view of its shapes, evaluated when it is called.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from didax._src.errors import user_error
from didax._src.transforms.api import ShapeDtypeStruct
from didax._src.tree_util import broadcast_prefix, tree_flatten, tree_unflatten

# A monomial: a sorted tuple of (variable, power); () is the constant term.


def _mono_str(mono) -> str:
    return "*".join(v if p == 1 else f"{v}^{p}" for v, p in mono)


def _mono_mul(m1, m2):
    powers = dict(m1)
    for v, p in m2:
        powers[v] = powers.get(v, 0) + p
    return tuple(sorted(powers.items()))


class SymbolicScope:
    """Where symbolic dimensions live, with the constraints on them (`"a >= 2"`,
    `"b <= 32"`, `"a == 2*b"`): expressions from two scopes cannot be combined."""

    _ids = itertools.count()

    def __init__(self, constraints_str: Sequence[str] = ()):
        if isinstance(constraints_str, str):
            raise user_error(ValueError, (
                "SymbolicScope: constraints must be a sequence of strings, got the string "
                f"{constraints_str!r}; use [{constraints_str!r}]"))
        self.constraints_str = tuple(constraints_str)
        self._id = next(SymbolicScope._ids)
        self.constraints = tuple(_parse_constraint(c, self) for c in self.constraints_str)

    def __str__(self):
        extra = "".join(f"\n  {c}" for c in self.constraints_str)
        return f"SymbolicScope {self._id}" + (f" with constraints:{extra}" if extra else "")

    __repr__ = __str__

    def check(self, env: dict) -> None:
        """Refuses dimension values `env` that break a constraint."""
        for text, (lhs, op, rhs) in zip(self.constraints_str, self.constraints):
            a, b = lhs.evaluate(env), rhs.evaluate(env)
            ok = a >= b if op == ">=" else a <= b if op == "<=" else a == b
            if not ok:
                raise user_error(ValueError, (
                    f"Input shapes do not match the symbolic shape constraint '{text}': with "
                    f"{_env_str(env)} it reads {a} {op} {b}, which is false."))

    def satisfied(self, env: dict) -> bool:
        try:
            self.check(env)
        except ValueError:
            return False
        return True


def _env_str(env) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sorted(env.items()))


class DimExpr:
    """A symbolic dimension size: a polynomial over dimension variables (as JAX's), such as
    `b`, `2*b + 1` or `a*b`. Sizes that are plain integers stay Python ints."""

    __slots__ = ("terms", "scope")

    def __init__(self, terms: dict, scope: SymbolicScope):
        self.terms = {m: c for m, c in terms.items() if c != 0}
        self.scope = scope

    @staticmethod
    def variable(name: str, scope: SymbolicScope) -> DimExpr:
        return DimExpr({((name, 1),): 1}, scope)

    # arithmetic --------------------------------------------------------------------------

    def _lift(self, other, op: str):
        if isinstance(other, DimExpr):
            if other.scope is not self.scope:
                raise user_error(ValueError, (
                    f"Invalid mixing of symbolic scopes in '{self}' {op} '{other}': symbolic "
                    "dimensions made by separate calls of symbolic_shape live in separate "
                    "scopes.\nWhat to do: make them with one call, or pass the same "
                    "`scope=` to each call."))
            return other
        if isinstance(other, bool) or not isinstance(other, int):
            try:
                other = int(other.__index__())
            except (AttributeError, TypeError):
                return None
        return DimExpr({(): other}, self.scope)

    def __add__(self, other):
        other = self._lift(other, "+")
        if other is None:
            return NotImplemented
        terms = dict(self.terms)
        for m, c in other.terms.items():
            terms[m] = terms.get(m, 0) + c
        return _simplified(DimExpr(terms, self.scope))

    __radd__ = __add__

    def __neg__(self):
        return DimExpr({m: -c for m, c in self.terms.items()}, self.scope)

    def __sub__(self, other):
        other = self._lift(other, "-")
        return NotImplemented if other is None else self + (-other)

    def __rsub__(self, other):
        other = self._lift(other, "-")
        return NotImplemented if other is None else other + (-self)

    def __mul__(self, other):
        other = self._lift(other, "*")
        if other is None:
            return NotImplemented
        terms: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = _mono_mul(m1, m2)
                terms[m] = terms.get(m, 0) + c1 * c2
        return _simplified(DimExpr(terms, self.scope))

    __rmul__ = __mul__

    def __floordiv__(self, other):
        raise NotImplementedError(
            f"floor division of the symbolic dimension '{self}' by {other}: didax's symbolic "
            "dimensions are polynomials; trace with a shape that makes the quotient a "
            "dimension variable of its own (e.g. 'b, 2*b' instead of 'b, b // 2')")

    __mod__ = __rfloordiv__ = __rmod__ = __truediv__ = __rtruediv__ = __floordiv__

    # comparisons: equality is structural; an order is decided only when the difference
    # is a constant (didax has no solver for constraints)

    def __eq__(self, other):
        other = self._lift(other, "==") if not isinstance(other, DimExpr) else other
        if not isinstance(other, DimExpr):
            return False
        return self.terms == other.terms

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(tuple(sorted(self.terms.items())))

    def _difference_constant(self, other, op):
        diff = self - other
        if isinstance(diff, int):
            return diff
        raise user_error(ValueError, (
            f"Symbolic dimension comparison '{self}' {op} '{other}' is inconclusive: it "
            "depends on the values of the dimension variables.\nWhat to do: compare sizes "
            "after the call, or give the sizes as concrete integers."))

    def __ge__(self, other):
        return self._difference_constant(other, ">=") >= 0

    def __gt__(self, other):
        return self._difference_constant(other, ">") > 0

    def __le__(self, other):
        return self._difference_constant(other, "<=") <= 0

    def __lt__(self, other):
        return self._difference_constant(other, "<") < 0

    def __int__(self):
        raise user_error(TypeError, (
            f"the symbolic dimension '{self}' has no integer value: its value is known only "
            "when the exported function is called"))

    __index__ = __int__

    def __bool__(self):
        return True  # (a size >= 1)

    # reading -----------------------------------------------------------------------------

    def variables(self) -> set:
        return {v for m in self.terms for v, _ in m}

    def evaluate(self, env: dict) -> int:
        total = 0
        for mono, c in self.terms.items():
            value = c
            for v, p in mono:
                if v not in env:
                    raise user_error(ValueError, f"dimension variable '{v}' has no value "
                                     f"(known: {_env_str(env)})")
                value *= env[v] ** p
            total += value
        return total

    def linear_in(self, name: str):
        """(coefficient, rest) if this is `coefficient*name + rest` with `rest` free of
        `name`, else None."""
        coef, rest = 0, {}
        for mono, c in self.terms.items():
            if mono == ((name, 1),):
                coef = c
            elif any(v == name for v, _ in mono):
                return None
            else:
                rest[mono] = c
        return coef, DimExpr(rest, self.scope)

    def __str__(self):
        def order(item):  # by degree, then by the variables written out (as JAX prints)
            mono, _ = item
            return (sum(p for _, p in mono), [v for v, p in mono for _ in range(p)])
        parts = []
        for mono, c in sorted(self.terms.items(), key=order, reverse=True):
            mag = abs(c)
            if not mono:
                text = str(mag)
            else:
                text = _mono_str(mono) if mag == 1 else f"{mag}*{_mono_str(mono)}"
            if not parts:
                parts.append(text if c > 0 else f"- {text}")
            else:
                parts.append(f"+ {text}" if c > 0 else f"- {text}")
        return " ".join(parts) if parts else "0"

    __repr__ = __str__


def _simplified(e: DimExpr):
    """A constant expression is its int."""
    if not e.terms:
        return 0
    if list(e.terms) == [()]:
        return e.terms[()]
    return e


def is_symbolic_dim(p) -> bool:
    """Whether `p` is a symbolic dimension (not an integer)."""
    return isinstance(p, DimExpr)


# --------------------------------------------------------------------------------------
# Parsing


_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(\.\.\.)|(>=|<=|==|[-+*^(),]))")


def _tokens(text: str, what: str):
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise user_error(ValueError, f"syntax error in {what} at {text[pos:]!r}")
        out.append(next(g for g in m.groups() if g is not None))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens, scope, what):
        self.toks = tokens
        self.i = 0
        self.scope = scope
        self.what = what

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected=None):
        tok = self.peek()
        if tok is None or expected is not None and tok != expected:
            raise user_error(ValueError, (
                f"syntax error in {self.what}: expected {expected or 'more'} but found "
                f"{tok!r} after {' '.join(self.toks[:self.i])!r}"))
        self.i += 1
        return tok

    def expr(self):
        sign = -1 if self.peek() == "-" and self.take() else 1
        value = sign * self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            t = self.term()
            value = value + t if op == "+" else value - t
        return value

    def term(self):
        value = self.power()
        while self.peek() == "*":
            self.take()
            value = value * self.power()
        return value

    def power(self):
        base = self.atom()
        if self.peek() == "^":
            self.take()
            exponent = self.take()
            if not exponent.isdigit():
                raise user_error(ValueError, f"syntax error in {self.what}: the power of "
                                 f"{base} must be an integer, got {exponent!r}")
            result = 1
            for _ in range(int(exponent)):
                result = result * base
            return result
        return base

    def atom(self):
        tok = self.take()
        if tok.isdigit():
            return int(tok)
        if tok == "(":
            value = self.expr()
            self.take(")")
            return value
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok) and tok != "_":
            return DimExpr.variable(tok, self.scope)
        raise user_error(ValueError, f"syntax error in {self.what}: unexpected {tok!r}")


def _parse_constraint(text: str, scope: SymbolicScope):
    what = f"symbolic shape constraint {text!r}"
    toks = _tokens(text, what)
    p = _Parser(toks, scope, what)
    lhs = p.expr()
    op = p.take()
    if op not in (">=", "<=", "=="):
        raise user_error(ValueError, f"syntax error in {what}: expected >=, <= or ==, got {op!r}")
    rhs = p.expr()
    if p.peek() is not None:
        raise user_error(ValueError, f"syntax error in {what}: unexpected {p.peek()!r}")
    return _as_expr(lhs, scope), op, _as_expr(rhs, scope)


def _as_expr(x, scope) -> DimExpr:
    return x if isinstance(x, DimExpr) else DimExpr({(): x}, scope)


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None,
                   like: Sequence[int | None] | None = None) -> tuple:
    """The shape a specification such as "b, 3" or "(b, 2*b)" describes: a tuple of ints
    and symbolic dimensions. `_` takes the size from `like`; `...` the rest of `like`."""
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise user_error(ValueError, "symbolic_shape: give constraints either to the "
                         "SymbolicScope or as `constraints=`, not both")
    what = f"symbolic shape {shape_spec!r}"
    text = "" if shape_spec is None else shape_spec.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    parts = [s.strip() for s in text.split(",")] if text.strip() else []
    if parts and parts[-1] == "":
        parts.pop()
    if shape_spec is None:
        parts = ["..."]
    out: list = []
    for i, part in enumerate(parts):
        if part == "...":
            if like is None:
                raise user_error(ValueError, f"syntax error in {what}: spec contains ... but "
                                 "no 'like' shape was given")
            if i != len(parts) - 1:
                raise user_error(ValueError, f"syntax error in {what}: ... must come last")
            rest = list(like[len(out):])
            if any(d is None for d in rest):
                raise user_error(ValueError, f"syntax error in {what}: ... stands for sizes "
                                 f"of like={tuple(like)} that are unknown (None)")
            out.extend(rest)
            continue
        if part == "_":
            if like is None or i >= len(like) or like[i] is None:
                raise user_error(ValueError, f"syntax error in {what} in dimension {i}: _ "
                                 "needs a known size in `like`")
            out.append(int(like[i]))
            continue
        p = _Parser(_tokens(part, what), scope, what)
        value = p.expr()
        if p.peek() is not None:
            raise user_error(ValueError, f"syntax error in {what} in dimension {i}: "
                             f"unexpected {p.peek()!r}")
        if like is not None and i < len(like) and like[i] is not None:
            if isinstance(value, int) and value != like[i]:
                raise user_error(ValueError, (
                    f"syntax error in {what} in dimension {i}: different size {value} for "
                    f"known dimension; like={tuple(like)}"))
        out.append(value)
    if like is not None and len(out) != len(like):
        raise user_error(ValueError, f"syntax error in {what}: {len(out)} dimensions but "
                         f"like={tuple(like)} has {len(like)}")
    return tuple(out)


def symbolic_args_specs(args, shapes_specs, constraints: Sequence[str] = (),
                        scope: SymbolicScope | None = None):
    """ShapeDtypeStructs like `args` (a pytree of arrays) with the symbolic shapes
    `shapes_specs` (one string for all, or a pytree prefix of strings); all dimensions in
    one scope."""
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise user_error(ValueError, "symbolic_args_specs: give constraints either to the "
                         "SymbolicScope or as `constraints=`, not both")
    leaves, tree = tree_flatten(args)
    if shapes_specs is None or isinstance(shapes_specs, str):
        specs = [shapes_specs] * len(leaves)
    else:
        if type(shapes_specs) in (list, tuple) and type(args) in (list, tuple):
            shapes_specs = type(args)(shapes_specs)  # (either sequence, as JAX takes them)
        specs = broadcast_prefix(shapes_specs, args, is_leaf=lambda x: x is None)
    out = []
    for x, spec in zip(leaves, specs):
        shape = symbolic_shape(spec, scope=scope, like=tuple(x.shape))
        out.append(ShapeDtypeStruct(shape, x.dtype))
    return tree_unflatten(tree, out)
