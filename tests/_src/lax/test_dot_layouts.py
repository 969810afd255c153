"""Memory layout of matmul cotangents: weight gradients come out row-major (C-contiguous),
eagerly and under jit, so the optimizer's elementwise update does not run strided.

The transpose rule of dot_general stages JAX's form (a product, then a `transpose`); where
the product is computed, its operands are swapped instead so that no transpose follows."""
import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.config import flag_context
from didax._src.lax.dot import dot_general

BMM = (((2,), (1,)), ((0,), (0,)))  # 'bij,bjk->bik'


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _mlp_loss(params, x):
    w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w1 + b1)
    return jnp.sum(jnp.tanh(h @ w2 + b2) ** 2)


def _sum_sin(product):
    return lambda a, b: jnp.sum(jnp.sin(product(a, b)))


CASES = {  # name: (function, arguments, the arguments differentiated)
    "x @ W": (_sum_sin(lambda x, w: x @ w), (_rand(5, 8), _rand(8, 6, seed=1)), (0, 1)),
    "W @ x": (_sum_sin(lambda w, x: w @ x), (_rand(6, 8), _rand(8, 5, seed=1)), (0, 1)),
    "x @ W, batch 1": (_sum_sin(lambda x, w: x @ w), (_rand(1, 8), _rand(8, 6, seed=1)), (0, 1)),
    "x @ W.T": (_sum_sin(lambda x, w: x @ w.T), (_rand(5, 8), _rand(6, 8, seed=1)), (0, 1)),
    "W.T @ x": (_sum_sin(lambda w, x: w.T @ x), (_rand(8, 6), _rand(8, 5, seed=1)), (0, 1)),
    "batched": (_sum_sin(lambda x, y: dot_general(x, y, BMM)),
                (_rand(3, 4, 5), _rand(3, 5, 2, seed=1)), (0, 1)),
    "einsum": (_sum_sin(lambda x, y: jnp.einsum("bij,bjk->bik", x, y)),
               (_rand(3, 4, 5), _rand(3, 5, 2, seed=1)), (0, 1)),
    "mlp": (lambda w1, b1, w2, b2, x: _mlp_loss((w1, b1, w2, b2), x),
            (_rand(8, 16), _rand(16, seed=1), _rand(16, 4, seed=2), _rand(4, seed=3),
             _rand(5, 8, seed=4)), (0, 1, 2, 3)),
}


def _check_c_contiguous(grads, args, argnums):
    for i, g in zip(argnums, grads, strict=True):
        assert g.shape == args[i].shape and g.dtype == args[i].dtype
        assert np.asarray(g).flags["C_CONTIGUOUS"], f"gradient {i} is not C-contiguous"


@pytest.fixture(params=["first", "off"], ids=["steps", "general path"])
def eager_vjp(request):
    """Eager gradients through compiled steps and through the interpreters' general path
    (whose backward pass swaps products instead of transposing their results)."""
    with flag_context("didax_eager_vjp_steps", request.param):
        yield


@pytest.mark.parametrize("name", CASES)
def test_eager_gradients_are_c_contiguous(name, eager_vjp):
    f, args, argnums = CASES[name]
    grads = didax.grad(f, argnums)(*args)
    _check_c_contiguous(grads, args, argnums)
    want = didax.jit(didax.grad(f, argnums))(*args)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", CASES)
def test_jit_gradients_are_c_contiguous(name):
    f, args, argnums = CASES[name]
    g = didax.grad(f, argnums)
    _check_c_contiguous(didax.jit(g)(*args), args, argnums)
    raw = didax.jit(g).lower(*args).compile().executable.run(*args)  # the generated code's
    _check_c_contiguous(raw, args, argnums)  # own NumPy results


