"""The `lax.*_p` primitives didax exports against JAX 0.10.2's: the lax function stages an
equation of the same primitive name with the same params (names, and values printing alike),
and binding the primitive with those params gives JAX's result."""
import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax._src.lax.windowed_reductions import _select_and_scatter as jax_select_and_scatter

import didax
import didax.numpy as djnp
import didax.scipy.special
from didax import lax
from didax._src.core import Token
from didax._src.lax.device_put import ArrayCopySemantics
from didax._src.lax.primitive_table import JAX_PARAMETERS, LEFT_OUT
from didax._src.lax.select_and_scatter import select_and_scatter

f32 = np.float32
X = np.arange(12, dtype=f32).reshape(3, 4) / 7 - 0.4
V = np.arange(5, dtype=f32) / 3 + 0.1
IDX = np.array([[1], [0]], np.int32)


def _cumulative(name):
    return lambda L, np_: lambda a: getattr(L, name)(a, axis=1, reverse=True)


def _reduction(name, axes):
    return lambda L, np_: lambda a: getattr(L, name)(a, axes)


def _scatter(op):
    return lambda L, np_: lambda a, i: getattr(L, f"scatter_{op}")(
        a, i, np.full((2, 4), 0.5, f32), L.ScatterDimensionNumbers((1,), (0,), (0,)))


def _lib(L):
    """The library (jax or didax) whose lax `L` is."""
    return jax if L is jax.lax else didax


def _maxpool(L):
    return lambda a: L.reduce_window(a, -np.inf, L.max, (2, 2), (1, 1), "VALID").sum()


def _argmax_pair(L):
    """A computation of its own (variadic): the (value, index) of the maximum."""
    def argmax_pair(a, b):
        (av, ai), (bv, bi) = a, b
        pick = av >= bv
        return L.select(pick, av, bv), L.select(pick, ai, bi)

    return argmax_pair


def _affine(a, b):  # not associative: the fold's order shows
    return a * b + 1


SQUARE = np.eye(3, dtype=f32) * 2 + X[:, :3] / 10


def _select_and_scatter(L, window_dimensions, window_strides, padding, select=None,
                        init=0.0):
    """JAX's internal helper that stages select_and_scatter, or didax's; the scatter is not
    commutative (the order in which windows scatter shows)."""
    helper = jax_select_and_scatter if L is jax.lax else select_and_scatter
    return lambda a, s: helper(a, select or L.ge, window_dimensions, window_strides, padding,
                               s, np.dtype(s.dtype).type(init), lambda p, q: p * 2 + q)


def _linear_solve(L, symmetric=False):  # (solvers whose jaxprs print alike in both)
    return lambda a, b: L.custom_linear_solve(
        lambda x: a @ x, b, lambda m, r: r / 2.0, None if symmetric else (lambda m, r: r * 0.5),
        symmetric=symmetric)


