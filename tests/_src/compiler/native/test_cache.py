"""The on-disk cache and the toolchain, under faults: stale code, truncated or corrupted
entries, unsafe directories, a missing or failing compiler, two processes building one
module at once. Where no compiler works, each test checks the NumPy-tier fallback."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import lax
from didax._src.compiler.native import cache, emit, runtime, toolchain
from didax._src.config import flag_context
from didax._src.errors import NativeTierWarning
from didax._src.lax import transcendental_kernels

from .conftest import assert_native, executable, have_compiler, slow_compiler_env

X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
ROOT = str(pathlib.Path(__file__).resolve().parents[4])  # the repository


def _entry_files(d):
    """The entries of the modules jit built (not the runtime's, which the first of them
    builds if no process has: runtime.py; nor the float32 exp and tanh kernels', which
    their first eager or NumPy-tier call builds)."""
    tc = toolchain.toolchain()
    others = {cache.entry_key(source, tc) for source in
              (runtime.source(), transcendental_kernels._KERNELS.source())} if tc else set()
    return sorted(p for p in os.listdir(d) if p.endswith((".so", ".sha256"))
                  and p.rsplit(".", 1)[0] not in others)


def _made_preludes():
    for thread in threading.enumerate():
        if thread.name == "didax-prelude":
            thread.join()


def test_modules_include_the_prelude_precompiled_after_the_first_build(fresh_cache,
                                                                       monkeypatch):
    """The headers every module includes are compiled once per toolchain and cache
    directory: after the first build that found them missing (which includes their text),
    in the background, so that a fresh machine's first module does not wait for them. A
    compiler that cannot precompile them leaves modules including the text."""
    preludes = []
    build = toolchain.build

    def recording(tc, source, workdir, name, prelude=None, unit_prelude=None, objects=None,
                  idle=False):
        # (the toolchain's probe builds too, and so does the runtime, beside the first module)
        if not name.startswith("didax_probe") and source != runtime.source():
            preludes.append(prelude)
        return build(tc, source, workdir, name, prelude, unit_prelude, objects, idle)

    monkeypatch.setattr(toolchain, "build", recording)
    jf = didax.jit(lambda x: jnp.tanh(x) * 3.0)
    np.testing.assert_allclose(jf(X), np.tanh(X) * 3, rtol=1e-6)
    if have_compiler():
        assert preludes == [None]
        _made_preludes()
        tc = toolchain.toolchain()
        path = toolchain.precompiled_prelude(tc, str(fresh_cache), make=False)
        assert os.path.dirname(path) == str(fresh_cache)
        assert sorted(os.listdir(path)) == ["didax_prelude.h", "didax_prelude.h.gch"]
        jg = didax.jit(lambda x: jnp.tanh(x) * 4.0)
        np.testing.assert_allclose(jg(X), np.tanh(X) * 4, rtol=1e-6)
        assert preludes == [None, path]
        failing = toolchain.Toolchain(("false",), "", tc.flags)
        assert toolchain.precompiled_prelude(failing, str(fresh_cache)) is None
        assert not [p for p in os.listdir(fresh_cache) if p.startswith(".prelude-")]


def test_cache_directory_is_private(fresh_cache):
    jf = didax.jit(lambda x: jnp.exp(x) * 2.0)
    np.testing.assert_allclose(jf(X), np.exp(X) * 2, rtol=1e-6)
    assert_native(jf, X)
    if have_compiler():
        assert os.stat(fresh_cache).st_mode & 0o777 == 0o700
        assert [p.rsplit(".", 1)[1] for p in _entry_files(fresh_cache)] == ["sha256", "so"]


def test_a_changed_function_never_loads_stale_code(fresh_cache):
    """The key hashes the C source: two functions differing in one operation or one
    constant are two entries, and each computes its own result."""
    f1 = didax.jit(lambda x: x * 2.0 + 1.0)
    f2 = didax.jit(lambda x: x * 2.0 - 1.0)
    f3 = didax.jit(lambda x: x * 3.0 + 1.0)
    for f, ref in ((f1, X * 2 + 1), (f2, X * 2 - 1), (f3, X * 3 + 1)):
        np.testing.assert_array_equal(f(X), ref)
    if have_compiler():
        assert len(_entry_files(fresh_cache)) == 6
        tc = toolchain.toolchain()
        source = executable(f1, X).native.source
        assert cache.entry_key(source, tc) != cache.entry_key(source,
                                                              tc._replace(flags=("-O2",)))
        assert cache.entry_key(source, tc) != cache.entry_key(source,
                                                              tc._replace(version="other"))


@pytest.mark.parametrize("damage", ["truncate", "corrupt"])
def test_a_damaged_entry_is_rebuilt(fresh_cache, damage, monkeypatch):
    f = lambda x: jnp.tanh(x) * 2.0 + 1.0  # noqa: E731
    jf = didax.jit(f)
    ref = np.asarray(jf(X))
    assert_native(jf, X)
    if not have_compiler():
        return
    (so,) = [fresh_cache / p for p in _entry_files(fresh_cache) if p.endswith(".so")]
    data = so.read_bytes()
    if damage == "truncate":
        damaged = data[: len(data) // 3]
    else:
        damaged = data[:2000] + bytes(b ^ 0xFF for b in data[2000:2400]) + data[2400:]
    # A new file in its place (writing into the file this process has mapped would crash it).
    (fresh_cache / "damaged").write_bytes(damaged)
    os.replace(fresh_cache / "damaged", so)
    monkeypatch.setattr(cache, "_loaded", {})
    jg = didax.jit(f)  # a new trace: its module is looked up on disk again
    np.testing.assert_array_equal(np.asarray(jg(X)), ref)
    assert_native(jg, X)
    assert cache._digest(str(so)) == cache._read(str(so)[:-3] + ".sha256")
    assert len(so.read_bytes()) == len(data)


def _expect_numpy_tier_with_warning(match):
    """The NumPy tier, and a warning saying why (without a compiler, the session's first
    jit already warned that there is none)."""
    jf = didax.jit(lambda x: jnp.exp(x) * 2.0)
    if have_compiler():
        with pytest.warns(NativeTierWarning, match=match):
            out = jf(X)
    else:
        out = jf(X)
    np.testing.assert_allclose(out, np.exp(X) * 2, rtol=1e-6)
    assert_native(jf, X, expect_native=False)


def test_world_writable_cache_dir_is_refused(tmp_path, monkeypatch):
    d = tmp_path / "open"
    d.mkdir()
    os.chmod(d, 0o777)
    monkeypatch.setenv("DIDAX_CACHE_DIR", str(d))
    _expect_numpy_tier_with_warning("other users may write to it")


def test_unusable_cache_dir_is_refused(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("DIDAX_CACHE_DIR", str(blocker / "cache"))
    _expect_numpy_tier_with_warning("cannot be created")


@pytest.mark.parametrize("cc", ["/nonexistent/cc", "false"])
def test_missing_or_failing_compiler(cc, fresh_cache, monkeypatch):
    monkeypatch.setenv("CC", cc)
    monkeypatch.setattr(toolchain, "_probed", {})
    _expect_numpy_tier_with_warning("native tier of jit is off")
    with warnings.catch_warnings():  # at most one warning per compiler setting
        warnings.simplefilter("error")
        jf = didax.jit(lambda x: jnp.sin(x) + 1.0)
        np.testing.assert_allclose(jf(X), np.sin(X) + 1, rtol=1e-6)


def test_a_working_compiler_is_probed_once_per_cache(fresh_cache, monkeypatch):
    """A successful probe is recorded: a later process (here, a cleared table) takes the
    compiler from the record without running it; a record that cannot be read is probed
    again."""
    if not have_compiler():
        pytest.skip("no C compiler: nothing to record")
    monkeypatch.setattr(toolchain, "_probed", {})
    probed = toolchain.toolchain()
    records = list(pathlib.Path(os.environ["DIDAX_CACHE_DIR"]).glob("toolchain-*.json"))
    assert probed is not None and len(records) == 1
    monkeypatch.setattr(toolchain, "_probed", {})
    real = subprocess.run, toolchain.run_compiler

    def no_compiler_run(*args, **kwargs):
        raise AssertionError("the compiler ran although its probe was recorded")

    def compilers(run, run_compiler):
        monkeypatch.setattr(subprocess, "run", run)  # (its --version)
        monkeypatch.setattr(toolchain, "run_compiler", run_compiler)  # (its builds)

    compilers(no_compiler_run, no_compiler_run)
    assert toolchain.toolchain() == probed
    records[0].write_text("{not json")
    monkeypatch.setattr(toolchain, "_probed", {})
    compilers(*real)
    assert toolchain.toolchain() == probed  # (probed again, and recorded again)
    monkeypatch.setattr(toolchain, "_probed", {})
    compilers(no_compiler_run, no_compiler_run)
    assert toolchain.toolchain() == probed


_EXIT_DURING_A_BUILD = textwrap.dedent("""
    import time
    import numpy as np, didax, didax.numpy as jnp
    from didax._src.compiler.native import tier, toolchain
    f = didax.jit(lambda x: jnp.tanh(x) * 2.0 + jnp.sin(x))
    x = np.ones(8, np.float32)
    for _ in range(tier.CALLS_BEFORE_BUILD + 1):
        f(x)
    deadline = time.monotonic() + 60
    while not toolchain._running and time.monotonic() < deadline:
        time.sleep(0.001)
    print("COMPILING", len(toolchain._running))
