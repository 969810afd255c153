"""Connectionist temporal classification (CTC; Graves et al., 2006) with `lax.scan`.

CTC trains a model that emits one distribution per input frame to produce a label sequence
without knowing which frames belong to which label: the loss is minus the log of the total
probability of every frame-level path (alignment) that collapses to the labels once repeats
are merged and blanks removed. The sum over paths is the forward recursion over the label
sequence extended with blanks, in log space (`logsumexp`) so long sequences do not
underflow, as one `lax.scan` over frames; `grad` differentiates the recursion, which gives
the forward-backward algorithm's gradient for free.

The demo trains a tiny network on noisy frames in which each symbol lasts a random number
of frames, and decodes its output greedily (best path).

    python examples/ctc_loss.py
"""
import time

import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import lax, nn, optim, random

BLANK = 0
# Stands in for log(0) for unreachable states: exp(LOG_ZERO - x) is exactly 0 for any
# reasonable x, and unlike -inf it keeps logsumexp's derivative finite (no inf - inf).
LOG_ZERO = -1e5


def ctc_loss(logits, labels):
    """-log p(labels | logits) for one sequence: `logits` (frames, vocab) unnormalised, with
    class 0 the blank; `labels` (length,) integers in 1..vocab-1. Batch it with `vmap`."""
    log_probs = nn.log_softmax(logits, axis=-1)
    n_states = 2 * labels.shape[0] + 1
    # The extended sequence: blank, l1, blank, l2, ..., blank.
    extended = jnp.full(n_states, BLANK, dtype=labels.dtype).at[1::2].set(labels)
    # A path may jump over a blank between two different labels, never between equal ones.
    two_back = jnp.concatenate([jnp.full(2, BLANK, dtype=labels.dtype), extended[:-2]])
    can_skip = (extended != BLANK) & (extended != two_back)
    emit = jnp.take(log_probs, extended, axis=1)  # (frames, states)

    def step(alpha, emit_t):
        stay = alpha
        advance = jnp.concatenate([jnp.full(1, LOG_ZERO), alpha[:-1]])
        skip = jnp.where(can_skip, jnp.concatenate([jnp.full(2, LOG_ZERO), alpha[:-2]]),
                         LOG_ZERO)
        return nn.logsumexp(jnp.stack([stay, advance, skip]), axis=0) + emit_t, None

    # A path starts with a blank or with the first label.
    alpha = jnp.where(jnp.arange(n_states) < 2, emit[0], LOG_ZERO)
    alpha, _ = lax.scan(step, alpha, emit[1:])
    # and ends with the last label or the blank after it.
    return -nn.logsumexp(alpha[-2:])


def greedy_decode(logits):
    """Best-path decoding: the most likely class per frame, repeats merged, blanks removed."""
    best = np.asarray(logits).argmax(axis=-1)
    merged = [int(c) for i, c in enumerate(best) if i == 0 or c != best[i - 1]]
    return [c for c in merged if c != BLANK]


# --- the demo task --------------------------------------------------------------------------

def make_sequences(rng, n, frames, symbols, label_length, noise):
    """Frames of noisy one-hot features (index 0 is silence): each label symbol lasts 1-3
    frames, with 0-2 silent frames before it (at least one between two equal symbols), and
    silence pads the end. Returns features (n, frames, symbols + 1), labels (n, length)."""
    labels = rng.integers(1, symbols + 1, size=(n, label_length))
    features = np.zeros((n, frames, symbols + 1), np.float32)
    for i in range(n):
        classes = []
        for j, symbol in enumerate(labels[i]):
            gap = rng.integers(0, 3)
            if j > 0 and symbol == labels[i, j - 1]:
                gap = max(gap, 1)
            classes += [0] * gap + [symbol] * rng.integers(1, 4)
        classes += [0] * (frames - len(classes))
        features[i, np.arange(frames), classes] = 1.0
    features += noise * rng.standard_normal(features.shape).astype(np.float32)
    return features, labels.astype(np.int32)


def init_params(key, n_features, hidden, vocab, context=3):
    k1, k2 = random.split(key)
    init = nn.initializers.glorot_normal()
    return {"w1": init(k1, (context * n_features, hidden)), "b1": jnp.zeros(hidden),
            "w2": init(k2, (hidden, vocab)), "b2": jnp.zeros(vocab)}


def logits_fn(params, features):
    """A per-frame MLP that sees each frame with its two neighbours: (frames, vocab)."""
    padded = jnp.pad(features, ((1, 1), (0, 0)))
    window = jnp.concatenate([padded[:-2], padded[1:-1], padded[2:]], axis=-1)
    hidden = jnp.tanh(window @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def batch_loss(params, features, labels):
    logits = jax.vmap(logits_fn, in_axes=(None, 0))(params, features)
    return jnp.mean(jax.vmap(ctc_loss)(logits, labels))


def make_train_step(optimizer):
    @jax.jit
    def train_step(params, opt_state, features, labels):
        loss, grads = jax.value_and_grad(batch_loss)(params, features, labels)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss
    return train_step


def main(steps=600, batch_size=32, frames=16, symbols=3, label_length=3, noise=0.25,
         hidden=32, learning_rate=2e-2, n_test=200, seed=0):
    """Trains with CTC; returns the held-out loss before and after training, the fraction of
    held-out sequences decoded exactly, and the time."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    data = dict(frames=frames, symbols=symbols, label_length=label_length, noise=noise)
    test_features, test_labels = make_sequences(rng, n_test, **data)
    params = init_params(random.key(seed), symbols + 1, hidden, symbols + 1)
    optimizer = optim.adam(learning_rate)
    opt_state = optimizer.init(params)
    train_step = make_train_step(optimizer)
    test_loss = jax.jit(batch_loss)
    initial_loss = float(test_loss(params, test_features, test_labels))

    for _ in range(steps):
        features, labels = make_sequences(rng, batch_size, **data)
        params, opt_state, _ = train_step(params, opt_state, features, labels)
    test_logits = jax.jit(jax.vmap(logits_fn, in_axes=(None, 0)))(params, test_features)
    decoded = [greedy_decode(logits) for logits in np.asarray(test_logits)]
    return {
        "initial_test_loss": initial_loss,
        "final_test_loss": float(test_loss(params, test_features, test_labels)),
        "sequence_accuracy": float(np.mean([d == list(t) for d, t in zip(decoded, test_labels)])),
        "example": (list(map(int, test_labels[0])), decoded[0]),
        "seconds": time.perf_counter() - start,
    }


if __name__ == "__main__":
    result = main()
    target, decoded = result["example"]
    print(f"CTC: held-out loss {result['initial_test_loss']:.3f} -> "
          f"{result['final_test_loss']:.3f}; {result['sequence_accuracy']:.1%} of held-out "
          f"sequences decoded exactly (e.g. target {target}, decoded {decoded}) "
          f"in {result['seconds']:.1f} s")
