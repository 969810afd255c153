"""Per-example gradients with `vmap(grad(...))`, used for differentially private SGD.

DP-SGD (Abadi et al., 2016) bounds each example's influence on an update: it clips every
example's gradient to a maximum norm, averages the clipped gradients, and adds Gaussian
noise scaled to that norm. The per-example gradients are one batched pass: `grad` of the
loss on a single example, mapped over the batch with `vmap`. The model is a small MLP on
the handwritten digits, trained by a jitted step, with the noise from `didax.random`.

    python examples/per_example_grads.py
"""
import time

import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import nn, optim, random


def init_params(key, sizes=(64, 32, 10)):
    keys = random.split(key, len(sizes) - 1)
    init = nn.initializers.glorot_normal()
    return [{"w": init(k, (m, n)), "b": jnp.zeros(n)}
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def logits_fn(params, images):
    x = images
    for layer in params[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def example_loss(params, image, label):
    """Cross-entropy of one example (unbatched `image` (64,) and scalar `label`)."""
    return -nn.log_softmax(logits_fn(params, image))[label]


def per_example_grads(params, images, labels):
    """The gradient of each example's loss: a pytree like `params` with a leading batch axis."""
    return jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, images, labels)


def clip_per_example(grads, max_norm):
    """Scales each example's gradient (over all leaves) to norm at most `max_norm`."""
    leaves = jax.tree_util.tree_leaves(grads)
    sq_norms = sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in leaves)
    scale = jnp.minimum(1.0, max_norm / (jnp.sqrt(sq_norms) + 1e-12))
    return jax.tree_util.tree_map(
        lambda g: g * scale.reshape((-1,) + (1,) * (g.ndim - 1)), grads)


def private_gradient(params, images, labels, key, max_norm, noise_multiplier):
    """DP-SGD's gradient: the mean of the clipped per-example gradients plus Gaussian noise
    of standard deviation noise_multiplier * max_norm / batch size."""
    clipped = clip_per_example(per_example_grads(params, images, labels), max_norm)
    leaves, treedef = jax.tree_util.tree_flatten(clipped)
    keys = random.split(key, len(leaves))
    batch = images.shape[0]
    noisy = [g.sum(axis=0) + noise_multiplier * max_norm * random.normal(k, g.shape[1:])
             for g, k in zip(leaves, keys)]
    return jax.tree_util.tree_unflatten(treedef, [g / batch for g in noisy])


def make_train_step(optimizer, max_norm, noise_multiplier):
    @jax.jit
    def train_step(params, opt_state, images, labels, key):
        grads = private_gradient(params, images, labels, key, max_norm, noise_multiplier)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state
    return train_step


@jax.jit
def accuracy(params, images, labels):
    return jnp.mean(jnp.argmax(logits_fn(params, images), axis=1) == labels)


def main(epochs=20, batch_size=256, learning_rate=1.0, max_norm=1.0, noise_multiplier=1.0,
         hidden=32, seed=0):
    """Trains with DP-SGD; returns the test accuracy before and after, the mean per-example
    gradient norm (before clipping) of the trained model on a batch, and the time."""
    start = time.perf_counter()
    train, test = jax.datasets.digits().train_test_split(test_fraction=0.2, seed=seed)
    key, init_key = random.split(random.key(seed))
    params = init_params(init_key, (64, hidden, 10))
    optimizer = optim.sgd(learning_rate, momentum=0.9)
    opt_state = optimizer.init(params)
    train_step = make_train_step(optimizer, max_norm, noise_multiplier)
    initial_accuracy = float(accuracy(params, test.images, test.labels))

    n_batches = len(train.labels) // batch_size
    for _ in range(epochs):
        key, perm_key = random.split(key)
        order = np.asarray(random.permutation(perm_key, len(train.labels)))
        for b in range(n_batches):
            idx = order[b * batch_size:(b + 1) * batch_size]
            key, noise_key = random.split(key)
            params, opt_state = train_step(params, opt_state, train.images[idx],
                                           train.labels[idx], noise_key)
    final_grads = per_example_grads(params, train.images[:batch_size],
                                    train.labels[:batch_size])
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1)
                         for g in jax.tree_util.tree_leaves(final_grads)))
    return {
        "initial_test_accuracy": initial_accuracy,
        "test_accuracy": float(accuracy(params, test.images, test.labels)),
        "mean_example_grad_norm": float(jnp.mean(norms)),
        "max_norm": max_norm,
        "noise_multiplier": noise_multiplier,
        "seconds": time.perf_counter() - start,
    }


if __name__ == "__main__":
    result = main()
    print(f"DP-SGD on digits (clip {result['max_norm']}, noise multiplier "
          f"{result['noise_multiplier']}): test accuracy "
          f"{result['initial_test_accuracy']:.2%} -> {result['test_accuracy']:.2%}; "
          f"mean per-example gradient norm {result['mean_example_grad_norm']:.3f} "
          f"({result['seconds']:.1f} s)")
