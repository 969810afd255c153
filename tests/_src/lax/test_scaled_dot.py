"""lax.scaled_dot: values (as XLA computes them on CPU: bfloat16 operands and scales, float32
sums) and dtypes against JAX, default and explicit dimension numbers, errors, jit, vmap, and
derivatives (which JAX lacks) against finite differences."""
import jax.numpy as jjnp
import numpy as np
import pytest
from jax import lax as jlax

import didax
from didax import lax
from didax.test_util import check_grads

RNG = np.random.default_rng(0)
L = RNG.standard_normal((4, 64)).astype(np.float32)
R = RNG.standard_normal((64, 3)).astype(np.float32)
LS = RNG.uniform(1, 2, (4, 2)).astype(np.float32)
RS = RNG.uniform(1, 2, (2, 3)).astype(np.float32)


def assert_matches(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs", [
    dict(lhs_scale=LS, rhs_scale=RS), dict(lhs_scale=LS, rhs_scale=RS,
                                           preferred_element_type="float32"),
    dict(), dict(rhs_scale=RS),
])
def test_matrices_against_jax(kwargs):
    assert_matches(lax.scaled_dot(L, R, **kwargs), jlax.scaled_dot(L, R, **kwargs))


def test_batches_float8_and_explicit_dimension_numbers_against_jax():
    args = (L[None], R[None])
    kw = dict(lhs_scale=LS[None], rhs_scale=RS[None])
    assert_matches(lax.scaled_dot(*args, **kw), jlax.scaled_dot(*args, **kw))
    f8 = [a.astype(jjnp.float8_e4m3fn) for a in (L, R)]
    e8 = dict(lhs_scale=LS.astype(jjnp.float8_e8m0fnu), rhs_scale=RS.astype(jjnp.float8_e8m0fnu))
    assert_matches(lax.scaled_dot(*f8, **e8), jlax.scaled_dot(*f8, **e8))
    dn = (((0,), (1,)), ((), ()))
    kw = dict(lhs_scale=LS.T, rhs_scale=RS.T, dimension_numbers=dn)
    assert_matches(lax.scaled_dot(L.T, R.T, **kw), jlax.scaled_dot(L.T, R.T, **kw))


def test_scale_blocks_must_divide_the_contracting_dimension():
    bad = np.ones((4, 3), np.float32)
    with pytest.raises(TypeError, match="divisible"):
        jlax.scaled_dot(L, R, lhs_scale=bad, rhs_scale=RS)
    with pytest.raises(TypeError, match="divisible"):
        lax.scaled_dot(L, R, lhs_scale=bad, rhs_scale=RS)
    with pytest.raises(TypeError, match="must match"):
        lax.scaled_dot(L, R, lhs_scale=np.ones((5, 2), np.float32), rhs_scale=RS)


def test_jit_vmap_and_derivatives():
    def f(a, b):
        return lax.scaled_dot(a, b, lhs_scale=LS, rhs_scale=RS, preferred_element_type="float32")

    np.testing.assert_array_equal(np.asarray(didax.jit(f)(L, R)), np.asarray(f(L, R)))
    ls = np.stack([L, 2 * L])
    np.testing.assert_array_equal(np.asarray(didax.vmap(f, (0, None))(ls, R)),
                                  np.stack([np.asarray(f(a, R)) for a in ls]))
    # The operands are rounded to bfloat16, so finite differences take steps of 1/8 from
    # multiples of 1/8, which bfloat16 holds exactly.
    a = np.round(L[:, :4] * 8) / 8
    b = np.round(R[:4] * 8) / 8
    g = lambda a, b: lax.scaled_dot(a, b, preferred_element_type="float32")  # noqa: E731
    check_grads(g, (a, b), order=1, modes=("fwd", "rev"), eps=2 ** -3, atol=0.1, rtol=0.1)