# name -> (function of (lax, numpy) staging the primitive, operands)
CASES = {
    "reduce": (lambda L, np_: lambda a, i: L.reduce((a, i), (-np.inf, np.int32(0)),
                                                    _argmax_pair(L), (1,)),
               (X, np.arange(12, dtype=np.int32).reshape(3, 4))),
    "reduce_window": (lambda L, np_: lambda a: L.reduce_window(
        a, f32(0.5), _affine, (2, 2), (1, 2), ((1, 0), (0, 1)), (1, 2), (2, 1)), (X,)),
    "after_all": (lambda L, np_: lambda a: L.after_all(L.create_token(a), L.create_token()),
                  (V,)),
    "create_token": (lambda L, np_: lambda a: L.create_token(a), (V,)),
    "device_put": (lambda L, np_: lambda a, b: _lib(L).device_put(
        (a, b), _lib(L).devices()[0], may_alias=False), (X, V)),
    "zeta": (lambda L, np_: L.zeta, (V + 1.5, V + 0.5)),
    "argmax": (lambda L, np_: lambda a: L.argmax(a, 1, np.int32), (X,)),
    "argmin": (lambda L, np_: lambda a: L.argmin(a, 0, np.int32), (X,)),
    "bessel_i0e": (lambda L, np_: L.bessel_i0e, (V,)),
    "bessel_i1e": (lambda L, np_: L.bessel_i1e, (V,)),
    "bitcast_convert_type": (lambda L, np_: lambda a: L.bitcast_convert_type(a, np.int32), (V,)),
    "concatenate": (lambda L, np_: lambda a, b: L.concatenate([a, b], 1), (X, X)),
    "cond": (lambda L, np_: lambda p, a: L.cond(p, lambda t: t + 1, lambda t: t * 2, a),
             (np.bool_(False), V)),
    "conv_general_dilated": (
        lambda L, np_: lambda a, b: L.conv_general_dilated(a, b, (1, 2), "SAME", (1, 1), (2, 1)),
        (np.linspace(-1, 1, 32, dtype=f32).reshape(1, 2, 4, 4),
         np.linspace(1, 2, 24, dtype=f32).reshape(3, 2, 2, 2))),
    **{name: (_cumulative(name), (X,))
       for name in ("cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum")},
    "dot_general": (lambda L, np_: lambda a, b: L.dot_general(a, b, (((1,), (0,)), ((), ()))),
                    (X, X.T)),
    "dynamic_slice": (lambda L, np_: lambda a, i: L.dynamic_slice(a, (i, 1), (2, 2)),
                      (X, np.int32(2))),
    "dynamic_update_slice": (
        lambda L, np_: lambda a, u, i: L.dynamic_update_slice(a, u, (i, np.int32(1))),
        (X, np.ones((2, 2), f32), np.int32(1))),
    "fft": (lambda L, np_: lambda a: L.fft(a, L.FftType.RFFT, (4,)), (X,)),
    "gather": (lambda L, np_: lambda a, i: np_.asarray(a)[i, 1:], (X, IDX)),
    "igamma": (lambda L, np_: L.igamma, (V, V + 1)),
    "igammac": (lambda L, np_: L.igammac, (V, V + 1)),
    "igamma_grad_a": (lambda L, np_: L.igamma_grad_a, (V, V + 1)),
    "iota": (lambda L, np_: lambda: L.iota(np.int32, 5), ()),
    "linear_solve": (lambda L, np_: _linear_solve(L), (SQUARE, V[:3])),
    "select_and_scatter": (lambda L, np_: _select_and_scatter(
        L, (2, 2), (1, 2), ((1, 0), (0, 1))), (X, X[:, :2] + 1)),
    "pad": (lambda L, np_: lambda a: L.pad(a, f32(0), ((1, 2, 0), (0, -1, 1))), (X,)),
    **{name: (_reduction(name, (1,)), (X,))
       for name in ("reduce_max", "reduce_min", "reduce_prod", "reduce_sum")},
    **{name: (_reduction(name, (0,)), (X > 0,)) for name in ("reduce_and", "reduce_or",
                                                             "reduce_xor")},
    "reduce_window_sum": (lambda L, np_: lambda a: L.reduce_window(
        a, f32(0), L.add, (2, 2), (1, 2), ((1, 0), (0, 1))), (X,)),
    "reduce_window_max": (lambda L, np_: lambda a: L.reduce_window(
        a, -np.inf, L.max, (2, 2), (1, 1), "SAME"), (X,)),
    "reduce_window_min": (lambda L, np_: lambda a: L.reduce_window(
        a, np.inf, L.min, (2, 1), (1, 1), "VALID"), (X,)),
    "regularized_incomplete_beta": (lambda L, np_: L.betainc, (V, V + 1, V / 2)),
    "reshape": (lambda L, np_: lambda a: L.reshape(a, (2, 6)), (X,)),
    "rev": (lambda L, np_: lambda a: L.rev(a, (0, 1)), (X,)),
    "scan": (lambda L, np_: lambda a: L.scan(lambda c, t: (c + t, c * t), f32(1), a), (V,)),
    "scatter": (lambda L, np_: lambda a, i: np_.asarray(a).at[i].set(1.0), (X, IDX)),
    **{f"scatter_{op}": (_scatter(op), (X, IDX)) for op in ("add", "mul", "min", "max", "sub")},
    "select_and_gather_add": (lambda L, np_: lambda a, t: (jax if L is jax.lax else didax).jvp(
        _maxpool(L), (a,), (t,)), (X, X * 2)),
    "select_and_scatter_add": (lambda L, np_: (jax if L is jax.lax else didax).grad(
        _maxpool(L)), (X,)),
    "slice": (lambda L, np_: lambda a: L.slice(a, (0, 1), (2, 4), (1, 2)), (X,)),
    "sort": (lambda L, np_: lambda a, b: L.sort((a, b), dimension=0, num_keys=1), (X, -X)),
    "split": (lambda L, np_: lambda a: L.split(a, (1, 3), axis=1), (X,)),
    "squeeze": (lambda L, np_: lambda a: L.squeeze(a, (0,)), (X[None],)),
    "top_k": (lambda L, np_: lambda a: L.top_k(a, 2), (X,)),
    "transpose": (lambda L, np_: lambda a: L.transpose(a, (1, 0)), (X,)),
    "while": (lambda L, np_: lambda a: L.while_loop(lambda t: t < 10, lambda t: t + 1.5, a),
              (f32(0),)),
}
# collectives: staged with the axis "i" of size 2 bound; run over a vmap binding it
COLLECTIVES = {
    "psum": lambda L: lambda a: L.psum(a, "i"),
    "pmax": lambda L: lambda a: L.pmax(a, "i"),
    "pmin": lambda L: lambda a: L.pmin(a, "i"),
    "ppermute": lambda L: lambda a: L.ppermute(a, "i", [(0, 1), (1, 0)]),
    "all_gather": lambda L: lambda a: L.all_gather(a, "i", axis=1, tiled=True),
    "all_to_all": lambda L: lambda a: L.all_to_all(a, "i", 1, 0, tiled=True),
    "axis_index": lambda L: lambda a: a + L.axis_index("i"),
}


