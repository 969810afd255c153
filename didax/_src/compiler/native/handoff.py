"""Background builds get the interpreter lock promptly.

A build thread needs the GIL only briefly, but hundreds of times a module: every file
operation and every slice of emitting C. CPython hands the lock to a waiting thread only
after the holder has run a whole switch interval (5 ms by default), and each hand-over can
fail and start the wait again while the cores are busy (the compiler runs beside the main
thread). With the main thread computing (a sampler on the NumPy tier, say), a build that
takes 0.2 s of its thread's time took 28 s, and the native code arrived that much later.
While a build runs, the interval is BUILD_SWITCH_INTERVAL; the value it replaced comes back
when the last build ends, unless something else has changed it meanwhile (and a lower value
of the user's is never raised). Results never depend on it: it decides only when a thread
runs."""
from __future__ import annotations

import contextlib
import sys
import threading

BUILD_SWITCH_INTERVAL = 0.0005  # seconds (measured: 0.5 ms brought that build to 4 s)

_lock = threading.Lock()
_running = [0]      # builds inside prompt_handoffs
_replaced = [None]  # the interval before the first of them, if it was lowered


@contextlib.contextmanager
def prompt_handoffs():
    """The block (a build on a thread of its own) with the shorter switch interval."""
    with _lock:
        if _running[0] == 0:
            before = sys.getswitchinterval()
            if before > BUILD_SWITCH_INTERVAL:
                sys.setswitchinterval(BUILD_SWITCH_INTERVAL)
                _replaced[0] = before
        _running[0] += 1
    try:
        yield
    finally:
        with _lock:
            _running[0] -= 1
            if _running[0] == 0 and _replaced[0] is not None:
                # (the value read back is in whole microseconds)
                if abs(sys.getswitchinterval() - BUILD_SWITCH_INTERVAL) < 1e-7:
                    sys.setswitchinterval(_replaced[0])
                _replaced[0] = None
