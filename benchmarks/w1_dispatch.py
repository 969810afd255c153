"""W1, eager dispatch: `x * y + x` on float32 arrays of shape (8,) and (1000, 1000), no jit."""
from __future__ import annotations

import numpy as np

SHAPES = [(8,), (1000, 1000)]


def cases(shape, frameworks) -> dict:
    rng = np.random.default_rng(0)
    xn = rng.standard_normal(shape).astype(np.float32)
    yn = rng.standard_normal(shape).astype(np.float32)
    out = {}
    if "didax" in frameworks:
        import didax.numpy as dnp

        xd, yd = dnp.asarray(xn), dnp.asarray(yn)
        out["didax"] = lambda: xd * yd + xd
    if "numpy" in frameworks:
        out["numpy"] = lambda: xn * yn + xn
    if "jax" in frameworks:
        import jax.numpy as jnp

        xj, yj = jnp.asarray(xn), jnp.asarray(yn)
        out["jax"] = lambda: (xj * yj + xj).block_until_ready()
    if "autograd" in frameworks:
        import autograd.numpy as anp

        out["autograd"] = lambda: anp.multiply(xn, yn) + xn
    if "torch" in frameworks:
        import torch

        xt, yt = torch.from_numpy(xn), torch.from_numpy(yn)
        out["torch"] = lambda: xt * yt + xt
    return out


def check(frameworks) -> None:
    """All frameworks compute the same numbers (a benchmark of wrong answers is worthless)."""
    for shape in SHAPES:
        results = {name: np.asarray(fn()) for name, fn in cases(shape, frameworks).items()}
        ref = results.pop("numpy", None)
        for name, r in results.items():
            if ref is not None:
                np.testing.assert_allclose(r, ref, rtol=1e-6, err_msg=f"W1 {name} {shape}")


def run(frameworks, rounds) -> list[str]:
    from harness import report, time_interleaved

    check(frameworks)
    out = []
    for shape in SHAPES:
        medians = time_interleaved(cases(shape, frameworks), rounds=rounds)
        out.append(report(f"W1 eager x * y + x, float32 {shape}", medians))
    return out