def _equation(jaxpr, name):
    """The first equation of primitive `name` in `jaxpr` or the jaxprs of its params."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == name:
            return eqn
        for p in eqn.params.values():
            inner = getattr(p, "jaxpr", p)
            if hasattr(inner, "eqns"):
                found = _equation(inner, name)
                if found is not None:
                    return found
    return None


def _assert_same_params(name, theirs, ours):
    assert theirs is not None and ours is not None, name
    assert set(ours.params) == set(theirs.params), (name, ours.params, theirs.params)
    for k, v in theirs.params.items():  # (a function's address aside: reduce's computation)
        assert _unaddressed(ours.params[k]) == _unaddressed(v), (name, k, ours.params[k], v)


def _unaddressed(v) -> str:
    """repr(v), addresses masked (jaxprs print the same text in both libraries)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", " at 0x", repr(v))


def _plain(v) -> bool:
    """Whether a param value means the same to didax as it is (no JAX objects inside)."""
    if isinstance(v, (tuple, list)):
        return all(map(_plain, v))
    return v is None or isinstance(v, (bool, int, float, str, np.dtype))


def _bind_params(theirs, ours):
    """JAX's params where they are plain values, else didax's (which print alike)."""
    return {k: v if _plain(v) else ours.params[k] for k, v in theirs.params.items()}


def _is_token(x) -> bool:
    return type(x).__name__ == "Token"  # (JAX's, or didax's)


def _values_of(aval, L):
    if str(aval) == "AbstractToken()":  # (a token: each library's own)
        return L.create_token()
    if np.issubdtype(aval.dtype, np.floating):
        return np.linspace(-1, 1, aval.size, dtype=aval.dtype).reshape(aval.shape)
    return (np.arange(aval.size) % 2).astype(aval.dtype).reshape(aval.shape)


def _assert_close(got, want):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if _is_token(w):
            assert type(g) is Token, g
            continue
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_primitive_stages_and_binds_as_jax(name):
    make, args = CASES[name]
    prim_name = JAX_PARAMETERS[name]
    theirs = _equation(jax.make_jaxpr(make(jax.lax, jjnp))(*args).jaxpr, prim_name)
    ours = _equation(didax.make_jaxpr(make(lax, djnp))(*args).jaxpr, prim_name)
    _assert_same_params(name, theirs, ours)
    assert getattr(lax, f"{name}_p").name == prim_name == getattr(jax.lax, f"{name}_p").name
    # bound on the case's operands, or values of the equation's operand types where those
    # differ (a cond's index, the equations of derivatives)
    operands = [np.asarray(a) for a in args]
    if [(a.shape, a.dtype) for a in operands] != [(getattr(v.aval, "shape", None),
                                                   getattr(v.aval, "dtype", None))
                                                  for v in theirs.invars]:
        operands = [_values_of(v.aval, jax.lax) for v in theirs.invars]
        ours_operands = [_values_of(v.aval, lax) for v in theirs.invars]
    else:
        ours_operands = operands
    want = getattr(jax.lax, f"{name}_p").bind(*operands, **theirs.params)
    got = getattr(lax, f"{name}_p").bind(*ours_operands, **_bind_params(theirs, ours))
    _assert_close(got, want)


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_exported_collective_stages_and_binds_as_jax(name):
    make = COLLECTIVES[name]
    theirs = _equation(jax.make_jaxpr(make(jax.lax), axis_env=[("i", 2)])(X).jaxpr, name)
    staged = []

    def stage(a):
        staged.append(didax.make_jaxpr(make(lax))(a))
        return a

    didax.vmap(stage, axis_name="i")(np.stack([X, X]))
    _assert_same_params(name, theirs, _equation(staged[0].jaxpr, name))
    xs = np.stack([X, 2 * X + 1])
    operands = () if name == "axis_index" else (xs,)
    in_axes = () if name == "axis_index" else (0,)
    want = jax.vmap(lambda *a: getattr(jax.lax, f"{name}_p").bind(*a, **theirs.params),
                    in_axes, axis_name="i", axis_size=2)(*operands)
    got = didax.vmap(lambda *a: getattr(lax, f"{name}_p").bind(*a, **theirs.params),
                     in_axes, axis_name="i", axis_size=2)(*operands)
    _assert_close(got, want)


