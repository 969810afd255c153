"""distrax: distributions (sampling with keys, log-densities, entropies, KL divergences,
under jit and grad) and bijector chains with their log-determinants, in a transformed
distribution; prints the numbers as JSON. Run under real JAX, or under didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import distrax  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

out = {}
x = jnp.array([-1.0, 0.3, 2.0])
dists = {
    "normal": distrax.Normal(loc=0.5, scale=1.5),
    "mvn_diag": distrax.MultivariateNormalDiag(loc=jnp.zeros(3),
                                               scale_diag=jnp.array([1.0, 2.0, 0.5])),
    "laplace": distrax.Laplace(loc=0.0, scale=2.0),
    "logistic": distrax.Logistic(loc=0.0, scale=1.0),
    "gamma": distrax.Gamma(concentration=2.0, rate=1.5),
    "beta": distrax.Beta(alpha=2.0, beta=3.0),
}
for name, d in dists.items():
    s = d.sample(seed=jax.random.key(0), sample_shape=(4,))
    out[name + "_sample"] = np.asarray(s).tolist()
    y = jnp.abs(x) / 3.0 if name in ("gamma", "beta") else x  # (in the support)
    out[name + "_log_prob"] = np.asarray(d.log_prob(y)).tolist()
    out[name + "_entropy"] = np.asarray(d.entropy()).tolist()
cat = distrax.Categorical(logits=jnp.array([0.1, -0.5, 1.2]))
out["cat_sample"] = np.asarray(cat.sample(seed=jax.random.key(1), sample_shape=(6,))).tolist()
out["cat_probs"] = np.asarray(cat.probs).tolist()
out["kl_normal"] = float(distrax.Normal(0.0, 1.0).kl_divergence(distrax.Normal(1.0, 2.0)))
out["kl_cat"] = float(cat.kl_divergence(distrax.Categorical(logits=jnp.zeros(3))))


def nll(params):
    return -jnp.sum(distrax.Normal(params[0], jnp.exp(params[1])).log_prob(x))


out["nll_grad"] = np.asarray(jax.jit(jax.grad(nll))(jnp.array([0.2, 0.1]))).tolist()
# bijectors: a chain, applied and inverted, with log-determinants
chain = distrax.Chain([distrax.ScalarAffine(shift=1.0, scale=2.0), distrax.Tanh(),
                       distrax.ScalarAffine(shift=-0.5, scale=0.3)])
y, ldj = chain.forward_and_log_det(x)
out["chain_y"], out["chain_ldj"] = np.asarray(y).tolist(), np.asarray(ldj).tolist()
xb, ildj = chain.inverse_and_log_det(y)
out["chain_x"], out["chain_ildj"] = np.asarray(xb).tolist(), np.asarray(ildj).tolist()
block = distrax.Block(distrax.Sigmoid(), ndims=1)
out["block_ldj"] = float(block.forward_log_det_jacobian(x))
flow = distrax.Transformed(distrax.MultivariateNormalDiag(jnp.zeros(3), jnp.ones(3)),
                           distrax.Block(chain, ndims=1))
s, lp = flow.sample_and_log_prob(seed=jax.random.key(2), sample_shape=(5,))
out["flow_sample"], out["flow_log_prob"] = np.asarray(s).tolist(), np.asarray(lp).tolist()
out["flow_log_prob_jit"] = np.asarray(jax.jit(flow.log_prob)(s)).tolist()
lu = distrax.LowerUpperTriangularAffine(
    jnp.array([[2.0, 0.5, 0.1], [0.3, 1.5, 0.2], [0.1, 0.4, 1.2]]), jnp.ones(3))
yl, ll = lu.forward_and_log_det(x)
out["lu_y"], out["lu_ldj"] = np.asarray(yl).tolist(), float(ll)
print(json.dumps(out))
