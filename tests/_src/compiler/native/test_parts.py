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
    lines = (["    PyObject *result = NULL;"] + _block(0) + ["    didax_clear(&v[3]);"] + _block(1)
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
                           "    }", "    didax_clear(&v[3]);", "    {  /* a segment */",
                           "        if (f1(v) < 0) return -1;", "    }", "    return 0;"]
    assert "f3(v) < 0) return -1;" in functions[1]


def test_parts_hold_about_part_lines_each():
    lines = [line for n in range(400) for line in _block(n)]
    functions, body = parts.cut(lines, "run")
    assert len(body) == len(functions) == -(-len(lines) // parts.PART_LINES)


def _lifted(source):
    return re.findall(r"^DIDAX_SHARED DIDAX_NOINLINE int (block\d+)\(.*\{$", source, re.M)


def _calls(source):
    return re.findall(r"if \((block\d+)\(", source)


def test_a_block_lifts_to_the_same_text_whatever_its_slots_and_names():
    def block(a, b, out, keep, label):
        return ["    {  /* native loop */",
                f"        if (as_carray(&v[{a}], NPY_FLOAT32, 1, shape0) < 0) goto done;",
                f"        const float *restrict p{a} = (const float *)PyArray_DATA(v[{a}]);",
                f"        v[{out}] = scratch(&keep[{keep}], 1, shape0, NPY_FLOAT32);",
                f"        float *restrict q{out} = (float *)PyArray_DATA(v[{out}]);",
                f"        for (npy_intp j = 0; j < 8; j++) q{out}[j] = p{a}[j] * p{b}[j]"
                " + 0x1.a3d70a3d70a3dp-7f + 0x1.0p+3f;",
                f"        summed_{label}:;",
                "    }"]
    text, slots = parts.lift(block(3, 3, 7, 0, 7))
    again, other_slots = parts.lift(block(12, 12, 40, 5, 40))
    assert text == again
    assert slots == ["v[3]", "v[7]", "keep[0]"] and other_slots == ["v[12]", "v[40]", "keep[5]"]
    assert "(*slot0)" in text and "p12" not in again and "summed_" in text
    assert "0x1.a3d70a3d70a3dp-7f + 0x1.0p+3f;" in text  # (constants as they were)
    assert parts.lift(block(3, 4, 7, 0, 7))[0] != text  # (another operand: another text)
    function = parts.lifted_function("block0", text, len(slots))
    assert function.startswith("DIDAX_SHARED DIDAX_NOINLINE int block0(PyObject **slot0, "
                               "PyObject **slot1, PyObject **slot2) {")
    assert "goto done" not in function and "return -1;" in function
    # A block reading a local of its function (a body's io arrays) stays where it is.
    assert parts.lift(["    {", "        v[2] = io[1]; Py_INCREF(v[2]);", "    }"]) is None
    assert parts.lift(["    {", "        r = PyTuple_GET_ITEM(segments, 0);", "    }"]) is None


def test_layers_of_one_shape_share_their_compiled_code():
    def layer(x, w, b):
        return jnp.tanh(x @ w + b) * 0.5 + jnp.sum(x * x, axis=1, keepdims=True)

    def f(x, w1, b1, w2, b2, w3, b3):
        return layer(layer(layer(x, w1, b1), w2, b2), w3, b3)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    ws = [rng.standard_normal(s).astype(np.float32) * 0.3
          for _ in range(3) for s in ((16, 16), (16,))]
    source = emit.plan(didax.make_jaxpr(f)(x, *ws)).source
    calls = _calls(source)  # a product, a row sum, and the loop writing the layer's output
    assert len(calls) == 9 and len(_lifted(source)) == 4
    # (the last layer's output is the function's result, a new array, not a reused one)
    assert calls[0:3] == calls[3:6] and calls[6:8] == calls[0:2] and calls[8] not in calls[:8]
    tiers = Tiers(f)
    native, numpy_tier, _ = tiers(x, *ws)
    assert_native(tiers.native, x, *ws)
    assert_same(native, numpy_tier)


def test_a_long_program_in_parts_computes_the_numpy_tiers_bits():
    def f(x, w):
        for k in range(60):  # products and loops: ~300 equations
            x = jnp.tanh(x @ w + 0.01 * k) * 0.5 + jnp.maximum(x, 0.0) * 0.25
        return x, jnp.sum(x)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
    source = emit.plan(didax.make_jaxpr(f)(x, w)).source
    assert len(re.findall(r"DIDAX_NOINLINE int run_part\d+\([^)]*\) \{", source)) >= 2
    # (each iteration's loop has a constant of its own: a function of its own; the products
    # are one function, called 60 times)
    assert len(_lifted(source)) == 61 and len(_calls(source)) == 120
    tiers = Tiers(f)
    native, numpy_tier, _ = tiers(x, w)
    assert_native(tiers.native, x, w)
    for got, want in zip(native, numpy_tier):
        assert_same(got, want)
