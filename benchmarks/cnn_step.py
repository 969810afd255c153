"""A jitted CNN SGD step: batch 32 of 28x28x1 float32 images (NHWC), a 3x3 convolution to
16 channels ('SAME'), relu, 2x2 max pool by `reduce_window`; a 3x3 convolution to 32
channels, relu, 2x2 average pool; dense to 10; softmax cross-entropy; SGD.

didax and JAX run the same program (`lax.conv_general_dilated` with ('NHWC', 'HWIO',
'NHWC'), `lax.reduce_window` with `lax.max` and `lax.add`) under their `jit`; didax on the
native tier (DIDAX_NATIVE_TIER=sync unless set). PyTorch runs the same model eagerly
(`conv2d`, `max_pool2d`, `avg_pool2d` on NCHW views of the same parameters, autograd and an
in-place update) and under `torch.compile` (a functional step through `torch.func`).
NumPy runs the step written by hand (`cnn_numpy.py`: im2col products, the backward pass
by hand).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
    intra_op_parallelism_threads=1" taskset -c 0 python benchmarks/cnn_step.py
    python benchmarks/cnn_step.py --all-cores     # every core, unpinned

prints the Markdown table of `run.py` (medians; didax's time over each other's). Every
framework first takes one step from the same parameters: losses and updated parameters
must agree.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")  # measure the native tier's steady state
import cores  # noqa: E402 - before harness: one thread each, or every core (--all-cores)
import harness  # noqa: E402, F401 - sets single-thread environment before NumPy loads
import numpy as np  # noqa: E402

BATCH, LR = 32, 0.05
STEP = cores.label("CNN jitted SGD step, conv16-maxpool-conv32-avgpool-dense10, batch 32")
EAGER = "CNN SGD step, PyTorch eager"


def _data():
    """Parameters (HWIO kernels) and a batch of NHWC images with integer labels."""
    rng = np.random.default_rng(0)

    def init(shape, fan_in):
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    params = [init((3, 3, 1, 16), 9), np.zeros(16, np.float32),
              init((3, 3, 16, 32), 144), np.zeros(32, np.float32),
              init((7 * 7 * 32, 10), 7 * 7 * 32), np.zeros(10, np.float32)]
    x = rng.standard_normal((BATCH, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, BATCH)
    return params, x, y


def _step_fn(api, np_like):
    lax = api.lax
    dims = ("NHWC", "HWIO", "NHWC")

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dims) + b1
        h = np_like.maximum(h, 0.0)
        h = lax.reduce_window(h, -np_like.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=dims) + b2
        h = np_like.maximum(h, 0.0)
        h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") * 0.25
        logits = h.reshape(h.shape[0], -1) @ w3 + b3
        shifted = logits - lax.stop_gradient(logits.max(axis=1, keepdims=True))
        logp = shifted - np_like.log(np_like.exp(shifted).sum(axis=1, keepdims=True))
        return -np_like.mean(np_like.take_along_axis(logp, y[:, None], axis=1))

    def step(params, x, y):
        value, grads = api.value_and_grad(loss)(params, x, y)
        return [p - LR * g for p, g in zip(params, grads)], value

    return step


def _array_api(column, jit):
    """A step on that framework's arrays: (call, initial params, x, y, block)."""
    params, x, y = _data()
    if column == "didax":
        import didax
        import didax.numpy as dnp

        jit = jit if callable(jit) else (lambda f: f)
        return (jit(_step_fn(didax, dnp)), [dnp.asarray(p) for p in params], dnp.asarray(x),
                dnp.asarray(y), lambda r: r[1].block_until_ready())
    import jax
    import jax.numpy as jnp

    params, x, y = jax.device_put((params, x, y))
    return jax.jit(_step_fn(jax, jnp)), params, x, y, jax.block_until_ready


def _torch_loss(params, x, y):
    """The same model on NCHW images: the HWIO kernels are read as OIHW views."""
    import torch.nn.functional as F

    w1, b1, w2, b2, w3, b3 = params
    h = F.relu(F.conv2d(x, w1.permute(3, 2, 0, 1), b1, padding=1))
    h = F.max_pool2d(h, 2)
    h = F.relu(F.conv2d(h, w2.permute(3, 2, 0, 1), b2, padding=1))
    h = F.avg_pool2d(h, 2)
    logits = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1) @ w3 + b3  # NHWC order, as w3's
    return F.cross_entropy(logits, y)


def _torch_step(params, x, y):
    import torch

    grads, value = torch.func.grad_and_value(_torch_loss)(params, x, y)
    return [p - LR * g for p, g in zip(params, grads)], value


def _torch_data():
    import torch

    params, x, y = _data()
    return ([torch.from_numpy(p) for p in params],
            torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))),
            torch.from_numpy(y))


def _torch_eager():
    """One in-place SGD step of autograd per call; returns (params, loss)."""
    import torch

    params, x, y = _torch_data()
    params = [p.clone().requires_grad_(True) for p in params]

    def call():
        loss = _torch_loss(params, x, y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(LR * g)
        return params, loss

    return call


def _torch_compiled():
    from harness import Unavailable, torch_compiled

    params, x, y = _torch_data()
    compiled = torch_compiled(_torch_step, params, x, y)
    if isinstance(compiled, Unavailable):
        return compiled
    return lambda: compiled(params, x, y)


def _stepper(column, jit):
    """A call that takes one step from the initial parameters, and returns (params, loss)."""
    step, params, x, y, block = _array_api(column, jit)

    def call():
        out = step(params, x, y)
        block(out)
        return out

    return call


def _numpy_stepper():
    """cnn_numpy's step from the initial parameters: () -> (params, loss)."""
    import cnn_numpy

    params, x, y = _data()
    return lambda: cnn_numpy.step(params, x, y, LR)


def cases(frameworks, didax_jit) -> tuple[dict, dict]:
    """The steps to check (each from the initial parameters) and the steps to time."""
    checked = {}
    for column in ("didax", "jax"):
        if column in frameworks:
            checked[column] = _stepper(column, didax_jit)
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
    """Losses and updated parameters of one step from the same start agree."""
    from harness import assert_same_numbers

    results = {column: call() for column, call in checked.items()}
    assert_same_numbers({c: r[1] for c, r in results.items()}, "CNN loss", rtol=1e-5)
    assert_same_numbers({c: r[0] for c, r in results.items()}, "CNN parameters",
                        rtol=1e-4, atol=1e-5)


def run(frameworks, rounds) -> list:
    from harness import didax_jit, rows, time_interleaved

    checked, timed = cases(frameworks, didax_jit())
    check(checked)
    return rows(time_interleaved(timed, rounds=rounds))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--frameworks", nargs="*", default=["didax", "numpy", "jax", "torch"])
    cores.add_arguments(parser)
    args = parser.parse_args()
    cores.report(args, __file__, run)


if __name__ == "__main__":
    main()
