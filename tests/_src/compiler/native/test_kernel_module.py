"""The hand-written kernel modules (KernelModule) in the configuration users run, the
background build: while the compiler is probed and the module built, calls take the NumPy
twins at once (the same bits), none waits for the compiler, and a process that exits
meanwhile stops it."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from .conftest import slow_compiler_env

_CALLS_DURING_A_BUILD = textwrap.dedent("""
    import time
    import numpy as np, didax.numpy as jnp
    from didax._src.lax import transcendental_kernels as tk
    x = np.linspace(-5, 5, 10_001, dtype=np.float32)
    seconds = []
    for _ in range(3):
        start = time.monotonic()
        y = np.asarray(jnp.tanh(x))
        seconds.append(time.monotonic() - start)
    print(tk._KERNELS.status, max(seconds) < 5, y.tobytes().hex())
""")

def test_calls_during_a_background_build_take_the_twin_at_once(tmp_path):
    env = slow_compiler_env(tmp_path, "61.75")
    out = subprocess.run([sys.executable, "-c", _CALLS_DURING_A_BUILD], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=50)
    assert out.returncode == 0, out.stderr
    status, quick, bits = out.stdout.split()
    assert (status, quick) == ("building", "True")
    from didax._src.numerics import float32_math
    want = float32_math.tanh(np.linspace(-5, 5, 10_001, dtype=np.float32))
    assert bits == want.tobytes().hex()
