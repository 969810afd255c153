"""The native runtime (runtime.py): the helpers and the calling convention every module shares,
built once per cache instead of compiled into each module; modules refuse a table of
another layout; calls with many slots, or more calls at once than a module keeps arrays
for, give the NumPy tier's bits."""
from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.compiler.native import cache, emit, runtime, tier, toolchain
from didax._src.compiler.native.directory import cache_dir
from didax._src.config import flag_context
from didax._src.errors import NativeTierWarning

from .conftest import assert_native, executable, have_compiler
from .test_cache import ROOT


def _source(f, *args):
    return emit.plan(didax.make_jaxpr(f)(*args)).source


def test_modules_call_the_helpers_instead_of_compiling_them():
    x = np.ones((3, 4), np.float32)
    source = _source(lambda x: jnp.sin(x) * 2.0 + x, x)
    for helper in ("as_carray", "find_loops", "scratch", "copy_into", "window", "fresh_copy"):
        defined = re.compile(rf"^static [^;(]*\b{helper}\(", re.M)  # (its definition)
        assert defined.search(runtime.source()) and not defined.search(source), helper
        assert f"#define {helper} (didax_rt->{helper})" in source
    assert "import_array" not in source  # (NumPy's C API comes with the table)
    assert "didax_rt->call(&didax_layout" in source


_CHILD = textwrap.dedent("""
    import os, numpy as np, didax, didax.numpy as jnp
    from didax._src.config import config
    config.update("didax_native_tier", "sync")
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    a = didax.jit(lambda x: jnp.tanh(x) * 3.0)(x)
    b = didax.jit(lambda x: jnp.exp(-x) + x)(x)
    print(np.asarray(a).tobytes().hex(), np.asarray(b).tobytes().hex())
""")


def _entries(directory):
    return sorted(p for p in os.listdir(directory) if p.endswith(".so"))


def test_the_runtime_is_built_once_per_cache(tmp_path):
    """A fresh cache: the first process builds the runtime beside its first module and
    stores it; the next loads it, and builds nothing at all. Same bits both times."""
    env = dict(os.environ, PYTHONPATH=ROOT, DIDAX_CACHE_DIR=str(tmp_path / "cache"))
    outs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
        if not have_compiler():
            continue
        entries = _entries(tmp_path / "cache")
        tc = toolchain.toolchain()
        assert len(entries) == 3, entries  # (two modules and the runtime)
        assert cache.entry_key(runtime.source(), tc) + ".so" in entries
        if len(outs) == 1:
            built = {p: os.stat(tmp_path / "cache" / p).st_mtime_ns for p in entries}
    assert outs[0] == outs[1]
    if have_compiler():
        assert {p: os.stat(tmp_path / "cache" / p).st_mtime_ns for p in entries} == built


def test_a_table_of_another_layout_is_refused():
    if not have_compiler():
        pytest.skip("no C compiler works here: no native module to give a table to")
    x = np.ones((2, 3), np.float32)
    jf = didax.jit(lambda x: jnp.cos(x) + 1.0)
    jf(x)
    assert_native(jf, x)
    exe = executable(jf, x)
    plan = exe.native.plan
    module = cache.load_cached(plan.source, toolchain.toolchain(), cache_dir())
    other = ctypes.create_string_buffer(256)  # (a table whose size reads 0)
    with pytest.raises(RuntimeError, match="another layout"):
        module.make((plan.python_segments, plan.consts, plan.loops, 0,
                     ctypes.addressof(other)))
    with pytest.raises(TypeError, match="make expects"):
        module.make((plan.python_segments, plan.consts, plan.loops, 0))


def test_many_slots_give_the_numpy_tiers_bits():
    """More values than the runtime holds on its stack (256): its slots are allocated."""
    x = np.linspace(-1, 1, 6, dtype=np.float32)

    def f(x):
        outs, h = [], x
        for k in range(300):
            h = jnp.sin(h) * 0.5 + float(k % 7)
            outs.append(h)
        return outs

    jf = didax.jit(f)
    got = jf(x)
    assert_native(jf, x)
    with flag_context("didax_native_tier", "off"):
        want = didax.jit(f)(x)
    assert len(got) == 300
    for g, w in zip(got, want):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


def test_more_calls_at_once_than_kept_sets_give_the_numpy_tiers_bits():
    """Eight threads calling one function whose loops let other threads run (large arrays):
    beyond the module's four sets of kept arrays, a call allocates its own."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((256, 256)).astype(np.float32)

    def f(x):
        h = jnp.tanh(x @ w)  # (an intermediate: a kept array)
        return (h * h + x).sum(axis=1)

    jf = didax.jit(f)
    xs = [rng.standard_normal((512, 256)).astype(np.float32) for _ in range(8)]
    jf(xs[0])
    assert_native(jf, xs[0])
    with flag_context("didax_native_tier", "off"):
        want = [np.asarray(didax.jit(f)(x)) for x in xs]
    got = [None] * 8
    start = threading.Barrier(8)

    def work(k):
        start.wait()
        for _ in range(5):
            got[k] = np.asarray(jf(xs[k]))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w_ in zip(got, want):
        assert g.tobytes() == w_.tobytes()


def test_the_runtimes_build_leaves_the_preludes_to_the_modules(tmp_path, monkeypatch):
    """Built beside a module on a fresh machine, the runtime ends first: the preludes it
    found missing are made after the module's build instead (made after the runtime's, they
    took the module's core on one core: 0.6 s of the transformer's 2.6 s cold build)."""
    tc = toolchain.toolchain()
    if tc is None:
        pytest.skip("no C compiler works here")
    monkeypatch.setattr(cache, "_loaded", {})
    directory = str(tmp_path / "cache")
    os.makedirs(directory, mode=0o700)
    cache.load_or_build(runtime.source(), tc, directory, makes_preludes=False)
    assert not any(key[1] == directory for key in cache._missing)
    assert not [p for p in os.listdir(directory) if p.startswith(("prelude-", ".prelude-"))]
    source = _source(lambda x: jnp.cos(x) - 2.0, np.ones((2, 5), np.float32))
    cache.load_or_build(source, tc, directory)  # (a module's: the preludes follow it)
    for thread in threading.enumerate():
        if thread.name == "didax-prelude":
            thread.join()
    assert [p for p in os.listdir(directory) if p.startswith("prelude-")]


@pytest.mark.native_build_fails
def test_a_runtime_that_cannot_be_built_is_reported_once(monkeypatch):
    """The module's build warns (the function stays on the NumPy tier, its values
    unchanged); the thread that built the runtime beside it raises nothing of its own."""
    if not have_compiler():
        pytest.skip("no C compiler works here")

    class Failing:
        def load(self):
            return None

        def get_cached(self):
            return None

    monkeypatch.setattr(runtime, "_RUNTIME", Failing())
    monkeypatch.setattr(runtime, "_address", [])
    monkeypatch.setattr(tier, "_warned_failure", [False])
    raised = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_type))
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    jf = didax.jit(lambda x: jnp.sin(x) * 3.0 - 0.5)  # (a source no other test builds)
    with pytest.warns(NativeTierWarning, match="runtime module could not be built"):
        got = jf(x)
    for thread in threading.enumerate():
        if thread.name == "didax-runtime":
            thread.join()
    assert executable(jf, x).native.status == "failed"
    with flag_context("didax_native_tier", "off"):
        assert np.asarray(got).tobytes() == np.asarray(didax.jit(jf)(x)).tobytes()
    assert raised == []
