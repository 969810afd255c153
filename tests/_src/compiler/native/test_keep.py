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
