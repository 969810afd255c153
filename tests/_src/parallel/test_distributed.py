"""didax.distributed: two processes under `mpiexec -n 2` (when mpi4py is installed, as in CI
with the `mpi` extra) map over four devices and agree with one process's vmap; processes
that diverge get an error, not a hang; without mpi4py, initialize() says what to install."""
import json
import os
import pathlib
import sys

import numpy as np
import pytest
from distributed_cases import (
    CASES,
    W1,
    W2,
    X2,
    W,
    X,
    loss,
    whole_layer,
)
from process_testing import mpi_launcher, run_or_fail

import didax as jax
import didax.numpy as jnp
from didax._src.parallel import distributed

PROGRAM = pathlib.Path(__file__).with_name("distributed_program.py")


def test_initialize_without_mpi4py_says_what_to_install(monkeypatch):
    monkeypatch.setattr(distributed, "mpi4py", None)
    with pytest.raises(RuntimeError, match=r'pip install "didax\[mpi\]".*mpiexec -n'):
        jax.distributed.initialize()
    assert not jax.distributed.is_initialized()
    assert (jax.process_index(), jax.process_count()) == (0, 1)


def test_a_single_process_has_no_link():
    jax.distributed.shutdown()  # (alone already: nothing to leave)
    assert jax.process_count() == 1 and not jax.distributed.is_initialized()


def run_under_mpi(args, tmp_path, devices: int):
    return run_or_fail([mpi_launcher(), "-n", "2", sys.executable, *args], cwd=tmp_path,
                       env=dict(os.environ, DIDAX_NUM_CPU_DEVICES=str(devices)),
                       merge_stderr=True)


def test_two_processes_map_over_four_devices(tmp_path):
    run_under_mpi([str(PROGRAM), str(tmp_path)], tmp_path, devices=2)
    ranks = [dict(np.load(tmp_path / f"rank{p}.npz")) for p in range(2)]
    for p, r in enumerate(ranks):
        assert int(r["process_index"]) == p and int(r["process_count"]) == 2
        assert list(r["device_ids"]) == [0, 1, 2, 3]
        assert list(r["local_ids"]) == [2 * p, 2 * p + 1]
    for name, f in CASES.items():
        want = np.asarray(jax.vmap(f, axis_name="i")(X))
        got = np.concatenate([r[name] for r in ranks])
        assert got.dtype == want.dtype, name
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
    gx, gw = jax.grad(lambda x, w: jnp.sum(jax.vmap(loss, axis_name="i", in_axes=(0, None))(
        x, w) ** 2), argnums=(0, 1))(X, W)
    np.testing.assert_allclose(np.concatenate([r["grad_x"] for r in ranks]), gx, rtol=1e-4,
                               atol=1e-4)
    vmapped = jax.vmap(jax.vmap(loss, axis_name="i", in_axes=(0, None)), in_axes=(None, 0))(
        X, np.stack([W, -W]))
    np.testing.assert_allclose(np.concatenate([r["vmap_of_pmap"] for r in ranks], axis=1),
                               vmapped, rtol=1e-5, atol=1e-5)
    for r in ranks:  # the gradient of a parameter every device shares: the global one
        np.testing.assert_allclose(r["grad_w"], gw, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(r["shard_map_sum"], X.reshape(8, 4).sum(0), rtol=1e-5)
        message = str(r["diverged"])
        assert "diverged" in message
        assert "process 0: psum over 4 devices of float32[3]" in message
        assert "process 1: psum over 4 devices of float32[4]" in message
    # the 2x2 mesh: 'data' across the processes, 'model' within each
    want = np.asarray(whole_layer(X2, W1, W2))
    for key in ("mesh_layer", "mesh_layer_jit"):
        np.testing.assert_allclose(np.concatenate([r[key] for r in ranks]), want, rtol=1e-5,
                                   atol=1e-5, err_msg=key)
    whole_loss = lambda *a: jnp.sum(whole_layer(*a) ** 2)  # noqa: E731
    grads = jax.grad(whole_loss, argnums=(0, 1, 2))(X2, W1, W2)
    np.testing.assert_allclose(np.concatenate([r["mesh_grad0"] for r in ranks]), grads[0],
                               rtol=1e-5, atol=1e-5)
    for r in ranks:  # (the loss, and the gradients of the replicated weights: global)
        np.testing.assert_allclose(r["mesh_loss"], whole_loss(X2, W1, W2), rtol=1e-5)
        for k in (1, 2):
            np.testing.assert_allclose(r[f"mesh_grad{k}"], grads[k], rtol=1e-5, atol=1e-5)


def test_a_lost_peer_makes_the_others_raise_instead_of_hanging(tmp_path):
    program = pathlib.Path(__file__).with_name("lost_peer_program.py")
    run_or_fail([mpi_launcher(), "-n", "2", sys.executable, str(program), str(tmp_path)],
                cwd=tmp_path, env=dict(os.environ, DIDAX_NUM_CPU_DEVICES="1",
                                       DIDAX_PEER_TIMEOUT="3"), merge_stderr=True)
    result = json.loads((tmp_path / "lost_peer.json").read_text())
    assert result["raised"] is not None, "the collective returned without its peer"
    assert "waited 3 s at psum over 2 devices of float32[3] for process 1" in result["raised"]
    assert 3 <= result["seconds"] < 30
