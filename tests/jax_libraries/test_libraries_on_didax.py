"""Libraries written for JAX run unchanged on didax (`didax.install_as_jax()`): optax, chex,
equinox, lineax, optimistix, diffrax, blackjax, flax, distrax and numpyro. Each script runs in
its own subprocess under real JAX and under didax (the aliasing stays out of this process,
which imports the real JAX), and the numbers agree to float32 tolerance (samplers' statistics
within Monte Carlo error)."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from jax_absent import needs_jax
from process_testing import assert_no_build_failed

import didax
import didax.numpy

pytestmark = [pytest.mark.whole_programs, needs_jax]

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parents[1]


def _missing(names):
    """Of the didax names a library needs, those this build lacks."""
    have = {
        "didax.sharding": importlib.util.find_spec("didax.sharding") is not None,
        "didax.Device": hasattr(didax, "Device"),
        "didax.pmap": hasattr(didax, "pmap"),
        "didax.numpy.bfloat16": hasattr(didax.numpy, "bfloat16"),
    }
    return [n for n in names if not have[n]]


# names each library touches beyond what this module's tests cover (provided elsewhere in
# didax: devices and shardings, the ml_dtypes types)
NEEDS = {
    "optax": ["didax.sharding"],
    "chex": ["didax.Device", "didax.pmap", "didax.numpy.bfloat16"],
    "equinox": ["didax.Device", "didax.pmap", "didax.sharding"],
    "lineax": [],
    "optimistix": [],
    "diffrax": [],
    "blackjax": [],
    "flax": [],
    "distrax": [],
    "numpyro": [],
}


def _run(script, *flags):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, str(HERE / script), *flags], capture_output=True,
                          text=True, env=env, timeout=120, cwd=str(ROOT))
    if proc.returncode != 0:
        raise AssertionError(f"{script} {' '.join(flags)} failed:\n{proc.stderr[-4000:]}")
    assert_no_build_failed(proc.stderr)
    return json.loads(proc.stdout)


def _both(library, script):
    pytest.importorskip(library)
    missing = _missing(NEEDS[library])
    if missing:
        pytest.skip(f"{library} needs {', '.join(missing)}, not in this build of didax")
    return _run(script, "--didax"), _run(script)


def test_optax_trains_an_mlp_as_on_jax():
    ours, ref = _both("optax", "optax_mlp.py")
    assert set(ours) == set(ref)
    assert {"sgd", "adam", "adamw", "rmsprop", "adam_cosine_clipped", "extra_lbfgs",
            "extra_multi_steps", "extra_noisy_sgd"} <= set(ref)
    for name in ref:
        assert ref[name]["losses"][-1] < ref[name]["losses"][0], name
        np.testing.assert_allclose(ours[name]["losses"], ref[name]["losses"], rtol=1e-5,
                                   atol=1e-5, err_msg=name)
        for k in ref[name]["params"]:
            np.testing.assert_allclose(ours[name]["params"][k], ref[name]["params"][k],
                                       rtol=1e-5, atol=1e-5, err_msg=f"{name} {k}")


def test_chex_assertions_and_dataclass_as_on_jax():
    ours, ref = _both("chex", "chex_checks.py")
    for key in ("grad_type", "batched_w_shape", "replace", "leaves", "failures"):
        assert ours[key] == ref[key], key
    assert all(exc == "AssertionError" for _, exc in ours["failures"])
    for k in ("w", "b"):
        np.testing.assert_allclose(ours["grad"][k], ref["grad"][k], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours["per_example"], ref["per_example"], rtol=1e-5, atol=1e-6)


def test_equinox_mlp_trains_as_on_jax():
    ours, ref = _both("equinox", "equinox_mlp.py")
    assert ours["n_params"] == ref["n_params"] == 6
    # same key, same bits: the initial network is JAX's
    np.testing.assert_allclose(ours["init_out"], ref["init_out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours["losses"], ref["losses"], rtol=1e-5, atol=1e-6)
    assert ref["losses"][-1] < ref["losses"][0]
    for a, b in zip(ours["params"], ref["params"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # Conv2d, a GRUCell under scan, LayerNorm, Dropout (keyed): the same numbers
    for a, b in zip(ours["extras"], ref["extras"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert ours["raised"] == ref["raised"] == [False, True]  # eqx.error_if under filter_jit


def _close(ours, ref, keys, rtol=1e-5, atol=1e-5):
    for k in keys:
        np.testing.assert_allclose(ours[k], ref[k], rtol=rtol, atol=atol, err_msg=k)


def test_lineax_solves_and_differentiates_as_on_jax():
    ours, ref = _both("lineax", "lineax_solvers.py")
    assert set(ours) == set(ref)
    _close(ours, ref, ref)
    x = np.linalg.solve(np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]),
                        [1.0, 2.0, 3.0])
    for solver in ("lu", "qr", "cholesky", "cg"):
        np.testing.assert_allclose(ours[solver], x, rtol=1e-5)


def test_optimistix_solvers_as_on_jax():
    ours, ref = _both("optimistix", "optimistix_solvers.py")
    assert set(ours) == set(ref)
    steps = [k for k in ref if k.endswith("_steps")]
    # The same iterations, but for the last one: whether a solver stops can hinge on one
    # float32 ulp (on one CPU, Gauss-Newton's third iterate is 1 - 2^-24 under JAX's LAPACK
    # and 1 under didax's solve, and JAX takes a fifth step to see the change vanish).
    for k in steps:
        assert abs(ours[k] - ref[k]) <= 1, (k, ours[k], ref[k])
    _close(ours, ref, [k for k in ref if k not in steps])
    for k in ("bfgs", "lm", "gauss_newton"):
        np.testing.assert_allclose(ours[k], [1.0, 1.0], rtol=1e-4)


def test_diffrax_solves_and_differentiates_as_on_jax():
    ours, ref = _both("diffrax", "diffrax_odes.py")
    assert set(ours) == set(ref)
    assert ours["tsit5_steps"] == ref["tsit5_steps"]
    assert ours["kvaerno5_steps"] == ref["kvaerno5_steps"]
    _close(ours, ref, ["tsit5", "kvaerno5", "grad_recursive", "grad_backsolve"], rtol=1e-4)
    np.testing.assert_allclose(ours["grad_recursive"], ours["grad_backsolve"], rtol=1e-3)


def test_blackjax_samplers_as_on_jax():
    ours, ref = _both("blackjax", "blackjax_samplers.py")
    # HMC and NUTS steps: the same draws (the same keys and arithmetic)
    _close(ours, ref, ["hmc_first", "hmc_accept", "nuts_first"], rtol=1e-4, atol=1e-4)
    # After window adaptation (acceptance rates steer the step size, so the last bits of
    # each step's arithmetic change the run) the draws agree in distribution: means and
    # standard deviations of 2000 draws within four Monte Carlo standard errors (of an
    # effective sample size of 400, which NUTS exceeds on this target) of the truth and of
    # JAX's.
    sd = np.array([0.5, 2.0])
    se_mean, se_std = sd / np.sqrt(400), sd / np.sqrt(2 * 400)
    for run in (ours, ref):
        assert np.all(np.abs(np.array(run["nuts_mean"]) - [1.0, -0.5]) < 4 * se_mean)
        assert np.all(np.abs(np.array(run["nuts_std"]) - sd) < 4 * se_std)
    diff = np.abs(np.array(ours["nuts_mean"]) - ref["nuts_mean"])
    assert np.all(diff < 4 * np.sqrt(2) * se_mean)
    assert 0.2 < ours["adapted_step_size"] < 3.0


def test_flax_linen_cnn_and_rnn_train_as_on_jax():
    ours, ref = _both("flax", "flax_linen_cnn.py")
    assert ours["param_shapes"] == ref["param_shapes"]
    assert ref["losses"][-1] < ref["losses"][0]
    _close(ours, ref, ["losses", "eval", "running_mean", "running_var", "lstm"])
    for a, b in zip(ours["lstm_grads"], ref["lstm_grads"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_distrax_distributions_and_bijectors_as_on_jax():
    ours, ref = _both("distrax", "distrax_distributions.py")
    assert set(ours) == set(ref)
    assert ours["cat_sample"] == ref["cat_sample"]  # the same keys draw the same categories
    # (float32 log-gamma and log-beta differ between the two in the last bits)
    _close(ours, ref, [k for k in ref if k != "cat_sample"], rtol=1e-4)


def test_numpyro_nuts_and_svi_as_on_jax():
    ours, ref = _both("numpyro", "numpyro_models.py")
    # SVI: the same keys and arithmetic, so the same losses and parameters
    np.testing.assert_allclose(ours["svi_losses"], ref["svi_losses"], rtol=1e-4, atol=1e-4)
    for k in ref["svi_params"]:
        np.testing.assert_allclose(ours["svi_params"][k], ref["svi_params"][k], rtol=1e-4,
                                   atol=1e-5, err_msg=k)
    # NUTS adapts its step size to acceptance rates, so the last bits of each step's
    # arithmetic change the run: the posteriors agree in distribution. Means within four
    # Monte Carlo standard errors (from each run's effective sample size) of each other;
    # standard deviations within 25 % (some 6 standard errors at these sample sizes), save
    # tau's: its posterior's heavy tail makes its standard deviation vary by 10-15 % between
    # runs (two CPUs' runs here: 2.7 and 3.5 against JAX's 3.1).
    assert ours["divergences"] < 20 and ref["divergences"] < 20
    for name in ("mu", "tau", "theta"):
        m1, m2 = np.array(ours[name + "_mean"]), np.array(ref[name + "_mean"])
        s1, s2 = np.array(ours[name + "_std"]), np.array(ref[name + "_std"])
        e1, e2 = np.array(ours[name + "_ess"]), np.array(ref[name + "_ess"])
        assert np.all(e1 > 100), (name, e1)
        se = np.sqrt(s1 ** 2 / e1 + s2 ** 2 / e2)
        assert np.all(np.abs(m1 - m2) < 4 * se), (name, m1, m2, se)
        if name != "tau":
            np.testing.assert_allclose(s1, s2, rtol=0.25, err_msg=name)


def test_flax_nnx_mlp_trains_as_on_jax():
    ours, ref = _both("flax", "flax_nnx_mlp.py")
    assert ref["losses"][-1] < ref["losses"][0]
    _close(ours, ref, ["losses", "eval", "bn_mean", "bn_var"])


def test_the_libraries_own_readme_examples_run_as_on_jax():
    """Every example of the libraries' READMEs that runs on JAX runs on didax; the others
    are fragments (shell lines, names the README never defines) and fail alike."""
    for library in ("blackjax", "diffrax", "distrax", "equinox", "flax", "lineax", "numpyro",
                    "optax", "optimistix"):
        pytest.importorskip(library)
    ours, ref = _run("readme_examples.py", "--didax"), _run("readme_examples.py")
    assert ours == ref
    assert sum(outcome == "ran" for outcome in ref.values()) >= 20