# JAX's documented ragged_all_to_all example: two instances, each sending two slices
RAGGED = (np.array([[1, 2, 2], [3, 4, 0]], f32), np.zeros((2, 4), f32),
          np.array([[0, 1], [0, 1]], np.int32), np.array([[1, 2], [1, 1]], np.int32),
          np.array([[0, 0], [1, 2]], np.int32), np.array([[1, 1], [2, 1]], np.int32))
RAGGED_RESULT = np.array([[1, 3, 0, 0], [2, 2, 4, 0]], f32)


def test_ragged_all_to_all_stages_and_binds_as_jax():
    """Staged with the axis bound, and under a vmap over another axis, as JAX stages it;
    bound under the vmap naming its axis, the documented result (XLA:CPU cannot run it, and
    JAX's vmap cannot batch it over its own axis: nothing of JAX's to run against)."""
    def make(L):
        return lambda *a: L.ragged_all_to_all(*a, axis_name="i")

    first = [a[0] for a in RAGGED]
    theirs = jax.make_jaxpr(make(jax.lax), axis_env=[("i", 2)])(*first)
    staged = []
    didax.vmap(lambda *a: staged.append(didax.make_jaxpr(make(lax))(*a)) or a[0],
               axis_name="i")(*RAGGED)
    _assert_same_params("ragged_all_to_all", _equation(theirs.jaxpr, "ragged_all_to_all"),
                        _equation(staged[0].jaxpr, "ragged_all_to_all"))
    assert str(staged[0]) == str(theirs)
    # over another vmap's axis: the examples' exchanges as one (JAX's staging, too)
    twice = [np.stack([a, a]) for a in first]
    theirs = jax.make_jaxpr(jax.vmap(make(jax.lax)), axis_env=[("i", 2)])(*twice)
    staged = []
    didax.vmap(lambda *a: staged.append(didax.make_jaxpr(didax.vmap(make(lax)))(
        *[didax.numpy.stack([v, v]) for v in a])) or a[0], axis_name="i")(*RAGGED)
    assert [e.outvars[0].aval.shape for e in _equations(staged[0].jaxpr, "ragged_all_to_all")] \
        == [e.outvars[0].aval.shape for e in _equations(theirs.jaxpr, "ragged_all_to_all")] \
        == [(8,)]
    params = _equation(theirs.jaxpr, "ragged_all_to_all").params
    got = didax.vmap(lambda *a: lax.ragged_all_to_all_p.bind(*a, **params), axis_name="i")(
        *RAGGED)
    np.testing.assert_array_equal(np.asarray(got), RAGGED_RESULT)
    got = didax.vmap(didax.vmap(lambda *a: lax.ragged_all_to_all_p.bind(*a, **params),
                                in_axes=(0, 0, None, None, None, None)), axis_name="i")(
        np.stack([RAGGED[0], 2 * RAGGED[0]], 1), np.stack([RAGGED[1]] * 2, 1), *RAGGED[2:])
    np.testing.assert_array_equal(np.asarray(got)[:, 0], RAGGED_RESULT)
    np.testing.assert_array_equal(np.asarray(got)[:, 1], 2 * RAGGED_RESULT)


