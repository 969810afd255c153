"""Trains a small MLP with optax optimizers for 50 steps and prints the losses and final
parameters as JSON; run under real JAX, or under didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

rng = np.random.RandomState(0)
X = rng.randn(32, 4).astype(np.float32)
Y = np.sin(X @ rng.randn(4, 1)).astype(np.float32)
W1 = (rng.randn(4, 16) * 0.5).astype(np.float32)
W2 = (rng.randn(16, 1) * 0.5).astype(np.float32)


def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


OPTIMIZERS = {
    "sgd": lambda: optax.sgd(0.1, momentum=0.9),
    "adam": lambda: optax.adam(1e-2),
    "adamw": lambda: optax.adamw(1e-2, weight_decay=1e-2),
    "rmsprop": lambda: optax.rmsprop(1e-3),
    "adam_cosine_clipped": lambda: optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adam(optax.warmup_cosine_decay_schedule(0.0, 1e-2, 10, 50))),
}


def make_step(opt):
    """A jitted training step of `opt`."""
    @jax.jit
    def step(params, state):
        value, grads = jax.value_and_grad(loss)(params, X, Y)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value
    return step


results = {}
for name, make in OPTIMIZERS.items():
    opt = make()
    params = {"w1": jnp.asarray(W1), "b1": jnp.zeros(16), "w2": jnp.asarray(W2),
              "b2": jnp.zeros(1)}
    state = opt.init(params)
    step = make_step(opt)
    losses = []
    for _ in range(50):
        params, state, value = step(params, state)
        losses.append(float(value))
    results[name] = {"losses": losses,
                     "params": {k: np.asarray(v).tolist() for k, v in params.items()}}


# optimizers whose state or update goes beyond arithmetic: a line search in a while loop
# (lbfgs), hyperparameters in the state, accumulation over steps, noise from a key
def quadratic(p):
    return jnp.sum((p["w"] - 1.5) ** 2 * jnp.arange(1.0, 4.0)) + (p["b"] + 1) ** 2


EXTRAS = {
    "lbfgs": optax.lbfgs,
    "inject_hyperparams": lambda: optax.inject_hyperparams(optax.adam)(learning_rate=0.1),
    "multi_steps": lambda: optax.MultiSteps(optax.sgd(0.1), 2),
    "noisy_sgd": lambda: optax.noisy_sgd(0.01, key=0),
}


def make_extra_step(name, opt):
    """A jitted step of `opt` (the EXTRAS optimizer `name`) on `quadratic`."""
    @jax.jit
    def extra_step(p, state):
        value, grads = jax.value_and_grad(quadratic)(p)
        if name == "lbfgs":
            updates, state = opt.update(grads, state, p, value=value, grad=grads,
                                        value_fn=quadratic)
        else:
            updates, state = opt.update(grads, state, p)
        p = optax.apply_updates(p, updates)
        return p, state, quadratic(p)
    return extra_step


for name, make in EXTRAS.items():
    opt = make()
    p = {"w": jnp.array([1.0, -2.0, 0.5]), "b": jnp.array(0.3)}
    state = opt.init(p)
    extra_step = make_extra_step(name, opt)
    trace = []
    for _ in range(5):
        p, state, value = extra_step(p, state)
        trace.append(float(value))
    results["extra_" + name] = {"losses": trace,
                                "params": {k: np.asarray(v).tolist() for k, v in p.items()}}
print(json.dumps(results))
