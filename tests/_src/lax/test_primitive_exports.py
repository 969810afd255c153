"""The `lax.*_p` primitives didax exports against JAX 0.10.2's: the lax function stages an
equation of the same primitive name with the same params (names, and values printing alike),
and binding the primitive with those params gives JAX's result."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import didax
import didax.numpy as djnp
from didax import lax
from didax._src.lax.primitive_table import JAX_PARAMETERS, LEFT_OUT

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


def _maxpool(L):
    return lambda a: L.reduce_window(a, -np.inf, L.max, (2, 2), (1, 1), "VALID").sum()


# name -> (function of (lax, numpy) staging the primitive, operands)
CASES = {
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
    for k, v in theirs.params.items():
        assert repr(ours.params[k]) == repr(v), (name, k, ours.params[k], v)


def _plain(v) -> bool:
    """Whether a param value means the same to didax as it is (no JAX objects inside)."""
    if isinstance(v, (tuple, list)):
        return all(map(_plain, v))
    return v is None or isinstance(v, (bool, int, float, str, np.dtype))


def _bind_params(theirs, ours):
    """JAX's params where they are plain values, else didax's (which print alike)."""
    return {k: v if _plain(v) else ours.params[k] for k, v in theirs.params.items()}


def _values_of(aval):
    if np.issubdtype(aval.dtype, np.floating):
        return np.linspace(-1, 1, aval.size, dtype=aval.dtype).reshape(aval.shape)
    return (np.arange(aval.size) % 2).astype(aval.dtype).reshape(aval.shape)


def _assert_close(got, want):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
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
    if [(a.shape, a.dtype) for a in operands] != [(v.aval.shape, v.aval.dtype)
                                                  for v in theirs.invars]:
        operands = [_values_of(v.aval) for v in theirs.invars]
    want = getattr(jax.lax, f"{name}_p").bind(*operands, **theirs.params)
    got = getattr(lax, f"{name}_p").bind(*operands, **_bind_params(theirs, ours))
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


def test_every_jax_lax_primitive_is_exported_or_left_out_with_a_reason():
    theirs = {name for name in dir(jax.lax) if name.endswith("_p")}
    ours = {name for name in dir(lax) if name.endswith("_p")}
    assert theirs - ours == set(LEFT_OUT)
    for name in ours & theirs:
        assert getattr(lax, name).name == getattr(jax.lax, name).name, name
        assert getattr(lax, name).multiple_results == getattr(jax.lax, name).multiple_results


@pytest.mark.parametrize("fn", [lambda: lax.create_token(), lambda: lax.after_all()])
def test_tokens_raise_saying_effects_run_in_order(fn):
    with pytest.raises(NotImplementedError, match="no token values: ordered effects"):
        fn()
