"""Sharpness-aware minimisation (SAM; Foret et al., 2021) against plain training.

SAM descends along the gradient taken at the worst nearby point, params + rho * g / ||g||,
so it seeks minima whose whole neighbourhood has a low loss. Here a small MLP learns the
digits twice from the same initialisation and the same minibatches: once with adam on the
plain gradient, once with adam on `optim.sam_gradient`. Besides the test accuracy, each
run reports the sharpness of where it ended up: how much the training loss rises when the
parameters move a distance `rho` in the worst (gradient) direction.

Run with `python examples/sam_training.py`.
"""
import time

import didax as jax
import didax.numpy as jnp
from didax import datasets, nn, optim, random


def init_mlp(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    init = nn.initializers.he_normal()
    return [(init(k, (m, n)), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, labels):
    logits = predict(params, x)
    return -jnp.mean(jnp.take_along_axis(nn.log_softmax(logits), labels[:, None], axis=1))


def accuracy(params, x, labels):
    return float(jnp.mean(jnp.argmax(predict(params, x), axis=1) == labels))


def sharpness(params, x, labels, radius):
    """The rise of the loss at distance `radius` along the normalised gradient: a first-order
    estimate of the largest rise within that ball (the quantity SAM minimises)."""
    g = jax.grad(loss_fn)(params, x, labels)
    scale = radius / optim.global_norm(g)
    worst = jax.tree.map(lambda p, gi: p + scale * gi, params, g)
    return float(loss_fn(worst, x, labels) - loss_fn(params, x, labels))


def train(params, train_set, steps, batch_size, learning_rate, rho, key):
    """Adam on minibatches; `rho=None` uses the plain gradient, otherwise SAM's."""
    opt = optim.adam(learning_rate)
    images, labels = jnp.asarray(train_set.images), jnp.asarray(train_set.labels)

    @jax.jit
    def step(params, opt_state, key):
        idx = random.randint(key, (batch_size,), 0, labels.shape[0])
        x, y = images[idx], labels[idx]
        if rho is None:
            grads = jax.grad(loss_fn)(params, x, y)
        else:
            grads = optim.sam_gradient(loss_fn, params, rho, x, y)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state

    opt_state = opt.init(params)
    for step_key in random.split(key, steps):
        params, opt_state = step(params, opt_state, step_key)
    return params


def main(steps=2000, batch_size=64, hidden=64, learning_rate=1e-3, rho=0.1,
         sharpness_radius=0.5, seed=0):
    train_set, test_set = datasets.digits().train_test_split(test_fraction=0.2, seed=seed)
    key_init, key_batches = random.split(random.PRNGKey(seed))
    params0 = init_mlp(key_init, (64, hidden, hidden, 10))
    result = {}
    for name, method_rho in (("adam", None), ("sam", rho)):
        start = time.perf_counter()
        params = train(params0, train_set, steps, batch_size, learning_rate, method_rho,
                       key_batches)
        result[name] = {
            "train_loss": float(loss_fn(params, train_set.images, train_set.labels)),
            "test_accuracy": accuracy(params, test_set.images, test_set.labels),
            "sharpness": sharpness(params, train_set.images, train_set.labels,
                                   sharpness_radius),
            "seconds": time.perf_counter() - start,
        }
    return result


if __name__ == "__main__":
    result = main()
    print("MLP on digits, adam on the plain gradient vs. on SAM's (same init, same batches):")
    for name, r in result.items():
        print(f"  {name:4s}  train loss {r['train_loss']:.4f}  test accuracy "
              f"{r['test_accuracy']:.2%}  sharpness {r['sharpness']:.4f}  ({r['seconds']:.1f} s)")
