"""didax.export's bytes: programs loaded and called by another process (bit-identical to
jit), the format's version, checksum and registry checks, and what cannot be exported."""
import collections
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import export, lax
from didax._src.export import serialize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return jnp.mean(x ** 2), x


def control_flow(x, n):
    y = lax.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: a - 1.0, x)
    c, ys = lax.scan(lambda c, a: (c + a, c * a), 0.0, y)
    i, z = lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 1.5), (0, c))
    return ys, z, i


@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


softplus.defjvp(lambda p, t: (softplus(p[0]), jax.nn.sigmoid(p[0]) * t[0]))


@jax.custom_vjp
def clip_gradient(x):
    return jnp.sin(x)


clip_gradient.defvjp(lambda x: (clip_gradient(x), jnp.cos(x)),
                     lambda c, g: (jnp.clip(g * c, -0.5, 0.5),))


def custom_rules(x):
    return jnp.sum(softplus(x) * clip_gradient(x))


def _cases():
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = [(jax.random.normal(k1, (3, 8)), jnp.zeros(8)),
              (jax.random.normal(k2, (8, 2)), jnp.ones(2))]
    x = jax.random.normal(k3, (5, 3))
    return {"mlp": (mlp, (params, x)),
            "control_flow": (control_flow, (jnp.linspace(-1.0, 2.0, 6), 4)),
            "custom_rules": (custom_rules, (jnp.linspace(-2.0, 2.0, 7),))}


_LOADER = textwrap.dedent("""
    import sys
    import numpy as np
    import didax
    from didax import export
    folder = sys.argv[1]
    for name in sys.argv[2:]:
        with open(f"{folder}/{name}.bin", "rb") as f:
            exp = export.deserialize(f.read())
        args = np.load(f"{folder}/{name}.args.npz")
        leaves = [args[f"a{i}"] for i in range(len(args.files))]
        flat_args = didax.tree_util.tree_unflatten(exp.in_tree, leaves)
        out = exp.call(*flat_args[0], **flat_args[1])
        outs = didax.tree_util.tree_leaves(out)
        if name == "custom_rules":
            outs.append(didax.grad(exp.call)(*flat_args[0]))
        np.savez(f"{folder}/{name}.out.npz", *[np.asarray(o) for o in outs])
        print(name, exp.fun_name, "ok")
""")


