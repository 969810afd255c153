"""An LSTM written with `lax.scan` that learns to predict the next value of noisy sine waves.

Each sequence is a sine wave of random frequency, phase and amplitude seen through Gaussian
noise; at every step the model reads the noisy value and predicts the next clean one. The
recurrence is one `lax.scan` over time, so `grad` differentiates it as a loop (a reverse
scan) instead of an unrolled graph, and the training step is `jit` of `value_and_grad`.
Fresh batches come from `didax.random` at every step. The model ends far below both its
starting loss and the loss of repeating the last noisy value.

    python examples/lstm_scan.py
"""
import time

import didax as jax
import didax.numpy as jnp
from didax import lax, nn, optim, random

NOISE = 0.1


def sample_batch(key, batch_size, length):
    """(inputs, targets), each (length, batch): noisy values and the next clean values."""
    k_freq, k_phase, k_amp, k_noise = random.split(key, 4)
    freq = random.uniform(k_freq, (batch_size,), minval=0.1, maxval=0.6)
    phase = random.uniform(k_phase, (batch_size,), maxval=2 * jnp.pi)
    amp = random.uniform(k_amp, (batch_size,), minval=0.5, maxval=1.5)
    t = jnp.arange(length + 1, dtype=jnp.float32)[:, None]
    clean = amp * jnp.sin(freq * t + phase)
    noisy = clean[:-1] + NOISE * random.normal(k_noise, (length, batch_size))
    return noisy, clean[1:]


def init_params(key, hidden):
    """Input and recurrent weights for the four gates (input, forget, cell, output) side by
    side, and a linear read-out. The forget gate's bias starts at 1, a usual LSTM default."""
    k_x, k_h, k_out = random.split(key, 3)
    bias = jnp.zeros(4 * hidden).at[hidden:2 * hidden].set(1.0)
    return {
        "w_x": nn.initializers.glorot_uniform()(k_x, (1, 4 * hidden)),
        "w_h": nn.initializers.orthogonal()(k_h, (hidden, 4 * hidden)),
        "b": bias,
        "w_out": nn.initializers.glorot_uniform()(k_out, (hidden, 1)),
        "b_out": jnp.zeros(1),
    }


def lstm_cell(params, carry, x):
    h, c = carry
    gates = x[:, None] @ params["w_x"] + h @ params["w_h"] + params["b"]
    i, f, g, o = jnp.split(gates, 4, axis=-1)
    c = nn.sigmoid(f) * c + nn.sigmoid(i) * jnp.tanh(g)
    h = nn.sigmoid(o) * jnp.tanh(c)
    return (h, c), h


def predict(params, inputs):
    """The prediction after every step, (length, batch), from one scan over time."""
    hidden = params["w_h"].shape[0]
    zeros = jnp.zeros((inputs.shape[1], hidden))
    _, hs = lax.scan(lambda carry, x: lstm_cell(params, carry, x), (zeros, zeros), inputs)
    return (hs @ params["w_out"] + params["b_out"])[..., 0]


def loss_fn(params, inputs, targets):
    return jnp.mean((predict(params, inputs) - targets) ** 2)


def make_train_step(optimizer, batch_size, length):
    @jax.jit
    def train_step(params, opt_state, key):
        inputs, targets = sample_batch(key, batch_size, length)
        loss, grads = jax.value_and_grad(loss_fn)(params, inputs, targets)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss
    return train_step


def main(steps=400, hidden=32, batch_size=32, length=40, learning_rate=1e-2, seed=0):
    """Trains; returns the loss on a held-out batch before and after training, the loss of
    repeating the last noisy value on it, the mean training loss of the last 20 steps, and
    the time."""
    start = time.perf_counter()
    key = random.key(seed)
    key, init_key, eval_key = random.split(key, 3)
    params = init_params(init_key, hidden)
    schedule = optim.cosine_decay_schedule(learning_rate, steps, alpha=0.05)
    optimizer = optim.chain(optim.clip_by_global_norm(1.0), optim.adam(schedule))
    opt_state = optimizer.init(params)
    train_step = make_train_step(optimizer, batch_size, length)
    eval_inputs, eval_targets = sample_batch(eval_key, 256, length)
    eval_loss = jax.jit(loss_fn)
    initial_eval_loss = float(eval_loss(params, eval_inputs, eval_targets))

    losses = []
    for step_key in random.split(key, steps):
        params, opt_state, loss = train_step(params, opt_state, step_key)
        losses.append(float(loss))
    window = min(20, steps)
    return {
        "initial_eval_loss": initial_eval_loss,
        "final_eval_loss": float(eval_loss(params, eval_inputs, eval_targets)),
        "repeat_last_value_loss": float(jnp.mean((eval_inputs - eval_targets) ** 2)),
        "final_train_loss": sum(losses[-window:]) / window,
        "seconds": time.perf_counter() - start,
    }


if __name__ == "__main__":
    result = main()
    before, after = result["initial_eval_loss"], result["final_eval_loss"]
    print(f"LSTM on noisy sine waves: held-out loss {before:.4f} -> {after:.4f} "
          f"({before / after:.0f}x lower; repeating the last value: "
          f"{result['repeat_last_value_loss']:.4f}) in {result['seconds']:.1f} s")
