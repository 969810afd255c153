"""diffrax: a damped oscillator solved with Tsit5 (explicit) and Kvaerno5 (implicit) under
an adaptive step size controller, and the gradient of a loss through diffeqsolve with two
adjoints; prints solutions, step counts and gradients as JSON. Run under real JAX, or under
didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import diffrax  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def oscillator(t, y, k):
    return jnp.array([y[1], -k * y[0] - 0.1 * y[1]])


y0 = jnp.array([1.0, 0.0])
term = diffrax.ODETerm(oscillator)
out = {}
for name, solver in {"tsit5": diffrax.Tsit5(), "kvaerno5": diffrax.Kvaerno5()}.items():
    sol = diffrax.diffeqsolve(term, solver, t0=0.0, t1=3.0, dt0=0.1, y0=y0, args=2.0,
                              saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 3.0, 7)),
                              stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5))
    out[name] = np.asarray(sol.ys).tolist()
    out[name + "_steps"] = int(sol.stats["num_steps"])
for name, adjoint in {"recursive": diffrax.RecursiveCheckpointAdjoint(),
                      "backsolve": diffrax.BacksolveAdjoint()}.items():
    def loss(k, adjoint=adjoint):
        sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=3.0, dt0=0.1, y0=y0,
                                  args=k, adjoint=adjoint,
                                  stepsize_controller=diffrax.PIDController(rtol=1e-6,
                                                                            atol=1e-6))
        return jnp.sum(sol.ys[-1] ** 2)
    out["grad_" + name] = float(jax.grad(loss)(2.0))
print(json.dumps(out))
