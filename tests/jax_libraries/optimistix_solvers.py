"""optimistix: Rosenbrock minimised by BFGS, a least-squares problem by Levenberg–Marquardt
and Gauss–Newton, a root by Newton (and its derivative by the implicit function theorem),
a fixed point; prints solutions and step counts as JSON. Run under real JAX, or under didax
with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optimistix as optx  # noqa: E402


def rosenbrock(y, args):
    return (1 - y[0]) ** 2 + 100 * (y[1] - y[0] ** 2) ** 2


def residuals(y, args):
    return jnp.array([10 * (y[1] - y[0] ** 2), 1 - y[0]])


def roots(y, a):
    return jnp.array([y[0] ** 3 + y[1] - a, y[1] ** 3 - y[0] + 1.0])


y0 = jnp.array([-1.2, 1.0])
out = {}
for name, run in {
    "bfgs": lambda: optx.minimise(rosenbrock, optx.BFGS(rtol=1e-6, atol=1e-6), y0,
                                  max_steps=500),
    "lm": lambda: optx.least_squares(residuals, optx.LevenbergMarquardt(rtol=1e-6, atol=1e-6),
                                     y0, max_steps=500),
    "gauss_newton": lambda: optx.least_squares(residuals, optx.GaussNewton(rtol=1e-6,
                                                                           atol=1e-6),
                                               y0, max_steps=500),
    "newton": lambda: optx.root_find(roots, optx.Newton(rtol=1e-6, atol=1e-6),
                                     jnp.array([0.5, 0.5]), args=1.0, max_steps=100),
    "fixed_point": lambda: optx.fixed_point(lambda y, a: jnp.cos(y),
                                            optx.FixedPointIteration(rtol=1e-6, atol=1e-6),
                                            jnp.array(0.5), max_steps=1000),
}.items():
    sol = run()
    out[name] = np.asarray(sol.value).tolist()
    out[name + "_steps"] = int(sol.stats["num_steps"])


def root_sum(a):
    return optx.root_find(roots, optx.Newton(rtol=1e-6, atol=1e-6), jnp.array([0.5, 0.5]),
                          args=a, max_steps=100).value.sum()


out["newton_grad"] = float(jax.grad(root_sum)(1.5))
print(json.dumps(out))
