"""W8, a jitted SGD step of a deeper MLP at four batch sizes: MLP 256-512-512-512-10 relu,
softmax cross-entropy, float32, batch 1, 16, 256 and 4096; steady state.

Each framework trains its own copy of the parameters: didax.jit and jax.jit of the same
step, PyTorch eager with in-place updates, and the forward and backward pass by hand in
NumPy with in-place updates (mlp.py). Batch 1 and 16 are bound by reading the 0.8 M
parameters (products with one or sixteen rows, the update of every parameter); batch 4096
by the products (a step takes about a second there, so its rounds are cut to fit a budget).
"""
from __future__ import annotations

from mlp import NumpyMLP, data, loss_fn, sgd_step_fn, torch_sgd_trainer, training

SIZES, LR = (256, 512, 512, 512, 10), 0.1
BATCHES = (1, 16, 256, 4096)
BUDGET_SECONDS = 20.0  # per batch size


def label(batch: int) -> str:
    return f"W8 jitted SGD step, MLP 256-512-512-512-10, batch {batch}"




def _didax(jit, batch):
    import didax
    import didax.numpy as dnp

    step = jit(sgd_step_fn(didax.value_and_grad, loss_fn(dnp, didax.lax.stop_gradient), LR))
    params, x, y = data(SIZES, batch)
    params = [(dnp.asarray(w), dnp.asarray(b)) for w, b in params]
    return lambda: training(step, params, dnp.asarray(x), dnp.asarray(y))


def _jax(batch):
    import jax
    import jax.numpy as jnp

    step = jax.jit(sgd_step_fn(jax.value_and_grad, loss_fn(jnp, jax.lax.stop_gradient), LR))
    params, x, y = jax.device_put(data(SIZES, batch))
    return lambda: training(step, params, x, y, block=jax.block_until_ready)


def _numpy(batch):
    def make():
        params, x, y = data(SIZES, batch)  # (updated in place: a fresh copy each time)
        model = NumpyMLP(params, batch)
        return lambda: (params, model.sgd_step(params, x, y, LR))

    return make


def _torch(batch):
    return lambda: torch_sgd_trainer(SIZES, batch, LR)


def trainers(frameworks, batch) -> dict:
    """{column: a maker of a fresh training call} (eager didax while didax.jit is missing)."""
    from harness import didax_jit, jit_or_eager

    out = {}
    if "didax" in frameworks:
        out["didax"] = _didax(jit_or_eager(didax_jit()), batch)
    if "numpy" in frameworks:
        out["numpy"] = _numpy(batch)
    if "jax" in frameworks:
        out["jax"] = _jax(batch)
    if "torch" in frameworks:
        out["torch"] = _torch(batch)
    return out


def check(makers, batch) -> dict:
    """One step from the same start: same loss, and the same gradient, read off the update
    in float64 as (before - after) / LR. Returns the training calls (warm) to time."""
    import numpy as np
    from harness import assert_same_numbers, leaves

    before = leaves(data(SIZES, batch)[0])
    losses, grads, calls = {}, {}, {}
    for column, make in makers.items():
        calls[column] = make()
        params, value = calls[column]()
        losses[column] = value
        grads[column] = [(b.astype(np.float64) - a) / LR for a, b in zip(leaves(params), before)]
    what = f"W8 batch {batch}"
    assert_same_numbers(losses, f"{what} loss", rtol=1e-5)
    # PyTorch's products over 4096 terms on this CPU are further from float64 (up to 0.3 %
    # of a gradient's largest entry, against 3e-5 for the others), hence its own tolerance.
    assert_same_numbers(grads, f"{what} gradient", rtol=1e-3, atol=2e-6, scaled_atol=1e-4,
                        torch_scaled_atol=1e-2)
    return calls


def run(frameworks, rounds) -> list:
    from harness import didax_jit, rows, time_interleaved

    timed = {}
    for batch in BATCHES:
        calls = check(trainers(frameworks, batch), batch)
        if not callable(didax_jit()) and "didax" in calls:
            calls["didax"] = didax_jit()  # (Unavailable: the check ran didax eagerly)
        timed.update(time_interleaved(
            {(label(batch), c): f for c, f in calls.items()}, rounds=rounds,
            budget_seconds=BUDGET_SECONDS, warm=True))
    return rows(timed)
