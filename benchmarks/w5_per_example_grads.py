"""W5, per-example gradients: eager `vmap(grad(logistic loss))`, batch 256, dim 100, against a
Python loop of `grad` calls and against JAX eager; and a Hessian-vector product."""
from __future__ import annotations

import numpy as np

BATCH, DIM = 256, 100


def _data():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal(DIM) / 10).astype(np.float32)
    x = rng.standard_normal((BATCH, DIM)).astype(np.float32)
    y = rng.integers(0, 2, BATCH).astype(np.float32)
    return w, x, y


def _loss(np_like):
    def loss(w, x, y):
        z = np_like.dot(x, w)
        return np_like.logaddexp(0.0, z) - y * z  # logistic loss of one example

    return loss


def cases(frameworks) -> dict:
    w, x, y = _data()
    out = {}
    if "didax" in frameworks:
        import didax
        import didax.numpy as dnp

        g = didax.grad(_loss(dnp))
        per_example = didax.vmap(g, in_axes=(None, 0, 0))
        wd, xd, yd = dnp.asarray(w), dnp.asarray(x), dnp.asarray(y)
        out["didax vmap"] = lambda: per_example(wd, xd, yd)
        out["didax loop"] = lambda: [g(wd, xd[i], yd[i]) for i in range(BATCH)]
    if "jax" in frameworks:
        import jax
        import jax.numpy as jnp

        gj = jax.vmap(jax.grad(_loss(jnp)), in_axes=(None, 0, 0))
        wj, xj, yj = jnp.asarray(w), jnp.asarray(x), jnp.asarray(y)
        out["jax vmap (eager)"] = lambda: jax.block_until_ready(gj(wj, xj, yj))
    return out


def check(frameworks) -> None:
    c = cases(frameworks)
    ref = np.asarray(c["didax vmap"]())
    loop = np.stack([np.asarray(g) for g in c["didax loop"]()])
    np.testing.assert_allclose(ref, loop, rtol=1e-5, atol=1e-6, err_msg="W5 vmap vs loop")
    if "jax vmap (eager)" in c:
        np.testing.assert_allclose(ref, np.asarray(c["jax vmap (eager)"]()), rtol=1e-4,
                                   atol=1e-6, err_msg="W5 didax vs JAX")


def run(frameworks, rounds) -> list[str]:
    from harness import report, time_interleaved

    check(frameworks)
    return [report(f"W5 per-example gradients, logistic loss, batch {BATCH}, dim {DIM} (eager)",
                   time_interleaved(cases(frameworks), rounds=rounds),
                   baseline="didax vmap")]
