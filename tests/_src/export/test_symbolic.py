"""Symbolic dimensions: their parsing and printing against JAX's, and programs exported
with a symbolic batch dimension called at several sizes (the bits of jit at each size)."""
import jax
import numpy as np
import pytest
from jax import export as jax_export

import didax
import didax.numpy as jnp
from didax import export, lax


@pytest.mark.parametrize("spec", ["b, 3", "(b,)", "b, 2*b + 1", "a, b, a*b", "n, n - 1",
                                  "4, b^2"])
def test_symbolic_shape_prints_as_jax(spec):
    ours = export.symbolic_shape(spec)
    theirs = jax_export.symbolic_shape(spec)
    assert [str(d) for d in ours] == [str(d) for d in theirs]
    assert [export.is_symbolic_dim(d) for d in ours] == \
        [jax_export.is_symbolic_dim(d) for d in theirs]


def test_arithmetic_prints_as_jax():
    for mod in (export, jax_export):
        a, b = mod.symbolic_shape("a, b")
        got = [str(x) for x in (a + 1, 2 * a - b, a * b + a, (a + 1) - a, a - a, 3 - a,
                                a * a * b + a * b * b - 5, -a, b + a)]
        if mod is export:
            ours = got
    assert ours == got
    a, = export.symbolic_shape("a")
    assert a + 1 - 1 == a and (a + 1 - a) == 1 and type(a - a) is int


def test_like_and_errors_as_jax():
    for spec, like in [("b, _", (None, 5)), ("b, ...", (None, 4, 2))]:
        assert [str(d) for d in export.symbolic_shape(spec, like=like)] == \
            [str(d) for d in jax_export.symbolic_shape(spec, like=like)]
    for spec, like in [("b, 3", (None, 4)), ("b, ...", None), ("b +", None)]:
        with pytest.raises(ValueError):
            jax_export.symbolic_shape(spec, like=like)
        with pytest.raises(ValueError):
            export.symbolic_shape(spec, like=like)
    a, = export.symbolic_shape("a")
    b, = export.symbolic_shape("b")
    with pytest.raises(ValueError, match="scopes"):
        a + b


def test_symbolic_args_specs_as_jax():
    args = (np.ones((3, 4), np.float32), np.ones(4, np.int32))
    ours = export.symbolic_args_specs(args, ["b, _", None])
    theirs = jax_export.symbolic_args_specs(args, ["b, _", None])
    assert [(tuple(map(str, s.shape)), s.dtype) for s in ours] == \
        [(tuple(map(str, s.shape)), s.dtype) for s in theirs]


def batch_program(x, w, jnp=jnp, lax=lax):
    """Shapes that follow the batch size: mean, reshape, iota, slices, concatenate."""
    h = jnp.tanh(x @ w)
    centred = h - jnp.mean(h, axis=0)
    flat = centred.reshape(-1)
    ids = lax.iota(jnp.int32, x.shape[0])
    rolled = jnp.concatenate([h[1:], h[:1]], axis=0)
    return flat, ids * 2 + 1, (rolled * h).sum(axis=1), jnp.mean(h)


def jax_batch_program(x, w):
    return batch_program(x, w, jax.numpy, jax.lax)


def _specs(mod):
    b, = mod.symbolic_shape("b")
    sds = jax.ShapeDtypeStruct if mod is jax_export else didax.ShapeDtypeStruct
    return sds((b, 3), np.float32), sds((3, 2), np.float32)


def test_batch_dimension_against_jit_and_jax_types():
    exp = export.export(didax.jit(batch_program))(*_specs(export))
    theirs = jax_export.export(jax.jit(jax_batch_program))(*_specs(jax_export))
    for ours_avals, jax_avals in ((exp.in_avals, theirs.in_avals),
                                  (exp.out_avals, theirs.out_avals)):
        assert [(tuple(map(str, a.shape)), a.dtype) for a in ours_avals] == \
            [(tuple(map(str, a.shape)), a.dtype) for a in jax_avals]
    loaded = export.deserialize(exp.serialize())
    w = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
    for n in (1, 2, 9):
        x = np.sin(np.arange(3 * n, dtype=np.float32)).reshape(n, 3)
        expected = didax.jit(batch_program)(x, w)
        for got, want in zip(loaded.call(x, w), expected):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
        for got, want in zip(loaded.call(x, w), jax.jit(jax_batch_program)(x, w)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_call_checks_shapes_as_jax():
    exp = export.export(didax.jit(batch_program))(*_specs(export))
    theirs = jax_export.export(jax.jit(jax_batch_program))(*_specs(jax_export))
    w = np.ones((3, 2), np.float32)
    for x in (np.ones((4, 4), np.float32), np.ones((0, 3), np.float32),
              np.ones((4, 3), np.int32), np.ones(3, np.float32)):
        with pytest.raises(ValueError):
            theirs.call(x, w)
        with pytest.raises(ValueError):
            exp.call(x, w)
    with pytest.raises(ValueError, match="pytree structure"):
        exp.call(np.ones((2, 3), np.float32))


def test_related_dimensions_and_constraints():
    scope = export.SymbolicScope(["b >= 2"])
    b, = export.symbolic_shape("b", scope=scope)
    specs = (didax.ShapeDtypeStruct((b,), np.float32),
             didax.ShapeDtypeStruct((2 * b,), np.float32))
    exp = export.deserialize(export.export(didax.jit(
        lambda x, y: y.reshape(2, -1) + x))(*specs).serialize())
    x, y = np.arange(3, dtype=np.float32), np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(exp.call(x, y), y.reshape(2, 3) + x)
    with pytest.raises(ValueError, match="b >= 2"):
        exp.call(x[:1], y[:2])
    with pytest.raises(ValueError):
        exp.call(x, y[:4])  # 2*b = 4 but b = 3


def test_refuses_sizes_that_change_the_program():
    b, = export.symbolic_shape("b")
    spec = didax.ShapeDtypeStruct((b,), np.float32)
    with pytest.raises(ValueError, match="affine"):
        export.export(didax.jit(lambda x: jnp.zeros(x.shape[0] ** 2) + 1))(spec)

    def branches(x):
        return x * 2 if x.shape[0] > 20 else x.sum()

    with pytest.raises(ValueError, match="structure changes"):
        export.export(didax.jit(branches))(spec)
    with pytest.raises(ValueError, match="constant array"):
        export.export(didax.jit(lambda x: x + np.arange(x.shape[0], dtype=np.float32)))(spec)
