"""Built native modules, kept on disk so a process never compiles what another built.

The directory is `directory.cache_dir()` (private, refused if unsafe). An entry is
`<key>.so` with a sidecar `<key>.sha256` of its bytes, both written to a temporary file first
and moved in place with `os.replace`, so readers see a whole file or none and two processes
building one entry both end with a correct module. An entry whose bytes do not match its
sidecar is rebuilt. The key hashes everything the machine code depends on: the C source,
the compiler and flags, Python's ABI, NumPy's version (whose loops it calls) and the CPU's
features.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
import tempfile
import threading

import numpy as np

from didax._src import caches
from didax._src.compiler.native import toolchain as tc_mod
from didax._src.compiler.native.directory import cpu_features, write_atomic

_lock = threading.Lock()
# key -> module, loaded once per process (an extension module is never unloaded)
_loaded = caches.memo("native.loaded_modules", interns=True)


def entry_key(source: str, tc: tc_mod.Toolchain) -> str:
    h = hashlib.sha256()
    for part in (source, tc.identity(), sys.version, sysconfig.get_config_var("SOABI") or "",
                 np.__version__, cpu_features()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def module_name(key: str) -> str:
    """The module's name (and its init function's suffix): unique per key."""
    return "didax_native_" + key[:32]


def _digest(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def load_cached(source: str, tc: tc_mod.Toolchain, directory: str):
    """The extension module built from `source` if this process or the cache has it whole,
    else None (nothing is built)."""
    key = entry_key(source, tc)
    module = _loaded.get(key)
    if module is not None:
        return module
    so_path = os.path.join(directory, key + ".so")
    expected = _read(os.path.join(directory, key + ".sha256"))
    if expected is None or _digest(so_path) != expected:
        return None
    return caches.add(_loaded, key, tc_mod.load(module_name(key), so_path))


def load_or_build(source: str, tc: tc_mod.Toolchain, directory: str,
                  makes_preludes: bool = True, idle: bool = False):
    """The extension module built from `source`: loaded from the cache if its entry is
    whole, else built, stored and loaded. `makes_preludes`: a build that finds the preludes
    missing has them made after it (not the runtime's, which builds beside a module: that
    module's build ends later, and the preludes made earlier would take its core). `idle`:
    built at the lowest priority (toolchain.run_compiler's)."""
    key = entry_key(source, tc)
    module = _loaded.get(key)
    if module is not None:
        return module
    name = module_name(key)
    so_path = os.path.join(directory, key + ".so")
    sum_path = os.path.join(directory, key + ".sha256")
    expected = _read(sum_path)
    if expected is not None and _digest(so_path) == expected:
        module = tc_mod.load(name, so_path)
    else:
        module = _build_and_store(source, tc, directory, name, so_path, sum_path,
                                  makes_preludes, idle)
    return caches.add(_loaded, key, module)


# (toolchain, directory, unit) -> its precompiled prelude's directory or None. A build
# uses a prelude precompiled already; one that is missing is made after the build, in the
# background (made first, the two preludes cost a module's first build on a fresh machine
# 0.9 s of compiling, to save 0.1 s a translation unit).
_preludes = caches.memo("native.preludes")
_prelude_lock = threading.Lock()
_missing: set = set()  # keys of preludes to make after the build that found them missing


def _prelude(tc, directory, unit=False, record_missing=True):
    key = (tc, directory, unit)
    with _prelude_lock:
        if key not in _preludes:
            path = tc_mod.precompiled_prelude(tc, directory, unit, make=False)
            if path is None:
                if record_missing:
                    _missing.add(key)
                return None
            caches.add(_preludes, key, path)
        return _preludes[key]


def _make_missing_preludes():
    """Makes the preludes builds found missing, in a thread of their own."""
    with _prelude_lock:
        keys = sorted(_missing - set(_preludes), key=lambda k: k[2])
        _missing.clear()
        for key in keys:
            caches.add(_preludes, key, None)  # (meanwhile: none; made once per process)
    if not keys:
        return

    def make():
        for tc, directory, unit in keys:
            path = tc_mod.precompiled_prelude(tc, directory, unit)
            with _prelude_lock:
                _preludes.pop((tc, directory, unit), None)
                caches.add(_preludes, (tc, directory, unit), path)

    threading.Thread(target=make, name="didax-prelude", daemon=True).start()


def _build_and_store(source, tc, directory, name, so_path, sum_path, makes_preludes,
                     idle=False):
    work = tempfile.mkdtemp(dir=directory, prefix=".build-")
    try:
        several = tc_mod.UNIT_MARK in source  # (translation units: see parts.py)
        try:
            built = tc_mod.build(tc, source, work, name,
                                 _prelude(tc, directory, record_missing=makes_preludes),
                                 _prelude(tc, directory, True, makes_preludes) if several
                                 else None, objects=directory, idle=idle)
        finally:
            if makes_preludes:
                _make_missing_preludes()
        with open(built, "rb") as f:
            data = f.read()
        digest = hashlib.sha256(data).hexdigest()
        write_atomic(directory, so_path, data)
        write_atomic(directory, sum_path, (digest + "\n").encode())
        # Load what this process built if the stored entry is still it; another process may
        # have replaced it since (with an equally correct build).
        return tc_mod.load(name, so_path if _digest(so_path) == digest else built)
    finally:
        shutil.rmtree(work, ignore_errors=True)
