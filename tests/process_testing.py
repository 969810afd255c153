"""Running didax programs in child processes (examples, mpiexec): with the repository on the
path, a time limit that kills the whole process group, and the MPI launcher or a skip that
says why there is none."""
import importlib.util
import os
import pathlib
import shutil
import signal
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TIMEOUT = 180  # seconds: a hang fails the test instead of stalling the suite


def mpi_launcher():
    """The mpiexec to run, or a skip saying why the MPI tests cannot run here."""
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip('mpi4py is not installed: pip install "didax[mpi]" to run the MPI tests '
                    "(CI installs it)")
    found = shutil.which("mpiexec")
    if found is None:
        pytest.skip("mpi4py is installed but no mpiexec is on the PATH (pip install mpich)")
    return found


def run_or_fail(command, *, cwd, env, merge_stderr=False):
    """`command`'s output (stdout, or stdout and stderr merged); fails the test when it exits
    with an error or outlives TIMEOUT (its process group is killed)."""
    env = dict(env, PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{' '.join(map(str, command))} did not finish in {TIMEOUT} s")
    assert proc.returncode == 0, out if merge_stderr else err
    assert_no_build_failed(out if merge_stderr else err)
    return out


def assert_no_build_failed(stderr: str):
    """A child's native builds all succeeded (a failed one leaves its function on the NumPy
    tier, slower, and says so in a warning)."""
    from didax._src.compiler.native.tier import BUILD_FAILED
    assert BUILD_FAILED not in stderr, stderr[-4000:]
