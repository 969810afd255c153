"""The arrays a module keeps for its intermediates (emit.py's take_keep): an intermediate
made after another of its shape was dropped reuses that one's array, so a chain of
products and loops over one shape keeps a few arrays, not one each; results are what the
NumPy tier computes, call after call."""
from __future__ import annotations

import re

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.compiler.native import emit
from didax._src.config import flag_context

from .conftest import have_compiler


def _chain(x, w):
    """Six products and six loops, each value of one shape, each read only by the next."""
    h = x
    for k in range(6):
        h = jnp.tanh(h @ w) * (1.0 + 0.25 * k) + h
    return h


def _kept(source: str) -> int:
    return int(re.search(r"didax_kept\[DIDAX_KEPT_SETS \* (\d+)\]", source).group(1))


def test_intermediates_of_one_shape_share_kept_arrays():
    x = np.ones((64, 32), np.float32)
    w = np.ones((32, 32), np.float32)
    source = emit.plan(didax.make_jaxpr(_chain)(x, w)).source
    made = source.count("scratch(")  # (each intermediate's array, in the module's text)
    assert made >= 6
    assert _kept(source) <= 3, "intermediates dropped before others are made keep arrays each"


@pytest.mark.skipif(not have_compiler(), reason="no C compiler: the native tier is off")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shared_arrays_give_the_numpy_tiers_results_on_every_call(dtype):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((32, 32)) / 8).astype(dtype)
    xs = [rng.standard_normal((64, 32)).astype(dtype) for _ in range(3)]
    with flag_context("didax_native_tier", "off"):
        want = [np.asarray(didax.jit(_chain)(x, w)) for x in xs]
    f = didax.jit(_chain)
    with flag_context("didax_native_tier", "check"):  # (each call compares the tiers too)
        for _ in range(2):
            for x, expected in zip(xs, want):
                np.testing.assert_array_equal(np.asarray(f(x, w)), expected)


# Results written over a dead operand's array (emit.py's in_place).

_OVER = "written over its operand"


def _update(w, x):
    """An SGD-like update: the product's array, dead after the loop, takes the result."""
    return w - 0.125 * (x.T @ x)


def _update_of_sin(w, x):
    """The same with sin, which loops compute by NumPy's loop, in phases."""
    return w - jnp.sin(0.125 * (x.T @ x))


def _operands(dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((32, 32)).astype(dtype),
            (rng.standard_normal((16, 32)) / 4).astype(dtype))


def _source(f, *args) -> str:
    return emit.plan(didax.make_jaxpr(f)(*args)).source


def test_a_result_is_written_over_a_dead_intermediate_read_in_order():
    w, x = _operands(np.float32, 0)
    assert _source(_update, w, x).count(_OVER) == 1


@pytest.mark.parametrize("f", [
    lambda w, x: w - (x.T @ x).T,                         # read transposed
    lambda w, x: w[0] - (x.T @ x)[0],                     # a row of it: not its shape
    lambda w, x: (lambda g: (w - 0.5 * g, g @ w))(x.T @ x),  # read after the loop
    lambda w, x: (w - (x.T @ x)).sum(axis=0),             # the loop reduces
])
def test_no_result_is_written_over_an_operand_read_otherwise(f):
    w, x = _operands(np.float32, 0)
    assert _OVER not in _source(f, w, x)


def test_no_result_is_written_over_an_operand_of_a_loop_calling_numpys():
    w, x = _operands(np.float32, 0)
    assert _OVER not in _source(_update_of_sin, w, x)
    assert _OVER in _source(lambda w, x: w - jnp.tanh(0.125 * (x.T @ x)), w, x)


@pytest.mark.skipif(not have_compiler(), reason="no C compiler: the native tier is off")
@pytest.mark.parametrize("f", [_update, _update_of_sin])
def test_results_written_over_operands_stay_what_they_were_after_later_calls(f):
    """Each call's result is an array of its own: a later call writes another."""
    inputs = [_operands(np.float32, seed) for seed in range(3)]
    with flag_context("didax_native_tier", "off"):
        want = [np.asarray(didax.jit(f)(*args)) for args in inputs]
    jf = didax.jit(f)
    with flag_context("didax_native_tier", "check"):
        got = [jf(*args) for args in inputs for _ in range(2)]
    assert len({id(g) for g in got}) == len(got)
    for k, g in enumerate(got):
        np.testing.assert_array_equal(np.asarray(g), want[k // 2])
