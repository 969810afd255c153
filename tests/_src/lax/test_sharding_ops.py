"""with_sharding_constraint: the value unchanged (values, dtypes, pytrees), through jit, grad
and vmap; the checks JAX makes on the shardings, with its error types."""
import jax
import numpy as np
import pytest
from jax import lax as jlax
from jax.sharding import NamedSharding as JNamedSharding
from jax.sharding import PartitionSpec as JP
from jax_absent import needs_jax

import didax
from didax import lax
from didax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

X = np.arange(12, dtype=np.float32).reshape(4, 3)


def mesh():
    return didax.make_mesh((1,), ("x",))


def test_the_value_passes_through():
    s = NamedSharding(mesh(), PartitionSpec("x"))
    out = lax.with_sharding_constraint(X, s)
    assert isinstance(out, didax.Array) and out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), X)
    pair = lax.with_sharding_constraint((X, np.ones(2, np.int32)),
                                        (s, SingleDeviceSharding(didax.devices()[0])))
    assert pair[1].dtype == np.int32
    np.testing.assert_array_equal(np.asarray(didax.jit(lambda x: lax.with_sharding_constraint(
        x, s))(X)), X)
    np.testing.assert_array_equal(np.asarray(didax.grad(lambda x: lax.with_sharding_constraint(
        x, s).sum())(X)), np.ones_like(X))
    np.testing.assert_array_equal(np.asarray(didax.vmap(lambda x: lax.with_sharding_constraint(
        x, s))(X)), X)


def test_partition_specs_need_a_mesh():
    with pytest.raises(RuntimeError, match="non-empty mesh"):
        jlax.with_sharding_constraint(X, JP("x"))
    with pytest.raises(RuntimeError, match="non-empty mesh"):
        lax.with_sharding_constraint(X, PartitionSpec("x"))
    with didax.sharding.set_mesh(mesh()):
        np.testing.assert_array_equal(np.asarray(lax.with_sharding_constraint(
            X, PartitionSpec("x"))), X)


@needs_jax
def test_bad_shardings_raise_as_in_jax():
    jmesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    cases = [(None, None, ValueError),
             (JNamedSharding(jmesh, JP("x", None, None)),
              NamedSharding(mesh(), PartitionSpec("x", None, None)), ValueError),
             ("foo", "foo", TypeError)]
    for theirs, mine, error in cases:
        with pytest.raises(error):
            jlax.with_sharding_constraint(X, theirs)
        with pytest.raises(error):
            lax.with_sharding_constraint(X, mine)
    js = JNamedSharding(jmesh, JP("x"))
    with pytest.raises(ValueError, match="prefix"):
        jlax.with_sharding_constraint((X, X), (js, js, js))
    s = NamedSharding(mesh(), PartitionSpec("x"))
    with pytest.raises(ValueError, match="prefix"):
        lax.with_sharding_constraint((X, X), (s, s, s))
