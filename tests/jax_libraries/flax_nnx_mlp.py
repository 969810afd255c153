"""flax nnx: an MLP with BatchNorm and Dropout (its keys from nnx.Rngs) trained by
nnx.Optimizer with optax under nnx.jit and nnx.value_and_grad, then evaluated; prints the
losses, outputs and running statistics as JSON. Run under real JAX, or under didax with
--didax."""
import json
import sys

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402


class MLP(nnx.Module):
    def __init__(self, din, dhidden, dout, *, rngs):
        # (no bias before BatchNorm: see flax_linen_cnn.py)
        self.l1 = nnx.Linear(din, dhidden, use_bias=False, rngs=rngs)
        self.bn = nnx.BatchNorm(dhidden, rngs=rngs)
        self.dropout = nnx.Dropout(0.1, rngs=rngs)
        self.l2 = nnx.Linear(dhidden, dout, rngs=rngs)

    def __call__(self, x):
        return self.l2(nnx.relu(self.dropout(self.bn(self.l1(x)))))


model = MLP(3, 16, 2, rngs=nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
rng = np.random.RandomState(0)
X = jnp.asarray(rng.randn(32, 3).astype(np.float32))
Y = jnp.asarray(rng.randn(32, 2).astype(np.float32))


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


losses = [float(train_step(model, optimizer, X, Y)) for _ in range(10)]
model.eval()
out = {"losses": losses, "eval": np.asarray(model(X[:4])).tolist(),
       "bn_mean": np.asarray(model.bn.mean[...]).tolist(),
       "bn_var": np.asarray(model.bn.var[...]).tolist()}
print(json.dumps(out))
