"""A jitted Transformer Adam step: a 2-layer pre-LN encoder (d_model 128, 4 heads, MLP 512,
tanh-gelu, causal attention without projection biases), token embedding (vocabulary 1000)
and learned positional embedding, an untied vocabulary head, next-token softmax
cross-entropy on batch 8 of sequences of 64 tokens, and Adam written by hand (lr 1e-3,
b1 0.9, b2 0.999, eps 1e-8, bias correction) over a dict of float32 parameters initialised
once from one NumPy generator and shared by every framework.

One model function, written against a small table of operations (`_Ops`), runs on didax,
JAX and PyTorch alike. didax and JAX jit the step (didax on the native tier:
DIDAX_NATIVE_TIER=sync unless set); PyTorch runs it eagerly (autograd, in-place Adam) and
under `torch.compile` (a functional step through `torch.func`). NumPy runs the same step
written by hand (`transformer_numpy.py`: the forward pass, the backward pass and Adam, each
call from the initial state as didax's and JAX's).

The first-call rows time a fresh jitted function's first call (trace, compile, run), each
sample in a fresh process with nothing cached (imports and data are not timed): didax with
an empty native cache directory (DIDAX_CACHE_DIR, so the compiler probe and the C build are
part of it), JAX with its default (no persistent cache). didax is also timed the way a user
runs it, the native tier in the background: the first call's result (NumPy tier), and the
time from that call's start until native code has replaced it while training steps keep
running (`f.tiers()` says "native").

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
    intra_op_parallelism_threads=1" taskset -c 0 python benchmarks/transformer_step.py
    python benchmarks/transformer_step.py --all-cores     # every core, unpinned

prints the Markdown table of `run.py` (medians; didax's time over each other's). Every
framework first takes one step from the same parameters: losses and updated parameters
must agree.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")  # measure the native tier's steady state
import cores  # noqa: E402 - before harness: one thread each, or every core (--all-cores)
import harness  # noqa: E402, F401 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

VOCAB, D_MODEL, HEADS, SEQ, BATCH, MLP, LAYERS = 1000, 128, 4, 64, 8, 512, 2
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8
LN_EPS = 1e-5
MASKED = -1e30  # an attention score a causal mask hides

STEP = cores.label("TF Transformer jitted Adam step, 2 layers d128, batch 8 x 64")
COLD = cores.label("TF first call, nothing cached (didax: with native build)")
FIRST_RESULT = cores.label("TF first call, native tier in the background")
NATIVE_READY = cores.label("TF background: native code ready, from the first call")
COLD_SAMPLES = 3
TINY_GRADIENT = 1e-7  # |g| below which Adam's first update is ill-conditioned (see check)
READY_TIMEOUT = 600.0  # seconds a background sample waits for native code


# ---------------------------------------------------------------------------- the model


def _ops_jax_like(api, jnp) -> types.SimpleNamespace:
    """The model's operations on didax's or JAX's arrays."""
    return types.SimpleNamespace(
        tanh=jnp.tanh, exp=jnp.exp, log=jnp.log, sqrt=jnp.sqrt, where=jnp.where,
        mean_last=lambda x: x.mean(axis=-1, keepdims=True),
        sum_last=lambda x: x.sum(axis=-1, keepdims=True),
        max_last=lambda x: x.max(axis=-1, keepdims=True),
        stop_gradient=api.lax.stop_gradient,
        heads_first=lambda x: x.transpose(0, 2, 1, 3),
        swap_last=lambda x: x.swapaxes(-1, -2),
        pick=lambda logp, labels: jnp.take_along_axis(logp, labels[..., None], axis=-1),
        causal=jnp.asarray(np.tril(np.ones((SEQ, SEQ), bool))))


def _ops_torch() -> types.SimpleNamespace:
    """The model's operations on PyTorch's tensors."""
    import torch

    return types.SimpleNamespace(
        tanh=torch.tanh, exp=torch.exp, log=torch.log, sqrt=torch.sqrt, where=torch.where,
        mean_last=lambda x: x.mean(dim=-1, keepdim=True),
        sum_last=lambda x: x.sum(dim=-1, keepdim=True),
        max_last=lambda x: x.amax(dim=-1, keepdim=True),
        stop_gradient=lambda x: x.detach(),
        heads_first=lambda x: x.permute(0, 2, 1, 3),
        swap_last=lambda x: x.transpose(-1, -2),
        pick=lambda logp, labels: torch.gather(logp, -1, labels[..., None]),
        causal=torch.from_numpy(np.tril(np.ones((SEQ, SEQ), bool))))


def _layer_norm(ops, x, gain, bias):
    centred = x - ops.mean_last(x)
    return centred / ops.sqrt(ops.mean_last(centred * centred) + LN_EPS) * gain + bias


