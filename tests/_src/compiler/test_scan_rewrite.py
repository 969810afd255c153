"""jit's rewrite of scan equations (the scan primitive's "rewrite" rule, in
compiler/loop_passes.py, run by compiler/passes.optimize): work moved out of the loop. Each
test checks what the optimised program looks like and that it computes what the program
before did: the optimised jaxpr evaluated against the original, and jit (native tier where a
compiler works) with the rewrite against jit without it, values and gradients."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import core
from didax._src.compiler import loop_passes, passes
from didax._src.config import flag_context
from didax._src.ir import check_jaxpr

pytestmark = pytest.mark.usefixtures("jit_tier")  # both tiers (tests/conftest.py)

RNG = np.random.default_rng(0)


def rand(*shape):
    return (RNG.standard_normal(shape) * 0.5).astype(np.float32)


def optimized(f, *args):
    """(jaxpr of f, the optimised jaxpr), the latter type-checked, bodies included."""
    closed = jax.make_jaxpr(f)(*args)
    out = passes.optimize(closed)
    check_jaxpr(out.jaxpr)
    return closed, out


def scans(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]


def body_of(eqn):
    return eqn.params["jaxpr"].jaxpr


def prims(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


def leaves(tree):
    if isinstance(tree, (list, tuple)):
        return [a for t in tree for a in leaves(t)]
    return [np.asarray(tree)]


def assert_close(got, want, rtol=1e-5, atol=1e-6):
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def same_program(before, after, *args):
    flat = jax.tree_util.tree_leaves(args)
    assert_close(after(*flat), before(*flat))


def jit_both(f, *args):
    """(jit(f) with the rewrites, jit(f) without), each called (compiled) on `args` once
    here, on the native tier built before the call returns; jit(f) with the rewrites on
    the NumPy tier agrees with the first."""
    with flag_context("didax_native_tier", "sync"):
        want = jax.jit(f)(*args)
        rules = {p: p.rules.pop("rewrite") for p in core.all_primitives.values()
                 if "rewrite" in p.rules}
        try:
            base = jax.jit(f)(*args)
        finally:
            for p, rule in rules.items():
                p.rules["rewrite"] = rule
    with flag_context("didax_native_tier", "off"):
        assert_close(jax.jit(f)(*args), want)
    return want, base


def hoisted_products(closed):
    """dot_generals before the first scan reading a stacked (3-D or more) operand."""
    out = []
    for e in closed.jaxpr.eqns:
        if e.primitive.name == "scan":
            break
        if e.primitive.name == "dot_general" and e.invars[0].aval.ndim >= 3:
            out.append(e)
    return out


# --------------------------------------------------------------------------------------
# Products of the stacked input's slice with a constant


def _input_projection(reverse=False, size=(2, 3, 4)):
    b, i, h = size

    def f(w, u, xs):
        def body(c, x):
            c = jnp.tanh(x @ w + c @ u)
            return c, c * 2.0
        return lax.scan(body, jnp.zeros((b, h), jnp.float32), xs, reverse=reverse)

    return f, (rand(i, h), rand(h, h), rand(5, b, i))


@pytest.mark.parametrize("reverse", [False, True])
def test_small_product_of_the_slice_is_one_product_before_the_loop(reverse):
    """A step reads its row of one product computed before the loop; a reverse scan reads
    row i at the step that read x[i], as before (the direction changes nothing)."""
    f, args = _input_projection(reverse)
    closed, out = optimized(f, *args)
    (scan,) = scans(out)
    (product,) = hoisted_products(out)
    assert product.outvars[0] in scan.invars
    assert args[2].shape[1:] not in [v.aval.shape for v in body_of(scan).invars]  # x unread
    assert prims(body_of(scan)).count("dot_general") == 1  # c @ u stays
    same_program(closed, out, *args)
    assert_close(*jit_both(f, *args))
    g = jax.grad(lambda *a: f(*a)[1].sum(), argnums=(0, 1))
    assert_close(*jit_both(g, *args))


def test_slice_as_the_right_operand():
    def f(w, xs):
        def body(c, x):  # (4, 3) x (2, 3)^T: the slice on the right
            y = lax.dot_general(w, x, (((1,), (1,)), ((), ())))
            return c + y.sum(), y
        return lax.scan(body, jnp.float32(0.0), xs)

    args = (rand(4, 3), rand(6, 2, 3))
    closed, out = optimized(f, *args)
    (scan,) = scans(out)
    assert "dot_general" not in prims(body_of(scan))
    assert "transpose" in prims(out)  # (4, steps, 2) -> (steps, 4, 2)
    same_program(closed, out, *args)
    assert_close(*jit_both(f, *args))


def test_large_products_stay_in_the_loop():
    """Above HOIST_PRODUCT_MAX multiply-adds a step's product runs in the loop."""
    f, args = _input_projection(size=(16, 48, 48))
    assert 16 * 48 * 48 > loop_passes.HOIST_PRODUCT_MAX
    closed, out = optimized(f, *args)
    assert hoisted_products(out) == []
    assert prims(body_of(scans(out)[0])).count("dot_general") == 2
    same_program(closed, out, *args)


