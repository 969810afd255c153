"""A long native function is cut into parts (functions of their own, for the C compiler's
time): what moves, what stays, and that a program cut into many parts computes the NumPy
tier's bits."""
from __future__ import annotations

import re

import numpy as np

import didax
import didax.numpy as jnp
from didax._src.compiler.native import emit, parts

from .conftest import Tiers, assert_native, assert_same


def _block(n, extra=""):
    return ["    {  /* a segment */", f"        if (f{n}(v) < 0) goto done;{extra}", "    }"]


def test_blocks_and_clears_move_into_parts_in_order():
    lines = (["    PyObject *result = NULL;"] + _block(0) + ["    Py_CLEAR(v[3]);"] + _block(1)
             + ["    result = PyTuple_New(1);"] + _block(2, " result = NULL;") + _block(3))
    functions, body = parts.cut(lines, "run")
    assert body == ["    PyObject *result = NULL;",
                    "    if (run_part0(v, keep, segments, consts) < 0) goto done;",
                    "    result = PyTuple_New(1);",
                    *_block(2, " result = NULL;"),  # (names a local of the function: stays)
                    "    if (run_part1(v, keep, segments, consts) < 0) goto done;"]
    first = functions[0].splitlines()
    assert first[0].startswith("static DIDAX_NOINLINE int run_part0(PyObject **v")
    assert first[1:-1] == ["    {  /* a segment */", "        if (f0(v) < 0) return -1;",
                           "    }", "    Py_CLEAR(v[3]);", "    {  /* a segment */",
                           "        if (f1(v) < 0) return -1;", "    }", "    return 0;"]
    assert "f3(v) < 0) return -1;" in functions[1]


def test_parts_hold_about_part_lines_each():
    lines = [line for n in range(400) for line in _block(n)]
    functions, body = parts.cut(lines, "run")
    assert len(body) == len(functions) == -(-len(lines) // parts.PART_LINES)


def test_a_long_program_in_parts_computes_the_numpy_tiers_bits():
    def f(x, w):
        for k in range(60):  # products and loops: ~300 equations
            x = jnp.tanh(x @ w + 0.01 * k) * 0.5 + jnp.maximum(x, 0.0) * 0.25
        return x, jnp.sum(x)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
    source = emit.plan(didax.make_jaxpr(f)(x, w)).source
    assert len(re.findall(r"DIDAX_NOINLINE int run_part\d+\([^)]*\) \{", source)) >= 3
    tiers = Tiers(f)
    native, numpy_tier, _ = tiers(x, w)
    assert_native(tiers.native, x, w)
    for got, want in zip(native, numpy_tier):
        assert_same(got, want)
