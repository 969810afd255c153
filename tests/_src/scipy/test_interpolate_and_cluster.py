"""didax.scipy.interpolate.RegularGridInterpolator and didax.scipy.cluster.vq.vq against jax
0.10.2 (and SciPy): values, dtypes and weak types (float32, and float64 under x64), points
outside the grid, descending and unsorted grids, errors, jit, vmap, and derivatives."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.cluster.vq
import scipy.interpolate
from jax_absent import needs_jax
from jax_testing import both_x64

import didax
import didax.numpy as jnp
from didax.scipy.cluster.vq import vq
from didax.scipy.interpolate import RegularGridInterpolator

JaxInterpolator = jax.scipy.interpolate.RegularGridInterpolator
jax_vq = jax.scipy.cluster.vq.vq


def jax_jit(fun):
    """jax.jit without XLA's backend optimizations: the references compile in half the time
    (compiling them is most of this module's run time)."""
    return jax.jit(fun, compiler_options={"xla_backend_optimization_level": 0})


KNOTS, POINTS = 4, 8  # per grid axis; per set of query points


def _grid(ndim, dtype, seed=0):
    """Strictly increasing, unevenly spaced axes of KNOTS knots, and values on them."""
    rng = np.random.default_rng(seed)
    axes = tuple(np.cumsum(rng.uniform(0.5, 1.5, KNOTS)).astype(dtype) for _ in range(ndim))
    values = rng.standard_normal((KNOTS,) * ndim).astype(dtype)
    return axes, values


def _queries(axes, seed=1):
    """(POINTS, ndim) points: most inside the grid, two on knots, the last two outside."""
    rng = np.random.default_rng(seed)
    cols = []
    for a in axes:
        col = rng.uniform(a[0], a[-1], POINTS)
        col[0], col[1] = a[1], a[0]  # on knots (the lower edge included)
        col[-2], col[-1] = a[0] - 0.7, a[-1] + 0.4  # outside below, above
        cols.append(col)
    return np.stack(cols, axis=-1).astype(axes[0].dtype)


def jax_interpolate_all(cases):
    """JAX's results for the cases (points, values, xi, constructor keywords), all computed in
    one jax.jit: one compile is cheaper than JAX's eager compiles of each operation for each
    new shape. An array shared by cases is passed once (XLA then computes what they share
    once, which keeps the compile short)."""
    leaves, tree = jax.tree_util.tree_flatten([case[:3] for case in cases])
    distinct = list({id(leaf): leaf for leaf in leaves}.values())
    positions = [[id(d) for d in distinct].index(id(leaf)) for leaf in leaves]

    def run(distinct):
        arrays = jax.tree_util.tree_unflatten(tree, [distinct[i] for i in positions])
        return [JaxInterpolator(p, v, **case[3])(x) for (p, v, x), case in zip(arrays, cases)]
    return jax_jit(run)(distinct)


def assert_all_like_jax(cases, rtol):
    """didax's results for the cases against JAX's (returned)."""
    wants = jax_interpolate_all(cases)
    for (points, values, xi, kwargs), want in zip(cases, wants):
        assert_like_jax(RegularGridInterpolator(points, values, **kwargs)(xi), want, rtol)
    return wants


def assert_like_jax(got, want, rtol):
    assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, want.weak_type), (
        got.shape, want.shape, got.dtype, want.dtype, got.weak_type, want.weak_type)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=rtol)


# -- RegularGridInterpolator ----------------------------------------------------------------

@pytest.mark.parametrize("x64", [False, True])
def test_matches_jax_inside_on_knots_and_outside(x64):
    dtype = np.float64 if x64 else np.float32
    cases = []
    for ndim in (1, 2, 3):
        axes, values = _grid(ndim, dtype, seed=ndim)
        xi = _queries(axes, seed=ndim)
        for method in ("linear", "nearest"):
            for fill_value in (np.nan, -3.25, None):
                cases.append((axes, values, xi, {"method": method, "fill_value": fill_value}))
    with both_x64(x64):
        assert_all_like_jax(cases, 1e-12 if x64 else 2e-6)
        # a method given at the call overrides the constructor's
        for axes, values, xi, kwargs in cases[:6]:
            other = "nearest" if kwargs["method"] == "linear" else "linear"
            np.testing.assert_array_equal(
                RegularGridInterpolator(axes, values, other, fill_value=kwargs["fill_value"])(
                    xi, kwargs["method"]),
                RegularGridInterpolator(axes, values, **kwargs)(xi))


