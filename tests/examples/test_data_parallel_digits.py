import os
import pathlib
import sys

import numpy as np
import pytest
from process_testing import mpi_launcher, run_or_fail

from didax._src.config import config

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "data_parallel_digits.py"


def with_devices(n, fun):
    old = config.read("didax_num_cpu_devices")
    config.update("didax_num_cpu_devices", n)
    try:
        return fun()
    finally:
        config.update("didax_num_cpu_devices", old)


def test_two_devices_train_the_model_one_device_trains(load_example):
    example = load_example("data_parallel_digits")
    two = with_devices(2, lambda: example.main(steps=80))
    one = with_devices(1, lambda: example.main(steps=80))
    assert two["devices"] == 2 and one["devices"] == 1
    assert two["test_accuracy"] >= 0.9, two
    # the same global batch: the mean of two half-batch gradients is the full batch's
    np.testing.assert_allclose(two["test_loss"], one["test_loss"], rtol=1e-3)
    np.testing.assert_allclose(two["test_accuracy"], one["test_accuracy"], atol=2e-3)


def run(command):
    env = {k: v for k, v in os.environ.items() if k != "DIDAX_NUM_CPU_DEVICES"}
    return run_or_fail(command, cwd=ROOT, env=env).strip().splitlines()


@pytest.mark.whole_programs
def test_one_process_and_two_mpi_processes_print_the_same_result():
    local = run([sys.executable, str(EXAMPLE)])
    assert "over 2 device(s) in 1 process(es)" in local[0]
    assert local[-1].startswith("final test loss ")
    distributed = run([mpi_launcher(), "-n", "2", sys.executable, str(EXAMPLE)])
    assert len(distributed) == 2  # only process 0 prints
    assert "over 2 device(s) in 2 process(es)" in distributed[0]
    assert distributed[-1] == local[-1]
