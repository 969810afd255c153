"""The shardings results report: a sharding tutorial's steps under JAX and didax (values,
specs and every device's block); the sharding rules through the primitives' families;
`with_sharding_constraint` staged inside jit and carried by derivatives and vmap; and the
values, which shardings never change."""
import json
import os
import pathlib
import sys

import numpy as np
import pytest
from jax_absent import needs_jax
from process_testing import run_or_fail

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src.interpreters import sharding as rules
from didax.sharding import NamedSharding
from didax.sharding import PartitionSpec as P

PROGRAM = pathlib.Path(__file__).with_name("sharding_tutorial_program.py")

# What JAX's explicit axes refuse and didax computes (parallel/result_shardings.py says why)
REFUSED_BY_JAX = {"contracted over different axes": "ShardingTypeError",
                  "constraint on explicit axes": "ValueError"}


pytestmark = pytest.mark.usefixtures("four_devices")


def run_program(framework, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS",
                                                            "DIDAX_NUM_CPU_DEVICES")}
    return json.loads(run_or_fail([sys.executable, str(PROGRAM), framework], cwd=tmp_path,
                                  env=env))


@needs_jax
def test_a_sharding_tutorial_gives_jaxs_values_and_shardings(tmp_path):
    theirs, ours = run_program("jax", tmp_path), run_program("didax", tmp_path)
    assert list(theirs) == list(ours)
    for step, want in theirs.items():
        got = ours[step]
        if step in REFUSED_BY_JAX:
            assert want == {"type": "error", "error": REFUSED_BY_JAX[step]}, step
            assert got["type"] == "NamedSharding", step
            continue
        assert got == want, step
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    np.testing.assert_allclose(ours["contracted over different axes"]["values"], x @ x)
    np.testing.assert_allclose(ours["constraint on explicit axes"]["values"], x * 2 + 1)


def spec_of(a):
    return a.sharding.spec


def test_jitted_results_follow_the_primitives_rules():
    mesh = jax.make_mesh((2, 2), ("a", "b"))
    x = jax.device_put(np.ones((4, 6, 8), np.float32), NamedSharding(mesh, P("a", None, "b")))
    w = jax.device_put(np.ones((8, 10), np.float32), NamedSharding(mesh, P(None, None)))
    cases = {
        "batched product": (lambda x, w: x @ w, P("a", None, None)),
        "cumulative sum": (lambda x, w: jnp.cumsum(x, axis=1), P("a", None, "b")),
        "argmax": (lambda x, w: jnp.argmax(x, axis=0), P(None, "b")),
        "split a dimension": (lambda x, w: x.reshape(2, 2, 6, 8), P("a", None, None, "b")),
        "merge dimensions": (lambda x, w: x.reshape(24, 8), P("a", "b")),
        "regroup": (lambda x, w: x.reshape(4, 8, 6), P("a", None, None)),
        "squeeze": (lambda x, w: x[:, :1].squeeze(1), P("a", "b")),
        "broadcast": (lambda x, w: jnp.broadcast_to(x[:, None], (4, 3, 6, 8)),
                      P("a", None, None, "b")),
        "where": (lambda x, w: jnp.where(x > 0, x, 0.0), P("a", None, "b")),
        "odd slice": (lambda x, w: x[:3], P(None, None, "b")),
        "sort": (lambda x, w: jnp.sort(x, axis=2), P("a", None, None)),
        "reverse": (lambda x, w: x[:, ::-1], P("a", None, "b")),
        "no rule (concatenate)": (lambda x, w: jnp.concatenate([x, x], 1), P()),
    }
    for name, (f, want) in cases.items():
        got = jax.jit(f)(x, w)
        assert spec_of(got) == want, name
        np.testing.assert_array_equal(np.asarray(got), np.asarray(f(np.asarray(x), w)))