def test_ragged_all_to_all_differentiates_as_jax():
    """JAX's rules: linear in (operand, output); the transpose sends the cotangent back and
    keeps the output's where nothing was written. (JAX stages them; we compare values.)"""
    def loss(a, b, *rest):
        out = lax.ragged_all_to_all(a, b, *rest, axis_name="i")
        return (out * np.arange(4, dtype=f32)).sum()

    grads = didax.vmap(didax.grad(loss, (0, 1)), axis_name="i")(*RAGGED)
    np.testing.assert_array_equal(np.asarray(grads[0]), [[0, 0, 1], [1, 2, 0]])
    np.testing.assert_array_equal(np.asarray(grads[1]), [[0, 0, 2, 3], [0, 0, 0, 3]])
    jvp = didax.vmap(lambda a, b, *r: didax.jvp(lambda a, b: lax.ragged_all_to_all(
        a, b, *r, axis_name="i"), (a, b), (a, b + 1))[1], axis_name="i")(*RAGGED)
    np.testing.assert_array_equal(np.asarray(jvp), RAGGED_RESULT + (RAGGED_RESULT == 0))
    theirs = jax.make_jaxpr(lambda a, b, *r: jax.jvp(lambda a, b: jax.lax.ragged_all_to_all(
        a, b, *r, axis_name="i"), (a, b), (a, b))[1], axis_env=[("i", 2)])(
        *[a[0] for a in RAGGED])
    assert [e.primitive.name for e in theirs.jaxpr.eqns] == ["ragged_all_to_all"] * 2


def test_every_jax_lax_primitive_is_exported_or_left_out_with_a_reason():
    theirs = {name for name in dir(jax.lax) if name.endswith("_p")}
    ours = {name for name in dir(lax) if name.endswith("_p")}
    assert theirs - ours == set(LEFT_OUT)
    for name in ours & theirs:
        assert getattr(lax, name).name == getattr(jax.lax, name).name, name
        assert getattr(lax, name).multiple_results == getattr(jax.lax, name).multiple_results


# --------------------------------------------------------------------------------------
# Beyond the equation: each new primitive's behaviour under transformations, against JAX's


def _equations(jaxpr, name):
    return [e for e in jaxpr.eqns if e.primitive.name == name]


_LINEAR_SOLVE_TRANSFORMS = {  # (transform, b, whether the staged equations print alike)
    "grad": (lambda lib, f: lib.grad(lambda a, b: f(a, b).sum(), (0, 1)), V[:3], True),
    "jvp": (lambda lib, f: lambda a, b: lib.jvp(f, (a, b), (a, b)), V[:3], True),
    # (JAX batches the four jaxprs; didax vmaps the solver: values only)
    "vmap": (lambda lib, f: lib.vmap(f, (None, 0)), X[:, :3], False),
}


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("how", sorted(_LINEAR_SOLVE_TRANSFORMS))
def test_linear_solve_transforms_as_jax(how, symmetric):
    wrap, b, same_equations = _LINEAR_SOLVE_TRANSFORMS[how]
    theirs = wrap(jax, _linear_solve(jax.lax, symmetric))
    ours = wrap(didax, _linear_solve(lax, symmetric))
    if same_equations:  # (the transposed solve swaps the maps' and the solvers' roles)
        want = [_unaddressed(e.params) for e in _equations(
            jax.make_jaxpr(theirs)(SQUARE, b).jaxpr, "custom_linear_solve")]
        got = [_unaddressed(e.params) for e in _equations(
            didax.make_jaxpr(ours)(SQUARE, b).jaxpr, "custom_linear_solve")]
        assert got == want and len(want) == 2
    _assert_close(ours(SQUARE, b), theirs(SQUARE, b))


@pytest.mark.parametrize("geometry", [
    ((3, 2), (1, 1), ((0, 0), (0, 0))),  # overlapping windows
    ((2, 3), (2, 1), ((1, 2), (2, 0))),  # padding, windows of padding alone
    ((1, 4), (3, 3), ((0, 1), (1, 1))),
    ((2, 2), (1, 1), ((2, 2), (1, 1))),
])
@pytest.mark.parametrize("select", ["ge", "le"])
def test_select_and_scatter_selects_and_scatters_as_jax(geometry, select):
    # distinct elements (no ties), all negative: padding is never selected
    a = -(np.random.RandomState(0).permutation(20).reshape(4, 5).astype(f32) + 1)
    for operand, init in ((a, f32(0.5)), (a.astype(np.int32), np.int32(1))):
        theirs = _select_and_scatter(jax.lax, *geometry, getattr(jax.lax, select), init)
        ours = _select_and_scatter(lax, *geometry, getattr(lax, select), init)
        out = jax.eval_shape(lambda x, init=init: jax.lax.reduce_window(
            x, init, jax.lax.add, *geometry), operand).shape
        source = (np.arange(np.prod(out)).reshape(out) % 3 + 1).astype(operand.dtype)
        _assert_close(ours(operand, source), theirs(operand, source))


