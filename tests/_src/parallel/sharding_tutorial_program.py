"""Run by test_result_shardings.py as `python sharding_tutorial_program.py jax|didax`: the
steps of a sharding tutorial on a 2x2 mesh of CPU devices (device_put with NamedSharding,
jitted and eager operations on sharded arrays, in_shardings and out_shardings,
with_sharding_constraint, shard_map with psum) under either framework, printing as JSON each
result's values and sharding (its spec, and the block each device holds)."""
import json
import os
import sys

if sys.argv[1] == "jax":
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax
    import jax.numpy as jnp
else:
    os.environ["DIDAX_NUM_CPU_DEVICES"] = "4"
    import didax as jax
    import didax.numpy as jnp
import numpy as np

NamedSharding, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
Auto = jax.sharding.AxisType.Auto


def describe(a):
    s = a.sharding
    return {"type": type(s).__name__, "spec": str(getattr(s, "spec", None)),
            "shards": sorted((sh.device.id, str(sh.index)) for sh in a.addressable_shards),
            "values": np.asarray(a).round(4).tolist()}


def attempt(step):
    try:
        return step()
    except Exception as e:  # (what the framework refuses: the test compares the refusals)
        return {"type": "error", "error": type(e).__name__}


mesh = jax.make_mesh((2, 2), ("x", "y"))
auto = jax.make_mesh((2, 2), ("x", "y"), axis_types=(Auto, Auto))
x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
grid = jax.device_put(x, NamedSharding(mesh, P("x", "y")))
rows = jax.device_put(x, NamedSharding(mesh, P("x", None)))
cols = jax.device_put(x, NamedSharding(mesh, P(None, "y")))


def constrained(m):
    def f(a):
        return jax.lax.with_sharding_constraint(a * 2, NamedSharding(m, P("y", "x"))) + 1
    return f


steps = {
    "device_put": lambda: grid,
    "elementwise": lambda: jax.jit(lambda a: 2 * jnp.sin(a) + 1)(grid),
    "sum over rows": lambda: jax.jit(lambda a: a.sum(axis=0))(grid),
    "sum over columns": lambda: jax.jit(lambda a: a.sum(axis=1))(grid),
    "sum of all": lambda: jax.jit(lambda a: a.sum())(grid),
    "mean": lambda: jax.jit(lambda a: (a * 2).mean())(rows),
    "transpose": lambda: jax.jit(lambda a: a.T)(grid),
    "rows times columns": lambda: jax.jit(lambda a, b: a @ b)(rows, cols),
    "rows plus columns": lambda: jax.jit(lambda a, b: a + b)(rows, cols),
    "rows plus unsharded": lambda: jax.jit(lambda a, b: a + b)(rows, x),
    "unsharded": lambda: jax.jit(lambda a: a + 1)(x),
    "eager sin": lambda: jnp.sin(grid),
    "eager add": lambda: grid + 1,
    "eager sum": lambda: rows.sum(axis=1),
    "reshape": lambda: jax.jit(lambda a: a.reshape(64))(grid),
    "new axis": lambda: jax.jit(lambda a: a[None] * 2)(rows),
    "slice": lambda: jax.jit(lambda a: a[:4])(rows),
    "out_shardings": lambda: jax.jit(
        lambda a: a * 2, out_shardings=NamedSharding(mesh, P(None, "x")))(x),
    "in_shardings": lambda: jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("y")))(x),
    "constraint on auto axes": lambda: jax.jit(constrained(auto))(x),
    "constraint, auto, sharded": lambda: jax.jit(constrained(auto))(
        jax.device_put(x, NamedSharding(auto, P("x", None)))),
    "shard_map with psum": lambda: jax.shard_map(
        lambda a: jax.lax.psum(a.sum(0), "x"), mesh=mesh, in_specs=P("x", "y"),
        out_specs=P("y"))(grid),
    # JAX's explicit axes refuse these; didax computes them (see parallel/result_shardings.py)
    "contracted over different axes": lambda: jax.jit(lambda a: a @ a)(grid),
    "constraint on explicit axes": lambda: jax.jit(constrained(mesh))(x),
}
out = {}
for name, step in steps.items():
    result = attempt(step)
    out[name] = result if isinstance(result, dict) else describe(result)
json.dump(out, sys.stdout)