def test_matches_scipy_with_extrapolation():
    axes, values = _grid(3, np.float64)
    xi = _queries(axes)
    with both_x64():
        for method in ("linear", "nearest"):
            for fill_value in (np.nan, None):
                got = RegularGridInterpolator(axes, values, method, fill_value=fill_value)(xi)
                want = scipy.interpolate.RegularGridInterpolator(
                    axes, values, method, bounds_error=False, fill_value=fill_value)(xi)
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_trailing_value_dimensions_and_query_shapes():
    axes, values = _grid(2, np.float32)
    values = np.stack([values, 2 * values, -values], axis=-1)  # (4, 4, 3)
    xi = _queries(axes).reshape(2, 4, 2)
    assert RegularGridInterpolator(axes, values)(xi).shape == (2, 4, 3)
    assert_all_like_jax([(axes, values, xi, {"method": "linear"}),
                         (axes, values, xi, {"method": "nearest"}),
                         # fewer grids than value dimensions: the rest are trailing dimensions
                         (axes[:1], values, xi[..., 0].ravel(), {})], 2e-6)


def test_query_point_forms():
    axes, values = _grid(2, np.float32)
    a, b = np.array([1.2, 1.9, 2.0, 2.4], np.float32), np.array([[1.5], [2.5]], np.float32)
    assert_all_like_jax([(axes, values, xi, {}) for xi in [
        (a, b),  # a tuple of coordinate arrays, broadcast
        (1.3, 2),  # of Python scalars
        (np.array([1, 2]), np.array([2, 3])),  # of integers (stacked as floats)
        (np.stack([a, a], -1),),  # a 1-tuple holding the array
        np.array([1.2, 1.5, 1.9, 2.5], np.float32)]], 2e-6)  # 1-D: a flat list of points


GRID1 = (np.array([0.0, 1.0, 3.0, 3.5]),)
XI1 = np.array([0.5, 1.0, 7.0])


def test_dtypes_and_weak_types():
    cases = [
        # integer values and grids become floats
        ((np.arange(4),), np.arange(4), np.array([0, 2, 4]), {}),
        # float16 everywhere stays float16; float16 values and float32 points promote
        ((np.arange(4, dtype=np.float16),), np.arange(4, dtype=np.float16),
         XI1.astype(np.float16), {}),
        (GRID1, np.arange(4, dtype=np.float16), XI1.astype(np.float32), {"method": "nearest"}),
        # complex values, real weights
        (GRID1, np.arange(4) * (1 + 2j), XI1, {"fill_value": None}),
        # an integer fill value
        (GRID1, np.arange(4, dtype=np.float32), XI1, {"fill_value": 2}),
    ]
    # weak types: weakly typed grids, values and points (from Python scalars) keep the
    # result weak where JAX does
    weak, weak_j = jnp.arange(4) * 1.5, jjnp.arange(4) * 1.5
    assert weak.weak_type and weak_j.weak_type
    strong = XI1.astype(np.float32)
    weak_cases = [((weak,), weak, x, {"method": method, "fill_value": fill_value})
                  for method in ("linear", "nearest") for fill_value in (np.nan, None)
                  for x in (weak, strong)]
    got = [RegularGridInterpolator(p, v, **kw)(x) for p, v, x, kw in cases + weak_cases]
    weak_cases = [((weak_j,), weak_j, weak_j if x is weak else x, kw)
                  for _, _, x, kw in weak_cases]
    for g, w in zip(got, jax_interpolate_all(cases + weak_cases)):
        assert_like_jax(g, w, 1e-3)


