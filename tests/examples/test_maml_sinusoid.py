"""MAML example: meta-training helps adaptation, and its meta-gradient is the exact
second-order one (checked against finite differences in float64)."""
import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import random
from didax._src.config import enable_x64


def test_meta_gradient_is_second_order_and_matches_finite_differences(load_example):
    maml = load_example("maml_sinusoid")
    with enable_x64():
        params = jax.tree.map(lambda p: p.astype(jnp.float64),
                              maml.init_mlp(random.PRNGKey(1), sizes=(1, 8, 8, 1)))
        task = jax.tree.map(lambda a: a[0].astype(jnp.float64),
                            maml.sample_tasks(random.PRNGKey(2), 1, shots=5, queries=5))

        def loss(p, first_order=False):
            return maml.maml_loss(p, task, 0.1, 2, first_order)

        grads = jax.grad(loss)(params)
        jit_grads = jax.jit(jax.grad(loss))(params)
        first_order_grads = jax.grad(lambda p: loss(p, first_order=True))(params)

        rng = np.random.default_rng(0)
        eps = 1e-6
        for _ in range(3):
            direction = jax.tree.map(lambda p: rng.standard_normal(p.shape), params)
            shifted = [jax.tree.map(lambda p, d, s=s: p + s * eps * d, params, direction)
                       for s in (1, -1)]
            numerical = (float(loss(shifted[0])) - float(loss(shifted[1]))) / (2 * eps)

            def along(g, direction=direction):
                return sum(float(jnp.vdot(gi, di)) for gi, di in
                           zip(jax.tree.leaves(g), jax.tree.leaves(direction)))

            assert abs(along(grads) - numerical) < 1e-6 * max(1.0, abs(numerical))
            assert abs(along(jit_grads) - numerical) < 1e-6 * max(1.0, abs(numerical))
            # The second-order terms matter here: dropping them is far off.
            assert abs(along(first_order_grads) - numerical) > 1e-3 * max(1.0, abs(numerical))
