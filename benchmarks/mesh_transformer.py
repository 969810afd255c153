"""Speed-up of the 2-D mesh example (examples/transformer_2d_mesh.py): one jitted Adam step of
its Transformer (here d_model 128, MLP 512, 2 layers, 4 heads, global batch 64 of 32
tokens), unsharded on one device against shard_map over meshes of 2x1 ('data' only), 1x2
('model' only) and 2x2 devices, in one process; BLAS and native loops on one thread per
device, the native tier built before timing.

    python benchmarks/mesh_transformer.py [--rounds N]

All configurations start from the same parameters and first check that their losses agree;
they are timed interleaved, round by round (medians). Across processes (`mpiexec -n 2`),
run the example itself: it prints its time per step.
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("DIDAX_NATIVE_TIER", "sync")
os.environ.setdefault("DIDAX_NUM_THREADS", "1")
import harness  # noqa: E402, F401 - one BLAS thread per device, before NumPy loads
import numpy as np  # noqa: E402

import didax as jax  # noqa: E402

STEPS_PER_ROUND = 5
BATCH = 64


def _example():
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "transformer_2d_mesh.py"
    spec = importlib.util.spec_from_file_location("transformer_2d_mesh", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.D_MODEL, module.HIDDEN = 128, 512  # (the example's own model is smaller)
    return module


def stepper(example, shape):
    """A function taking STEPS_PER_ROUND steps on the mesh `shape` (None: one device)."""
    params = example.init_params(0)
    mesh = None if shape is None else jax.make_mesh(shape, ("data", "model"),
                                                    devices=jax.devices()[:shape[0] * shape[1]])
    loss = example.make_loss(params, mesh)
    optimizer = example.optim.adam(1e-3)
    state = [params, optimizer.init(params)]
    step = example.make_train_step(loss, optimizer)
    tokens = next(example.batches(0, BATCH))

    def run():
        for _ in range(STEPS_PER_ROUND):
            state[0], state[1], value = step(state[0], state[1], tokens)
        return float(value)

    return run


def main(argv):
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 7
    jax.config.update("didax_num_cpu_devices", 4)
    example = _example()
    cases = {"one device (no mesh)": stepper(example, None)}
    for shape in ((2, 1), (1, 2), (2, 2)):
        cases[f"mesh {shape[0]}x{shape[1]}"] = stepper(example, shape)
    losses = {k: f() for k, f in cases.items()}  # (also the warm-up: trace, build)
    first = losses["one device (no mesh)"]
    for k, v in losses.items():
        if not np.isclose(v, first, rtol=1e-3):
            raise SystemExit(f"{k} disagrees with one device: loss {v} vs {first}")
    times = {k: [] for k in cases}
    for _ in range(rounds):
        for k, f in cases.items():
            start = time.perf_counter()
            f()
            times[k].append((time.perf_counter() - start) / STEPS_PER_ROUND)
    medians = {k: statistics.median(v) for k, v in times.items()}
    base = medians["one device (no mesh)"]
    print(f"Transformer d_model {example.D_MODEL}, MLP {example.HIDDEN}, global batch {BATCH}, "
          f"{os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f}), median of "
          f"{rounds} rounds of {STEPS_PER_ROUND} steps\n")
    print("| configuration | ms per step | speed-up over one device |")
    print("|---|---|---|")
    for k, m in medians.items():
        print(f"| {k} | {1e3 * m:.1f} | {base / m:.2f}x |")


if __name__ == "__main__":
    main(sys.argv[1:])
