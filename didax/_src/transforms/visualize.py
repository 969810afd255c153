"""A picture of any transformed function: its jaxpr as a Graphviz graph.

Equations are boxes (primitive, result types, the user's line); values flow along edges;
the jaxprs inside jit, scan, while, cond, custom rules and checkpoint are clusters; in a
gradient, the forward and the backward pass are told apart. The DOT text is always there
(`.source`); rendering to SVG or PNG needs Graphviz's `dot` program.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess

import numpy as np

from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, Literal
from didax._src.transforms.api import make_jaxpr

_FORWARD_COLOR = "#dbe9f6"
_BACKWARD_COLOR = "#fbe3d6"


class Graph:
    """A jaxpr drawn as a graph. `source` is its DOT text, as with the graphviz package."""

    def __init__(self, source: str):
        self.source = source

    def __str__(self):
        return self.source

    def pipe(self, format: str = "svg") -> bytes:  # noqa: A002 - graphviz's name
        """The rendered picture, from Graphviz's `dot`."""
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError(
                "rendering needs Graphviz's `dot` program, which was not found on PATH; install "
                "Graphviz (e.g. `apt-get install graphviz` or `brew install graphviz`), or save "
                "the DOT text with graph.save('graph.dot')")
        return subprocess.run([dot, f"-T{format}"], input=self.source.encode(),
                              capture_output=True, check=True).stdout

    def save(self, path) -> str:
        """Writes the graph to `path`: DOT text for .dot/.gv, else rendered by the suffix
        (.svg, .png, .pdf). Returns the path."""
        path = os.fspath(path)
        suffix = os.path.splitext(path)[1].lower().lstrip(".")
        data = self.source.encode() if suffix in ("dot", "gv", "") else self.pipe(suffix)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def _repr_svg_(self):  # a notebook shows the picture when Graphviz is there
        if shutil.which("dot") is None:
            return None
        return self.pipe("svg").decode()


def visualize(fun, static_argnums=()):
    """`visualize(f)(*args)`: the graph of `f`'s jaxpr at these arguments (a `Graph`)."""
    staged = make_jaxpr(fun, static_argnums=static_argnums)

    @functools.wraps(fun)
    def draw(*args, **kwargs):
        return Graph(_Drawing().graph(staged(*args, **kwargs), getattr(fun, "__name__", "f")))

    return draw


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short_source(info) -> str:
    if not info:
        return ""
    file, line, fn = info
    return f"{os.path.basename(file)}:{line} ({fn})"


def _literal_text(a: Literal) -> str:
    val = np.asarray(a.val)
    return f"{val.item()!r}:{a.aval.str_short()}" if val.ndim == 0 else a.aval.str_short()


def _nested(params):
    """(parameter name, jaxpr) for each jaxpr an equation holds, in parameter order."""
    for k, v in params.items():
        items = v if type(v) is tuple else (v,)
        for i, x in enumerate(items):
            if isinstance(x, ClosedJaxpr):
                x = x.jaxpr
            if isinstance(x, Jaxpr):
                yield (f"{k}[{i}]" if type(v) is tuple else k), x