def test_eager_gradient_that_no_product_lays_out_is_copied_when_cheap(eager_vjp):
    """x's batch dimension is not its first, so no product gives x's layout: a contraction
    of 64 makes the transposed copy cheap next to the product, so the gradient is copied."""
    def f(x, y):
        return jnp.sum(jnp.sin(jnp.einsum("ibk,bkj->bij", x, y)))

    args = (_rand(4, 3, 5), _rand(3, 5, 64, seed=1))
    grads = didax.grad(f, (0, 1))(*args)
    _check_c_contiguous(grads, args, (0, 1))
    want = didax.jit(didax.grad(f, (0, 1)))(*args)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_jit_sgd_step_updates_with_c_contiguous_gradients():
    """The generated SGD step leaves no transposed view for the update to read."""
    _, args, _ = CASES["mlp"]
    params, x = args[:4], args[4]

    def step(params, x):
        grads = didax.grad(_mlp_loss)(params, x)
        return [p - 0.1 * g for p, g in zip(params, grads)]

    compiled = didax.jit(step).lower(params, x).compile()
    assert ".transpose(" not in compiled.as_text()
    new = compiled.executable.run(*params, x)
    for p, n in zip(params, new, strict=True):
        assert n.shape == p.shape and n.flags["C_CONTIGUOUS"]
    eager = step(params, x)
    for n, e in zip(new, eager):
        np.testing.assert_allclose(n, np.asarray(e), rtol=1e-5, atol=1e-6)


def test_jit_broadcast_product_of_a_permuted_operand_is_c_contiguous():
    """Without contraction, jit writes a broadcast multiply; NumPy would lay its result out
    like the permuted (batch-last) operand, where the impl's result is row-major."""
    x, y = _rand(5, 3), _rand(3, 4, seed=1)

    def f(x, y):
        return dot_general(x, y, (((), ()), ((1,), (0,))))

    (raw,) = didax.jit(f).lower(x, y).compile().executable.run(x, y)
    assert raw.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(raw, np.einsum("ib,bj->bij", x, y))


def test_staged_transpose_rule_keeps_jax_form():
    """make_jaxpr shows JAX's rule (product, then transpose); only evaluation swaps."""
    f, args, _ = CASES["x @ W"]
    text = str(didax.make_jaxpr(didax.grad(f, 1))(*args))
    assert "transpose[permutation=(1, 0)]" in text


PRODUCTS = {  # (lhs shape, rhs shape, dimension numbers)
    "nn": ((16, 64), (64, 48), (((1,), (0,)), ((), ()))),
    "tn": ((64, 16), (64, 48), (((0,), (0,)), ((), ()))),
    "nt, few rows (swapped)": ((16, 64), (200, 64), (((1,), (1,)), ((), ()))),
    "nt, many rows": ((100, 64), (48, 64), (((1,), (1,)), ((), ()))),
    "matrix-vector": ((48, 64), (64,), (((1,), (0,)), ((), ()))),
    "vector-matrix": ((64,), (64, 48), (((0,), (0,)), ((), ()))),
    "stacked lhs": ((3, 16, 64), (64, 8), (((2,), (0,)), ((), ()))),
    "batched": ((3, 16, 64), (3, 64, 8), (((2,), (1,)), ((0,), (0,)))),
    "outer": ((5, 3), (4,), (((), ()), ((), ()))),
}


@pytest.mark.parametrize("transposed", [False, True], ids=["row-major", "transposed"])
@pytest.mark.parametrize("name", PRODUCTS)
def test_eager_products_give_jits_bits(name, transposed):
    """Evaluating a product computes it as jit does (row-major operands, the same np.matmul
    views, so the same BLAS routine), whatever the operands' layout: its bits do not depend
    on whether it ran in an eager step, on the general path or under jit."""
    ls, rs, dims = PRODUCTS[name]
    a, b = _rand(*ls), _rand(*rs, seed=1)
    f = lambda a, b: dot_general(a, b, dims)  # noqa: E731
    if transposed:  # the same values, as transposes (views, column-major)
        a, b = (jnp.transpose(jnp.asarray(np.ascontiguousarray(v.T))) for v in (a, b))
        assert a.ndim == 1 or not np.asarray(a).flags.c_contiguous
    eager = np.asarray(f(a, b))
    with flag_context("didax_native_tier", "off"):
        jitted = np.asarray(didax.jit(f)(a, b))
    assert eager.tobytes() == jitted.tobytes() and eager.shape == jitted.shape
