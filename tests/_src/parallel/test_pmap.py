"""pmap over CPU devices: the devices API, every collective against vmap (and JAX's vmap),
composition with grad, jvp, vmap, jit, control flow and custom rules, shards really running
side by side, shard_map and meshes, and the errors."""
import threading

import jax as real_jax
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src.config import config, enable_x64
from didax.sharding import Mesh, NamedSharding, SingleDeviceSharding
from didax.sharding import PartitionSpec as P
from didax.test_util import check_grads

pytestmark = pytest.mark.usefixtures("four_devices")


def close(got, want, tol=1e-5):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def tree_close(got, want, tol=1e-5):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves):
        assert np.asarray(g).shape == np.asarray(w).shape
        assert np.asarray(g).dtype == np.asarray(w).dtype
        close(g, w, tol)


X = np.linspace(-1.5, 2., 4 * 8, dtype=np.float32).reshape(4, 8)

# --------------------------------------------------------------------------------------
# Devices


def test_devices_follow_the_configured_count():
    assert jax.devices() == [jax.Device(k) for k in range(4)]
    assert jax.local_devices() == jax.devices()
    assert jax.device_count() == jax.local_device_count() == 4
    assert (jax.process_index(), jax.process_count()) == (0, 1)
    d = jax.devices()[2]
    assert (d.id, d.process_index, d.platform, repr(d), str(d)) == (2, 0, "cpu",
                                                                    "CpuDevice(id=2)", "cpu:2")
    with config_devices(2):
        assert [d.id for d in jax.devices()] == [0, 1]


class config_devices:
    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.old = config.read("didax_num_cpu_devices")
        config.update("didax_num_cpu_devices", self.n)

    def __exit__(self, *exc):
        config.update("didax_num_cpu_devices", self.old)


def test_the_device_count_option_checks_its_value():
    for bad in (0, -1, "two", 1.5):
        with pytest.raises(ValueError, match="positive integer"):
            config.update("didax_num_cpu_devices", bad)
    config.update("didax_num_cpu_devices", "3")
    assert jax.local_device_count() == 3


def test_device_put_places_arrays_without_copying():
    x = jnp.arange(3.)
    assert x.devices() == {jax.devices()[0]} and x.device == jax.devices()[0]
    assert x.sharding == SingleDeviceSharding(jax.devices()[0])
    y = jax.device_put({"a": x, "b": 1.0}, jax.devices()[3])
    assert y["a"].devices() == {jax.devices()[3]} and y["b"].devices() == {jax.devices()[3]}
    np.testing.assert_array_equal(y["a"], x)
    mesh = jax.make_mesh((4,), ("x",))
    z = jax.device_put(jnp.ones(8), NamedSharding(mesh, P("x")))
    assert z.devices() == set(jax.devices())
    with pytest.raises(ValueError, match="Please use `.devices"):
        _ = z.device
    with pytest.raises(TypeError, match="expected a device"):
        jax.device_put(x, "cpu:1")
    with config_devices(2):
        with pytest.raises(ValueError, match="not one of the 2 devices"):
            jax.device_put(x, jax.Device(3))


def test_shardings_survive_device_put_and_with_sharding_constraint():
    """`.sharding` is the sharding asked for (a 2-D mesh's, not a 1-D 'devices' one), and
    `addressable_shards` are its pieces: JAX's indices (row-major over the mesh) and replica
    ids (a piece replicated over an axis counted along it)."""
    mesh = jax.make_mesh((2, 2), ("data", "model"))
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    both = NamedSharding(mesh, P("data", "model"))
    y = jax.device_put(x, both)
    assert y.sharding == both and y.devices() == set(jax.devices())
    shards = y.addressable_shards
    assert [s.device for s in shards] == jax.devices()
    assert [s.index for s in shards] == [(slice(r, r + 2), slice(c, c + 2))
                                         for r in (0, 2) for c in (0, 2)]
    for s in shards:
        np.testing.assert_array_equal(s.data, x[s.index])
    assert [s.replica_id for s in shards] == [0, 0, 0, 0]
    rows = NamedSharding(mesh, P("data"))
    z = lax.with_sharding_constraint(y * 1, rows)
    assert z.sharding == rows
    assert [s.replica_id for s in z.addressable_shards] == [0, 1, 0, 1]
    np.testing.assert_array_equal(z, x)
    assert jax.device_put(x, jax.devices()[2]).sharding == SingleDeviceSharding(jax.devices()[2])


