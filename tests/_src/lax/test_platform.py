"""lax.platform_dependent: the CPU branch or the default, as JAX on CPU; every branch traced
into a cond; errors; derivatives and vmap through it."""
import jax
import numpy as np
import pytest
from jax import lax as jlax

import didax
from didax import lax


def branches(m):
    return lambda x: m.platform_dependent(x, cpu=lambda x: x * 2, default=lambda x: x * 3)


@pytest.mark.parametrize("kwargs", [
    dict(cpu=lambda x: x * 2, default=lambda x: x * 3),
    dict(tpu=lambda x: x * 2, default=lambda x: x * 3),
    dict(cuda=lambda x: x * 2, cpu=lambda x: x - 1),
    dict(cpu=lambda x: x * 2),
])
def test_values_match_jax(kwargs):
    for x in (1.0, np.arange(3, dtype=np.float32)):
        got, want = lax.platform_dependent(x, **kwargs), jlax.platform_dependent(x, **kwargs)
        assert type(got) is type(want) or np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        jitted = didax.jit(lambda x: lax.platform_dependent(x, **kwargs))(x)  # noqa: B023
        want = jax.jit(lambda x: jlax.platform_dependent(x, **kwargs))(x)  # noqa: B023
        assert jitted.dtype == want.dtype and jitted.weak_type == want.weak_type
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(want))


def test_every_branch_is_staged():
    text = str(didax.make_jaxpr(branches(lax))(1.0))
    assert "cond" in text and "mul c 2.0" in text and "3.0" in text


def test_no_branch_for_cpu_raises():
    with pytest.raises(NotImplementedError):
        jlax.platform_dependent(1.0, tpu=lambda x: x * 2)
    with pytest.raises(NotImplementedError, match="cpu"):
        lax.platform_dependent(1.0, tpu=lambda x: x * 2)


def test_gpu_is_not_a_platform_name():
    with pytest.raises(ValueError, match="cuda"):
        jlax.platform_dependent(1.0, gpu=lambda x: x, cpu=lambda x: x)
    with pytest.raises(ValueError, match="cuda"):
        lax.platform_dependent(1.0, gpu=lambda x: x, cpu=lambda x: x)


def test_derivatives_and_vmap_match_jax():
    assert float(didax.grad(branches(lax))(1.0)) == float(jax.grad(branches(jlax))(1.0))
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(didax.vmap(branches(lax))(x)),
                                  np.asarray(jax.vmap(branches(jlax))(x)))
