"""Builds that outlive the process: a function holding a loop whose first call ran long (a
sampler's chain, a solver) was worth native code, but its process may end before a second
call would build it. A detached, low-priority process builds it into the cache instead, so
the program's next run loads it before that first call (tier.py).

`python -m didax._src.compiler.native.detached SOURCE_FILE DIRECTORY` is that process: it
builds the C source in SOURCE_FILE into the cache DIRECTORY (as a build in the process would)
and removes SOURCE_FILE. It runs at the lowest priority, so on a machine with one free core
it takes only the time the programs there leave.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys

from didax._src.compiler.native import cache, runtime, toolchain
from didax._src.compiler.native.directory import write_atomic

LONG_CALL = 0.5  # seconds: a first call at least this long gets its native code built


def build_later(source: str, directory: str) -> None:
    """Starts a detached process building `source` into the cache `directory` (once per
    source: a pending build of the same source is not started again)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:32]
    path = os.path.join(directory, f".pending-{digest}.c")
    if os.path.exists(path):
        return
    write_atomic(directory, path, source.encode())
    nice = (lambda: os.nice(19)) if hasattr(os, "nice") else None
    try:
        subprocess.Popen([sys.executable, "-m", __name__, path, directory],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True,
                         preexec_fn=nice, close_fds=True, env=toolchain.child_environment())
    except OSError:
        os.remove(path)


def _main(path: str, directory: str) -> int:
    try:
        with open(path) as f:
            source = f.read()
        tc = toolchain.toolchain()
        if tc is not None:
            cache.load_or_build(source, tc, directory)
            runtime.address()  # (the next run loads the module only with the runtime)
        return 0
    finally:
        try:
            os.remove(path)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1], sys.argv[2]))
