"""didax.visualize: the graph of a function's jaxpr, checked on its DOT text, parsed."""
import re
import shutil

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import lax

NODE = re.compile(r'^\s*(n\d+) \[label="((?:[^"\\]|\\.)*)"', re.M)
EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)", re.M)
CLUSTER = re.compile(r'subgraph cluster_\d+ \{\s*label="((?:[^"\\]|\\.)*)"', re.M)


def parse(source):
    nodes = {name: label.replace("\\n", "\n") for name, label in NODE.findall(source)}
    edges = EDGE.findall(source)
    return nodes, edges, CLUSTER.findall(source)


def by_primitive(nodes):
    out = {}
    for name, label in nodes.items():
        out.setdefault(label.split("\n")[0], []).append(name)
    return out


def f(x):
    return jnp.sum(jnp.tanh(x) * jnp.sin(x))


def test_small_function():
    source = didax.visualize(f)(np.ones(3, np.float32)).source
    assert source.startswith("digraph jaxpr {") and source.rstrip().endswith("}")
    nodes, edges, clusters = parse(source)
    prims = by_primitive(nodes)
    assert set(prims) == {"in 0: f32[3]", "tanh", "sin", "mul", "reduce_sum", "out 0: f32[]"}
    assert clusters == []
    (x,), (t,), (s,), (m,), (r,) = (prims[k] for k in ("in 0: f32[3]", "tanh", "sin", "mul",
                                                        "reduce_sum"))
    (out,) = prims["out 0: f32[]"]
    assert sorted(edges) == sorted([(x, t), (x, s), (t, m), (s, m), (m, r), (r, out)])
    # each equation names its result type and the user's line
    line = f.__code__.co_firstlineno + 1
    assert nodes[t] == f"tanh\nf32[3]\ntest_visualize.py:{line} (f)"


def test_gradient_tells_forward_and_backward_apart():
    source = didax.visualize(didax.grad(f))(np.ones(3, np.float32)).source
    nodes, edges, clusters = parse(source)
    assert clusters == ["forward pass", "backward pass"]
    forward, backward = source.split('label="backward pass"')
    fwd_prims = {label.split("\\n")[0] for _, label in NODE.findall(forward)}
    bwd_prims = {label.split("\\n")[0] for _, label in NODE.findall(backward)}
    assert {"tanh", "sin"} <= fwd_prims  # the primal computation
    assert "broadcast_in_dim" in bwd_prims  # the cotangent of reduce_sum
    # every edge joins nodes that exist
    assert all(a in nodes and b in nodes for a, b in edges)


def test_scan_body_is_a_cluster():
    def g(c, xs):
        return lax.scan(lambda c, x: (c * x + 1.0, c), c, xs)

    source = didax.visualize(g)(np.float32(1.0), np.ones(4, np.float32)).source
    nodes, edges, clusters = parse(source)
    assert clusters == ["scan", "jaxpr"]
    prims = by_primitive(nodes)
    (head,), (results,) = prims["scan"], prims["scan results"]
    inner = source.split('label="jaxpr"')[1]
    inner_prims = {label.split("\\n")[0] for _, label in NODE.findall(inner)}
    assert {"mul", "add"} <= inner_prims
    # the body's binders are fed from the scan node; both outputs come from its results
    assert sum(1 for a, _ in edges if a == head) == 2
    outs = [n for k, names in prims.items() if k.startswith("out ") for n in names]
    assert sorted(b for a, b in edges if a == results) == sorted(outs)


def test_cond_branches_and_jit_are_clusters():
    @didax.jit
    def inner(x):
        return x * 2.0

    def h(p, x):
        return lax.cond(p, lambda x: inner(x), lambda x: -x, x)

    _, _, clusters = parse(didax.visualize(h)(True, np.float32(3.0)).source)
    assert clusters[0] == "cond"
    assert {"branches[0]", "branches[1]", "jit", "jaxpr"} <= set(clusters)


def test_save_writes_dot_text(tmp_path):
    graph = didax.visualize(f)(np.ones(3, np.float32))
    path = graph.save(tmp_path / "f.dot")
    assert open(path).read() == graph.source


def test_rendering(tmp_path):
    """With Graphviz, an SVG; without it, an error that says to install it (and the notebook
    hook shows nothing rather than failing)."""
    graph = didax.visualize(f)(np.ones(3, np.float32))
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="install Graphviz"):
            graph.save(tmp_path / "f.svg")
        assert graph._repr_svg_() is None
    else:
        path = graph.save(tmp_path / "f.svg")
        assert open(path).read().lstrip().startswith("<?xml")
        assert "<svg" in graph._repr_svg_()
