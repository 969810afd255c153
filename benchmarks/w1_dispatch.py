"""W1, eager dispatch: `x * y + x` on float32 arrays of shape (8,) and (1000, 1000), no jit."""
from __future__ import annotations

import numpy as np

SHAPES = [(8,), (1000, 1000)]


def cases(shape, frameworks) -> dict:
    label = f"W1 x * y + x, {shape}"
    rng = np.random.default_rng(0)
    xn = rng.standard_normal(shape).astype(np.float32)
    yn = rng.standard_normal(shape).astype(np.float32)
    out = {}
    if "didax" in frameworks:
        import didax.numpy as dnp

        xd, yd = dnp.asarray(xn), dnp.asarray(yn)
        out[label, "didax"] = lambda: xd * yd + xd
    if "numpy" in frameworks:
        out[label, "numpy"] = lambda: xn * yn + xn
    if "jax" in frameworks:
        import jax.numpy as jnp

        xj, yj = jnp.asarray(xn), jnp.asarray(yn)
        out[label, "jax"] = lambda: (xj * yj + xj).block_until_ready()
    if "autograd" in frameworks:
        import autograd.numpy as anp

        out[label, "autograd"] = lambda: anp.multiply(xn, yn) + xn
    if "torch" in frameworks:
        import torch

        xt, yt = torch.from_numpy(xn), torch.from_numpy(yn)
        out[label, "torch"] = lambda: xt * yt + xt
    return out


def check(frameworks) -> None:
    from harness import assert_same_numbers

    for shape in SHAPES:
        results = {column: fn() for (_, column), fn in cases(shape, frameworks).items()}
        assert_same_numbers(results, f"W1 {shape}", rtol=1e-6)


def run(frameworks, rounds) -> list:
    from harness import rows, time_interleaved

    check(frameworks)
    out = []
    for shape in SHAPES:
        out += rows(time_interleaved(cases(shape, frameworks), rounds=rounds))
    return out