def test_dtypes_under_x64():
    with both_x64():
        a = np.array([1.2, 1.9, 2.0, 2.4], np.float32)
        assert_all_like_jax([
            # integer values and grids become float64 (int64) or float32 (int32)
            ((np.arange(4),), np.arange(4), np.array([0, 2, 4]), {}),
            ((np.arange(4, dtype=np.int32),), np.arange(4, dtype=np.int32),
             np.array([0, 2, 4], np.int32), {}),
            # float32 throughout stays float32; a float64 grid widens the result
            ((GRID1[0].astype(np.float32),), np.arange(4, dtype=np.float32),
             XI1.astype(np.float32), {}),
            (GRID1, np.arange(4, dtype=np.float32), XI1.astype(np.float32), {}),
            # a float64 fill value widens the result, as in JAX
            ((GRID1[0].astype(np.float32),), np.arange(4, dtype=np.float32),
             XI1.astype(np.float32), {"fill_value": np.float64(2)}),
            # a tuple of float32 coordinates is stacked in the default float dtype, float64
            ((GRID1[0].astype(np.float32),), np.arange(4, dtype=np.float32), (a,), {}),
        ], 1e-6)


def test_descending_and_unsorted_grids_and_nan_points_give_jaxs_results():
    # JAX does not sort or check the axes; the results (meaningless) are JAX's
    values = np.array([1.0, 5.0, 3.0, 0.0], np.float32)
    xi = np.array([0.5, 1.5, 2.2, -1.0, 2.9, 3.5, np.nan, 1.0], np.float32)
    cases = [((grid,), values, xi, {"method": method, "fill_value": fill_value})
             for grid in (np.array([3.0, 2.0, 1.0, 0.0], np.float32),
                          np.array([1.0, 0.0, 3.0, 2.0], np.float32),
                          np.array([0.0, 1.0, 2.0, 3.0], np.float32))
             for method in ("linear", "nearest") for fill_value in (np.nan, None)]
    wants = assert_all_like_jax(cases, 2e-6)
    for (points, values, xi, kwargs), want in zip(cases[:4], wants):
        got = didax.jit(RegularGridInterpolator(points, values, **kwargs))(xi)
        assert_like_jax(got, want, 2e-6)


@pytest.mark.filterwarnings("ignore:Data type alias:DeprecationWarning")  # (JAX's, for "a")
def test_errors_as_in_jax():
    axes, values = _grid(2, np.float32)
    interp = RegularGridInterpolator(axes, values)
    jinterp = JaxInterpolator(axes, values)
    constructions = [
        ((axes, values), {"method": "cubic"}, ValueError, "cubic"),
        ((axes, values), {"bounds_error": True}, NotImplementedError, "bounds_error"),
        ((axes, values.tolist()), {}, TypeError, "list"),
        ((axes, 1.0), {}, AttributeError, "array"),
        ((axes + (np.arange(2.0),), values), {}, ValueError, "3 point arrays"),
        (([a.tolist() for a in axes], values), {}, TypeError, "list"),
        ((axes, values), {"fill_value": 1j}, ValueError, "complex64"),
        ((axes, values), {"fill_value": "a"}, TypeError, "str"),
    ]
    for args, kwargs, error, words in constructions:
        with pytest.raises(error):
            JaxInterpolator(*args, **kwargs)
        with pytest.raises(error, match=words):
            RegularGridInterpolator(*args, **kwargs)
    calls = [
        ((np.ones((2, 2)),), {"method": "cubic"}, ValueError, "cubic"),
        ((np.ones((2, 3)),), {}, ValueError, r"dimension 3 \(shape \(2, 3\)\)"),
        ((np.ones(3),), {}, TypeError, "reshape"),  # a 1-D xi is read as (-1, 2)
        ((np.float32(1.0),), {}, IndexError, "scalar"),
        (([0.5, 1.5],), {}, TypeError, "list"),
        (((np.ones(2), np.ones(3)),), {}, ValueError, "broadcast"),
        ((([0.5], [1.5]),), {}, TypeError, "list"),
    ]
    for args, kwargs, error, words in calls:
        with pytest.raises(error):
            jinterp(*args, **kwargs)
        with pytest.raises(error, match=words):
            interp(*args, **kwargs)


