"""Optimistic GD example: descent-ascent spirals out, optimistic GD converges, and both
trajectories are the recursions they claim to be (replayed in NumPy, float64)."""
import numpy as np


def replay(a, x, y, learning_rate, steps, optimistic):
    """Distances to the equilibrium of z <- z - lr F(z) or z <- z - lr (2 F(z) - F(z_prev))."""
    a, x, y = (np.asarray(v, np.float64) for v in (a, x, y))
    previous, distances = None, []
    for _ in range(steps):
        field = (a @ y, -(a.T @ x))
        if optimistic:
            previous = field if previous is None else previous
            step = tuple(2 * f - p for f, p in zip(field, previous))
            previous = field
        else:
            step = field
        x, y = x - learning_rate * step[0], y - learning_rate * step[1]
        distances.append(np.sqrt(x @ x + y @ y))
    return np.array(distances)


def test_descent_ascent_diverges_and_optimistic_gd_converges(load_example):
    optimistic_gd = load_example("optimistic_gd")
    result = optimistic_gd.main(steps=300, learning_rate=0.2)
    assert result["gda_distance"] > 10 * result["start_distance"], result
    assert result["ogd_distance"] < 0.1 * result["start_distance"], result


def test_trajectories_match_the_recursions(load_example):
    from didax import random
    optimistic_gd = load_example("optimistic_gd")
    steps, lr = 200, 0.2
    result = optimistic_gd.main(steps=steps, learning_rate=lr, seed=3)
    k_game, k_x, k_y = random.split(random.PRNGKey(3), 3)
    a = optimistic_gd.make_game(k_game, 5)
    x, y = random.normal(k_x, (5,)), random.normal(k_y, (5,))
    singular_values = np.linalg.svd(np.asarray(a), compute_uv=False)
    np.testing.assert_allclose(np.sort(singular_values), np.linspace(0.5, 1.0, 5), rtol=1e-5)
    for name, optimistic in (("gda", False), ("ogd", True)):
        np.testing.assert_allclose(np.asarray(result[f"{name}_trajectory"]),
                                   replay(a, x, y, lr, steps, optimistic), rtol=1e-4)
