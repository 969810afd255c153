"""Data-parallel training of an MLP on the 8x8 handwritten digits with `pmap`.

Every step splits one global batch of 128 images over all devices; each device computes the
gradient of its slice, `lax.pmean` averages the gradients across devices, and every device
applies the same Adam update, so the parameters stay identical everywhere. The same program
runs on the CPU devices of one process, or on several processes started by MPI, and trains
the same model either way:

    python examples/data_parallel_digits.py               # one process, 2 devices
    mpiexec -n 2 python examples/data_parallel_digits.py  # two processes, 1 device each

(`mpiexec` comes with `pip install "didax[mpi]"`.) Only process 0 prints.
"""
import os
import time

# The processes MPI started (its launcher says so in the environment), and the devices of
# each: two devices in all unless DIDAX_NUM_CPU_DEVICES says otherwise. Set before didax
# creates its devices.
PROCESSES = int(os.environ.get("PMI_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE") or 1)
os.environ.setdefault("DIDAX_NUM_CPU_DEVICES", str(max(1, 2 // PROCESSES)))

import numpy as np  # noqa: E402

import didax as jax  # noqa: E402
import didax.numpy as jnp  # noqa: E402
from didax import lax, nn, optim, random  # noqa: E402


def init_params(key, sizes=(64, 128, 10)):
    keys = random.split(key, len(sizes) - 1)
    init = nn.initializers.he_normal()
    return [(init(k, (m, n)), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, images):
    x = images
    for w, b in params[:-1]:
        x = nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, images, labels):
    """Mean softmax cross-entropy."""
    log_probs = nn.log_softmax(predict(params, images))
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))


def make_train_step(optimizer):
    """One step on every device: the parameters and optimiser state go to every device
    whole (in_axes None) and come back from the first (out_axes None), identical on all."""

    def step(params, opt_state, images, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, images, labels)
        grads, loss = lax.pmean((grads, loss), axis_name="devices")
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss

    return jax.pmap(step, axis_name="devices", in_axes=(None, None, 0, 0), out_axes=None)


@jax.jit
def evaluate(params, images, labels):
    logits = predict(params, images)
    loss = -jnp.mean(jnp.take_along_axis(nn.log_softmax(logits), labels[:, None], axis=1))
    return loss, jnp.mean(jnp.argmax(logits, axis=1) == labels)


def main(steps=200, global_batch=128, learning_rate=3e-3, seed=0):
    """Trains; returns the final test loss and accuracy, the devices and the time."""
    start = time.perf_counter()
    devices, local = jax.device_count(), jax.local_device_count()
    if global_batch % devices:
        raise ValueError(f"the global batch {global_batch} does not split over {devices} "
                         "devices")
    per_device = global_batch // devices
    first = jax.process_index() * local * per_device  # this process's part of each batch
    train, test = jax.datasets.digits().train_test_split(test_fraction=0.2, seed=seed)
    key_init, key_data = random.split(random.key(seed))
    params = init_params(key_init)
    optimizer = optim.adam(learning_rate)
    opt_state = optimizer.init(params)
    train_step = make_train_step(optimizer)
    n = len(train.labels)
    batches_per_epoch = n // global_batch
    for i in range(steps):
        if i % batches_per_epoch == 0:
            order = np.asarray(random.permutation(
                random.fold_in(key_data, i // batches_per_epoch), n))
        batch = order[(i % batches_per_epoch) * global_batch:][:global_batch]
        mine = batch[first:first + local * per_device]
        images = train.images[mine].reshape(local, per_device, -1)
        labels = train.labels[mine].reshape(local, per_device)
        params, opt_state, loss = train_step(params, opt_state, images, labels)
    test_loss, test_accuracy = evaluate(params, test.images, test.labels)
    return {"devices": devices, "processes": jax.process_count(), "train_loss": float(loss),
            "test_loss": float(test_loss), "test_accuracy": float(test_accuracy),
            "seconds": time.perf_counter() - start}


if __name__ == "__main__":
    if PROCESSES > 1:
        jax.distributed.initialize()
    result = main()
    if jax.process_index() == 0:
        print(f"MLP on digits, data-parallel over {result['devices']} device(s) in "
              f"{result['processes']} process(es): {result['seconds']:.1f} s")
        print(f"final test loss {result['test_loss']:.4f}, "
              f"test accuracy {result['test_accuracy']:.4f}")
