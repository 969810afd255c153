"""Run by tests/_src/parallel/test_distributed.py as
`mpiexec -n 2 python distributed_program.py OUT` (two processes with
DIDAX_NUM_CPU_DEVICES=2: four devices): each process saves what its devices computed to
OUT/rank<p>.npz, for the test to compare with one process's vmap."""
import pathlib
import sys

import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import lax

sys.path.insert(0, str(pathlib.Path(__file__).parents[2]))  # (tests/)
from distributed_cases import (  # noqa: E402
    CASES,
    MESH_SPECS,
    W1,
    W2,
    X2,
    W,
    X,
    loss,
    megatron,
    megatron_loss,
)

jax.distributed.initialize()
p, n = jax.process_index(), jax.local_device_count()
mine = X[p * n:(p + 1) * n]
out = {"process_index": p, "process_count": jax.process_count(),
       "device_ids": [d.id for d in jax.devices()],
       "local_ids": [d.id for d in jax.local_devices()]}
for name, f in CASES.items():
    out[name] = np.asarray(jax.pmap(f, axis_name="i")(mine))
g = jax.grad(lambda x, w: jnp.sum(jax.pmap(loss, axis_name="i", in_axes=(0, None))(x, w) ** 2),
             argnums=(0, 1))(mine, W)
out["grad_x"], out["grad_w"] = np.asarray(g[0]), np.asarray(g[1])
out["vmap_of_pmap"] = np.asarray(jax.vmap(jax.pmap(loss, axis_name="i", in_axes=(0, None)),
                                          in_axes=(None, 0))(mine, np.stack([W, -W])))
mesh = jax.make_mesh((jax.device_count(),), ("x",))
summed = jax.shard_map(lambda a: lax.psum(a.sum(0), "x"), mesh=mesh, in_specs=jax.P("x"),
                       out_specs=jax.P())(X.reshape(8, 4)[p * 4:(p + 1) * 4])
out["shard_map_sum"] = np.asarray(summed)
mesh2 = jax.make_mesh((2, 2), ("data", "model"))  # (process p holds the row 'data' = p)
specs = tuple(jax.P(*s) for s in MESH_SPECS)
layer = jax.shard_map(megatron, mesh=mesh2, in_specs=specs, out_specs=jax.P("data", None))
mesh_loss = jax.shard_map(megatron_loss, mesh=mesh2, in_specs=specs, out_specs=jax.P())
rows = X2[p * 4:(p + 1) * 4]
out["mesh_layer"] = np.asarray(layer(rows, W1, W2))
out["mesh_layer_jit"] = np.asarray(jax.jit(layer)(rows, W1, W2))
out["mesh_loss"] = np.asarray(mesh_loss(rows, W1, W2))
for k, g in enumerate(jax.grad(mesh_loss, argnums=(0, 1, 2))(rows, W1, W2)):
    out[f"mesh_grad{k}"] = np.asarray(g)
# The processes diverge: process 1 sums an array of another shape. Both must raise.
diverged = jnp.ones((n, 3 + p))
try:
    jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(diverged)
    out["diverged"] = "no error"
except jax.distributed.DivergedProcessesError as e:
    out["diverged"] = str(e)
np.savez(pathlib.Path(sys.argv[1]) / f"rank{p}.npz", **out)
jax.distributed.shutdown()
