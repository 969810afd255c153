"""flax linen: a small CNN with BatchNorm and Dropout trained a few steps with optax (the
running statistics updated as a mutable collection), and an LSTM run by `nn.RNN` (a lifted
scan) with its gradient; prints losses, outputs and statistics as JSON. Run under real JAX,
or under didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        # (no bias before BatchNorm: its gradient is zero, and Adam would turn rounding noise
        # in it into steps, so two frameworks' biases, harmless to the loss, would differ)
        x = nn.Conv(features=4, kernel_size=(3, 3), use_bias=False)(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dropout(rate=0.25, deterministic=not train)(x)
        return nn.Dense(features=3)(x)


class LSTM(nn.Module):
    @nn.compact
    def __call__(self, xs):
        return nn.RNN(nn.LSTMCell(features=5))(xs)


rng = np.random.RandomState(0)
X = jnp.asarray(rng.randn(8, 8, 8, 1).astype(np.float32))
Y = jnp.asarray(rng.randint(0, 3, 8))
model = CNN()
variables = model.init({"params": jax.random.key(0), "dropout": jax.random.key(1)}, X,
                       train=False)
params, batch_stats = variables["params"], variables["batch_stats"]
tx = optax.adam(1e-2)
opt_state = tx.init(params)


@jax.jit
def step(params, batch_stats, opt_state, key):
    def loss_fn(p):
        logits, updates = model.apply({"params": p, "batch_stats": batch_stats}, X,
                                      train=True, rngs={"dropout": key},
                                      mutable=["batch_stats"])
        return optax.softmax_cross_entropy_with_integer_labels(logits, Y).mean(), updates
    (loss, updates), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates_, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates_), updates["batch_stats"], opt_state, loss


losses = []
for i in range(5):
    params, batch_stats, opt_state, loss = step(params, batch_stats, opt_state,
                                                jax.random.fold_in(jax.random.key(2), i))
    losses.append(float(loss))
out = {
    "losses": losses,
    "eval": np.asarray(model.apply({"params": params, "batch_stats": batch_stats}, X,
                                   train=False)).tolist(),
    "running_mean": np.asarray(batch_stats["BatchNorm_0"]["mean"]).tolist(),
    "running_var": np.asarray(batch_stats["BatchNorm_0"]["var"]).tolist(),
    "param_shapes": sorted(f"{jax.tree_util.keystr(path)}{v.shape}"
                           for path, v in jax.tree_util.tree_leaves_with_path(params)),
}
xs = jnp.asarray(rng.randn(2, 6, 3).astype(np.float32))
lstm = LSTM()
lstm_params = lstm.init(jax.random.key(3), xs)
out["lstm"] = np.asarray(lstm.apply(lstm_params, xs)).tolist()
grads = jax.grad(lambda p: jnp.sum(lstm.apply(p, xs) ** 2))(lstm_params)
out["lstm_grads"] = [np.asarray(g).tolist() for g in jax.tree_util.tree_leaves(grads)]
print(json.dumps(out))