def test_eager_operations_on_sharded_arrays_report_shardings():
    mesh = jax.make_mesh((2, 2), ("a", "b"))
    x = jax.device_put(np.arange(8.0).reshape(2, 4), NamedSharding(mesh, P("a", "b")))
    assert spec_of(jnp.exp(x)) == P("a", "b")
    assert spec_of(x.T) == P("b", "a")
    assert spec_of(x.sum(axis=1)) == P("a")
    assert isinstance(jnp.ones(3).sharding, jax.sharding.SingleDeviceSharding)
    np.testing.assert_allclose(np.asarray(jnp.exp(x)), np.exp(np.arange(8.0).reshape(2, 4)))


def test_the_constraint_is_an_equation_that_derivatives_and_vmap_carry():
    mesh = jax.make_mesh((2, 2), ("a", "b"))
    constraint = NamedSharding(mesh, P("b", None))

    def f(x):
        return jnp.sum(jnp.sin(lax.with_sharding_constraint(x * 2, constraint)) ** 2)

    x = np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2)
    assert "sharding_constraint" in str(jax.make_jaxpr(f)(x))
    assert "sharding_constraint" in str(jax.make_jaxpr(jax.grad(f))(x))
    want = 2 * np.sin(2 * x) * np.cos(2 * x) * 2
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(f))(x)), want, rtol=1e-5)
    stacked = np.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(stacked)),
                               np.stack([jax.grad(f)(x), jax.grad(f)(2 * x)]), rtol=1e-5)
    batched = jax.make_jaxpr(jax.vmap(lambda v: lax.with_sharding_constraint(v, constraint),
                                      in_axes=1))(stacked.transpose(1, 0, 2))
    assert "P('b', None, None)" in str(batched)  # (the batch dimension, 1, whole)
    assert spec_of(jax.jit(lambda v: lax.with_sharding_constraint(v, constraint) + 1)(x)) == \
        P("b", None)


def test_in_and_out_shardings():
    mesh = jax.make_mesh((2, 2), ("a", "b"))
    x = np.ones((4, 4), np.float32)
    f = jax.jit(lambda u, v: (u + v, u.sum(0)), in_shardings=(NamedSharding(mesh, P("a")),
                                                               None))
    total, column = f(x, x)
    assert spec_of(total) == P("a") and spec_of(column) == P(None)
    g = jax.jit(lambda u: u * 2, out_shardings=P("b"))
    with pytest.raises(RuntimeError, match="a PartitionSpec .* needs a mesh"):
        g(x)
    with jax.set_mesh(mesh):
        assert spec_of(g(x)) == P("b")
    np.testing.assert_allclose(np.asarray(total), 2 * x)


def test_rules_read_mesh_sizes_where_a_split_must_divide():
    # (9 rows merged with 2 columns: 18 elements do not split over an axis of 4 devices)
    class Eqn:
        class _V:
            def __init__(self, shape):
                self.aval = type("A", (), {"shape": shape})()

        def __init__(self, old, new):
            self.invars, self.outvars, self.params = [self._V(old)], [self._V(new)], {}

    assert rules.reshape(Eqn((9, 2), (18,)), [(("x",),)], {"x": 4}) == ((),)
    assert rules.reshape(Eqn((8, 2), (16,)), [(("x",),)], {"x": 4}) == (("x",),)
    assert rules.reshape(Eqn((16,), (4, 4)), [(("x",),)], {"x": 4}) == (("x",), ())
    assert rules.reshape(Eqn((16,), (2, 8)), [(("x",),)], {"x": 4}) == ((), ())


def test_once_arrays_are_sharded_jit_keeps_its_shortcut_for_the_others():
    from didax._src.transforms import jit as jit_api

    mesh = jax.make_mesh((2, 2), ("a", "b"))
    sharded = jax.device_put(np.ones(4, np.float32), NamedSharding(mesh, P("a")))
    assert jit_api.placement.active
    f = jax.jit(lambda v: v * 2)
    plain = jnp.ones(4)
    for _ in range(3):
        assert isinstance(f(plain).sharding, jax.sharding.SingleDeviceSharding)
    assert f._mono is not jit_api._no_match  # (the last signature's shortcut)
    for _ in range(3):  # (which a sharded argument misses: its result is placed)
        assert spec_of(f(sharded)) == P("a")
