"""Printing jaxprs in JAX's text format, with a small Wadler-Lindig pretty printer.

The document structure mirrors JAX's printer so line breaks fall where JAX puts them:
a group prints flat when it fits in the remaining width, otherwise its breaks become
newlines at the current indentation.
"""
from __future__ import annotations

from types import FunctionType

from didax._src import dtypes
from didax._src.core import PP_ALWAYS_HIDE
from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, Literal

# --------------------------------------------------------------------------------------
# Documents


class Doc:
    __slots__ = ()

    def __add__(self, other):
        return Concat([self, other])


class Text(Doc):
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


class Brk(Doc):
    __slots__ = ("text",)

    def __init__(self, text=" "):
        self.text = text


class Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children):
        self.children = list(children)


class Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child


class Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n, child):
        self.n = n
        self.child = child


NIL = Concat([])


def join(sep: Doc, docs) -> Doc:
    docs = list(docs)
    out = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return Concat(out)


def _fits(doc: Doc, width: int) -> bool:
    """Whether a group prints flat within `width` columns. As in JAX's printer, only the
    group itself is measured, not the text that follows it on the line."""
    stack = [doc]
    while width >= 0 and stack:
        d = stack.pop()
        if isinstance(d, (Text, Brk)):
            width -= len(d.text)
        elif isinstance(d, Concat):
            stack.extend(reversed(d.children))
        else:
            stack.append(d.child)
    return width >= 0


def format_doc(doc: Doc, width: int = 80) -> str:
    out: list[str] = []
    col = 0
    agenda = [(0, False, doc)]  # (indent, flat?, doc), a stack
    while agenda:
        indent, flat, d = agenda.pop()
        if isinstance(d, Text):
            out.append(d.text)
            col += len(d.text)
        elif isinstance(d, Brk):
            if flat:
                out.append(d.text)
                col += len(d.text)
            else:
                out.append("\n" + " " * indent)
                col = indent
        elif isinstance(d, Concat):
            agenda.extend((indent, flat, c) for c in reversed(d.children))
        elif isinstance(d, Nest):
            agenda.append((indent + d.n, flat, d.child))
        else:  # Group
            agenda.append((indent, flat or _fits(d.child, width - col), d.child))
    return "".join(out)


# --------------------------------------------------------------------------------------
# Jaxprs


def _encode_name(n: int) -> str:
    s = ""
    while True:
        n, r = divmod(n, 26)
        s = chr(ord("a") + r) + s
        if n == 0:
            return s


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
            name = self.names[v] = _encode_name(self.count)
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
