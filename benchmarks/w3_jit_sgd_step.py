"""W3, a jitted SGD step: MLP 64-256-256-10 relu, softmax cross-entropy, batch 128, float32
(and the same step without jit: didax, HIPS autograd and PyTorch eager).

Steady state: median time of a step, each framework training its own copy of the
parameters (didax.jit, jax.jit, PyTorch eager with in-place updates, torch.compile of a
functional step, and the forward and backward pass by hand in NumPy with in-place updates).

First call: creating a fresh jitted function and its first call (trace, compile, run),
each round with the compilers' caches emptied first (JAX: `jax.clear_caches()`;
torch.compile: `torch.compiler.reset()` and a fresh inductor cache directory).
"""
from __future__ import annotations

import contextlib
import time

from mlp import (
    NumpyMLP,
    data,
    loss_fn,
    sgd_step_fn,
    torch_loss,
    torch_sgd_trainer,
    training,
)

SIZES, BATCH, LR = (64, 256, 256, 10), 128, 0.1
STEADY = "W3 jitted SGD step, MLP 64-256-256-10"
FIRST = "W3 first call: trace + compile + step"
EAGER = "W3 eager SGD step (no jit), MLP 64-256-256-10"




def _didax(jit):
    """Makers of a training call for the check and for the steady state, and the first-call
    case; while `jit` is Unavailable, the check runs eagerly and the others are `jit`."""
    from harness import jit_or_eager

    import didax
    import didax.numpy as dnp

    def make():
        return sgd_step_fn(didax.value_and_grad, loss_fn(dnp, didax.lax.stop_gradient), LR)

    def trainer():
        return training(jit_or_eager(jit)(make()), params, x, y)

    def first_call():
        fresh = make()
        start = time.perf_counter()
        jit(fresh)(params, x, y)
        return time.perf_counter() - start

    params, x, y = data(SIZES, BATCH)
    params = [(dnp.asarray(w), dnp.asarray(b)) for w, b in params]
    x, y = dnp.asarray(x), dnp.asarray(y)
    if not callable(jit):
        return trainer, jit, jit
    return trainer, trainer, first_call


def _jax():
    import jax
    import jax.numpy as jnp

    def make():
        return sgd_step_fn(jax.value_and_grad, loss_fn(jnp, jax.lax.stop_gradient), LR)

    def first_call():
        jax.clear_caches()
        fresh = make()
        start = time.perf_counter()
        jax.block_until_ready(jax.jit(fresh)(params, x, y))
        return time.perf_counter() - start

    params, x, y = jax.device_put(data(SIZES, BATCH))
    jitted = jax.jit(make())
    return (lambda: training(jitted, params, x, y, block=jax.block_until_ready)), first_call


def _didax_eager():
    import didax
    import didax.numpy as dnp

    params, x, y = data(SIZES, BATCH)
    params = [(dnp.asarray(w), dnp.asarray(b)) for w, b in params]
    step = sgd_step_fn(didax.value_and_grad, loss_fn(dnp, didax.lax.stop_gradient), LR)
    return training(step, params, dnp.asarray(x), dnp.asarray(y))


def _autograd_eager():
    import autograd
    import autograd.numpy as anp

    params, x, y = data(SIZES, BATCH)
    # (no gradient to stop: the shift by the max cancels in the gradient)
    step = sgd_step_fn(autograd.value_and_grad, loss_fn(anp, lambda m: m), LR)
    return training(step, params, x, y)


def _torch_value_and_grad(f):
    """torch.func.grad_and_value with JAX's (value, grads) order."""
    import torch

    def value_and_grad(*args):
        grads, value = torch.func.grad_and_value(f)(*args)
        return value, grads

    return value_and_grad


def _fresh_inductor_cache():
    try:
        from torch._inductor.utils import fresh_cache
    except ImportError:
        return contextlib.nullcontext()
    return fresh_cache()


def _torch_compile():
    """The compiled step and its first-call case, or Unavailable(why torch.compile fails)."""
    import torch
    from harness import Unavailable, torch_compiled

    def make():
        return sgd_step_fn(_torch_value_and_grad, torch_loss, LR)

    def first_call():
        torch.compiler.reset()
        with _fresh_inductor_cache():
            fresh = make()
            start = time.perf_counter()
            torch.compile(fresh, fullgraph=True)(params, x, y)
            return time.perf_counter() - start

    params, x, y = data(SIZES, BATCH)
    params = [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in params]
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    compiled = torch_compiled(make(), params, x, y)
    if isinstance(compiled, Unavailable):
        return compiled, compiled
    return (lambda: training(compiled, params, x, y)), first_call


def _torch_eager():
    return torch_sgd_trainer(SIZES, BATCH, LR)


def _numpy():
    params, x, y = data(SIZES, BATCH)
    model = NumpyMLP(params, BATCH)
    return lambda: (params, model.sgd_step(params, x, y, LR))


def trainers(frameworks):
    """Three dicts keyed by column: makers of a fresh training call for the check (eager
    didax while didax.jit is missing) and for the steady state, and the first-call cases."""
    from harness import didax_jit

    checked, steady, first = {}, {}, {}
    if "didax" in frameworks:
        checked["didax"], steady["didax"], first["didax"] = _didax(didax_jit())
    if "numpy" in frameworks:
        checked["numpy"] = steady["numpy"] = _numpy
    if "jax" in frameworks:
        checked["jax"], first["jax"] = _jax()
        steady["jax"] = checked["jax"]
    if "torch" in frameworks:
        checked["torch"] = steady["torch"] = _torch_eager
        steady["torch.compile"], first["torch.compile"] = _torch_compile()
        if callable(steady["torch.compile"]):
            checked["torch.compile"] = steady["torch.compile"]
    return checked, steady, first


def eager_trainers(frameworks):
    """Makers of a fresh eager training call (no jit) per column: didax, autograd, PyTorch."""
    makers = {"didax": _didax_eager, "autograd": _autograd_eager, "torch": _torch_eager}
    return {c: m for c, m in makers.items() if c in frameworks}


def check(checked) -> None:
    """One step from the same start: same loss, and the same gradient, read off the update
    in float64 as (before - after) / LR."""
    import numpy as np
    from harness import assert_same_numbers, leaves

    before = leaves(data(SIZES, BATCH)[0])
    losses, grads = {}, {}
    for column, make in checked.items():
        params, value = make()()
        losses[column] = value
        grads[column] = [(b.astype(np.float64) - a) / LR for a, b in zip(leaves(params), before)]
    assert_same_numbers(losses, "W3 loss", rtol=1e-5)
    assert_same_numbers(grads, "W3 gradient", rtol=1e-3, atol=2e-6)


def run(frameworks, rounds) -> list:
    from harness import Unavailable, rows, time_first_calls, time_interleaved

    checked, steady, first = trainers(frameworks)
    check(checked)
    eager = eager_trainers(frameworks)
    check(eager)
    timed = time_interleaved({(STEADY, c): m if isinstance(m, Unavailable) else m()
                              for c, m in steady.items()}, rounds=rounds)
    timed.update(time_interleaved({(EAGER, c): m() for c, m in eager.items()}, rounds=rounds))
    # A cold torch.compile takes seconds: one or two samples of it are enough.
    timed.update(time_first_calls({(FIRST, c): f for c, f in first.items()}, rounds=rounds,
                                  budget_seconds=30.0, min_rounds=1))
    return rows(timed)
