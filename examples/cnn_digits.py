"""A small convolutional network on the 8x8 handwritten digits, trained with Adam.

Shows `lax.conv_general_dilated` in NHWC layout, 2x2 max pooling written as a reshape and
a max (no window primitive needed), He initialisation from `nn.initializers`, minibatches
drawn with `random.permutation`, and a jitted training step that returns the new
parameters, the optimiser state and the loss.

    python examples/cnn_digits.py
"""
import time

import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import lax, nn, optim, random

CONV_DIMS = ("NHWC", "HWIO", "NHWC")


def init_params(key, channels=(16, 32), hidden=64, classes=10):
    """Two 3x3 'SAME' convolutions, each followed by 2x2 pooling (8x8 -> 4x4 -> 2x2), then
    a hidden dense layer and the class logits."""
    he = nn.initializers.he_normal()
    k1, k2, k3, k4 = random.split(key, 4)
    c1, c2 = channels
    return {
        "conv1": {"w": he(k1, (3, 3, 1, c1)), "b": jnp.zeros(c1)},
        "conv2": {"w": he(k2, (3, 3, c1, c2)), "b": jnp.zeros(c2)},
        "dense": {"w": he(k3, (2 * 2 * c2, hidden)), "b": jnp.zeros(hidden)},
        "out": {"w": nn.initializers.glorot_normal()(k4, (hidden, classes)),
                "b": jnp.zeros(classes)},
    }


def conv(layer, x):
    y = lax.conv_general_dilated(x, layer["w"], window_strides=(1, 1), padding="SAME",
                                 dimension_numbers=CONV_DIMS)
    return y + layer["b"]


def max_pool_2x2(x):
    """2x2 max pooling with stride 2: split each spatial axis into (half, 2), take the max."""
    n, h, w, c = x.shape
    return jnp.max(x.reshape(n, h // 2, 2, w // 2, 2, c), axis=(2, 4))


def logits_fn(params, images):
    x = images.reshape(-1, 8, 8, 1)
    x = max_pool_2x2(nn.relu(conv(params["conv1"], x)))
    x = max_pool_2x2(nn.relu(conv(params["conv2"], x)))
    x = x.reshape(x.shape[0], -1)
    x = nn.relu(x @ params["dense"]["w"] + params["dense"]["b"])
    return x @ params["out"]["w"] + params["out"]["b"]


def loss_fn(params, images, labels):
    """Mean cross-entropy of the softmax over the ten classes."""
    log_probs = nn.log_softmax(logits_fn(params, images))
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))


def make_train_step(optimizer):
    @jax.jit
    def train_step(params, opt_state, images, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, images, labels)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss
    return train_step


@jax.jit
def accuracy(params, images, labels):
    return jnp.mean(jnp.argmax(logits_fn(params, images), axis=1) == labels)


def main(epochs=30, batch_size=64, learning_rate=3e-3, channels=(16, 32), hidden=64,
         train_size=None, seed=0):
    """Trains and returns the final train loss, the train and test accuracy, and the time."""
    start = time.perf_counter()
    train, test = jax.datasets.digits().train_test_split(test_fraction=0.2, seed=seed)
    if train_size is not None:
        train = type(train)(train.images[:train_size], train.labels[:train_size])
    key, init_key = random.split(random.key(seed))
    params = init_params(init_key, channels, hidden)
    optimizer = optim.adam(learning_rate)
    opt_state = optimizer.init(params)
    train_step = make_train_step(optimizer)

    n_batches = len(train.labels) // batch_size
    losses = []
    for _ in range(epochs):
        key, perm_key = random.split(key)
        order = np.asarray(random.permutation(perm_key, len(train.labels)))
        epoch_losses = []
        for b in range(n_batches):
            idx = order[b * batch_size:(b + 1) * batch_size]
            params, opt_state, loss = train_step(params, opt_state, train.images[idx],
                                                 train.labels[idx])
            epoch_losses.append(float(loss))
        losses.append(float(np.mean(epoch_losses)))
    return {
        "first_epoch_loss": losses[0],
        "final_epoch_loss": losses[-1],
        "train_accuracy": float(accuracy(params, train.images, train.labels)),
        "test_accuracy": float(accuracy(params, test.images, test.labels)),
        "seconds": time.perf_counter() - start,
    }


if __name__ == "__main__":
    result = main()
    print(f"CNN on digits: loss {result['first_epoch_loss']:.3f} -> "
          f"{result['final_epoch_loss']:.4f}, train accuracy {result['train_accuracy']:.2%}, "
          f"test accuracy {result['test_accuracy']:.2%} ({result['seconds']:.1f} s)")
