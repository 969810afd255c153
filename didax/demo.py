"""The didax demo: derivatives and a jaxpr of a small function, then a jitted MLP that learns
handwritten digits with `didax.optim` and `didax.nn`, with a progress bar, its speed and its
compile time, and a loss-curve plot when matplotlib is installed.

Run with `python -m didax.demo`.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import datasets, nn, optim, random


def f(x):
    """A smooth scalar function: tanh(x) * sin(x) + x**3 / 6."""
    return jnp.tanh(x) * jnp.sin(x) + x ** 3 / 6.0


def show_derivatives(x=0.7):
    print(f"1. f(x) = tanh(x) * sin(x) + x**3 / 6 at x = {x}, and its derivatives\n")
    print(f"  f(x)     = {float(f(x)): .8f}")
    print(f"  f'(x)    = {float(jax.grad(f)(x)): .8f}   (grad)")
    fourth = jax.grad(jax.grad(jax.grad(jax.grad(f))))
    print(f"  f''''(x) = {float(fourth(x)): .8f}   (four nested grads)")
    print("\n  The jaxpr of f, as jit and the transformations see it:\n")
    print("  " + str(jax.make_jaxpr(f)(x)).replace("\n", "\n  "))


def init_mlp(key, sizes):
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


def progress_bar(step, steps, loss, width=30):
    done = width * step // steps
    return f"  [{'#' * done}{'.' * (width - done)}] step {step}/{steps} loss {loss:.4f}"


class Progress:
    """On a terminal, a bar redrawn in place; piped into a file or a CI log, one short line
    every tenth of the run (a redrawn bar would become one very long line there)."""

    def __init__(self, steps, stream=None):
        self.steps, self.stream = steps, stream or sys.stdout
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every = max(1, steps // (100 if self.live else 10))

    def update(self, step, loss):
        if step % self.every and step != self.steps:
            return
        if self.live:
            self.stream.write("\r" + progress_bar(step, self.steps, loss))
            if step == self.steps:
                self.stream.write("\n")
        else:
            self.stream.write(progress_bar(step, self.steps, loss) + "\n")
        self.stream.flush()


def save_loss_curve(losses, path):
    """Saves the loss curve as a PNG; returns the path, or None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(losses) + 1), losses, linewidth=1)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (minibatch)")
    ax.set_title("didax demo: MLP on digits")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return os.path.abspath(path)


def train_digits(steps=1000, batch_size=128, hidden=128, learning_rate=3e-3, seed=0,
                 plot_path="didax-demo-loss.png"):
    train, test = datasets.digits().train_test_split(test_fraction=0.2, seed=seed)
    print(f"\n2. An MLP (64-{hidden}-10, relu) learns handwritten digits: "
          f"{len(train.labels)} training and {len(test.labels)} test images\n")
    key_init, key_data = random.split(random.PRNGKey(seed))
    params = init_mlp(key_init, (64, hidden, 10))
    opt = optim.adam(optim.cosine_decay_schedule(learning_rate, steps))
    opt_state = opt.init(params)

    @jax.jit
    def step(params, opt_state, images, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, images, labels)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss

    n = len(train.labels)
    batches_per_epoch = max(1, n // batch_size)
    losses, times, order, tiers = [], [], None, []
    progress = Progress(steps)
    for i in range(steps):
        if i % batches_per_epoch == 0:
            # A shuffle per epoch, as NumPy indices: batches are then plain NumPy slices.
            order = np.asarray(random.permutation(random.fold_in(key_data, i // batches_per_epoch),
                                                  n))
        idx = order[(i % batches_per_epoch) * batch_size:][:batch_size]
        start = time.perf_counter()
        params, opt_state, loss = step(params, opt_state, train.images[idx], train.labels[idx])
        losses.append(float(loss))
        times.append(time.perf_counter() - start)
        tiers.append(step.tiers()[0])  # the tier that served this call
        if i == 0:
            loop_start = time.perf_counter()
        progress.update(i + 1, losses[-1])
    # The whole loop after the first step (which compiles): batching, shuffling, the step
    # itself and reading back the loss.
    loop_seconds = time.perf_counter() - loop_start if steps > 1 else None

    steady = statistics.median(times[1:]) if steps > 1 else times[0]
    # What the first call took beyond running a step: the fastest later step is the best
    # estimate of running one (a median, on a busy machine, can exceed the first call).
    compile_seconds = times[0] - (min(times[1:]) if steps > 1 else 0.0)
    accuracy = float(jnp.mean(jnp.argmax(predict(params, test.images), axis=1) == test.labels))
    print(f"\n  first call of the jitted step: {times[0] * 1e3:.1f} ms, of which compiling "
          f"{compile_seconds * 1e3:.1f} ms")
    print(f"  the jitted step alone: {steady * 1e3:.2f} ms ({1 / steady:.0f} steps/s; median "
          "of the calls after the first)")
    by_tier = {t: [s for s, u in zip(times[1:], tiers[1:]) if u == t] for t in set(tiers[1:])}
    numpy_tier = by_tier.get("numpy", []) + by_tier.get("building", [])
    if "native" in by_tier:
        swap = tiers.index("native")
        native_ms = statistics.median(by_tier["native"]) * 1e3
        numpy_ms = statistics.median(numpy_tier) * 1e3 if numpy_tier else float("nan")
        print(f"    on the NumPy tier (steps 2-{swap}): {numpy_ms:.2f} ms\n"
              f"    on the native tier (C, built in the background, from step {swap + 1}): "
              f"{native_ms:.2f} ms")
    else:
        print("    all on the NumPy tier (the native tier is off, has no C compiler, or was "
              "still building)")
    steps_per_second = None
    if loop_seconds:
        steps_per_second = (steps - 1) / loop_seconds
        print(f"  the whole training loop: {1e3 / steps_per_second:.2f} ms a step "
              f"({steps_per_second:.0f} steps/s; batching, shuffling and the step together)")
    print(f"  test accuracy: {accuracy:.2%}")
    saved = save_loss_curve(losses, plot_path) if plot_path else None
    if saved:
        print(f"  loss curve saved to {saved}")
    elif plot_path:
        print('  (a loss-curve plot comes with the plot extra: pip install "didax[plot]")')
    return {"params": params, "test_accuracy": accuracy, "final_loss": losses[-1],
            "losses": losses, "tiers": tiers,
            "compile_seconds": compile_seconds, "steps_per_second": steps_per_second,
            "plot": saved}


def main(steps=1000, batch_size=128, hidden=128, plot_path="didax-demo-loss.png") -> dict:
    print("didax demo\n")
    show_derivatives()
    return train_digits(steps=steps, batch_size=batch_size, hidden=hidden, plot_path=plot_path)


if __name__ == "__main__":
    main()
