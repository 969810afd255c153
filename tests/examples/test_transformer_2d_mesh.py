import os
import pathlib
import re
import sys

import numpy as np
import pytest
from process_testing import mpi_launcher, run_or_fail

import didax as jax

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "transformer_2d_mesh.py"


pytestmark = pytest.mark.usefixtures("four_devices")


def test_the_mesh_gives_the_one_device_loss_and_gradient(load_example):
    example = load_example("transformer_2d_mesh")
    params = example.init_params(1)
    tokens = next(example.batches(1, 8))
    mesh = jax.make_mesh((2, 2), ("data", "model"))
    want_loss, want_grads = jax.value_and_grad(example.make_loss(params))(params, tokens)
    sharded = example.make_loss(params, mesh)
    for f in (sharded, jax.jit(sharded)):
        loss, grads = jax.value_and_grad(f)(params, tokens)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
        for name, g in grads.items():
            np.testing.assert_allclose(g, want_grads[name], rtol=1e-5, atol=1e-5,
                                       err_msg=name)


def test_training_on_the_mesh_follows_one_device(load_example):
    example = load_example("transformer_2d_mesh")
    mesh = example.main(steps=12, global_batch=8)
    one = example.main(steps=12, global_batch=8, one_device=True)
    assert mesh["devices"] == 4 and one["devices"] == 1
    np.testing.assert_allclose(mesh["losses"], one["losses"], rtol=1e-4)
    assert mesh["losses"][-1] < mesh["losses"][0]


def final_line(command):
    env = {k: v for k, v in os.environ.items() if k != "DIDAX_NUM_CPU_DEVICES"}
    out = run_or_fail(command + ["--steps", "30"], cwd=ROOT, env=env).strip().splitlines()
    return out[0], re.sub(r"^training loss ", "", out[-1])


@pytest.mark.whole_programs
def test_one_process_and_two_mpi_processes_train_the_same_model():
    local = final_line([sys.executable, str(EXAMPLE)])
    assert "a 2x2 mesh of 4 devices in 1 process(es)" in local[0]
    distributed = final_line([mpi_launcher(), "-n", "2", sys.executable, str(EXAMPLE)])
    assert "a 2x2 mesh of 4 devices in 2 process(es)" in distributed[0]
    assert distributed[1] == local[1]
