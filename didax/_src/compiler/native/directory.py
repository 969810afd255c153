"""Where the native tier keeps its files (built modules, the precompiled prelude, the
toolchain's probe record), how they are written, and what of the machine they depend on.

The directory is `$DIDAX_CACHE_DIR`, else `$XDG_CACHE_HOME/didax`, else `~/.cache/didax`,
created private (0o700) and refused if another user owns it or may write to it (a planted
module would run as this user).
"""
from __future__ import annotations

import os
import platform
import stat
import tempfile
import threading
import warnings

from didax._src.errors import NativeTierWarning

_lock = threading.Lock()
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


def write_atomic(directory: str, final: str, data: bytes):
    """Writes `data` to `final` through a temporary file in `directory` moved in place, so
    readers see the whole file or none."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, final)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
