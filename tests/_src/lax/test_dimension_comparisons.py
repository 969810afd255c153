"""eq_to_p, le_to_p and lt_to_p against JAX 0.10.2: values, dtypes and weak types over mixed
dtypes and broadcasting, staging, vmap, their zero derivative and jit."""
import jax
import numpy as np
import pytest

import didax
from didax import lax

PAIRS = [(np.int32(3), np.int32(3)), (np.float32(1), np.float32(2)), (np.int32(3), np.int64(3)),
         (np.array([1, 2, 5], np.int32), np.int32(2)), (True, False), (3, 4),
         (np.arange(6, dtype=np.int32).reshape(2, 3), np.full((2, 3), 3, np.int32))]


@pytest.mark.parametrize("name", ["eq_to", "le_to", "lt_to"])
def test_dimension_comparisons_match_jax(name):
    ours, theirs = getattr(lax, f"{name}_p"), getattr(jax.lax, f"{name}_p")
    for a, b in PAIRS:
        got, want = ours.bind(a, b), theirs.bind(a, b)
        assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
        np.testing.assert_array_equal(got, want)
    x = np.arange(4, dtype=np.int32)

    def f(p):
        return lambda v: p.bind(v, np.int32(2))

    assert str(didax.make_jaxpr(f(ours))(x)) == str(jax.make_jaxpr(f(theirs))(x))
    np.testing.assert_array_equal(didax.vmap(f(ours))(x), jax.vmap(f(theirs))(x))
    np.testing.assert_array_equal(didax.jit(f(ours))(x), f(theirs)(x))
    grad = didax.grad(lambda v: ours.bind(v, 1.0).astype(np.float32) * v)(np.float32(1.0))
    assert float(grad) == float(jax.grad(lambda v: theirs.bind(v, 1.0).astype(np.float32)
                                         * v)(np.float32(1)))
    with pytest.raises(TypeError):
        ours.bind(np.complex64(1), np.complex64(1))