def test_select_and_scatter_has_no_derivatives_nor_batching_as_jax():
    s = X[:2, :2] + 1
    for L, lib in ((jax.lax, jax), (lax, didax)):
        f = _select_and_scatter(L, (2, 3), (1, 1), ((0, 0), (0, 0)))
        with pytest.raises(NotImplementedError):
            lib.jvp(f, (X, s), (X, s))
        with pytest.raises(NotImplementedError):
            lib.grad(lambda s, f=f: f(X, s).sum())(s)
        with pytest.raises(NotImplementedError):
            lib.vmap(f)(X[None], s[None])


def test_select_and_scatter_breaks_ties_in_row_major_order():
    # A deliberate difference: among tied elements of a padded window, didax chooses the
    # first in row-major order; XLA:CPU chose [1, 0] for the first window here (giving
    # [[0, 2], [1, 0]]), as if it scanned that window column by column.
    f = _select_and_scatter(lax, (2, 2), (2, 1), ((0, 1), (0, 1)))
    a = np.array([[0, 1], [1, 1]], f32)
    np.testing.assert_array_equal(f(a, np.array([[1, 2]], f32)), [[0, 4], [0, 0]])
    # (without padding, the first of the ties in row-major order, as XLA:CPU)
    g = _select_and_scatter(lax, (2, 2), (1, 1), ((0, 0), (0, 0)))
    h = _select_and_scatter(jax.lax, (2, 2), (1, 1), ((0, 0), (0, 0)))
    np.testing.assert_array_equal(g(a, np.array([[3]], f32)), h(a, np.array([[3]], f32)))


def test_zeta_is_not_differentiable_and_batches_as_jax():
    for argnum in (0, 1):
        with pytest.raises(NotImplementedError):
            jax.grad(jax.lax.zeta, argnum)(2.0, 1.5)
        with pytest.raises(NotImplementedError, match="jvp rule for 'zeta'.*scipy.special.zeta"):
            didax.grad(lax.zeta, argnum)(2.0, 1.5)
    # (jax.scipy.special.zeta is composed, and differentiates)
    np.testing.assert_allclose(didax.grad(didax.scipy.special.zeta, 1)(2.0, 1.5),
                               jax.grad(jax.scipy.special.zeta, 1)(2.0, 1.5), rtol=1e-5)
    for in_axes, x, q in [((0, None), V + 1.5, f32(0.5)), ((None, 0), f32(2.5), V + 0.5),
                          ((0, 0), V + 1.5, V + 0.5)]:
        _assert_close(didax.vmap(lax.zeta, in_axes)(x, q), jax.vmap(jax.lax.zeta, in_axes)(x, q))
        _assert_close(didax.jit(lax.zeta)(x, q), jax.lax.zeta(x, q))
    with pytest.raises(TypeError, match="zeta does not accept dtype int32"):
        lax.zeta_p.bind(np.arange(3), np.arange(3))


def _device_put_params(L, fn, *args):
    return [{k: repr(v) for k, v in e.params.items()}
            for e in _equations(_lib(L).make_jaxpr(fn(L))(*args).jaxpr, "device_put")]


@pytest.mark.parametrize("fn,args", [
    # the cotangent goes back to the source, as a copy
    (lambda L: _lib(L).grad(lambda y: _lib(L).device_put(y, _lib(L).devices()[0]).sum()),
     (X,)),
    (lambda L: _lib(L).grad(lambda y: (_lib(L).device_put(y, src=_lib(L).devices()[0],
                                                          may_alias=False) * y).sum()), (X,)),
    # the tangent is put as the primal
    (lambda L: lambda y: _lib(L).jvp(lambda z: _lib(L).device_put(z, _lib(L).devices()[0]),
                                     (y,), (y,)), (X,)),
    # each operand keeps its batch dimension
    (lambda L: _lib(L).vmap(lambda y, z: _lib(L).device_put((y, z), _lib(L).devices()[0]),
                            (0, None)), (X, V)),
], ids=["grad", "grad-src-copy", "jvp", "vmap"])
def test_device_put_transforms_as_jax(fn, args):
    theirs = _device_put_params(jax.lax, fn, *args)
    assert theirs and _device_put_params(lax, fn, *args) == theirs
    _assert_close(fn(lax)(*args), fn(jax.lax)(*args))


