"""lax.composite: values and dtypes against JAX, attributes passed to the decomposition, the
composite's name in the jaxpr, and (beyond JAX) derivatives and vmap."""
from functools import partial

import numpy as np
import pytest
from jax import lax as jlax

import didax
from didax import lax
from didax._src.config import enable_x64
from didax.test_util import check_grads


def tangent(m):
    return partial(m.composite, name="my.tangent")(
        lambda x, *, scale=1.0: m.sin(x) / m.cos(x) * scale)


@pytest.mark.parametrize("x", [1.0, np.float32(0.5), np.linspace(-1, 1, 5, dtype=np.float32)])
def test_values_and_dtypes_match_jax(x):
    got, want = tangent(lax)(x, scale=2.0), tangent(jlax)(x, scale=2.0)
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_several_operands_and_results():
    def f(m):
        return m.composite(lambda a, b: (a + b, a * b), name="pair", version=3)(1.5, 2.0)
    for got, want in zip(f(lax), f(jlax)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_the_jaxpr_names_the_composite():
    text = str(didax.make_jaxpr(lambda x: tangent(lax)(x, scale=2.0))(1.0))
    assert "name=my.tangent" in text and "sin" in text and "mul" in text


def test_jit_vmap_and_derivatives():
    f = tangent(lax)
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(didax.jit(f)(x)), np.asarray(f(x)))
    np.testing.assert_allclose(np.asarray(didax.vmap(f)(x)),
                               [float(f(float(v))) for v in x], rtol=1e-6)
    with enable_x64(True):
        check_grads(f, (0.3,), order=2, modes=("fwd", "rev"))


def test_bad_name_is_rejected():
    with pytest.raises(TypeError, match="name"):
        lax.composite(lambda x: x, name=3)