def test_round_trip_in_a_fresh_process(tmp_path):
    """Programs deserialized by a process that has not seen their source give the bits of
    jit(f); custom rules survive (the gradient through them)."""
    cases = _cases()
    for name, (f, args) in cases.items():
        blob = export.export(jax.jit(f))(*args).serialize()
        (tmp_path / f"{name}.bin").write_bytes(blob)
        leaves = jax.tree_util.tree_leaves((args, {}))
        np.savez(tmp_path / f"{name}.args.npz",
                 **{f"a{i}": np.asarray(x) for i, x in enumerate(leaves)})
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, "-c", _LOADER, str(tmp_path), *cases], env=env,
                          capture_output=True, text=True, cwd=str(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr
    for name, (f, args) in cases.items():
        expected = jax.tree_util.tree_leaves(jax.jit(f)(*args))
        if name == "custom_rules":
            expected.append(jax.grad(jax.jit(f))(*args))
        got = np.load(tmp_path / f"{name}.out.npz")
        assert len(got.files) == len(expected)
        for i, e in enumerate(expected):
            g, e = got[f"arr_{i}"], np.asarray(e)
            assert g.dtype == e.dtype and g.shape == e.shape
            assert g.tobytes() == e.tobytes(), (name, i, g, e)


def test_deserialized_keeps_custom_rules_in_process():
    x = jnp.linspace(-2.0, 2.0, 7)
    exp = export.deserialize(export.export(jax.jit(custom_rules))(x).serialize())
    np.testing.assert_array_equal(jax.grad(exp.call)(x), jax.grad(custom_rules)(x))
    # forward mode through the custom_jvp rule, and under vmap
    exp_jvp = export.deserialize(export.export(jax.jit(softplus))(x).serialize())
    t = jnp.ones_like(x)
    np.testing.assert_array_equal(jax.jvp(exp_jvp.call, (x,), (t,))[1],
                                  jax.jvp(softplus, (x,), (t,))[1])
    xs = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(jax.vmap(exp.call)(xs), jax.vmap(custom_rules)(xs), rtol=1e-6)


def _reframed(blob, edit):
    doc, blobs = serialize.from_bytes(blob)
    text = edit(json.dumps(doc))
    return serialize.to_bytes(json.loads(text), blobs)


def _blob():
    return export.export(jax.jit(lambda x: jnp.sin(x) * 2.0))(jnp.ones(3)).serialize()


def test_refuses_unknown_version():
    blob = bytearray(_blob())
    at = len(serialize._MAGIC)
    blob[at:at + 4] = (99).to_bytes(4, "little")
    with pytest.raises(ValueError, match="format version 99 is not supported"):
        export.deserialize(bytes(blob))


def test_refuses_changed_bytes():
    blob = bytearray(_blob())
    blob[len(blob) // 2] ^= 1
    with pytest.raises(ValueError, match="checksum does not match"):
        export.deserialize(bytes(blob))
    with pytest.raises(ValueError, match="truncated"):
        export.deserialize(_blob()[:-5])
    with pytest.raises(ValueError, match="not a didax export"):
        export.deserialize(b"ML\xefR" + bytes(40))


def test_refuses_unknown_primitive_and_undecodable_params():
    blob = _reframed(_blob(), lambda t: t.replace('"sin"', '"os_system"'))
    with pytest.raises(ValueError, match="unknown primitive 'os_system'"):
        export.deserialize(blob)
    forged = '{"$record": ["subprocess", "Popen", []]}'
    doc, blobs = serialize.from_bytes(_blob())
    eqn = next(e for e in doc["program"]["program"]["jaxpr"]["eqns"] if e[0] == "mul")
    eqn[3]["evil"] = json.loads(forged)
    with pytest.raises(ValueError, match="not one of didax's"):
        export.deserialize(serialize.to_bytes(doc, blobs))
    eqn[3]["evil"] = {"$pickle": "gASVAAAA"}
    with pytest.raises(ValueError, match="unknown value tag"):
        export.deserialize(serialize.to_bytes(doc, blobs))


def test_refuses_ill_typed_program():
    doc, blobs = serialize.from_bytes(_blob())
    doc["program"]["program"]["jaxpr"]["eqns"][0][2][0][1][1] = [4]  # sin's result type
    with pytest.raises(ValueError, match="does not type-check"):
        export.deserialize(serialize.to_bytes(doc, blobs))
    doc, blobs = serialize.from_bytes(_blob())
    doc["in_avals"][0][1] = [4]
    with pytest.raises(ValueError, match="do not match"):
        export.deserialize(serialize.to_bytes(doc, blobs))


def test_refuses_host_callbacks_and_python_functions():
    def with_callback(x):
        return jax.pure_callback(lambda a: np.sin(a), jax.ShapeDtypeStruct((3,), np.float32), x)

    with pytest.raises(ValueError, match="pure_callback"):
        export.export(jax.jit(with_callback))(jnp.ones(3))


def test_refuses_functions_that_are_not_jitted():
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(lambda x: x)


Point = collections.namedtuple("Point", ["x", "y"])
export.register_namedtuple_serialization(Point, serialized_name="tests.export.Point")


class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label


jax.tree_util.register_pytree_node(Box, lambda b: ((b.value,), b.label),
                                   lambda label, c: Box(c[0], label))
export.register_pytree_node_serialization(
    Box, serialized_name="tests.export.Box", serialize_auxdata=lambda s: s.encode(),
    deserialize_auxdata=lambda b: b.decode())


def test_registered_pytree_nodes_round_trip():
    def f(p, box):
        return Box(p.x * box.value, box.label), Point(p.y, p.x)

    args = (Point(jnp.ones(2), jnp.arange(2.0)), Box(jnp.full(2, 3.0), "hi"))
    exp = export.deserialize(export.export(jax.jit(f))(*args).serialize())
    b, p = exp.call(*args)
    assert type(b) is Box and b.label == "hi" and type(p) is Point
    np.testing.assert_array_equal(b.value, jnp.full(2, 3.0))
    with pytest.raises(ValueError, match="Duplicate serialization registration"):
        export.register_namedtuple_serialization(Point, serialized_name="other")

    Other = collections.namedtuple("Other", ["a"])
    exp = export.export(jax.jit(lambda o: o.a))(Other(jnp.ones(2)))
    with pytest.raises(ValueError, match="unregistered type"):
        exp.serialize()


def test_custom_rules_with_static_arguments_and_unstageable_rules():
    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(1,))
    def power(x, n):
        return x ** n

    power.defjvp(lambda n, p, t: (power(p[0], n), n * p[0] ** (n - 1) * t[0]))
    x = jnp.linspace(0.5, 2.0, 4)
    exp = export.deserialize(export.export(jax.jit(lambda x: power(x, 3).sum()))(x).serialize())
    np.testing.assert_array_equal(jax.grad(exp.call)(x), jax.grad(lambda x: power(x, 3).sum())(x))

    @jax.custom_jvp
    def python_rule(x):
        return x * 2

    python_rule.defjvp(lambda p, t: (python_rule(p[0]), t[0] * float(p[0].sum())))
    with pytest.raises(ValueError, match="custom JVP rule of 'python_rule'.*custom_jvp_call"):
        export.export(jax.jit(python_rule))(x)
