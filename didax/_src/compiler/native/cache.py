"""Built native modules, kept on disk so a process never compiles what another built.

The directory is `$DIDAX_CACHE_DIR`, else `$XDG_CACHE_HOME/didax`, else `~/.cache/didax`,
created private (0o700) and refused if another user owns it or may write to it (a planted
module would run as this user). An entry is `<key>.so` with a sidecar `<key>.sha256` of
its bytes, both written to a temporary file first and moved in place with `os.replace`,
so readers see a whole file or none and two processes building one entry both end with a
correct module. An entry whose bytes do not match its sidecar is rebuilt. The key hashes
everything the machine code depends on: the C source, the compiler and flags, Python's
ABI, NumPy's version (whose loops it calls) and the CPU's features.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import stat
import sys
import sysconfig
import tempfile
import threading
import warnings

import numpy as np

from didax._src import caches
from didax._src.compiler.native import toolchain as tc_mod
from didax._src.errors import NativeTierWarning

_lock = threading.Lock()
# key -> module, loaded once per process (an extension module is never unloaded)
_loaded = caches.memo("native.loaded_modules", interns=True)
_refused: set = set()     # directories already warned about


def cache_dir() -> str | None:
    """The cache directory, created if needed; None (after one warning) if it is unsafe."""
    path = os.environ.get("DIDAX_CACHE_DIR")
    if not path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                  ".cache")
        path = os.path.join(base, "didax")
    path = os.path.abspath(path)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError as e:
        return _refuse(path, f"it cannot be created ({e.strerror})")
    if not stat.S_ISDIR(st.st_mode):
        return _refuse(path, "it is not a directory")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return _refuse(path, "another user owns it")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return _refuse(path, "other users may write to it")
    if not os.access(path, os.W_OK | os.X_OK):
        return _refuse(path, "it is not writable")
    return path


def _refuse(path: str, why: str):
    with _lock:
        first = path not in _refused
        _refused.add(path)
    if first:
        warnings.warn(f"didax: the native tier of jit is off: the cache directory {path} is "
                      f"unsafe or unusable ({why}); jitted functions run on the NumPy tier. "
                      "Set DIDAX_CACHE_DIR to a private directory.", NativeTierWarning,
                      stacklevel=3)
    return None


def cpu_features() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{platform.machine()} {platform.processor()}"


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


def _write_atomic(directory: str, final: str, data: bytes):
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, final)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_or_build(source: str, tc: tc_mod.Toolchain, directory: str):
    """The extension module built from `source`: loaded from the cache if its entry is
    whole, else built, stored and loaded."""
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
        module = _build_and_store(source, tc, directory, name, so_path, sum_path)
    return caches.add(_loaded, key, module)


# (toolchain, directory) -> its precompiled prelude's directory or None
_preludes = caches.memo("native.preludes")
_prelude_lock = threading.Lock()


def _prelude(tc, directory):
    key = (tc, directory)
    with _prelude_lock:  # (held while compiling: one thread writes the prelude's files)
        if key not in _preludes:
            caches.add(_preludes, key, tc_mod.precompiled_prelude(tc, directory))
        return _preludes[key]


def _build_and_store(source, tc, directory, name, so_path, sum_path):
    work = tempfile.mkdtemp(dir=directory, prefix=".build-")
    try:
        built = tc_mod.build(tc, source, work, name, _prelude(tc, directory))
        with open(built, "rb") as f:
            data = f.read()
        digest = hashlib.sha256(data).hexdigest()
        _write_atomic(directory, so_path, data)
        _write_atomic(directory, sum_path, (digest + "\n").encode())
        # Load what this process built if the stored entry is still it; another process may
        # have replaced it since (with an equally correct build).
        return tc_mod.load(name, so_path if _digest(so_path) == digest else built)
    finally:
        shutil.rmtree(work, ignore_errors=True)