def test_pmap_outputs_live_on_the_devices_that_computed_them():
    out = jax.pmap(lambda v: v * 2)(X[:3])
    assert out.devices() == set(jax.devices()[:3])
    chosen = [jax.devices()[3], jax.devices()[1]]
    out = jax.pmap(lambda v: v + 1, devices=chosen)(X[:2])
    assert out.devices() == set(chosen)
    close(out, X[:2] + 1)


# --------------------------------------------------------------------------------------
# Every collective: pmap == vmap


COLLECTIVES = {
    "psum": lambda v: lax.psum(v, "i"),
    "psum_pytree": lambda v: lax.psum({"a": v, "b": (v[0] > 0, 2 * v)}, "i"),
    "pmean": lambda v: lax.pmean(v, "i"),
    "pmax": lambda v: lax.pmax(v, "i"),
    "pmin": lambda v: lax.pmin(v, "i"),
    "psum_int": lambda v: lax.psum(jnp.round(v * 4).astype(jnp.int32), "i"),
    "psum_positional": lambda v: lax.psum(v.reshape(2, 4), ("i", 0)),
    "axis_index": lambda v: v * lax.axis_index("i"),
    "axis_size": lambda v: v * lax.axis_size("i"),
    "all_gather": lambda v: lax.all_gather(v, "i"),
    "all_gather_axis1": lambda v: lax.all_gather(v.reshape(2, 4), "i", axis=1),
    "all_gather_tiled": lambda v: lax.all_gather(v.reshape(2, 4), "i", axis=1, tiled=True),
    "ppermute_cycle": lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
    "ppermute_partial": lambda v: lax.ppermute(v, "i", [(0, 2), (1, 0)]),
    "pshuffle": lambda v: lax.pshuffle(v, "i", [2, 0, 3, 1]),
    "pbroadcast": lambda v: lax.pbroadcast(v, "i", 2),
    "psum_scatter": lambda v: lax.psum_scatter(v.reshape(4, 2), "i"),
    "psum_scatter_tiled": lambda v: lax.psum_scatter(v, "i", tiled=True),
    "psum_scatter_dim1": lambda v: lax.psum_scatter(v.reshape(2, 4), "i",
                                                    scatter_dimension=1),
    "all_to_all": lambda v: lax.all_to_all(v.reshape(4, 2), "i", 0, 0),
    "all_to_all_01": lambda v: lax.all_to_all(v.reshape(4, 2), "i", 0, 1),
    "all_to_all_10": lambda v: lax.all_to_all(v.reshape(2, 4), "i", 1, 0),
    "all_to_all_tiled": lambda v: lax.all_to_all(v.reshape(8, 1), "i", 0, 1, tiled=True),
    "pswapaxes": lambda v: lax.pswapaxes(v.reshape(4, 2), "i", 0),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_every_collective_gives_vmaps_values(name):
    f = COLLECTIVES[name]
    tree_close(jax.pmap(f, axis_name="i")(X), jax.vmap(f, axis_name="i")(X))


@pytest.mark.parametrize("name", ["psum", "pmax", "pmin", "all_gather_axis1", "ppermute_cycle",
                                  "psum_scatter", "all_to_all_01", "axis_index"])
def test_collectives_match_jax(name):
    """JAX's vmap gives its collectives the semantics pmap gives them across devices."""
    f = COLLECTIVES[name]
    got = jax.pmap(f, axis_name="i")(X)
    real_lax = real_jax.lax
    real_f = {
        "psum": lambda v: real_lax.psum(v, "i"),
        "pmax": lambda v: real_lax.pmax(v, "i"),
        "pmin": lambda v: real_lax.pmin(v, "i"),
        "all_gather_axis1": lambda v: real_lax.all_gather(v.reshape(2, 4), "i", axis=1),
        "ppermute_cycle": lambda v: real_lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
        "psum_scatter": lambda v: real_lax.psum_scatter(v.reshape(4, 2), "i"),
        "all_to_all_01": lambda v: real_lax.all_to_all(v.reshape(4, 2), "i", 0, 1),
        "axis_index": lambda v: v * real_lax.axis_index("i"),
    }[name]
    close(got, real_jax.vmap(real_f, axis_name="i")(X))


def test_fewer_shards_than_devices_and_in_out_axes():
    def fun(a, b, c):
        return lax.psum(a * b, "i"), {"k": c["k"] * 2}, a.sum()

    f = jax.pmap(fun, axis_name="i", in_axes=(1, None, 0), out_axes=(None, 1, 0))
    a = X[:3, :2].T  # mapped along axis 1: 3 shards of shape (2,)
    b = np.float32(1.5)
    c = {"k": X[:3, :5]}
    got = f(a, b, c)
    want = jax.vmap(fun, axis_name="i", in_axes=(1, None, 0), out_axes=(None, 1, 0))(a, b, c)
    tree_close(got, want)
    assert got[1]["k"].shape == (5, 3)


def test_keyword_arguments_and_static_broadcasted_arguments():
    traces = []

    def f(x, n, *, scale):
        traces.append(n)
        return x * n * scale

    g = jax.pmap(f, static_broadcasted_argnums=1)
    close(g(X, 3, scale=X), X * 3 * X)
    close(g(X, 3, scale=X), X * 3 * X)
    close(g(X, 2, scale=X), X * 2 * X)
    assert traces == [3, 2]  # traced once per signature


def test_outputs_are_strongly_typed_and_keep_dtypes():
    out = jax.pmap(lambda v: (v.astype(jnp.int32), 2.0 * jnp.ones(()), v > 0))(X)
    assert [o.dtype for o in out] == [np.int32, np.float32, np.bool_]
    assert not out[1].weak_type
    with enable_x64():
        out = jax.pmap(lambda v: v * 2)(np.ones((2, 3)))
        assert out.dtype == np.float64


# --------------------------------------------------------------------------------------
# Composition


def loss(x, w):
    h = jnp.tanh(x * w)
    return (lax.pmean(jnp.sum(h ** 2), "i")
            + jnp.sum(lax.all_gather(h, "i")[1] * h)
            + jnp.sum(lax.ppermute(h, "i", [(0, 1), (1, 0), (2, 3), (3, 2)]) * x)
            + lax.pmax(jnp.max(h), "i"))


W = np.linspace(0.5, 1.5, 8, dtype=np.float32)


def both(f, **kwargs):
    return jax.pmap(f, axis_name="i", **kwargs), jax.vmap(f, axis_name="i", **kwargs)


def test_grad_of_pmap_and_pmap_of_grad_equal_vmaps():
    p, v = both(loss, in_axes=(0, None))
    total = lambda m: lambda x, w: jnp.sum(m(x, w) ** 2)  # noqa: E731
    tree_close(jax.grad(total(p), argnums=(0, 1))(X, W),
               jax.grad(total(v), argnums=(0, 1))(X, W), 1e-4)
    gp, gv = both(jax.grad(loss, argnums=(0, 1)), in_axes=(0, None))
    tree_close(gp(X, W), gv(X, W), 1e-4)


def test_jvp_and_linearize_of_pmap():
    p, v = both(loss, in_axes=(0, None))
    tree_close(jax.jvp(p, (X, W), (X, W)), jax.jvp(v, (X, W), (X, W)), 1e-4)
    out_p, lin_p = jax.linearize(p, X, W)
    out_v, lin_v = jax.linearize(v, X, W)
    tree_close(lin_p(X, W), lin_v(X, W), 1e-4)


def test_derivatives_to_second_order_by_finite_differences():
    with enable_x64():
        x, w = X.astype(np.float64), W.astype(np.float64)
        p = jax.pmap(loss, axis_name="i", in_axes=(0, None))
        check_grads(lambda x, w: p(x, w), (x, w), order=2, modes=("fwd", "rev"))
        q = jax.pmap(lambda x: lax.psum_scatter(jnp.sin(x), "i", tiled=True)
                     + lax.all_to_all(x.reshape(4, 2), "i", 0, 0).reshape(8)[::4].sum(),
                     axis_name="i")
        check_grads(q, (x,), order=2, modes=("fwd", "rev"))


def test_grad_of_pmap_with_replicated_output_and_unmapped_input():
    """out_axes=None takes the first shard's value: its cotangent goes to that shard only;
    an unmapped input's cotangent is summed over the shards."""
    f = jax.pmap(lambda x, w: (lax.psum(jnp.sum(x * w), "i"), jnp.sum(x * w)), axis_name="i",
                 in_axes=(0, None), out_axes=(None, 0))
    g = jax.grad(lambda x, w: f(x, w)[0] + 2 * f(x, w)[1].sum(), argnums=(0, 1))(X, W)
    want_x = np.broadcast_to(W, X.shape) * 3
    close(g[0], want_x)
    close(g[1], 3 * X.sum(0))


def test_closing_over_values_being_differentiated():
    def via(mapper):
        return lambda w: mapper(lambda x: lax.psum(jnp.sin(x * w), "i"), axis_name="i")(X).sum()

    p, v = via(jax.pmap), via(jax.vmap)
    close(jax.grad(p)(1.3), jax.grad(v)(1.3), 1e-4)
    close(jax.hessian(p)(1.3), jax.hessian(v)(1.3), 1e-4)
    close(jax.vmap(jax.grad(p))(jnp.array([1., 2.])), jax.vmap(jax.grad(v))(jnp.array([1., 2.])),
          1e-4)


def test_vmap_outside_pmap():
    p, v = both(loss, in_axes=(0, None))
    xs = np.stack([X, X[::-1] * 0.5])
    tree_close(jax.vmap(p, in_axes=(0, None))(xs, W), jax.vmap(v, in_axes=(0, None))(xs, W))
    tree_close(jax.vmap(p, in_axes=(None, 0))(X, np.stack([W, 2 * W])),
               jax.vmap(v, in_axes=(None, 0))(X, np.stack([W, 2 * W])))
    # the batch dimension elsewhere than in front, and a named outer vmap used inside
    xs_t = np.moveaxis(xs, 0, 2)
    tree_close(jax.vmap(jax.pmap(lambda x: x * lax.psum(x, "j"), axis_name="i"),
                        in_axes=2, axis_name="j")(xs_t),
               jax.vmap(jax.vmap(lambda x: x * lax.psum(x, "j"), axis_name="i"), in_axes=2,
                        axis_name="j")(xs_t))
    tree_close(jax.vmap(jax.pmap(lambda x: lax.psum(x, ("i", "j")), axis_name="i"),
                        axis_name="j")(xs),
               jax.vmap(jax.vmap(lambda x: lax.psum(x, ("i", "j")), axis_name="i"),
                        axis_name="j")(xs))


def test_vmap_inside_pmap():
    x3 = X.reshape(4, 2, 4)
    f = lambda x: lax.psum(x, "j") * lax.axis_index("i") + lax.psum(x, ("i", "j"))  # noqa
    tree_close(jax.pmap(jax.vmap(f, axis_name="j"), axis_name="i")(x3),
               jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")(x3))


def test_jit_inside_and_outside():
    p, v = both(jax.jit(loss), in_axes=(0, None))
    tree_close(p(X, W), v(X, W))
    tree_close(jax.jit(p)(X, W), v(X, W))
    tree_close(jax.jit(jax.grad(lambda w: p(X, w).sum()))(W),
               jax.grad(lambda w: v(X, w).sum())(W), 1e-4)


def test_control_flow_and_custom_rules_inside():
    @jax.custom_jvp
    def soft(x):
        return jnp.log1p(jnp.exp(x))

    soft.defjvp(lambda primals, tangents: (soft(primals[0]),
                                           jax.nn.sigmoid(primals[0]) * tangents[0]))

    @jax.custom_vjp
    def scaled(x):
        return 3 * x

    scaled.defvjp(lambda x: (3 * x, None), lambda _, ct: (3 * ct,))

    def f(x):
        def body(c, xi):
            return c + lax.psum(soft(xi), "i"), c
        total, cs = lax.scan(body, 0.0, x)
        y = lax.cond(lax.axis_index("i") % 2 == 0, lambda: total, lambda: -total)
        z = lax.fori_loop(0, 3, lambda k, z: z + lax.pmean(jnp.sin(z), "i"), x)
        w = jax.checkpoint(lambda v: jnp.tanh(lax.pmax(scaled(v), "i")))(x)
        return y + cs.sum() + z.sum() + w.sum()

    p, v = both(f)
    tree_close(p(X), v(X), 1e-4)
    tree_close(jax.grad(lambda x: p(x).sum())(X), jax.grad(lambda x: v(x).sum())(X), 1e-4)


def test_make_jaxpr_prints_the_pmap():
    text = str(jax.make_jaxpr(jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i"))(X))
    assert "pmap[" in text and "psum[axes=('i',) axis_index_groups=None]" in text
    assert "axis_size=4" in text and "in_axes=(0,)" in text


# --------------------------------------------------------------------------------------
# The shards run side by side


def test_shards_run_on_their_own_threads_at_the_same_time():
    barrier = threading.Barrier(4, timeout=20)  # passes only if all four shards wait at once
    seen = []

    def meet(x):
        seen.append(threading.get_ident())
        barrier.wait()
        return x

    f = jax.pmap(lambda x: jax.pure_callback(meet, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
    close(f(X), X)
    assert len(set(seen)) == 4


def test_an_error_in_one_shard_is_raised_and_the_others_do_not_hang():
    def fail_on_two(i):
        if int(i) == 2:
            raise RuntimeError("shard two failed")
        return i

    f = jax.pmap(lambda x: lax.psum(x, "i") * jax.pure_callback(
        fail_on_two, jax.ShapeDtypeStruct((), np.int32), lax.axis_index("i")), axis_name="i")
    with pytest.raises(RuntimeError, match="shard two failed"):
        f(X)
    close(f(X[:2]), np.broadcast_to(X[:2].sum(0), (2, 8)) * np.arange(2)[:, None])


# --------------------------------------------------------------------------------------
# Errors


def test_a_mapped_axis_larger_than_the_device_count_is_refused():
    with pytest.raises(ValueError, match=r"requires 5 logical devices, but only 4 .*"
                                         r"DIDAX_NUM_CPU_DEVICES"):
        jax.pmap(lambda x: x)(np.ones((5, 2)))


def test_argument_errors():
    with pytest.raises(ValueError, match="(?s)inconsistent sizes.*size 2.*size 3"):
        jax.pmap(lambda a, b: a + b)(np.ones((2, 1)), np.ones((3, 1)))
    with pytest.raises(ValueError, match="has size 0"):
        jax.pmap(lambda x: x)(np.ones((0, 2)))
    with pytest.raises(ValueError, match="rank should be at least 1"):
        jax.pmap(lambda x: x)(np.float32(1))
    with pytest.raises(ValueError, match="at least one argument with a mapped axis"):
        jax.pmap(lambda x: x, in_axes=None)(X)
    with pytest.raises(ValueError, match="len\\(in_axes\\)=2, len\\(args\\)=1"):
        jax.pmap(lambda x: x, in_axes=(0, 0))(X)
    with pytest.raises(ValueError, match="devices= lists 2 devices"):
        jax.pmap(lambda x: x, devices=jax.devices()[:2])(X[:3])
    with pytest.raises(ValueError, match="not hashable"):
        jax.pmap(lambda x, s: x, static_broadcasted_argnums=1)(X, [1])
    with pytest.raises(TypeError, match="not a valid didax type"):
        jax.pmap(lambda x: x)("text")
    with pytest.raises(TypeError, match="expected a function"):
        jax.pmap(3)


def test_unbound_names():
    with pytest.raises(NameError, match="unbound axis name: j"):
        jax.pmap(lambda x: lax.psum(x, "j"), axis_name="i")(X)


def _nested_body(v):
    return (v * lax.psum(v, "j") + lax.psum(v, "i") - lax.pmax(v, ("i", "j"))
            + lax.axis_index("j") + 10 * lax.axis_index("i"))


def test_nested_pmap_is_a_vmap_inside_each_shard():
    """pmap inside a pmapped function: the inner map runs in the outer shard (as a vmap of
    the same axis name), with collectives over either axis or both; its values, gradient,
    jit and out_axes=None equal vmap of vmap's."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
    nested = jax.pmap(jax.pmap(_nested_body, axis_name="j"), axis_name="i")
    reference = jax.vmap(jax.vmap(_nested_body, axis_name="j"), axis_name="i")
    tree_close(nested(x), reference(x), tol=0)
    tree_close(jax.jit(nested)(x), reference(x), tol=0)
    tree_close(jax.grad(lambda x: jnp.sum(nested(x) ** 2))(x),
               jax.grad(lambda x: jnp.sum(reference(x) ** 2))(x), tol=1e-6)
    summed = jax.pmap(jax.pmap(lambda v: lax.psum(v, "j"), axis_name="j", out_axes=None),
                      axis_name="i")(x)
    tree_close(summed, x.sum(axis=1), tol=1e-6)


# --------------------------------------------------------------------------------------
# shard_map and meshes


def test_meshes_and_shardings():
    mesh = jax.make_mesh((4,), ("x",))
    assert mesh.shape == {"x": 4} and mesh.size == 4 and mesh.axis_names == ("x",)
    assert list(mesh.devices) == jax.devices() and str(mesh) == (
        "Mesh('x': 4, axis_types=(Explicit,))")  # (JAX's: make_mesh's axes are Explicit)
    assert repr(mesh) == "Mesh(axis_sizes=(4,), axis_names=('x',), axis_types=(Explicit,))"
    assert repr(NamedSharding(mesh, P("x"))) == (
        "NamedSharding(mesh=Mesh('x': 4, axis_types=(Explicit,)), spec=P('x',), "
        "memory_kind=device)")
    assert Mesh(jax.devices(), "x").axis_types == (jax.sharding.AxisType.Auto,)
    assert Mesh(jax.devices(), "x", jax.sharding.AxisType.Explicit) == mesh
    assert repr(P("x")) == "P('x',)" and P("x", None) == ("x", None) and len(P()) == 0
    s = NamedSharding(mesh, P(None, "x"))
    assert s.shard_shape((3, 8)) == (3, 2) and s.device_set == set(jax.devices())
    with pytest.raises(ValueError, match="partitioned 4 times"):
        s.shard_shape((3, 6))
    with pytest.raises(ValueError, match="not one of the mesh's"):
        NamedSharding(mesh, P("y"))
    with pytest.raises(ValueError, match="needs 8 devices, but 4"):
        jax.make_mesh((2, 4), ("a", "b"))


def test_shard_map_splits_and_joins_by_partition_specs():
    mesh = jax.make_mesh((4,), ("x",))
    x = np.arange(32., dtype=np.float32).reshape(8, 4)
    f = jax.shard_map(lambda a: lax.psum(a.sum(0), "x"), mesh=mesh, in_specs=P("x"),
                      out_specs=P())
    close(f(x), x.sum(0))
    g = jax.shard_map(lambda a, b: (a * lax.axis_index("x"), b + 1), mesh=mesh,
                      in_specs=(P(None, "x"), P()), out_specs=(P(None, "x"), P()))
    got_a, got_b = g(x.T, np.float32(2.))
    close(got_a, x.T * np.repeat(np.arange(4), 2)[None, :])
    close(got_b, 3.)
    h = jax.shard_map(lambda a: lax.all_gather(a, "x", tiled=True), mesh=mesh, in_specs=P("x"),
                      out_specs=P("x"))
    close(h(x), np.tile(x, (4, 1)))
    # every element counts once in the replicated sum (its cotangent reaches one shard)
    close(jax.grad(lambda x: f(x).sum())(x), np.ones_like(x))


def test_shard_map_errors():
    mesh = jax.make_mesh((4,), ("x",))
    with pytest.raises(ValueError, match="size is 6 is not a multiple of 4"):
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(np.ones(6))
    with pytest.raises(ValueError, match="not the mesh's axis 'x'"):
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("y"), out_specs=P("x"))(np.ones(8))
    mesh2 = jax.make_mesh((2, 2), ("a", "b"))
    with pytest.raises(ValueError, match="not one of the mesh's axes"):
        jax.shard_map(lambda a: a, mesh=mesh2, in_specs=P("c"), out_specs=P("a"))(np.ones(4))
    with pytest.raises(ValueError, match="size 6 is not a multiple of 4"):
        jax.shard_map(lambda a: a, mesh=mesh2, in_specs=P(("a", "b")),
                      out_specs=P(("a", "b")))(np.ones(6))


def _megatron(x, w1, w2):
    """x by rows over 'data', w1 by columns and w2 by rows over 'model', the partial
    products summed over 'model'."""
    return lax.psum(jnp.tanh(x @ w1) @ w2, "model")


def test_shard_map_over_a_two_dimensional_mesh():
    mesh = jax.make_mesh((2, 2), ("data", "model"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    w1 = rng.standard_normal((6, 4)).astype(np.float32)
    w2 = rng.standard_normal((4, 3)).astype(np.float32)
    layer = jax.shard_map(_megatron, mesh=mesh,
                          in_specs=(P("data", None), P(None, "model"), P("model", None)),
                          out_specs=P("data", None))

    def whole(x, w1, w2):
        return jnp.tanh(x @ w1) @ w2

    close(layer(x, w1, w2), whole(x, w1, w2))
    close(jax.jit(layer)(x, w1, w2), whole(x, w1, w2))
    tree_close(jax.grad(lambda *a: jnp.mean(layer(*a) ** 2), argnums=(0, 1, 2))(x, w1, w2),
               jax.grad(lambda *a: jnp.mean(whole(*a) ** 2), argnums=(0, 1, 2))(x, w1, w2))
    # a dimension split over both axes, in either order; collectives over both
    index = lambda a: a * (10 * lax.axis_index("data") + lax.axis_index("model"))  # noqa: E731
    for names, want in [(("data", "model"), [0, 1, 10, 11]), (("model", "data"), [0, 10, 1, 11])]:
        got = jax.shard_map(index, mesh=mesh, in_specs=P(names), out_specs=P(names))(
            np.ones(8, np.float32))
        close(got, np.repeat(want, 2))
    both = jax.shard_map(lambda a: lax.psum(a, ("data", "model")), mesh=mesh,
                         in_specs=P(("data", "model")), out_specs=P())
    close(both(np.arange(8, dtype=np.float32)), [12, 16])
    # replicated over one axis: the block each 'data' row holds, stacked over 'data' only
    rows = jax.shard_map(lambda a: lax.pmean(a, "model"), mesh=mesh,
                         in_specs=P("data", "model"), out_specs=P("data", None))
    y = np.arange(16, dtype=np.float32).reshape(4, 4)
    close(rows(y), (y[:, :2] + y[:, 2:]) / 2)


def test_in_jit_a_gradients_forward_and_backward_maps_run_as_one():
    mesh = jax.make_mesh((2, 2), ("data", "model"))
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((8, 6), (6, 4), (4, 3))]
    loss = jax.shard_map(lambda *a: lax.pmean(jnp.mean(_megatron(*a) ** 2), "data"),
                         mesh=mesh, in_specs=(P("data", None), P(None, "model"),
                                              P("model", None)), out_specs=P())
    step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
    assert str(jax.make_jaxpr(jax.value_and_grad(loss))(*args)).count("pmap[") == 2
    assert step.lower(*args).as_text().count("pmap[") == 1
    want = jax.value_and_grad(lambda x, w1, w2: jnp.mean((jnp.tanh(x @ w1) @ w2) ** 2),
                              argnums=(0, 1, 2))(*args)
    tree_close(step(*args), want)
    # (backward maps whose cotangents need the forward map's result, computed outside, stay
    # apart: one forward map (the two calls' are one after CSE) and two backward maps)
    twice = jax.jit(jax.grad(lambda *a: jnp.sin(loss(*a)) * loss(*a)))
    assert twice.lower(*args).as_text().count("pmap[") == 3
    close(twice(*args), jax.grad(lambda *a: jnp.sin(loss(*a)) * loss(*a))(*args))

    def squared_gradient(*a):  # (second order: maps of maps' derivatives fuse too)
        return sum(jnp.sum(g ** 2) for g in jax.grad(loss, argnums=(0, 1, 2))(*a))

    second = jax.grad(squared_gradient, argnums=(0, 1, 2))
    tree_close(jax.jit(second)(*args), second(*args))


def test_every_collective_over_one_axis_of_a_two_dimensional_mesh():
    mesh = jax.make_mesh((2, 2), ("data", "model"))
    x = np.arange(16, dtype=np.float32).reshape(4, 4)  # (each device: a 2x2 block)
    blocks = x.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3)  # [data, model] -> its block

    def run(f, out_specs):
        return np.asarray(jax.shard_map(f, mesh=mesh, in_specs=P("data", "model"),
                                        out_specs=out_specs)(x))

    # gathered along 'model': each 'data' row of devices holds its band of rows
    close(run(lambda b: lax.all_gather(b, "model", axis=1, tiled=True), P("data", None)), x)
    # summed over 'model', each device keeping its column of the sum
    got = run(lambda b: lax.psum_scatter(b, "model", scatter_dimension=1, tiled=True),
              P("data", "model"))
    want = np.concatenate([(blocks[d, 0] + blocks[d, 1]) for d in range(2)])
    close(got, want)
    # the blocks of the two 'data' rows swapped
    close(run(lambda b: lax.ppermute(b, "data", [(0, 1), (1, 0)]), P("data", "model")),
          np.concatenate([x[2:], x[:2]]))
    # all_to_all over 'model': splits columns, exchanges, concatenates rows
    got = run(lambda b: lax.all_to_all(b, "model", 1, 0, tiled=True), P("data", "model"))
    want = np.block([[np.concatenate([blocks[d, m][:, k:k + 1] for m in range(2)])
                      for k in range(2)] for d in range(2)])
    close(got, want)
    # vmap of the mapped function: each example's result as alone
    f = jax.shard_map(lambda b: lax.psum(b, ("data", "model")), mesh=mesh,
                      in_specs=P("data", "model"), out_specs=P())
    close(jax.vmap(f)(np.stack([x, 2 * x])), np.stack([f(x), f(2 * x)]))