def test_device_put_refuses_what_jax_refuses():
    with pytest.raises(ValueError, match="may_alias and donate cannot be True"):
        didax.jit(lambda x: didax.device_put(x, donate=True, may_alias=True))(X)
    with pytest.raises(ValueError, match="donate=True is not allowed during transposition"):
        didax.grad(lambda x: didax.device_put(x, donate=True).sum())(X)
    # bound on values, the results are placed as device_put places them
    put = lax.device_put_p.bind(X, devices=(didax.devices()[0],), srcs=(None,),
                                copy_semantics=(ArrayCopySemantics.REUSE_INPUT,))
    assert put[0].devices() == {didax.devices()[0]}


BOTH = pytest.mark.parametrize("L", [jax.lax, lax], ids=["jax", "didax"])


@BOTH
def test_stage_stages_nothing_and_is_the_identity(L):
    lib = _lib(L)
    assert not lib.make_jaxpr(L.stage_p.bind)(X).jaxpr.eqns
    assert not _equations(lib.make_jaxpr(lambda x: L.stage_p.bind(3.0) + x)(X).jaxpr, "stage")
    _assert_close(lib.grad(lambda x: L.stage_p.bind(x) * x)(f32(3)), f32(6))
    _assert_close(lib.vmap(lambda x: L.stage_p.bind(x) * 2)(V), V * 2)
    _assert_close(lib.jit(lambda x: L.stage_p.bind(x) * 2)(V), V * 2)


def test_stage_lifts_values_as_jax():
    for v in (3.0, np.float32(3), np.ones(2, np.int32), True):
        theirs, ours = jax.lax.stage_p.bind(v), lax.stage_p.bind(v)
        assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), v
        _assert_close(ours, theirs)
    assert lax.stage_p.name == jax.lax.stage_p.name == "stage"
    # the rules of the identity, where an equation of it is evaluated under a transformation
    assert lax.stage_p.get_rule("batch") and lax.stage_p.get_rule("transpose")


@BOTH
def test_tokens_print_type_and_pass_through_jit(L):
    lib = _lib(L)
    token = L.create_token()
    assert type(token).__name__ == "Token"
    assert repr(lib.typeof(token)) == "AbstractToken()" and lib.typeof(token).str_short() == "Tok"
    assert type(L.after_all(token, L.create_token(1.0))).__name__ == "Token"
    assert type(L.after_all()).__name__ == "Token"
    f = lib.jit(lambda t, x: (L.after_all(t, L.create_token()), x * 2, t))
    for _ in range(2):
        t, y, t2 = f(token, X)
        assert type(t).__name__ == type(t2).__name__ == "Token"
        _assert_close(y, X * 2)
    _assert_close(lib.vmap(lambda x: (L.after_all(L.create_token(x)), x)[1])(V), V)
    _assert_close(lib.grad(lambda x: (L.after_all(L.create_token(x)), x * 2)[1])(1.0),
                  np.float32(2))
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        L.after_all(X)


def test_token_programs_stage_as_jax():
    theirs = jax.make_jaxpr(lambda t, x: (jax.lax.after_all(t, jax.lax.create_token(x)), x))(
        jax.lax.create_token(), X)
    ours = didax.make_jaxpr(lambda t, x: (lax.after_all(t, lax.create_token(x)), x))(
        lax.create_token(), X)
    assert str(ours) == str(theirs)
    with pytest.raises(NotImplementedError):
        jax.jvp(lambda t, x: (jax.lax.after_all(t), x), (jax.lax.create_token(), 1.0),
                (jax.lax.create_token(), 1.0))
    with pytest.raises(TypeError, match="argument of type Token"):  # (refused at the API)
        didax.jvp(lambda t, x: (lax.after_all(t), x), (lax.create_token(), 1.0),
                  (lax.create_token(), 1.0))
    for p in (lax.create_token_p, lax.after_all_p):
        for kind in ("jvp", "transpose", "batch"):
            with pytest.raises(NotImplementedError, match=f"{kind} rule for '{p.name}'"):
                p.get_rule(kind)
    with pytest.raises(TypeError, match="does not take a token"):
        lax.add(lax.create_token(), lax.create_token())


