"""Native-tier tests: the tier on ("sync": built before the first call returns; the cache
is the suite's, so a second run loads what the first built), and helpers comparing the
tiers."""
from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

import didax
from didax._src.compiler.native import toolchain
from didax._src.config import flag_context


@pytest.fixture(autouse=True)
def _sync_tier():
    with flag_context("didax_native_tier", "sync"):
        yield


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty native cache for the test."""
    from didax._src.compiler.native import cache, tier
    tier.wait_for_builds()  # (earlier tests' background builds store into the old directory)
    d = tmp_path / "cache"
    monkeypatch.setenv("DIDAX_CACHE_DIR", str(d))
    # nothing loaded in this process yet
    monkeypatch.setattr(cache, "_loaded", {})
    return d


def have_compiler() -> bool:
    return toolchain.toolchain() is not None


def executable(jf, *args):
    """The executable `jf` runs for `args` (it has been called with them)."""
    entry, _ = jf._trace(args, {})
    return entry.executable


def assert_native(jf, *args, expect_native=True):
    """`jf` runs native code for `args` if a compiler works (and it has native equations);
    else it stayed on the NumPy tier."""
    exe = executable(jf, *args)
    if have_compiler() and expect_native:
        assert exe.native.status == "ready", exe.native.status
        assert exe.native.plan.native_equations > 0
        assert exe.run.__name__ == "run"  # the native function
    else:
        assert exe.native.status == "none", exe.native.status
        assert exe.run.__name__ == "f"  # the NumPy tier's function


class Tiers:
    """A function under jit (native), under jit with the tier off (NumPy), and eager."""

    def __init__(self, f):
        self.f = f
        self.native = didax.jit(f)
        self.numpy = didax.jit(f)

    def __call__(self, *args):
        native = self.native(*args)
        with flag_context("didax_native_tier", "off"):
            numpy_ = self.numpy(*args)
        with didax.disable_jit():
            eager = self.f(*args)
        return _numpy(native), _numpy(numpy_), _numpy(eager)


def same_on_every_tier(f, *args) -> Tiers:
    """`f` under jit natively, under jit on the NumPy tier and eagerly: the same bits
    (each result), native code run if a compiler works. The Tiers, for more checks."""
    tiers = Tiers(f)
    for n, m, e in zip(*tiers(*args)):
        assert_same(m, e)
        assert_same(n, m)
    assert_native(tiers.native, *args)
    return tiers


def _numpy(tree):
    if isinstance(tree, dict):
        return {k: _numpy(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_numpy(v) for v in tree]
    return np.asarray(tree)


def assert_same(a, b, maxulp=0):
    """Equal dtypes, shapes, NaN positions; bitwise equal (signed zeros too) if `maxulp` is
    0, else within `maxulp` units in the last place."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    if a.dtype.kind != "f":
        np.testing.assert_array_equal(a, b)
        return
    nan = np.isnan(a)
    np.testing.assert_array_equal(nan, np.isnan(b))
    a, b = a[~nan], b[~nan]
    if maxulp == 0:
        np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))
    else:
        np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
        np.testing.assert_array_max_ulp(a, b, maxulp=maxulp)


# A compiler that never finishes in time: it answers --version, then sleeps (a child of its
# own, as gcc's cc1 is), for a time that names it among the machine's processes.
_SLOW_CC = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "slow-cc 1.0"; exit 0; fi
sleep {seconds}
"""
_ROOT = str(pathlib.Path(__file__).resolve().parents[4])  # the repository


def slow_compiler_env(tmp_path, seconds: str) -> dict:
    """The environment of a process whose $CC is such a compiler sleeping `seconds`, with
    a cache of its own (under `tmp_path`) and none of the DIDAX_ settings."""
    cc = tmp_path / "slow-cc"
    cc.write_text(_SLOW_CC.format(seconds=seconds))
    cc.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIDAX_")}
    env.update(CC=str(cc), DIDAX_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([_ROOT, env.get("PYTHONPATH", "")]))
    return env
