"""A picture of a gradient: the jaxpr of `grad(loss)` drawn with `didax.visualize`.

The forward pass (the loss, and the values the backward pass keeps) is shaded blue, the
backward pass (cotangents flowing back to the weights) orange; each box is one primitive
with its result type and the line of this file it comes from. The DOT text is always
written; the SVG needs Graphviz's `dot` program (`apt-get install graphviz`).

Run with `python examples/picture_of_a_gradient.py [output.svg]`.
"""
import re
import shutil
import sys

import numpy as np

import didax as jax
import didax.numpy as jnp


def loss(w, x):
    """A one-layer tanh network's mean squared activation."""
    return jnp.mean(jnp.tanh(x @ w) ** 2)


def main(path="gradient.svg"):
    w = np.full((3, 2), 0.5, np.float32)
    x = np.ones((4, 3), np.float32)
    graph = jax.visualize(jax.grad(loss))(w, x)
    dot_path = graph.save(path.rsplit(".", 1)[0] + ".dot")
    written = [dot_path]
    if shutil.which("dot") is not None:
        written.append(graph.save(path))
    nodes = len(re.findall(r"^\s*n\d+ \[", graph.source, re.M))
    print(f"{nodes} nodes; wrote {', '.join(written)}")
    return graph


if __name__ == "__main__":
    main(*sys.argv[1:2])
