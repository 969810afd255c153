"""didax.export.export: the Exported's structures and types against JAX's, calling it
(eagerly and under jit, grad and vmap) against the jitted function."""
import jax
import numpy as np
import pytest
from jax import export as jax_export

import didax
import didax.numpy as jnp
from didax import export


def test_public_names_as_jax():
    ours = {n for n in dir(export) if not n.startswith("_")}
    theirs = {n for n in dir(jax_export) if not n.startswith("_")}
    assert theirs <= ours


def _describe(exp):
    return (exp.fun_name, repr(exp.in_tree), repr(exp.out_tree),
            [(a.shape, a.dtype, a.weak_type) for a in exp.in_avals],
            [(a.shape, a.dtype, a.weak_type) for a in exp.out_avals], exp.platforms,
            exp.nr_devices, exp.ordered_effects, exp.module_kept_var_idx)


def keywords_and_statics(x, n, *, y):
    return x * n + y, {"a": x, "b": (x.sum(), 2.0 * y)}


@pytest.mark.parametrize("case", ["static_and_keyword", "python_scalar"])
def test_structures_and_types_as_jax(case):
    if case == "static_and_keyword":
        args, kwargs = (np.ones(3, np.float32), 2), {"y": np.arange(3, dtype=np.float32)}
        ours = export.export(didax.jit(keywords_and_statics, static_argnums=1))(*args, **kwargs)
        theirs = jax_export.export(jax.jit(keywords_and_statics, static_argnums=1))(*args,
                                                                                     **kwargs)
        call_args = (args[0],)
    else:
        def scale(x):
            return x * 3

        args, kwargs = (1.5,), {}
        ours = export.export(didax.jit(scale))(*args)
        theirs = jax_export.export(jax.jit(scale))(*args)
        call_args = args
    assert _describe(ours) == _describe(theirs)
    assert export.default_export_platform() == jax_export.default_export_platform()
    got = ours.call(*call_args, **kwargs)
    want = theirs.call(*call_args, **kwargs)
    assert didax.tree_util.tree_structure(got) == didax.tree_util.tree_structure(
        jax.tree_util.tree_map(np.asarray, want))
    for g, w in zip(didax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-6)
        assert g.dtype == w.dtype
    with pytest.raises(ValueError, match="pytree structure"):
        ours.call(*call_args, 1.0, **kwargs)


def test_plain_function_refused_as_jax():
    with pytest.raises(ValueError):
        jax_export.export(lambda x: x)
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(lambda x: x)


def loss(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)


def test_call_under_transformations():
    w = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
    x = np.cos(np.arange(12, dtype=np.float32)).reshape(4, 3)
    exp = export.deserialize(export.export(didax.jit(loss))(w, x).serialize())
    assert np.asarray(exp.call(w, x)).tobytes() == \
        np.asarray(didax.jit(loss)(w, x)).tobytes()
    np.testing.assert_allclose(didax.grad(exp.call)(w, x), didax.grad(loss)(w, x), rtol=1e-6)
    np.testing.assert_allclose(didax.jit(exp.call)(w, x), loss(w, x), rtol=1e-6)
    ws = np.stack([w, 2 * w])
    np.testing.assert_allclose(didax.vmap(exp.call, (0, None))(ws, x),
                               [loss(w, x), loss(2 * w, x)], rtol=1e-6)
    didax.test_util.check_grads(exp.call, (w, x), order=2, modes=("fwd", "rev"))


def test_xla_only_attributes():
    exp = export.export(didax.jit(loss))(np.ones((3, 2), np.float32),
                                         np.ones((4, 3), np.float32))
    assert "dot_general" in exp.mlir_module()
    assert export.deserialize(exp.mlir_module_serialized).fun_name == "loss"
    assert exp.calling_convention_version == export.maximum_supported_calling_convention_version
    assert exp.in_shardings_hlo == (None, None) and not exp.has_vjp()
    with pytest.raises(NotImplementedError, match="differentiate"):
        exp.vjp()
    with pytest.raises(NotImplementedError):
        exp.serialize(vjp_order=1)
    check = export.DisabledSafetyCheck.custom_call("foo")
    assert check.is_custom_call() == jax_export.DisabledSafetyCheck.custom_call(
        "foo").is_custom_call()