def _kept_cases():
    """Products that are not of a stacked input's slice with a loop constant."""
    def of_carry(w, xs):  # the carry times a constant
        def body(c, x):
            c = jnp.tanh(c @ w) + x
            return c, c
        return lax.scan(body, jnp.ones((2, 3), jnp.float32), xs)

    def slice_of_carry(w, xs):  # a row of a stacked carry, not of xs
        def body(c, x):
            y = c[0] @ w
            return c * 0.5 + x[None], y
        return lax.scan(body, jnp.ones((4, 2, 3), jnp.float32), xs)

    def varying_operand(w, xs):  # the other factor changes every step
        def body(c, x):
            y = x @ (w * c.sum())
            return c + y.mean(), y
        return lax.scan(body, jnp.float32(1.0), xs)

    def two_slices(w, xs):  # both factors are slices
        def body(c, x):
            y = x @ x.T @ w[:2, :2]
            return c + y.sum(), y
        return lax.scan(body, jnp.float32(0.0), xs)

    return {"carry": of_carry, "slice of a carry": slice_of_carry,
            "varying operand": varying_operand, "two slices": two_slices}


@pytest.mark.parametrize("name", list(_kept_cases()))
def test_products_that_stay_in_the_loop(name):
    f = _kept_cases()[name]
    args = (rand(3, 3), rand(5, 2, 3))
    closed, out = optimized(f, *args)
    assert hoisted_products(out) == []
    (scan,) = scans(out)
    assert "dot_general" in prims(body_of(scan))
    same_program(closed, out, *args)
    assert_close(*jit_both(f, *args))


def test_vmap_of_the_scan():
    """Batched inputs with an unbatched weight: still one product before the loop; a
    batched weight (a product with batch dimensions) stays in the loop."""
    f, (w, u, xs) = _input_projection()
    batched_x = jax.vmap(f, in_axes=(None, None, 0))
    args = (w, u, np.stack([xs, xs * 2.0]))
    closed, out = optimized(batched_x, *args)
    assert len(hoisted_products(out)) == 1
    same_program(closed, out, *args)
    assert_close(*jit_both(batched_x, *args))
    batched_w = jax.vmap(f, in_axes=(0, None, None))  # the weight still loop-invariant
    args = (np.stack([w, -w]), u, xs)
    closed, out = optimized(batched_w, *args)
    assert len(hoisted_products(out)) == 1
    same_program(closed, out, *args)
    assert_close(*jit_both(batched_w, *args))
    batched_both = jax.vmap(f, in_axes=(0, None, 0))  # a product with batch dimensions
    args = (np.stack([w, -w]), u, np.stack([xs, xs * 2.0]))
    closed, out = optimized(batched_both, *args)
    (scan,) = scans(out)
    assert hoisted_products(out) == []
    assert any(e.primitive.name == "dot_general" and any(e.params["dimension_numbers"][1])
               for e in body_of(scan).eqns)
    same_program(closed, out, *args)
    assert_close(*jit_both(batched_both, *args))