@needs_jax
def test_defaults_are_jaxs():
    ours = RegularGridInterpolator.__init__.__defaults__
    theirs = JaxInterpolator.__init__.__defaults__
    assert ours[:2] == theirs[:2] and np.isnan(ours[2]) and np.isnan(theirs[2])


def test_attributes_defaults_and_pytree():
    assert didax.scipy.interpolate.RegularGridInterpolator is RegularGridInterpolator
    assert didax.scipy.cluster.vq.vq is vq
    axes, values = _grid(2, np.float32)
    interp = RegularGridInterpolator(axes, values)
    assert RegularGridInterpolator.__init__.__defaults__[:2] == ("linear", False)
    assert np.isnan(RegularGridInterpolator.__init__.__defaults__[2])
    assert (interp.method, interp.bounds_error) == ("linear", False)
    assert isinstance(interp.grid, tuple) and len(interp.grid) == 2
    assert interp.fill_value.weak_type and np.isnan(interp.fill_value)
    leaves = didax.tree_util.tree_leaves(interp)
    assert len(leaves) == 4 and leaves[2] is interp.values
    nofill = RegularGridInterpolator(axes, values, "nearest", fill_value=None)
    assert len(didax.tree_util.tree_leaves(nofill)) == 3
    rebuilt = didax.tree_util.tree_map(lambda x: x, nofill)
    assert (rebuilt.method, rebuilt.fill_value) == ("nearest", None)


def test_jit_and_vmap_against_eager():
    axes, values = _grid(2, np.float32)
    xi = _queries(axes).reshape(4, 2, 2)
    for method in ("linear", "nearest"):
        for fill_value in (np.nan, None):
            interp = RegularGridInterpolator(axes, values, method, fill_value=fill_value)
            eager = interp(xi)
            # the interpolator as an argument (a pytree), and built inside jit
            np.testing.assert_allclose(didax.jit(lambda f, x: f(x))(interp, xi), eager,
                                       rtol=1e-6)
            built = didax.jit(lambda v, x, m=method, f=fill_value: RegularGridInterpolator(
                axes, v, m, fill_value=f)(x))
            np.testing.assert_allclose(built(values, xi), eager, rtol=1e-6)
            # vmap over query points, over values, and over a batch of interpolators
            np.testing.assert_allclose(didax.vmap(interp)(xi), eager, rtol=1e-6)
            stacked = np.stack([values, 3 * values])
            by_values = didax.vmap(lambda v, m=method, f=fill_value: RegularGridInterpolator(
                axes, v, m, fill_value=f)(xi))(stacked)
            np.testing.assert_allclose(by_values[1], 3 * np.asarray(eager), rtol=1e-5)
            batch = didax.vmap(lambda v, m=method, f=fill_value: RegularGridInterpolator(
                axes, v, m, fill_value=f))(stacked)
            by_interp = didax.vmap(lambda f: f(xi))(batch)
            np.testing.assert_allclose(by_interp, by_values, rtol=1e-6)


def test_linear_gradients():
    check_grads = didax.test_util.check_grads
    with both_x64():
        axes, values = _grid(2, np.float64)
        values = np.stack([values, values ** 2], -1)  # a trailing dimension
        xi = np.array([[1.3, 2.1], [2.2, 3.4], [1.9, 1.5]])  # inside cells, not on knots
        check_grads(lambda v: RegularGridInterpolator(axes, v)(xi), (values,), order=2,
                    modes=["fwd", "rev"])
        check_grads(lambda x: RegularGridInterpolator(axes, values)(x), (xi,), order=2,
                    modes=["fwd", "rev"])
        outside = xi + np.array([5.0, 0.0])  # extrapolated: differentiable too
        check_grads(lambda x: RegularGridInterpolator(axes, values, fill_value=None)(x),
                    (outside,), order=2, modes=["fwd", "rev"])


# -- vq -------------------------------------------------------------------------------------

