"""Programs generic in their symbolic dimensions, from traces at concrete sizes.

didax traces with concrete shapes. For symbolic dimensions the function is traced at a
base size for every dimension variable, once more with each variable one larger, and once
at sizes far from these (the check). The encoded programs must be the same document except
for numbers that change with the sizes; each such number (a shape, a slice limit, a
`reshape`'s new sizes, a literal such as a mean's divisor) must be an affine function of
the variables, found from the first traces and confirmed by the check. The generic
program is the document with those numbers replaced by `{"$dim": ...}` expressions;
calling it evaluates them at the sizes bound from the arguments and decodes the result.

What this cannot see: a Python branch on a size taken only at sizes no trace used (the
check trace makes that less likely, not impossible). JAX would refuse such a branch at
tracing; didax documents it.
"""
from __future__ import annotations

from didax._src.errors import user_error
from didax._src.export.serialize import DeserializationError
from didax._src.export.symbolic import DimExpr, SymbolicScope

_BASES = (11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53)


def sample_points(names: list[str], scope: SymbolicScope | None) -> tuple[dict, list, dict]:
    """(base, [base with one variable one larger, per variable], check) dimension values
    that satisfy the scope's constraints."""
    for shift in range(0, 400, 7):
        base = {n: _BASES[i % len(_BASES)] + 60 * (i // len(_BASES)) + shift
                for i, n in enumerate(names)}
        steps = [{**base, n: base[n] + 1} for n in names]
        check = {n: 2 * v + 5 for n, v in base.items()}
        points = [base, *steps, check]
        if scope is None or all(scope.satisfied(p) for p in points):
            return base, steps, check
    raise user_error(ValueError, (
        f"export: found no sizes for the dimension variables {names} that satisfy the "
        f"constraints {list(scope.constraints_str)} (didax traces at sizes it picks "
        "between 11 and about 900)"))


class NotGeneric(ValueError):
    pass


def generalize(base, steps: list, check, names, env_base, env_check, scope):
    """The document `base` with the numbers that vary across the traces `steps` (one per
    variable) as affine expressions of the variables, checked against `check`."""
    path = _Path(base)

    def walk(b, ss, c):
        if all(_same(b, s) for s in ss) and _same(b, c):
            return b
        if _is_number(b) and all(_is_number(s) for s in ss) and _is_number(c):
            coefs = [s - b for s in ss]
            if any(x != int(x) for x in coefs):
                raise NotGeneric(f"at {_where(path)} the value {b} changes by {coefs} "
                                 "when a size grows by one")
            terms = {((n, 1),): int(k) for n, k in zip(names, coefs) if k}
            const = b - sum(k * env_base[n] for n, k in zip(names, coefs))
            if const != int(const):
                raise NotGeneric(f"at {_where(path)} the value {b} is not an integer "
                                 "function of the sizes")
            terms[()] = int(const)
            expr = DimExpr(terms, scope)
            if expr.evaluate(env_check) != c:
                raise NotGeneric(
                    f"at {_where(path)} the value is {b} at sizes {env_base} but {c} at "
                    f"{env_check}, not the affine function {expr} of the sizes")
            return {"$dim": encode_dim(expr), "float": type(b) is float}
        if type(b) is list and all(type(s) is list and len(s) == len(b) for s in [*ss, c]):
            out = []
            for i, x in enumerate(b):
                path.append(i)
                out.append(walk(x, [s[i] for s in ss], c[i]))
                path.pop()
            return out
        if type(b) is dict and all(type(s) is dict and s.keys() == b.keys() for s in [*ss, c]):
            out = {}
            for k, x in b.items():
                path.append(k)
                out[k] = walk(x, [s[k] for s in ss], c[k])
                path.pop()
            return out
        raise NotGeneric(f"the program's structure changes with the sizes at {_where(path)}: "
                         f"{_short(b)} at sizes {env_base}, {_short(c)} at {env_check}")

    return walk(base, steps, check)


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _is_number(x) -> bool:
    return type(x) is int or type(x) is float and x == x and abs(x) != float("inf") \
        and x == int(x)


def _where(path) -> str:
    """The equations (primitive names) on the way to a position of the document."""
    return "the program's " + " in ".join(reversed(path.eqns)) if path.eqns else \
        "the program's signature"


class _Path(list):
    """The position in a document while walking it, and the equations on the way."""

    def __init__(self, root):
        super().__init__()
        self.root = root

    @property
    def eqns(self) -> list[str]:
        out, node, parent_key = [], self.root, None
        for k in self:
            node = node[k]
            if parent_key == "eqns" and type(node) is list and node:
                out.append(f"equation {k} ({node[0]})")
            parent_key = k
        return out


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def instantiate(doc, env: dict):
    """`doc` with its `$dim` expressions evaluated at the sizes `env`."""
    if type(doc) is list:
        return [instantiate(x, env) for x in doc]
    if type(doc) is dict:
        if "$dim" in doc and len(doc) == 2:
            value = decode_dim(doc["$dim"], None).evaluate(env) \
                if not isinstance(doc["$dim"], int) else doc["$dim"]
            return float(value) if doc.get("float") else value
        return {k: instantiate(x, env) for k, x in doc.items()}
    return doc


def encode_dim(d):
    """A size (int or DimExpr) as JSON: an int, or [[coefficient, [[var, power], ...]], ...]."""
    if isinstance(d, int):
        return d
    return [[c, [list(vp) for vp in mono]] for mono, c in sorted(d.terms.items())]


def decode_dim(x, scope):
    if type(x) is int:
        return x
    try:
        terms = {}
        for c, mono in x:
            if type(c) is not int or not all(type(v) is str and type(p) is int and p > 0
                                              for v, p in mono):
                raise TypeError
            terms[tuple(sorted((v, p) for v, p in mono))] = c
    except (TypeError, ValueError):
        raise DeserializationError(f"deserialize: malformed dimension {x!r}") from None
    expr = DimExpr(terms, scope if scope is not None else SymbolicScope())
    return expr.terms.get((), 0) if set(expr.terms) <= {()} else expr
