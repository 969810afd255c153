"""A sampler's whole run as a user starts it: numpyro's NUTS on the eight schools model
(500 warmup steps, 1000 draws, numpyro's defaults: a progress bar, so one compiled call per
step), in a fresh process, under didax with an empty native cache ("cold": the NumPy tier
serves while the native code is built in the background), under didax with the cache the
cold run filled ("warm"), and under JAX. Rounds alternate the three.

    python benchmarks/nuts_cold_start.py --rounds 3
    taskset -c 0 python benchmarks/nuts_cold_start.py    # one core (the builds share it)
    python benchmarks/nuts_cold_start.py --one-call      # no progress bar: the whole chain
                                                         # is one compiled call (a scan)

Wall time of the whole process (interpreter start, imports, tracing, sampling). Needs
numpyro (the test extra). Prints a Markdown table of medians and didax's over JAX's.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

PROGRAM = """
import sys
if sys.argv[1] == "didax":
    import didax
    didax.install_as_jax()
import numpy as np
import jax
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS

y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools(sigma, y=None):
    mu = numpyro.sample("mu", dist.Normal(0, 5))
    tau = numpyro.sample("tau", dist.HalfCauchy(5))
    with numpyro.plate("J", len(sigma)):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


mcmc = MCMC(NUTS(eight_schools), num_warmup=500, num_samples=1000,
            progress_bar=sys.argv[2] == "bar")
mcmc.run(jax.random.PRNGKey(0), sigma, y=y, extra_fields=("potential_energy",))
print(float(np.mean(mcmc.get_samples()["mu"])))
"""


def run(framework: str, cache: str | None, bar: bool) -> tuple[float, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if cache is not None:
        env["DIDAX_CACHE_DIR"] = cache
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", PROGRAM, framework, "bar" if bar else "none"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, out.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one-call", action="store_true",
                        help="no progress bar: the chain is one compiled call")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"didax, cold cache": [], "didax, warm cache": [],
                                     "jax": []}
    means = set()
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as cache:
            for name, framework, directory in (("didax, cold cache", "didax", cache),
                                               ("didax, warm cache", "didax", cache),
                                               ("jax", "jax", None)):
                seconds, mean = run(framework, directory, bar=not args.one_call)
                times[name].append(seconds)
                if framework == "didax":
                    means.add(mean)
    jax_median = statistics.median(times["jax"])
    print("| run | median (s) | runs (s) | / JAX |")
    print("|---|---|---|---|")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"| {name} | {median:.1f} | {', '.join(f'{r:.1f}' for r in runs)} | "
              f"{median / jax_median:.2f} |")
    # Every didax run draws the same samples, whichever tier served which step.
    print(f"didax's mean of mu: {', '.join(sorted(means))}")
    return 0 if len(means) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