def _reduce_equation_texts(L, fn, *args):
    """The texts of the reduce/reduce_window equations `fn(L)` stages, addresses masked."""
    jaxpr = _lib(L).make_jaxpr(fn(L))(*args).jaxpr
    return [_unaddressed(e) for e in jaxpr.eqns
            if e.primitive.name in ("reduce", "reduce_window")]


_IDX = np.arange(12, dtype=np.int32).reshape(3, 4)


@pytest.mark.parametrize("fn,args", [
    # vmap: operands batched at the front (the unbatched one broadcast), dimensions shifted
    (lambda L: _lib(L).vmap(lambda a, i: L.reduce((a, i), (-np.inf, np.int32(0)),
                                                  _argmax_pair(L), (0,)), (1, None)),
     (X, _IDX[:, 0])),
    (lambda L: _lib(L).vmap(lambda a: L.reduce_window(a, f32(0.5), _affine, (2,), (1,),
                                                      ((1, 0),)), 1), (X,)),
    # the JVP of reduce_window: one reduce_window of (primal, tangent) pairs
    (lambda L: lambda a, t: _lib(L).jvp(lambda y: L.reduce_window(
        y, f32(0.5), _affine, (2, 2), (1, 1), ((1, 0), (0, 0))), (a,), (t,)), (X, X * 2)),
    # jit, and a computation that is associative with its identity: the JVP agrees with JAX's
    (lambda L: _lib(L).jit(lambda a, t: _lib(L).jvp(lambda y: L.reduce(
        y, f32(0), lambda p, q: p * q + p + q, (0, 1)), (a,), (t,))), (X, X * 2)),
], ids=["vmap-reduce", "vmap-reduce_window", "jvp-reduce_window", "jit-jvp-reduce"])
def test_general_reductions_transform_as_jax(fn, args):
    theirs = _reduce_equation_texts(jax.lax, fn, *args)
    if theirs:  # (JAX's JVP of reduce is pairwise: no reduce equation)
        assert _reduce_equation_texts(lax, fn, *args) == theirs
    _assert_close(fn(lax)(*args), fn(jax.lax)(*args))


def test_general_reductions_fold_in_order_and_refuse_what_jax_refuses():
    # a computation that is not associative: the row-major fold of JAX's CPU backend
    for dims in [(0,), (1,), (1, 0)]:
        _assert_close(lax.reduce(X, f32(0.5), _affine, dims),
                      jax.lax.reduce(X, f32(0.5), _affine, dims))
    # (its JVP is the fold's, where JAX's pairs the elements: the primal is the fold's)
    _assert_close(didax.jvp(lambda a: lax.reduce(a, f32(0.5), _affine, (0,)), (X,), (X,))[0],
                  lax.reduce(X, f32(0.5), _affine, (0,)))
    for L in (jax.lax, lax):
        lib = _lib(L)
        with pytest.raises(NotImplementedError):  # a batched initial value
            lib.vmap(lambda a, i, L=L: L.reduce(a, i, _affine, (0,)))(X, V[:3])
        with pytest.raises(NotImplementedError):
            lib.vmap(lambda a, i, L=L: L.reduce_window(a, i, _affine, (2,)))(X, V[:3])
        with pytest.raises(NotImplementedError):  # a tangent of the initial value
            lib.jvp(lambda a, i, L=L: L.reduce(a, i, _affine, (0,)), (X, f32(1)), (X, f32(1)))
        with pytest.raises(TypeError, match="init_value_tangent"):
            lib.jvp(lambda a, i, L=L: L.reduce_window(a, i, _affine, (2, 2)), (X, f32(1)),
                    (X, f32(1)))
        with pytest.raises(NotImplementedError):  # closing over a traced value
            lib.jit(lambda a, c, L=L: L.reduce(a, f32(0), lambda p, q: p * c + q, (0,)))(
                X, f32(2))
    # no reverse mode for reduce_window (its JVP is not linear): JAX fails to linearize
    with pytest.raises(ValueError):
        jax.grad(lambda a: jax.lax.reduce_window(a, f32(0.5), _affine, (2, 2)).sum())(X)
    with pytest.raises(NotImplementedError, match="transpose rule for 'reduce_window'"):
        didax.grad(lambda a: lax.reduce_window(a, f32(0.5), _affine, (2, 2)).sum())(X)
    with pytest.raises(TypeError, match="reduce computation must return one scalar"):
        lax.reduce(X, f32(0), lambda p, q: (p * q).astype(np.float16), (0,))
