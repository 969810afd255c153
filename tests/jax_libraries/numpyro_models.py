"""numpyro: NUTS on the eight schools model (non-centred, a hierarchical model) and SVI with
an AutoNormal guide and optax on a regression; prints posterior statistics with their
effective sample sizes, and the SVI losses and parameters, as JSON. Run under real JAX, or
under didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import jax  # noqa: E402
import numpy as np  # noqa: E402
import numpyro  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
import optax  # noqa: E402
from numpyro.diagnostics import effective_sample_size  # noqa: E402
from numpyro.infer import MCMC, NUTS, SVI, Trace_ELBO  # noqa: E402
from numpyro.infer.autoguide import AutoNormal  # noqa: E402
from numpyro.infer.reparam import TransformReparam  # noqa: E402

Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], np.float32)
SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], np.float32)


def eight_schools(sigma, y=None):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("schools", len(sigma)):
        with numpyro.handlers.reparam(config={"theta": TransformReparam()}):
            theta = numpyro.sample("theta", dist.TransformedDistribution(
                dist.Normal(0.0, 1.0), dist.transforms.AffineTransform(mu, tau)))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


mcmc = MCMC(NUTS(eight_schools), num_warmup=500, num_samples=1000, progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), SIGMA, y=Y)
samples = {k: np.asarray(v) for k, v in mcmc.get_samples().items()}
out = {"divergences": int(mcmc.get_extra_fields()["diverging"].sum())}
for name in ("mu", "tau", "theta"):
    draws = samples[name].reshape(len(samples[name]), -1)
    out[name + "_mean"] = draws.mean(0).tolist()
    out[name + "_std"] = draws.std(0).tolist()
    out[name + "_ess"] = np.atleast_1d(effective_sample_size(draws[None])).tolist()


def regression(x, y=None):
    w = numpyro.sample("w", dist.Normal(0.0, 1.0))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    numpyro.sample("y", dist.Normal(w * x + b, 0.5), obs=y)


x = np.linspace(-1.0, 1.0, 20).astype(np.float32)
y = (2.0 * x - 0.5 + 0.3 * np.sin(7.0 * x)).astype(np.float32)
svi = SVI(regression, AutoNormal(regression), optax.adam(0.05), Trace_ELBO())
result = svi.run(jax.random.PRNGKey(1), 300, x, y=y, progress_bar=False)
out["svi_losses"] = np.asarray(result.losses[::25]).tolist()
out["svi_params"] = {k: float(v) for k, v in sorted(result.params.items())}
print(json.dumps(out))
