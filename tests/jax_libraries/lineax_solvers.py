"""lineax: LU, QR, Cholesky and CG solves of one system, their gradients with respect to the
matrix and the right-hand side, jitted and vmapped; prints the numbers as JSON. Run under
real JAX, or under didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import lineax as lx  # noqa: E402
import numpy as np  # noqa: E402

A = jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
b = jnp.array([1.0, 2.0, 3.0])
B = jnp.stack([b, 2.0 * b + 1.0, -b])
PSD = (lx.positive_semidefinite_tag,)
SOLVERS = {"lu": (lx.LU(), ()), "qr": (lx.QR(), ()), "cholesky": (lx.Cholesky(), PSD),
           "cg": (lx.CG(rtol=1e-6, atol=1e-6), PSD)}
out = {}
for name, (solver, tags) in SOLVERS.items():
    def solve(A, b, solver=solver, tags=tags):
        return lx.linear_solve(lx.MatrixLinearOperator(A, tags), b, solver).value

    def loss(A, b, solve=solve):
        return jnp.sum(solve(A, b) ** 2)

    out[name] = np.asarray(solve(A, b)).tolist()
    out[name + "_jit"] = np.asarray(jax.jit(solve)(A, b)).tolist()
    out[name + "_vmap"] = np.asarray(jax.vmap(solve, in_axes=(None, 0))(A, B)).tolist()
    gA, gb = jax.grad(loss, argnums=(0, 1))(A, b)
    out[name + "_grad_A"] = np.asarray(gA).tolist()
    out[name + "_grad_b"] = np.asarray(gb).tolist()
# A least-squares solve of a tall system by QR, and a function operator solved by GMRES.
tall = jnp.concatenate([A, jnp.ones((1, 3))])
out["qr_lstsq"] = np.asarray(lx.linear_solve(lx.MatrixLinearOperator(tall),
                                             jnp.arange(4.0), lx.QR()).value).tolist()
op = lx.FunctionLinearOperator(lambda v: A @ v + 0.1 * v, jax.ShapeDtypeStruct((3,), b.dtype))
out["gmres"] = np.asarray(lx.linear_solve(op, b, lx.GMRES(rtol=1e-6, atol=1e-6)).value).tolist()
print(json.dumps(out))
