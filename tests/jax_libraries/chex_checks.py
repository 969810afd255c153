"""chex assertions and a chex.dataclass through jit, vmap and grad; prints JSON results.
Run under real JAX, or under didax with --didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import chex  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


@chex.dataclass
class Params:
    w: chex.Array
    b: chex.Array


def predict(p: Params, x):
    return jnp.tanh(x @ p.w + p.b)


out = {}
x = jnp.asarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
p = Params(w=jnp.ones((3, 2)) * 0.3, b=jnp.array([0.1, -0.2]))


@jax.jit
def loss(p, x):
    chex.assert_shape(x, (None, 3))      # static checks also hold under tracing
    chex.assert_rank(p.w, 2)
    chex.assert_type(x, float)
    y = predict(p, x)
    chex.assert_equal_shape_prefix([y, x], 1)
    return jnp.sum(y ** 2)


g = jax.grad(loss)(p, x)
out["grad_type"] = type(g).__name__
out["grad"] = {"w": np.asarray(g.w).tolist(), "b": np.asarray(g.b).tolist()}
out["per_example"] = np.asarray(jax.vmap(predict, in_axes=(None, 0))(p, x)).tolist()
batched = jax.vmap(lambda s: Params(w=p.w * s, b=p.b + s))(jnp.arange(3.0))
out["batched_w_shape"] = list(batched.w.shape)
out["replace"] = np.asarray(p.replace(b=jnp.zeros(2)).b).tolist()
out["leaves"] = len(jax.tree_util.tree_leaves(p))

chex.assert_trees_all_close(g, jax.tree_util.tree_map(lambda a: a * 1.0, g))
chex.assert_tree_all_finite(g)
chex.assert_trees_all_equal_shapes(g, p)
chex.assert_scalar_positive(1.5)

failures = []
for name, call in [
    ("shape", lambda: chex.assert_shape(x, (4, 2))),
    ("rank", lambda: chex.assert_rank(x, 3)),
    ("close", lambda: chex.assert_trees_all_close(p, g)),
    ("finite", lambda: chex.assert_tree_all_finite({"a": jnp.array([1.0, jnp.nan])})),
    ("type", lambda: chex.assert_type(x, int)),
    ("traced_shape", lambda: jax.jit(lambda v: chex.assert_shape(v, (2,)) or v)(x)),
]:
    try:
        call()
        failures.append((name, None))
    except AssertionError as e:
        failures.append((name, type(e).__name__))
out["failures"] = failures
print(json.dumps(out))
