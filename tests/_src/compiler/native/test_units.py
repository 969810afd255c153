"""Large native modules are several translation units, compiled in parallel and linked: with
the threshold lowered so that small programs are cut too, every kind of segment (products,
loops, views, sort, iota, pad, random bits, scan and cond, whose bodies stay in the module's
first unit) computes the NumPy tier's bits; further units' objects are cached one by one."""
from __future__ import annotations

import os

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.compiler.native import cache, emit, parts, toolchain

from .conftest import Tiers, assert_native, assert_same, executable, have_compiler


@pytest.fixture
def small_units(monkeypatch):
    monkeypatch.setattr(parts, "PART_LINES", 20)
    monkeypatch.setattr(parts, "UNIT_LINES", 60)


def _program(x, w, key):
    y = jnp.tanh(x @ w) + jnp.sort(x, axis=1) * 0.5
    y = y + jnp.pad(x, ((0, 0), (1, 1)))[:, 1:-1] + jnp.arange(x.shape[1], dtype=x.dtype)
    noise = didax.random.normal(key, x.shape, x.dtype)

    def body(c, row):
        c = jnp.maximum(c * 0.9 + row @ w, -1.0)
        return c, jnp.sum(c)

    c, sums = didax.lax.scan(body, y[0], y)
    z = didax.lax.cond(jnp.sum(c) > 0, lambda: c * 2.0, lambda: c - 1.0)
    for k in range(6):
        y = jnp.exp(-y * y) * w[0] + y.T.T * (0.25 * k)
    return y + noise, z, sums


def _arguments():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    w = (rng.standard_normal((5, 5)) * 0.4).astype(np.float32)
    return x, w, didax.random.key(7)


def test_a_module_of_several_units_computes_the_numpy_tiers_bits(small_units):
    x, w, key = _arguments()
    tiers = Tiers(_program)
    native, numpy_tier, _ = tiers(x, w, key)
    assert_native(tiers.native, x, w, key)
    for got, want in zip(native, numpy_tier):
        assert_same(got, want)
    source = executable(tiers.native, x, w, key).native.plan.source
    if have_compiler():
        assert source.count(toolchain.UNIT_MARK) >= 2
        assert "#define NO_IMPORT_ARRAY" in source.split(toolchain.UNIT_MARK)[1]


@pytest.mark.skipif(not have_compiler(), reason="needs a C compiler")
def test_units_are_cached_one_by_one(small_units, tmp_path):
    x, w, key = _arguments()
    jf = didax.jit(_program)
    jf(x, w, key)
    source = emit.plan(executable(jf, x, w, key).jaxpr).source
    tc = toolchain.toolchain()

    def first_unit_differing(comment):  # (a module this process has not loaded)
        return source.replace("static int didax_one_thread = 1;",
                              f"static int didax_one_thread = 1;  /* {comment} */")

    module = cache.load_or_build(first_unit_differing(tmp_path.name), tc, str(tmp_path))
    def objects():  # name -> (inode, modification time)
        return {p: (os.stat(tmp_path / p).st_ino, os.stat(tmp_path / p).st_mtime_ns)
                for p in os.listdir(tmp_path) if p.startswith("unit-")}

    built = objects()
    assert len(built) == source.count(toolchain.UNIT_MARK)
    # a module whose first unit differs reuses the further units' objects as they are
    cache.load_or_build(first_unit_differing("another module"), tc, str(tmp_path))
    assert objects() == built
    assert module.make is not None
