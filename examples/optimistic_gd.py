"""Optimistic gradient descent on a bilinear min-max game, where plain gradient fails.

The game min_x max_y x^T A y has its equilibrium at x = y = 0 (A is invertible). Simultaneous
gradient descent-ascent, x -= lr A y and y += lr A^T x, rotates around it and spirals out:
every step multiplies the distance to the equilibrium by about sqrt(1 + lr^2 s^2) for the
singular values s of A. Optimistic gradient descent (`optim.optimistic_gradient_descent`)
steps along 2 g_t - g_{t-1}; the correction from the previous gradient damps the rotation,
and it converges. Both run the same number of steps, as one jitted `lax.scan` each.

Run with `python examples/optimistic_gd.py`.
"""
import didax as jax
import didax.numpy as jnp
from didax import nn, optim, random


def make_game(key, dim, smallest=0.5, largest=1.0):
    """A = U diag(s) V^T, with random orthogonal U, V and s spread over [smallest, largest]."""
    k_u, k_v = random.split(key)
    u = nn.initializers.orthogonal()(k_u, (dim, dim))
    v = nn.initializers.orthogonal()(k_v, (dim, dim))
    return u * jnp.linspace(smallest, largest, dim) @ v.T


def payoff(x, y, a):
    return x @ a @ y


def descent_direction(params, a):
    """x descends the payoff and y ascends it: the 'gradient' each player follows down."""
    x, y = params
    grad_x, grad_y = jax.grad(payoff, argnums=(0, 1))(x, y, a)
    return grad_x, -grad_y


def play(opt, params, a, steps):
    """Runs `opt` on both players at once; returns the distance to equilibrium per step."""
    def step(carry, _):
        params, opt_state = carry
        updates, opt_state = opt.update(descent_direction(params, a), opt_state, params)
        params = optim.apply_updates(params, updates)
        return (params, opt_state), optim.global_norm(params)

    _, distances = jax.lax.scan(step, (params, opt.init(params)), None, length=steps)
    return distances


def main(steps=1000, dim=5, learning_rate=0.2, seed=0):
    k_game, k_x, k_y = random.split(random.PRNGKey(seed), 3)
    a = make_game(k_game, dim)
    params = (random.normal(k_x, (dim,)), random.normal(k_y, (dim,)))
    start = float(optim.global_norm(params))
    run = jax.jit(play, static_argnums=(0, 3))
    gda = run(optim.sgd(learning_rate), params, a, steps)
    ogd = run(optim.optimistic_gradient_descent(learning_rate), params, a, steps)
    return {"start_distance": start, "gda_distance": float(gda[-1]),
            "ogd_distance": float(ogd[-1]), "steps": steps,
            "gda_trajectory": gda, "ogd_trajectory": ogd}


if __name__ == "__main__":
    result = main()
    print(f"min_x max_y x^T A y, distance to the equilibrium after {result['steps']} steps "
          f"(from {result['start_distance']:.3f}):")
    print(f"  simultaneous gradient descent-ascent: {result['gda_distance']:.3e}")
    print(f"  optimistic gradient descent:          {result['ogd_distance']:.3e}")
