"""The functions the two-process test maps (shared by _src/parallel/distributed_program.py,
which runs them under MPI, and test_distributed.py, which computes them in one process with
vmap)."""
import numpy as np

import didax.numpy as jnp
from didax import lax

X = np.linspace(-1.5, 2., 4 * 8, dtype=np.float32).reshape(4, 8)
W = np.linspace(0.5, 1.5, 8, dtype=np.float32)

CASES = {
    "psum": lambda v: lax.psum(v, "i"),
    "pmean": lambda v: lax.pmean(v, "i"),
    "pmax": lambda v: lax.pmax(v, "i"),
    "pmin": lambda v: lax.pmin(v, "i"),
    "psum_bool": lambda v: lax.psum(v > 0, "i"),
    "axis_index": lambda v: v * lax.axis_index("i"),
    "all_gather": lambda v: lax.all_gather(v, "i"),
    "ppermute": lambda v: lax.ppermute(v, "i", [(0, 3), (3, 1), (1, 2), (2, 0)]),
    "ppermute_partial": lambda v: lax.ppermute(v, "i", [(0, 2), (3, 0)]),
    "psum_scatter": lambda v: lax.psum_scatter(v.reshape(4, 2), "i"),
    "all_to_all": lambda v: lax.all_to_all(v.reshape(4, 2), "i", 0, 1),
    "big_psum": lambda v: lax.psum(jnp.outer(v, jnp.ones(4096)), "i"),  # (by Allreduce)
}


def loss(x, w):
    h = jnp.tanh(x * w)
    return (lax.pmean(jnp.sum(h ** 2), "i")
            + jnp.sum(lax.all_gather(h, "i")[1] * h)
            + jnp.sum(lax.ppermute(h, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]) * x))


# A 2x2 mesh ('data' over the processes, 'model' within each): a Megatron layer (x by rows
# over 'data', w1 by columns and w2 by rows over 'model', the partial products summed over
# 'model') and its loss summed over every device.
X2 = np.linspace(-1., 1., 8 * 6, dtype=np.float32).reshape(8, 6)
W1 = np.linspace(-0.8, 0.9, 6 * 4, dtype=np.float32).reshape(6, 4)
W2 = np.linspace(0.7, -0.6, 4 * 3, dtype=np.float32).reshape(4, 3)
MESH_SPECS = ("data", None), (None, "model"), ("model", None)


def megatron(x, w1, w2):
    return lax.psum(jnp.tanh(x @ w1) @ w2, "model")


def megatron_loss(x, w1, w2):
    return lax.psum(jnp.sum(megatron(x, w1, w2) ** 2), "data")


def whole_layer(x, w1, w2):
    return jnp.tanh(x @ w1) @ w2