class _Drawing:
    """Builds the DOT text: one node per equation, input, constant and output."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 0

    def node(self, label: str, indent: str, **attrs) -> str:
        name = f"n{self.count}"
        self.count += 1
        extra = "".join(f", {k}={_quote(v)}" for k, v in attrs.items())
        self.lines.append(f"{indent}{name} [label={_quote(label)}{extra}];")
        return name

    def edge(self, a: str, b: str, indent: str, label: str = "", style: str = ""):
        attrs = []
        if label:
            attrs.append(f"label={_quote(label)}")
        if style:
            attrs.append(f"style={style}")
        self.lines.append(f"{indent}{a} -> {b}" + (f" [{', '.join(attrs)}]" if attrs else "")
                          + ";")

    def open_cluster(self, label: str, indent: str, fill: str = "") -> None:
        self.lines.append(f"{indent}subgraph cluster_{self.count} {{")
        self.count += 1
        self.lines.append(f"{indent}  label={_quote(label)};")
        if fill:
            self.lines.append(f"{indent}  style=filled; fillcolor={_quote(fill)};")

    def graph(self, closed: ClosedJaxpr, name: str) -> str:
        self.lines = ["digraph jaxpr {",
                      "  node [shape=box, fontname=\"monospace\", fontsize=10];",
                      "  edge [fontname=\"monospace\", fontsize=9];",
                      f"  label={_quote(name)}; labelloc=t;"]
        jaxpr = closed.jaxpr
        env = {}
        for i, v in enumerate(jaxpr.invars):
            env[v] = self.node(f"in {i}: {v.aval.str_short()}", "  ", shape="ellipse")
        for v in jaxpr.constvars:
            env[v] = self.node(f"const: {v.aval.str_short()}", "  ", shape="note")
        backward = [e for e in jaxpr.eqns if getattr(e, "phase", None) == "backward"]
        if backward:
            forward = [e for e in jaxpr.eqns if getattr(e, "phase", None) != "backward"]
            self.open_cluster("forward pass", "  ", _FORWARD_COLOR)
            self.equations(forward, env, "    ")
            self.lines.append("  }")
            self.open_cluster("backward pass", "  ", _BACKWARD_COLOR)
            self.equations(backward, env, "    ")
            self.lines.append("  }")
        else:
            self.equations(jaxpr.eqns, env, "  ")
        for i, a in enumerate(jaxpr.outvars):
            out = self.node(f"out {i}: {a.aval.str_short()}", "  ", shape="ellipse")
            self.operand_edge(a, out, env, "  ")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def operand_edge(self, a, target: str, env: dict, indent: str):
        if type(a) is Literal:
            lit = self.node(_literal_text(a), indent, shape="plaintext")
            self.edge(lit, target, indent)
        elif a in env:
            self.edge(env[a], target, indent)

    def equations(self, eqns, env: dict, indent: str):
        for eqn in eqns:
            nested = list(_nested(eqn.params))
            types = ", ".join(v.aval.str_short() for v in eqn.outvars) or "()"
            where = _short_source(eqn.source_info)
            label = f"{eqn.primitive.name}\n{types}" + (f"\n{where}" if where else "")
            if not nested:
                n = (self.node(label, indent, style="filled", fillcolor=_BACKWARD_COLOR)
                     if getattr(eqn, "phase", None) == "backward" else self.node(label, indent))
                for a in eqn.invars:
                    self.operand_edge(a, n, env, indent)
                for v in eqn.outvars:
                    if type(v) is not DropVar:
                        env[v] = n
                continue
            self.open_cluster(eqn.primitive.name, indent)
            inner = indent + "  "
            head = self.node(label, inner, shape="box3d")
            for a in eqn.invars:
                self.operand_edge(a, head, env, indent)
            results = self.node(f"{eqn.primitive.name} results", inner, shape="cds")
            for param, sub in nested:
                self.open_cluster(param, inner)
                self.body(sub, head, results, inner + "  ")
                self.lines.append(f"{inner}}}")
            self.lines.append(f"{indent}}}")
            for v in eqn.outvars:
                if type(v) is not DropVar:
                    env[v] = results

    def body(self, jaxpr: Jaxpr, head: str, results: str, indent: str):
        """A nested jaxpr: its binders fed from the equation's node, its outputs into the
        equation's results."""
        env = {}
        for v in list(jaxpr.constvars) + list(jaxpr.invars):
            env[v] = self.node(f"{v.aval.str_short()}", indent, shape="ellipse")
            self.edge(head, env[v], indent, style="dashed")
        self.equations(jaxpr.eqns, env, indent)
        for a in jaxpr.outvars:
            if type(a) is Literal:
                self.operand_edge(a, results, env, indent)
            elif a in env:
                self.edge(env[a], results, indent, style="dashed")
