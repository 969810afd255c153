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
    from didax.test_util import check_grads

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


# --------------------------------------------------------------------------------------
# The tests each jnp test module runs on its tables, made once here

# Sample operands of the dtype tables: float32, int32 and a sorted float32 vector.
F = np.arange(6, dtype=np.float32).reshape(2, 3)
I = np.array([[3, 0, 1], [0, 2, 2]], np.int32)  # noqa: E741
S = np.array([1., 2., 4.], np.float32)
# What the tracing tables are traced on.
SAMPLE = np.array([1., -2., 0., 3., 1.], np.float32)
# The operands of the value tables (drawn in this order, as every module once drew them).
RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal(7)
K = RNG.standard_normal(3)


def _raises(call, exc):
    with pytest.raises(exc):
        call()


def _table_test(test_name, cases, check, x64=False, hypothesis=False):
    """A test of each entry of `cases` (a dict by name, or a list by index) by `check`."""
    if hypothesis:
        from hypothesis import given, settings
        from hypothesis import strategies as st

        @settings(max_examples=15, deadline=None)
        @given(data=st.data())
        def test(name, data):
            check(name, data)
    elif x64:
        @X64
        def test(name, x64):
            check(name, x64)
    else:
        def test(name):
            check(name)
    test.__name__ = test_name
    return pytest.mark.parametrize(
        "name", sorted(cases) if isinstance(cases, dict) else range(len(cases)))(test)


def table_tests(namespace):
    """The test functions for the tables a jnp test module defines (by their names in
    `namespace`, its globals()), to add to it with `globals().update(table_tests(globals()))`:

    DTYPE_CASES: name -> (case, JAX's result dtypes in x32 mode, in x64 mode): result dtypes
    and weak types as JAX's;
    NUMPY_CASES: values as NumPy's (both x64 modes); GRAD_CASES: name -> (fn, args),
    second-order derivatives against finite differences; SHAPE_CASES: name -> (case builder,
    minimum rank, minimum axis size), hypothesis-drawn arrays against NumPy; TRACEABLE and
    CONCRETE_ONLY (traced on SAMPLE, the module's or the one above): staging works, or needs
    concrete values; ERROR_CASES: [(call, exception type)], each call raises its exception."""
    ns = namespace
    sample = ns.get("SAMPLE", SAMPLE)
    tables = [  # (table, test, check of one entry, its keywords)
        ("DTYPE_CASES", "test_result_dtypes_match_jax", lambda n, x64: check_result_dtypes(
            ns["DTYPE_CASES"][n][0], ns["DTYPE_CASES"][n][1:], x64), dict(x64=True)),
        ("NUMPY_CASES", "test_functions_match_numpy",
         lambda n, x64: check_matches_numpy(ns["NUMPY_CASES"][n], x64), dict(x64=True)),
        ("GRAD_CASES", "test_jvp_matches_finite_differences",
         lambda n: check_derivatives(*ns["GRAD_CASES"][n]), {}),
        ("SHAPE_CASES", "test_shape_functions_match_numpy",
         lambda n, data: check_shape_function(*ns["SHAPE_CASES"][n], data),
         dict(hypothesis=True)),
        ("TRACEABLE", "test_traces_to_jaxpr", lambda n: check_traces(ns["TRACEABLE"][n], sample),
         {}),
        ("CONCRETE_ONLY", "test_value_dependent_shapes_need_concrete_inputs",
         lambda n: check_needs_concrete_inputs(ns["CONCRETE_ONLY"][n], sample), {}),
        ("ERROR_CASES", "test_errors", lambda i: _raises(*ns["ERROR_CASES"][i]), {}),
    ]
    return {test: _table_test(test, ns[table], check, **kw)
            for table, test, check, kw in tables if table in ns}
