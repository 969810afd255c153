"""An equinox MLP (initialised from a PRNG key) trained with filter_jit,
filter_value_and_grad and filter_vmap; prints losses and outputs as JSON. Run under real
JAX, or under didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

model = eqx.nn.MLP(in_size=3, out_size=2, width_size=8, depth=2, activation=jax.nn.tanh,
                   key=jax.random.PRNGKey(0))
rng = np.random.RandomState(1)
X = jnp.asarray(rng.randn(16, 3).astype(np.float32))
Y = jnp.asarray(rng.randn(16, 2).astype(np.float32))
init_out = np.asarray(jax.vmap(model)(X)).tolist()


@eqx.filter_value_and_grad
def loss(model, x, y):
    pred = eqx.filter_vmap(model)(x)
    return jnp.mean((pred - y) ** 2)


@eqx.filter_jit
def step(model, x, y):
    value, grads = loss(model, x, y)
    model = eqx.apply_updates(model, jax.tree_util.tree_map(lambda g: -0.1 * g, grads))
    return model, value


losses = []
for _ in range(30):
    model, value = step(model, X, Y)
    losses.append(float(value))
params = [np.asarray(a).tolist() for a in jax.tree_util.tree_leaves(eqx.filter(model,
                                                                           eqx.is_array))]

# layers beyond the MLP, and runtime errors (equinox's own primitive and its rules)
k1, k2, k3 = jax.random.split(jax.random.PRNGKey(2), 3)
conv = eqx.nn.Conv2d(1, 2, 3, key=k1)
cell = eqx.nn.GRUCell(3, 4, key=k2)


@eqx.filter_jit
def layers(x_img, xs):
    h, _ = jax.lax.scan(lambda h, x: (cell(x, h), None), jnp.zeros(4), xs)
    return (conv(x_img), eqx.nn.LayerNorm(4)(h),
            eqx.nn.Dropout(0.5)(jnp.ones(6), key=k3))


extras = [np.asarray(a).tolist() for a in layers(
    jnp.asarray(rng.randn(1, 5, 5).astype(np.float32)),
    jnp.asarray(rng.randn(5, 3).astype(np.float32)))]


@eqx.filter_jit
def checked_log(x):
    return jnp.log(eqx.error_if(x, x <= 0, "x must be positive"))


raised = []
for value in (2.0, -1.0):
    try:
        checked_log(jnp.float32(value))
        raised.append(False)
    except Exception as e:  # equinox's runtime error type
        raised.append("x must be positive" in str(e))
print(json.dumps({"init_out": init_out, "losses": losses, "params": params,
                  "n_params": len(params), "extras": extras, "raised": raised}))