def assert_vq_like_jax(cases):
    """vq on each (obs, code_book) against JAX's, computed for all cases in one jax.jit (one
    compile: cheaper than JAX's eager compiles of each operation for each shape)."""
    got = [vq(obs, book) for obs, book in cases]
    want = jax_jit(lambda cases: [jax_vq(obs, book) for obs, book in cases])(cases)
    for (obs, book), (code, dist), (want_code, want_dist) in zip(cases, got, want):
        assert_like_jax(code, want_code, 0)
        tol = (2e-3 if np.float16 in (obs.dtype, book.dtype)
               else 1e-12 if dist.dtype == np.float64 else 1e-5)
        assert_like_jax(dist, want_dist, tol)
    return got


@pytest.mark.parametrize("x64", [False, True])
def test_vq_matches_jax_and_scipy(x64):
    rng = np.random.default_rng(2)
    shapes = [((5, 3), (4, 3)), ((1, 2), (1, 2)), ((6,), (3,)), ((0, 2), (3, 2)),
              ((7, 4), (2, 4))]
    cases = [(4 * rng.standard_normal(o), 4 * rng.standard_normal(b)) for o, b in shapes]
    # dtypes: integers measure in float32 (int64: float64), as in JAX
    obs, book = cases[0]
    pairs = ([(np.float64, np.float32), (np.int64, np.int64), (np.int32, np.int32)] if x64 else
             [(np.int32, np.int32), (np.float16, np.float16), (np.float16, np.int8),
              (np.float32, np.complex64)])
    dtype_cases = [(obs.astype(o), book.astype(b)) for o, b in pairs]
    # ties (the first of the nearest codes wins), NaN, and a feature dimension of 1 (which
    # broadcasts, as in JAX)
    special = [(np.array([[0.0, 0.0], [np.nan, 1.0], [2.0, 2.0]]),
                np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [2.0, 2.0]])),
               (np.ones((2, 3)), np.arange(4.0)[:, None]),
               (np.arange(2.0)[:, None], np.ones((4, 3)))]
    with both_x64(x64):
        got = assert_vq_like_jax(cases + dtype_cases + special)
    for (obs, book), (code, dist) in zip(cases, got):
        if obs.size:
            want_code, want_dist = scipy.cluster.vq.vq(obs, book)
            np.testing.assert_array_equal(np.asarray(code), want_code)
            np.testing.assert_allclose(np.asarray(dist), want_dist, rtol=1e-5)
    assert int(got[-3][0][0]) == 0  # of the three codes at distance 1, the first
    # check_finite is accepted and ignored, as in JAX
    for g, w in zip(vq(*special[0], check_finite=False), vq(*special[0], check_finite=True)):
        np.testing.assert_array_equal(g, w)


def test_vq_errors():
    cases = [
        ((np.ones((2, 3)), np.ones((4, 2))), TypeError, r"features.*\(2, 3\).*\(4, 2\)"),
        ((np.ones((2, 2)), np.ones(2)), ValueError, "same rank"),
        ((np.ones((2, 2, 2)), np.ones((2, 2, 2))), ValueError, "1 or 2"),
        ((1.0, 2.0), ValueError, "1 or 2"),
        (([[1.0, 2.0]], np.ones((4, 2))), TypeError, "list"),
    ]
    for args, error, words in cases:
        with pytest.raises(error):
            jax_vq(*args)
        with pytest.raises(error, match=words):
            vq(*args)


def test_vq_jit_vmap_and_grad():
    rng = np.random.default_rng(3)
    obs = rng.standard_normal((3, 5, 2)).astype(np.float32)
    book = rng.standard_normal((4, 2)).astype(np.float32)
    eager = [vq(o, book) for o in obs]
    for g, e in zip(didax.jit(vq)(obs[0], book), eager[0]):
        np.testing.assert_array_equal(g, e)
    codes, dists = didax.vmap(vq, in_axes=(0, None))(obs, book)
    np.testing.assert_array_equal(codes, np.stack([c for c, _ in eager]))
    np.testing.assert_allclose(dists, np.stack([d for _, d in eager]), rtol=1e-6)
    # the gradient flows to the chosen code only
    loss = lambda lib_vq: lambda o, b: lib_vq(o, b)[1].sum()  # noqa: E731
    got = didax.grad(loss(vq), argnums=(0, 1))(obs[0], book)
    want = jax_jit(jax.grad(loss(jax_vq), argnums=(0, 1)))(obs[0], book)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