def _softmax_last(ops, s):
    e = ops.exp(s - ops.stop_gradient(ops.max_last(s)))
    return e / ops.sum_last(e)


def _gelu_tanh(ops, x):
    return 0.5 * x * (1.0 + ops.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def _attention(ops, p, layer, h):
    batch, seq, d = h.shape
    head = d // HEADS

    def split(t):
        return ops.heads_first(t.reshape(batch, seq, HEADS, head))

    q, k, v = split(h @ p[layer + "wq"]), split(h @ p[layer + "wk"]), split(h @ p[layer + "wv"])
    scores = ops.where(ops.causal, (q @ ops.swap_last(k)) * (1.0 / np.sqrt(head)), MASKED)
    mixed = ops.heads_first(_softmax_last(ops, scores) @ v).reshape(batch, seq, d)
    return mixed @ p[layer + "wo"]


def _loss(ops, p, tokens):
    """Mean next-token cross-entropy of `tokens` (batch, SEQ + 1)."""
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    x = p["embed"][inputs] + p["pos"]
    for i in range(LAYERS):
        layer = f"layer{i}."
        x = x + _attention(ops, p, layer, _layer_norm(ops, x, p[layer + "ln1.g"],
                                                      p[layer + "ln1.b"]))
        h = _layer_norm(ops, x, p[layer + "ln2.g"], p[layer + "ln2.b"])
        h = _gelu_tanh(ops, h @ p[layer + "mlp.w1"] + p[layer + "mlp.b1"])
        x = x + h @ p[layer + "mlp.w2"] + p[layer + "mlp.b2"]
    x = _layer_norm(ops, x, p["final_ln.g"], p["final_ln.b"])
    logits = x @ p["head.w"] + p["head.b"]
    shifted = logits - ops.stop_gradient(ops.max_last(logits))
    logp = shifted - ops.log(ops.sum_last(ops.exp(shifted)))
    return -ops.pick(logp, targets).mean()


def _adam(ops, params, grads, m, v, count):
    """One Adam update of every parameter; `count` is the number of steps taken before."""
    t = count + 1
    m = {k: B1 * m[k] + (1 - B1) * g for k, g in grads.items()}
    v = {k: B2 * v[k] + (1 - B2) * g * g for k, g in grads.items()}
    bc1, bc2 = 1 - B1 ** t, 1 - B2 ** t
    params = {k: p - LR * (m[k] / bc1) / (ops.sqrt(v[k] / bc2) + EPS)
              for k, p in params.items()}
    return params, m, v, t


def _step_fn(ops, value_and_grad):
    """The functional step: (params, m, v, count, tokens) -> (params, m, v, count, loss)."""
    def step(params, m, v, count, tokens):
        loss, grads = value_and_grad(lambda p: _loss(ops, p, tokens))(params)
        return (*_adam(ops, params, grads, m, v, count), loss)

    return step


def _data():
    """Parameters (a flat dict) and a batch of token sequences, one longer than the inputs."""
    rng = np.random.default_rng(0)

    def normal(shape, scale):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    params = {"embed": normal((VOCAB, D_MODEL), 0.02), "pos": normal((SEQ, D_MODEL), 0.02)}
    for i in range(LAYERS):
        layer = f"layer{i}."
        for name in ("wq", "wk", "wv", "wo"):
            params[layer + name] = normal((D_MODEL, D_MODEL), 1 / np.sqrt(D_MODEL))
        params[layer + "mlp.w1"] = normal((D_MODEL, MLP), 1 / np.sqrt(D_MODEL))
        params[layer + "mlp.b1"] = np.zeros(MLP, np.float32)
        params[layer + "mlp.w2"] = normal((MLP, D_MODEL), 1 / np.sqrt(MLP))
        params[layer + "mlp.b2"] = np.zeros(D_MODEL, np.float32)
        for ln in ("ln1.", "ln2."):
            params[layer + ln + "g"] = np.ones(D_MODEL, np.float32)
            params[layer + ln + "b"] = np.zeros(D_MODEL, np.float32)
    params["final_ln.g"] = np.ones(D_MODEL, np.float32)
    params["final_ln.b"] = np.zeros(D_MODEL, np.float32)
    params["head.w"] = normal((D_MODEL, VOCAB), 1 / np.sqrt(D_MODEL))
    params["head.b"] = np.zeros(VOCAB, np.float32)
    tokens = rng.integers(0, VOCAB, (BATCH, SEQ + 1)).astype(np.int32)
    return params, tokens


def _initial_state():
    """(params, m, v, count, tokens) in NumPy: the start every framework steps from."""
    params, tokens = _data()
    m = {k: np.zeros_like(p) for k, p in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    return params, m, v, np.float32(0.0), tokens


# ---------------------------------------------------------------------------- the frameworks


def _array_api(column):
    """(step function, initial state on that framework's arrays, block) for didax or JAX; the
    step is not jitted."""
    state = _initial_state()
    if column == "didax":
        import didax
        import didax.numpy as dnp

        return (_step_fn(_ops_jax_like(didax, dnp), didax.value_and_grad),
                didax.tree_util.tree_map(dnp.asarray, state),
                lambda out: out[-1].block_until_ready())
    import jax
    import jax.numpy as jnp

    return (_step_fn(_ops_jax_like(jax, jnp), jax.value_and_grad), jax.device_put(state),
            jax.block_until_ready)


def _jit(column):
    if column == "didax":
        import didax

        return didax.jit
    import jax

    return jax.jit


def _stepper(column):
    """A call that takes one jitted step from the initial state, and returns (params, loss,
    m)."""
    step, state, block = _array_api(column)
    jitted = _jit(column)(step)

    def call():
        out = jitted(*state)
        block(out)
        return out[0], out[-1], out[1]

    return call


def _torch_state():
    import torch

    params, m, v, count, tokens = _initial_state()
    return ({k: torch.from_numpy(p) for k, p in params.items()},
            {k: torch.from_numpy(a) for k, a in m.items()},
            {k: torch.from_numpy(a) for k, a in v.items()},
            torch.tensor(count), torch.from_numpy(tokens.astype(np.int64)))


def _torch_eager():
    """One autograd step with an in-place Adam update per call; returns (params, loss, m)."""
    import torch

    ops = _ops_torch()
    params, m, v, _, tokens = _torch_state()
    params = {k: p.clone().requires_grad_(True) for k, p in params.items()}
    names = list(params)
    t = 1  # (kept at 1: a step's time does not depend on it)

    def call():
        loss = _loss(ops, params, tokens)
        grads = torch.autograd.grad(loss, [params[k] for k in names])
        bc1, bc2 = 1 - B1 ** t, 1 - B2 ** t
        with torch.no_grad():
            for k, g in zip(names, grads):
                m[k].mul_(B1).add_(g, alpha=1 - B1)
                v[k].mul_(B2).addcmul_(g, g, value=1 - B2)
                params[k].sub_(LR * (m[k] / bc1) / ((v[k] / bc2).sqrt() + EPS))
        return params, loss, m

    return call


def _torch_compiled():
    import torch
    from harness import Unavailable, torch_compiled

    state = _torch_state()
    step = _step_fn(_ops_torch(), lambda f: (lambda p: tuple(reversed(
        torch.func.grad_and_value(f)(p)))))
    compiled = torch_compiled(step, *state)
    if isinstance(compiled, Unavailable):
        return compiled

    def call():
        out = compiled(*state)
        return out[0], out[-1], out[1]

    return call


def _numpy_stepper():
    """transformer_numpy's step from the initial state: () -> (params, loss, m)."""
    import transformer_numpy

    step = transformer_numpy.Step(heads=HEADS, ln_eps=LN_EPS, masked=MASKED, lr=LR, b1=B1,
                                  b2=B2, eps=EPS)
    state = _initial_state()

    def call():
        out = step(*state)
        return out[0], out[-1], out[1]

    return call


def cases(frameworks) -> tuple[dict, dict]:
    """The steps to check (each from the initial state) and the steps to time."""
    checked = {}
    for column in ("didax", "jax"):
        if column in frameworks:
            checked[column] = _stepper(column)
    if "numpy" in frameworks:
        checked["numpy"] = _numpy_stepper()
    timed = {(STEP, c): f for c, f in checked.items()}
    if "torch" in frameworks:
        compiled = _torch_compiled()
        timed[STEP, "torch.compile"] = compiled
        if callable(compiled):
            checked["torch.compile"] = compiled
        timed[STEP, "torch"] = _torch_eager()
        checked["torch"] = _torch_eager()  # a fresh copy: one step from the start
    return checked, timed


def check(checked) -> None:
    """Losses, gradients (as Adam's first moments) and updated parameters of one step from
    the same start agree.

    Adam's first step moves a parameter by LR * g / (|g| + EPS): where a gradient is within
    a few EPS of zero, its float32 rounding (1e-9 against gradients of 1e-3) changes the
    update by a tenth of LR. Parameters whose gradient is below TINY_GRADIENT are compared
    through their gradient only (the first moments), the others (and those of gradient
    zero) to the tolerances below.
    """
    from harness import assert_same_numbers, leaves

    results = {column: call() for column, call in checked.items()}
    assert_same_numbers({c: r[1] for c, r in results.items()}, "Transformer loss", rtol=1e-5)
    assert_same_numbers({c: r[2] for c, r in results.items()}, "Transformer gradients",
                        rtol=1e-4, scaled_atol=1e-5)
    (_, (ref_params, _, ref_m)), *_ = results.items()
    ref_params, ref_m = leaves(ref_params), leaves(ref_m)
    tiny = [(np.abs(m) < (1 - B1) * TINY_GRADIENT) & (m != 0) for m in ref_m]
    conditioned = {c: [np.where(t, ref, p) for t, ref, p in zip(tiny, ref_params, leaves(r[0]))]
                   for c, r in results.items()}
    assert_same_numbers(conditioned, "Transformer parameters", rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------- first calls

# What a fresh process measures (`--cold KIND`), and the native tier it runs didax with.
COLD_KINDS = {"didax": "sync", "didax-background": "background", "jax": None}


def _cold_sample(kind) -> dict:
    """In a fresh process: a fresh jitted step's first call, in seconds (and for
    "didax-background", the seconds from its start until native code runs the step, while
    the training loop goes on)."""
    column = "jax" if kind == "jax" else "didax"
    step, state, block = _array_api(column)
    start = time.perf_counter()
    jitted = _jit(column)(step)
    out = jitted(*state)
    block(out)
    measured = {"first": time.perf_counter() - start}
    if column == "didax":
        measured["tiers"] = jitted.tiers()
    if kind == "didax-background":
        steps, built = 1, False
        while (tiers := jitted.tiers()) != ["native"]:
            built = built or tiers == ["building"]
            if time.perf_counter() - start > READY_TIMEOUT or built and tiers == ["numpy"]:
                raise RuntimeError(f"no native code after {time.perf_counter() - start:.1f} s "
                                   f"and {steps} steps: tiers {tiers} (a build "
                                   f"{'ended without one' if built else 'never started'})")
            out = jitted(*out[:4], state[4])
            block(out)
            steps += 1
        measured.update(ready=time.perf_counter() - start, steps=steps)
    return measured


def _run_cold_sample(kind) -> dict:
    """`_cold_sample(kind)` in a new process (for didax: with a new, empty cache directory)."""
    env, cache = dict(os.environ), None
    if COLD_KINDS[kind] is not None:
        cache = tempfile.mkdtemp(prefix="didax-cold-")
        env.update(DIDAX_CACHE_DIR=cache, DIDAX_NATIVE_TIER=COLD_KINDS[kind])
    argv = [sys.executable, os.path.abspath(__file__), "--cold", kind]
    if cores.ALL_CORES:
        argv.append("--all-cores")
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
    finally:
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        said = [line for line in lines if "Warning" in line] + lines[-1:] or ["(no output)"]
        return {"error": f"{kind} cold process failed: " + " / ".join(said)[:600]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def first_calls(frameworks, samples=COLD_SAMPLES) -> dict:
    """The first-call rows: medians of `samples` fresh processes per kind, interleaved."""
    from harness import Unavailable

    kinds = [k for k in COLD_KINDS if ("jax" if k == "jax" else "didax") in frameworks]
    runs: dict[str, list] = {k: [] for k in kinds}
    for _ in range(samples):
        for kind in kinds:
            runs[kind].append(_run_cold_sample(kind))
    cells = {"didax": [(COLD, "first")], "didax-background": [
        (FIRST_RESULT, "first"), (NATIVE_READY, "ready")], "jax": [(COLD, "first")]}
    out = {}
    for kind, measured in runs.items():
        column = "jax" if kind == "jax" else "didax"
        errors = [m["error"] for m in measured if "error" in m]
        not_native = [m["tiers"] for m in measured
                      if kind == "didax" and "tiers" in m and m["tiers"] != ["native"]]
        for row, field in cells[kind]:
            if errors:
                out[row, column] = Unavailable(errors[0])
            elif not_native:
                out[row, column] = Unavailable(f"the first call ran on tiers {not_native[0]}, "
                                               "not native")
            else:
                out[row, column] = statistics.median(m[field] for m in measured)
        if kind == "didax-background" and not errors:
            steps = sorted(m["steps"] for m in measured)
            print(f"background native tier: ready after {steps} steps", file=sys.stderr)
    return out


def run(frameworks, rounds) -> list:
    from harness import rows, time_interleaved

    checked, timed = cases(frameworks)
    check(checked)
    results = time_interleaved(timed, rounds=rounds, warm=True)
    results.update(first_calls(frameworks))
    return rows(results)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--frameworks", nargs="*", default=["didax", "numpy", "jax", "torch"])
    cores.add_arguments(parser)
    parser.add_argument("--cold", choices=list(COLD_KINDS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold:
        print(json.dumps(_cold_sample(args.cold)))
        return
    cores.report(args, __file__, run)


if __name__ == "__main__":
    main()
