"""blackjax on a Gaussian with two scales: HMC steps (the same draws under JAX and didax),
NUTS steps, and NUTS after window adaptation (whose step size feeds back on acceptance
rates, so runs agree in distribution only); prints draws and statistics as JSON. Run under
real JAX, or under didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import blackjax  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

MU, SD = jnp.array([1.0, -0.5]), jnp.array([0.5, 2.0])


def logdensity(x):
    return -0.5 * jnp.sum(((x - MU) / SD) ** 2)


def chain(kernel, state, key, n):
    def one(state, k):
        state, info = kernel.step(k, state)
        return state, (state.position, info.acceptance_rate)
    return jax.jit(lambda s, k: jax.lax.scan(one, s, jax.random.split(k, n)))(state, key)


out = {}
hmc = blackjax.hmc(logdensity, step_size=0.3, inverse_mass_matrix=jnp.ones(2),
                   num_integration_steps=10)
_, (draws, accept) = chain(hmc, hmc.init(jnp.zeros(2)), jax.random.key(0), 300)
out["hmc_first"], out["hmc_accept"] = np.asarray(draws[:20]).tolist(), float(accept.mean())
nuts = blackjax.nuts(logdensity, step_size=0.5, inverse_mass_matrix=jnp.array([0.25, 4.0]))
_, (draws, _) = chain(nuts, nuts.init(jnp.zeros(2)), jax.random.key(3), 8)
out["nuts_first"] = np.asarray(draws).tolist()
adapt = blackjax.window_adaptation(blackjax.nuts, logdensity)
(state, params), _ = adapt.run(jax.random.key(1), jnp.zeros(2), num_steps=300)
out["adapted_step_size"] = float(params["step_size"])
out["adapted_inverse_mass"] = np.asarray(params["inverse_mass_matrix"]).tolist()
_, (draws, _) = chain(blackjax.nuts(logdensity, **params), state, jax.random.key(2), 2000)
draws = np.asarray(draws)
out["nuts_mean"], out["nuts_std"] = draws.mean(0).tolist(), draws.std(0).tolist()
print(json.dumps(out))