""")

def _processes_running(*argv: str) -> list[str]:
    """The processes whose command line is `argv`."""
    want = "\0".join(argv).encode() + b"\0"
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read() == want:
                    found.append(pid)
        except OSError:
            pass
    return found


def test_compilers_of_unfinished_builds_stop_with_the_process(tmp_path):
    """A process that exits during a background build stops its compiler and the compiler's
    children (which could no longer store a module), rather than leave them on a core."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc to find the compiler's processes by")
    seconds = "97.25"  # (a duration no other process sleeps)
    env = slow_compiler_env(tmp_path, seconds)
    out = subprocess.run([sys.executable, "-c", _EXIT_DURING_A_BUILD], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "COMPILING 1" in out.stdout, out.stdout  # (it exited while the compiler ran)
    assert not out.stderr.strip(), out.stderr  # (and said nothing of it)
    for _ in range(50):  # (killed at exit: gone a moment later)
        if not _processes_running("sleep", seconds):
            break
        time.sleep(0.02)
    assert not _processes_running("sleep", seconds)


def test_plan_is_none_without_native_equations():
    jaxpr = didax.jit(lambda n: jnp.argmax(n)).trace(np.arange(3)).lower().jaxpr
    assert emit.plan(jaxpr) is None


_CHILD = textwrap.dedent("""
    import numpy as np, didax, didax.numpy as jnp
    from didax import lax
    from didax._src.config import config
    config.update("didax_native_tier", "sync")
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
    f = didax.jit(lambda x: lax.logistic(x) * 3.0 + jnp.cos(x))
    out = np.asarray(f(x))
    exe = f._trace((x,), {})[0].executable
    print(exe.native.status, repr(out.tobytes().hex()))
""")


def test_two_processes_building_one_module(fresh_cache):
    env = dict(os.environ, PYTHONPATH=ROOT, DIDAX_CACHE_DIR=str(fresh_cache))
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
    (status1, bits1), (status2, bits2) = (o.split() for o, _ in outs)
    assert status1 == status2 == ("ready" if have_compiler() else "none")
    assert bits1 == bits2
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
    with didax.disable_jit():
        ref = np.asarray(lax.logistic(x) * 3.0 + jnp.cos(x))
    got = np.frombuffer(bytes.fromhex(eval(bits1)), np.float32).reshape(8, 8)
    np.testing.assert_array_max_ulp(got, ref, maxulp=8)
    if have_compiler():
        so = [p for p in _entry_files(fresh_cache) if p.endswith(".so")]
        assert len(so) == 1
        assert cache._digest(str(fresh_cache / so[0])) == cache._read(
            str(fresh_cache / so[0])[:-3] + ".sha256")


def _loop_sum(x):
    return lax.fori_loop(0, 3, lambda i, c: c + jnp.sin(c) * 0.5, x)


def test_a_long_first_call_of_a_loop_gets_native_code_for_the_next_run(fresh_cache,
                                                                        monkeypatch):
    """On one core, a function holding a loop whose first call ran long is built by a
    detached process (the program may end before a second call would build it); the next
    run, a new jit of the same program, loads it before its first call. Same bits on either
    tier. Without a compiler, nothing is built and both runs stay on the NumPy tier."""
    from didax._src.compiler.native import detached, threads
    monkeypatch.setattr(detached, "LONG_CALL", 0.0)  # (every first call counts as long)
    monkeypatch.setattr(threads, "usable_cores", lambda: 1)  # (one core: no build meanwhile)
    with flag_context("didax_native_tier", "background"):
        first = didax.jit(_loop_sum)
        want = np.asarray(first(X))
        if not have_compiler():
            assert executable(first, X).native.status == "none"
            return
        assert executable(first, X).native.status == "waiting"  # (not cached, called once)
        deadline = time.time() + 120
        while time.time() < deadline and (not _entry_files(fresh_cache) or any(
                p.startswith(".pending-") for p in os.listdir(fresh_cache))):
            time.sleep(0.2)
        assert _entry_files(fresh_cache), "the detached build stored nothing"
        didax.clear_caches()
        monkeypatch.setattr(cache, "_loaded", {})
        again = didax.jit(_loop_sum)
        got = np.asarray(again(X))
        assert executable(again, X).native.status == "ready"  # (before its second call)
    assert got.tobytes() == want.tobytes()
