"""stage, dce_sink and shape_as_value against JAX: results, types, weak types, what the
jaxpr shows, and errors."""
import jax
import numpy as np
import pytest
from jax import lax as jlax

import didax
from didax import lax


@pytest.mark.parametrize("x", [3.0, 3, True, np.arange(3), np.float32(2.5), 1 + 2j])
def test_stage_makes_arrays_as_jax(x):
    got, want = lax.stage(x), jlax.stage(x)
    assert isinstance(got, didax.Array)
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_stage_leaves_tracers_and_adds_no_equation():
    text = str(didax.make_jaxpr(lambda x: lax.stage(x) + lax.stage(2.0))(1.0))
    assert text == str(jax.make_jaxpr(lambda x: jlax.stage(x) + jlax.stage(2.0))(1.0))


def test_stage_rejects_what_is_not_a_value():
    with pytest.raises(TypeError) as theirs:
        jlax.stage((1, 2))
    with pytest.raises(TypeError, match=str(theirs.value).split(".")[0]):
        lax.stage((1, 2))


def test_dce_sink_returns_none_and_checks_its_values():
    assert lax.dce_sink((didax.numpy.ones(3), 2.0)) is None
    assert jlax.dce_sink((jax.numpy.ones(3), 2.0)) is None
    assert didax.jit(lambda x: lax.dce_sink(x))(1.0) is None
    with pytest.raises(TypeError):
        lax.dce_sink("not an array")


@pytest.mark.parametrize("shape", [(2, 3), (), (7,)])
def test_shape_as_value_matches_jax(shape):
    got, want = lax.shape_as_value(shape), jlax.shape_as_value(shape)
    assert type(got).__module__.split(".")[0] == ("numpy" if shape else "didax")
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_shape_as_value_rejects_non_integers():
    with pytest.raises(TypeError, match="shape"):
        lax.shape_as_value((2.5, 3))
