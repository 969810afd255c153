"""A small Wadler-Lindig pretty printer, and JAX's variable names (a, b, ..., z, ba, ...).

`ir.py` builds jaxprs' documents with it, mirroring JAX's printer so line breaks fall where
JAX puts them: a group prints flat when it fits in the remaining width, otherwise its
breaks become newlines at the current indentation.
"""
from __future__ import annotations

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
# Variable names


def encode_name(n: int) -> str:
    s = ""
    while True:
        n, r = divmod(n, 26)
        s = chr(ord("a") + r) + s
        if n == 0:
            return s
