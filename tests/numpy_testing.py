"""Shared helpers of the didax.numpy tests: compare results with NumPy's, in both x64 modes."""
import numpy as np
import pytest

X64 = pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])


def leaves(r):
    """Arrays of a (nested) result; a list of plain numbers is one leaf."""
    if isinstance(r, (tuple, list)) and not all(isinstance(x, (int, float, complex)) for x in r):
        return [leaf for x in r for leaf in leaves(x)]
    return [r]


def assert_matches(got, want, exact=False, rtol=1e-5, atol=1e-6):
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if exact or w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------------------
# The checks each jnp test module applies to its own tables of cases


def check_result_dtypes(case, expected, x64):
    """`case(jnp)`'s dtypes and weak types (`*`) equal JAX's, recorded as `expected[x64]`."""
    import didax.numpy as jnp
    from didax._src.config import enable_x64

    with enable_x64(x64):
        out = leaves(case(jnp))
    got = " ".join(str(x.dtype) + ("*" if x.weak_type else "") for x in out)
    assert got == expected[x64]


def check_matches_numpy(case, x64):
    """`case(jnp)` equals `case(np)` (to 1e-12 in x64 mode, 2e-5 in x32 mode)."""
    import didax.numpy as jnp
    from didax._src.config import enable_x64

    with enable_x64(x64):
        got = case(jnp)
    want = case(np)
    tol = 1e-12 if x64 else 2e-5
    assert_matches(got, want, rtol=tol, atol=tol)


def check_derivatives(fn, args):
    """Second-order derivatives in both modes, float64, against finite differences."""
    import didax.numpy as jnp
    from didax._src.config import enable_x64
    from didax._src.transforms.public_test_util import check_grads

    with enable_x64():
        check_grads(fn, tuple(jnp.asarray(a) for a in args), order=2, modes=("fwd", "rev"))


def check_traces(fn, sample):
    """`fn` stages (make_jaxpr) and its abstract shapes equal the eager ones."""
    import didax as jax
    import didax.numpy as jnp

    want = jax.tree_util.tree_map(lambda o: (o.shape, o.dtype), fn(jnp.asarray(sample)))
    shapes = jax.eval_shape(fn, sample)
    assert jax.tree_util.tree_map(lambda o: (o.shape, o.dtype), shapes) == want
    assert "lambda" in str(jax.make_jaxpr(fn)(sample))


def check_needs_concrete_inputs(fn, sample):
    """A value-dependent shape works on concrete values (also under jvp), not when staged."""
    import didax as jax
    import didax.numpy as jnp
    from didax.errors import ConcretizationTypeError

    x = np.abs(sample)
    fn(jnp.asarray(x))
    jax.jvp(lambda y: jnp.sum(jnp.ravel(jnp.asarray(fn(y), float))), (x,), (np.ones_like(x),))
    with pytest.raises(ConcretizationTypeError):
        jax.make_jaxpr(fn)(x)


def check_shape_function(build, min_dims, min_side, data):
    """A hypothesis-drawn array through `build`'s case gives NumPy's result."""
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    import didax.numpy as jnp

    x = data.draw(hnp.arrays(np.float32, hnp.array_shapes(
        min_dims=min_dims, max_dims=3, min_side=min_side, max_side=4),
        elements=st.integers(-9, 9).map(float)))
    fn = build(data.draw, x)
    assert_matches(fn(jnp), fn(np), rtol=1e-5, atol=1e-5)