def test_nested_scans():
    """The outer body is optimised where its code is generated: the inner scan's product
    of its slice (of the outer slice) with the weight becomes one product per outer step;
    a product with the outer carry stays in the inner loop."""
    def f(w, xs):
        def outer(c, x):  # x: (4, 2, 3)
            def inner(d, y):
                d = jnp.tanh(y @ w + d @ c)
                return d, d
            d, ds = lax.scan(inner, jnp.zeros((2, 3), jnp.float32), x)
            return c * 0.9 + 0.01 * d.sum(), ds.sum(0)
        return lax.scan(outer, jnp.eye(3, dtype=jnp.float32), xs)

    args = (rand(3, 3), rand(5, 4, 2, 3))
    closed, out = optimized(f, *args)
    (outer_scan,) = scans(out)
    body = passes.optimize(outer_scan.params["jaxpr"])
    check_jaxpr(body.jaxpr)
    (inner_scan,) = scans(body)
    assert len(hoisted_products(body)) == 1
    assert prims(body_of(inner_scan)).count("dot_general") == 1  # d @ c
    same_program(closed, out, *args)
    same_program(outer_scan.params["jaxpr"], body, *[
        rand(*v.aval.shape) for v in body_of(outer_scan).invars])
    assert_close(*jit_both(f, *args))
    g = jax.grad(lambda w, xs: f(w, xs)[1].sum())
    assert_close(*jit_both(g, *args), rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------
# Constants: computed once, stored as the products read them


def test_a_transposed_weight_is_transposed_once_before_the_loop():
    def f(w, xs):
        def body(c, x):
            c = jnp.tanh(c @ w.T + x)
            return c, c
        return lax.scan(body, jnp.zeros((2, 4), jnp.float32), xs)

    args = (rand(4, 4), rand(5, 2, 4))
    closed, out = optimized(f, *args)
    (scan,) = scans(out)
    assert "transpose" not in prims(body_of(scan))
    (t,) = [e for e in out.jaxpr.eqns if e.primitive.name == "transpose"]
    assert t.outvars[0] in scan.invars[:scan.params["num_consts"]]
    (dot,) = [e for e in body_of(scan).eqns if e.primitive.name == "dot_general"]
    assert dot.params["dimension_numbers"][0] == ((1,), (0,))
    same_program(closed, out, *args)
    assert_close(*jit_both(f, *args))


def test_a_constant_contracted_on_its_last_dimension_is_stored_transposed():
    """`g @ w.T` of the transposed loop (the backward pass of `h @ w`), written as one
    dot_general: w is transposed before the loop and the step's product reads it in order;
    a left operand contracted on its first dimension likewise."""
    def f(w, v, xs):
        def body(c, x):
            c = jnp.tanh(lax.dot_general(c, w, (((1,), (1,)), ((), ())))
                         + lax.dot_general(v, c, (((0,), (1,)), ((), ()))).T + x)
            return c, c
        return lax.scan(body, jnp.zeros((2, 4), jnp.float32), xs)

    args = (rand(4, 4), rand(4, 4), rand(5, 2, 4))
    closed, out = optimized(f, *args)
    (scan,) = scans(out)
    transposes = [e for e in out.jaxpr.eqns if e.primitive.name == "transpose"]
    assert len(transposes) == 2
    dots = [e for e in body_of(scan).eqns if e.primitive.name == "dot_general"]
    assert sorted(e.params["dimension_numbers"][0] for e in dots) == [((1,), (0,)),
                                                                      ((1,), (1,))]
    same_program(closed, out, *args)
    assert_close(*jit_both(f, *args))


def test_broadcasts_of_constants_stay_in_the_loop():
    """A loop-invariant broadcast is read in place each step, not stored before the loop."""
    def f(b, xs):
        def body(c, x):
            c = c + jnp.broadcast_to(b, (64, 3)) * x
            return c, c.sum()
        return lax.scan(body, jnp.zeros((64, 3), jnp.float32), xs)

    args = (rand(3), rand(5, 64, 3))
    closed, out = optimized(f, *args)
    (scan,) = scans(out)
    assert "broadcast_in_dim" in prims(body_of(scan))
    same_program(closed, out, *args)


# --------------------------------------------------------------------------------------
# Stacked outputs and inputs


def test_duplicate_and_forwarded_stacked_outputs():
    def f(xs):
        def body(c, x):
            h = jnp.sin(c + x)
            return h, (h, h * 1.0, x, h)
        return lax.scan(body, jnp.zeros(3, jnp.float32), xs)

    xs = rand(5, 3)
    closed, out = optimized(f, xs)
    (scan,) = scans(out)
    assert len(scan.outvars) == 2  # the carry and h stacked once
    _, (a, b, x, d) = jax.jit(f)(xs)
    assert_close((a, b, x, d), (a, a, xs, a))
    same_program(closed, out, xs)
    assert_close(*jit_both(f, xs))


def test_inputs_the_body_does_not_read_are_dropped():
    def f(w, xs, zs):
        def body(c, xz):
            x, _ = xz
            return c * w + x.sum(), c
        return lax.scan(body, jnp.float32(1.0), (xs, zs))

    args = (np.float32(0.5), rand(5, 3), rand(5, 7))
    closed, out = optimized(f, *args)
    (scan,) = scans(out)
    assert [v.aval.shape for v in scan.invars] == [(), (), (5, 3)]
    same_program(closed, out, *args)


def test_length_one_and_zero_scans_keep_their_products():
    for n in (0, 1):
        f, (w, u, _) = _input_projection()
        xs = rand(n, 2, 3)
        closed, out = optimized(f, w, u, xs)
        assert hoisted_products(out) == []
        same_program(closed, out, w, u, xs)


# --------------------------------------------------------------------------------------
# Stacked values computed again by the scan reading them


def _two_scans(read_s=True, return_r=False, reverse=False):
    def f(w, xs):
        def first(c, x):
            s = jnp.sin(c + x)
            r = s * (1.0 - s) * w
            return c * 0.5 + s, (s, r, jnp.cos(s))

        def second(c, srt):
            s, r, t = srt if read_s else (0.0, *srt)
            c = c * 0.9 + r * t + s
            return c, c

        _, (ss, rs, ts) = lax.scan(first, jnp.zeros(3, jnp.float32), xs)
        c, cs = lax.scan(second, jnp.ones(3, jnp.float32),
                         (ss, rs, ts) if read_s else (rs, ts), reverse=reverse)
        return (c, cs, rs) if return_r else (c, cs)

    return f, (np.float32(0.7), rand(6, 3))


@pytest.mark.parametrize("reverse", [False, True])
def test_a_stacked_product_of_stacked_values_is_computed_again(reverse):
    """`s * (1 - s) * w` stacked by the first scan for the second alone, which reads `s`
    stacked anyway: the second computes it from `s` (and the constant w), the first stacks
    it no more."""
    f, args = _two_scans(reverse=reverse)
    closed, out = optimized(f, *args)
    before, after = scans(closed), scans(out)
    assert len(after[0].outvars) == len(before[0].outvars) - 1
    assert len(after[1].invars) == len(before[1].invars)  # r's rows out, w in
    assert prims(body_of(after[1]))[:3] == ["sub", "mul", "mul"]
    same_program(closed, out, *args)
    got, base = jit_both(f, *args)
    assert_close(got, base)


def test_values_computed_again_from_values_computed_again():
    """`1 - s` and `s * (1 - s)` both stacked for the second scan, which reads `s`: both
    computed there, `1 - s` first (whichever order the stacked inputs come in)."""
    def f(xs):
        def first(c, x):
            s = jnp.sin(c + x)
            u = 1.0 - s
            return c * 0.5 + s, (s * u, s, u)

        def second(c, rsu):
            r, s, u = rsu
            c = c * r + s * u - u
            return c, c

        _, stacked = lax.scan(first, jnp.zeros(3, jnp.float32), xs)
        return lax.scan(second, jnp.ones(3, jnp.float32), stacked, reverse=True)

    xs = rand(6, 3)
    closed, out = optimized(f, xs)
    before, after = scans(closed), scans(out)
    assert len(after[0].outvars) == len(before[0].outvars) - 2
    same_program(closed, out, xs)
    assert_close(*jit_both(f, xs))


@pytest.mark.parametrize("case", ["read elsewhere", "operand not read"])
def test_stacked_values_read_elsewhere_or_from_unread_values_stay_stacked(case):
    """Computing r again would not spare its array (the program returns it too), or would
    need `s` stacked for the second scan, which does not read it."""
    f, args = (_two_scans(return_r=True) if case == "read elsewhere"
               else _two_scans(read_s=False))
    closed, out = optimized(f, *args)
    before, after = scans(closed), scans(out)
    # (s, stacked for nobody when the second scan does not read it, is not stacked)
    assert len(after[0].outvars) == len(before[0].outvars) - (case == "operand not read")
    assert "sub" not in prims(body_of(after[1]))
    same_program(closed, out, *args)
    assert_close(*jit_both(f, *args))


# --------------------------------------------------------------------------------------
# The gradient of an LSTM (W6's program, smaller)


def _lstm(np_like, lax_like, H=8):
    def loss(params, xs, ys):
        wx, wh, b, w_out = params

        def cell(carry, x):
            h, c = carry
            gates = x @ wx + h @ wh + b
            i, f = lax_like.logistic(gates[:, :H]), lax_like.logistic(gates[:, H:2 * H])
            g, o = np_like.tanh(gates[:, 2 * H:3 * H]), lax_like.logistic(gates[:, 3 * H:])
            c = f * c + i * g
            h = o * np_like.tanh(c)
            return (h, c), h

        zeros = np_like.zeros((xs.shape[1], H), np_like.float32)
        _, hs = lax_like.scan(cell, (zeros, zeros), xs)
        return np_like.mean((hs @ w_out - ys) ** 2)

    return loss


def test_lstm_gradient():
    """The backward loop multiplies the cotangent by the recurrent weight transposed: that
    weight is transposed once before it; the stacked input the backward loop no longer
    reads and the gate cotangent it stacked twice are gone. Gradients as without the
    rewrite, and as JAX's."""
    H = 8
    params = (rand(3, 4 * H), rand(H, 4 * H), rand(4 * H), rand(H))
    xs, ys = rand(6, 2, 3), rand(6, 2)
    grad = jax.grad(_lstm(jnp, lax))
    closed, out = optimized(grad, params, xs, ys)
    before, after = scans(closed), scans(out)
    assert len(before) == len(after) == 2
    back = after[1]
    assert back.params["reverse"]
    assert len(back.outvars) < len(before[1].outvars)
    assert len(back.invars) < len(before[1].invars) - 4
    # s * (1 - s) of the gates, 1 - tanh(c)^2 ...: computed again by the backward loop
    assert len(after[0].outvars) <= len(before[0].outvars) - 5
    (dot,) = [e for e in body_of(back).eqns if e.primitive.name == "dot_general"]
    assert dot.params["dimension_numbers"][0] == ((1,), (0,))
    same_program(closed, out, params, xs, ys)
    got, base = jit_both(grad, params, xs, ys)
    assert_close(got, base, rtol=1e-5, atol=1e-6)
    jax_ = pytest.importorskip("jax")
    want = jax_.jit(jax_.grad(_lstm(jax_.numpy, jax_.lax)))(params, xs, ys)
    assert_close(got, [np.asarray(w) for w in want], rtol=2e-5, atol=2e-6)
