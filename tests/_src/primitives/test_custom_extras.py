"""custom_gradient, closure_convert, linear_call, SymbolicZero and zero_from_primal against
jax.custom_derivatives 0.10.2: values and derivatives under grad, jit, vmap and nesting."""
import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax.custom_derivatives import (
    SymbolicZero,
    closure_convert,
    custom_gradient,
    linear_call,
    zero_from_primal,
)


def _programs(lib, np_):
    cd = lib.custom_derivatives

    @cd.custom_gradient
    def f(x):
        y = np_.sin(x)
        return x * y, lambda g: (g * y * 10.,)

    @cd.custom_gradient
    def h(x, y):
        return x * y, lambda g: (g * y, g * x * 2)

    @cd.custom_gradient
    def tree_out(x):
        return {"a": x, "b": 2 * x}, lambda g: (g["a"] + 3 * g["b"],)

    def converted(a):
        c, consts = cd.closure_convert(lambda x: x * a + np_.sin(a), 1.0)
        return c(2.0, *consts)

    def lc(x, y):
        return cd.linear_call(lambda r, t: r * t, lambda r, ct: r * ct * 3, y, x)

    xs = np_.arange(3.)
    return {
        "f": f(2.),
        "grad_f": lib.grad(f)(2.),
        "jit_grad_f": lib.jit(lib.grad(f))(2.),
        "vmap_grad_f": lib.vmap(lib.grad(f))(xs),
        "grad_grad_f": lib.grad(lib.grad(f))(1.),
        "grad_h": lib.grad(h, (0, 1))(3., 4.),
        "grad_tree_out": lib.grad(lambda x: tree_out(x)["b"])(1.5),
        "closure_convert": converted(3.0),
        "grad_closure_convert": lib.grad(converted)(3.0),
        "jit_grad_closure_convert": lib.jit(lib.grad(converted))(3.0),
        "linear_call": lc(2., 5.),
        "grad_linear_call": lib.grad(lc)(2., 5.),
        "grad_grad_linear_call": lib.grad(lambda x: lib.grad(lc)(x, 5.) * x)(2.),
        "jit_grad_linear_call": lib.jit(lib.grad(lc))(2., 5.),
        "zero_from_primal": cd.zero_from_primal({"a": np_.ones(2), "b": 3}),
    }


def test_against_jax():
    ours, theirs = _programs(didax, jnp), _programs(jax, jnp_ref)
    for k in theirs:
        lo, lt = didax.tree_util.tree_leaves(ours[k]), jax.tree.leaves(theirs[k])
        assert len(lo) == len(lt), k
        for a, b in zip(lo, lt):
            assert np.asarray(a).dtype == np.asarray(b).dtype, k
            if np.asarray(b).dtype != jax.dtypes.float0:
                np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=k)


def test_closure_convert_hoists_only_traced_inexact_values():
    fun, consts = closure_convert(lambda x: x * 2.0, jnp.ones(3))
    assert consts == []
    np.testing.assert_array_equal(fun(jnp.ones(3)), [2., 2., 2.])

    def outer(a, n):
        fun, consts = closure_convert(lambda x: x * a + n, 1.0)
        assert len(consts) == 1  # a (differentiated); n is an integer constant
        return fun(2.0, *consts)
    assert float(didax.grad(outer)(3.0, 4)) == 2.0
    with pytest.raises(TypeError, match="structure"):
        fun((1.0, 2.0))


def test_custom_gradient_checks_cotangent_structure():
    @custom_gradient
    def f(x):
        return (x, x), lambda g: (g[0] + g[1],)
    assert float(didax.grad(lambda x: f(x)[0] + 2 * f(x)[1])(1.0)) == 3.0


def test_symbolic_zero():
    aval = didax.core.ShapedArray((2, 3), np.float32)
    z = SymbolicZero(aval)
    assert not z and repr(z) == "SymbolicZero" and z.shape == (2, 3) and z.dtype == np.float32
    np.testing.assert_array_equal(z.instantiate(), np.zeros((2, 3), np.float32))
    assert SymbolicZero.from_primal_value(jnp.ones(2, jnp.int32)).dtype == didax.float0
    zs = zero_from_primal([jnp.ones(2), 1], symbolic_zeros=True)
    assert all(isinstance(t, SymbolicZero) for t in zs) and zs[1].dtype == didax.float0
    assert didax.custom_derivatives.custom_jvp is didax.custom_jvp
    assert didax.custom_gradient is custom_gradient and didax.closure_convert is closure_convert
    assert linear_call is didax.custom_derivatives.linear_call
