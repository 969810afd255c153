"""Each pass on its own: what it removes or rewrites, and that the program still computes
the same thing (evaluating the jaxpr before and after)."""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src.compiler import passes
from didax._src.ir import check_jaxpr

pytestmark = pytest.mark.usefixtures("jit_tier")  # both tiers (tests/conftest.py)


def prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def same_values(before, after, *args):
    for a, b in zip(before(*args), after(*args)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_inline_calls_flattens_nested_jits_and_custom_calls():
    inner = jax.jit(lambda x: jnp.sin(x) * 2.0)

    @jax.custom_jvp
    def f(x):
        return jnp.exp(x)

    f.defjvp(lambda p, t: (f(p[0]), t[0]))

    outer = jax.jit(lambda x: inner(inner(x)) + f(x))
    closed = jax.make_jaxpr(lambda x: outer(x))(1.0)
    assert prims(closed) == ["jit"]
    flat = passes.inline_calls(closed)
    check_jaxpr(flat.jaxpr)
    assert prims(flat) == ["sin", "mul", "sin", "mul", "exp", "add"]
    same_values(closed, flat, np.float32(0.3))


def test_inline_keeps_constants_of_inlined_bodies():
    c = jnp.arange(3.0)
    closed = jax.make_jaxpr(lambda x: jax.jit(lambda y: y * c)(x) + 1.0)(jnp.ones(3))
    flat = passes.inline_calls(closed)
    assert len(flat.consts) == 1 and prims(flat) == ["mul", "add"]
    same_values(closed, flat, np.ones(3, np.float32))


def test_dce_removes_unused_equations_and_constants():
    c = jnp.arange(3.0)

    def f(x):
        unused = jnp.sin(x) * c  # noqa: F841 - dead
        return x + 1.0

    closed = jax.make_jaxpr(f)(jnp.ones(3))
    out = passes.dce(closed)
    assert prims(out) == ["add"] and out.consts == []
    same_values(closed, out, np.ones(3, np.float32))


def test_dce_marks_unused_outputs_of_kept_equations_as_dropped():
    closed = jax.make_jaxpr(lambda x: lax.sort((x, -x), num_keys=1)[0])(jnp.ones(3))
    out = passes.dce(closed)
    eqn = out.jaxpr.eqns[-1]
    assert eqn.primitive.name == "sort"
    assert "_:f32[3]" in str(out)
    assert type(eqn.outvars[1]).__name__ == "DropVar"


def test_dce_keeps_effects():
    closed = jax.make_jaxpr(lambda x: (jax.debug.print("{}", x), x)[1])(1.0)
    assert prims(passes.dce(closed)) == ["debug_print"]


def test_cse_merges_repeated_computations():
    def f(x):
        return jnp.sin(x) * 2.0 + jnp.sin(x) * 2.0

    closed = jax.make_jaxpr(f)(1.0)
    assert prims(closed) == ["sin", "mul", "sin", "mul", "add"]
    out = passes.cse(closed)
    assert prims(out) == ["sin", "mul", "add"]
    add = out.jaxpr.eqns[-1]
    assert add.invars[0] is add.invars[1]
    same_values(closed, out, np.float32(0.7))


def test_cse_distinguishes_parameters_and_literals():
    def f(x):
        return jnp.sum(x, 0), jnp.sum(x, 1), x * 2.0, x * 3.0

    out = passes.cse(jax.make_jaxpr(f)(jnp.ones((2, 3))))
    assert len(out.jaxpr.eqns) == 4


def test_cse_never_merges_effects():
    def f(x):
        jax.debug.print("{}", x)
        jax.debug.print("{}", x)
        return x

    assert prims(passes.cse(jax.make_jaxpr(f)(1.0))) == ["debug_print", "debug_print"]


def test_fold_constants_evaluates_constant_subexpressions():
    c = np.arange(4.0, dtype=np.float32)

    def f(x):
        k = jnp.exp(jnp.asarray(c)) * 2.0  # all known: folded
        return x * k + jnp.sin(jnp.float32(0.5))

    closed = jax.make_jaxpr(f)(jnp.ones(4))
    folded = passes.dce(passes.fold_constants(closed))
    assert prims(folded) == ["mul", "add"]
    add = folded.jaxpr.eqns[-1]
    assert type(add.invars[1]).__name__ == "Literal"
    np.testing.assert_allclose(add.invars[1].val, np.sin(np.float32(0.5)), rtol=1e-7)
    same_values(closed, folded, np.ones(4, np.float32))


def test_fold_constants_leaves_large_results_to_run_time():
    closed = jax.make_jaxpr(lambda x: x + jnp.zeros((300, 300)))(jnp.ones((300, 300)))
    assert "broadcast_in_dim" in prims(passes.fold_constants(closed))


def test_forwarding_removes_identity_equations():
    def f(x):
        y = lax.convert_element_type(x, np.float32)
        y = jnp.reshape(y, (2, 3))
        y = jnp.transpose(y, (0, 1))
        return y * 2.0

    closed = jax.make_jaxpr(f)(jnp.ones((2, 3)))
    out = passes.dce(passes.forward_trivial(closed))
    assert prims(out) == ["mul"]
    assert out.jaxpr.eqns[0].invars[0] is out.jaxpr.invars[0]
    same_values(closed, out, np.ones((2, 3), np.float32))


def test_forwarding_an_output_to_an_input():
    closed = jax.make_jaxpr(lambda x: jnp.reshape(x, (3,)))(jnp.ones(3))
    out = passes.forward_trivial(closed)
    assert out.jaxpr.outvars[0] is out.jaxpr.invars[0]


def test_a_reshape_that_permutes_to_the_same_shape_is_kept():
    """reshape with `dimensions` transposes first: on a square matrix it keeps the shape
    but is no identity."""
    f = lambda x: lax.reshape(x, (2, 2), dimensions=(1, 0))  # noqa: E731
    x = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    closed = jax.make_jaxpr(f)(x)
    out = passes.forward_trivial(closed)
    assert prims(out) == ["reshape"]
    same_values(closed, out, x)
    np.testing.assert_array_equal(jax.jit(f)(x), x.T)


def test_optimize_runs_all_passes_and_stays_well_typed():
    inner = jax.jit(lambda x: jnp.sin(x) * 2.0)

    def f(x):
        a = inner(x) + inner(x)
        dead = jnp.cos(x)  # noqa: F841
        return jnp.reshape(a, (3,)) * (jnp.float32(1.0) + 1.0)

    closed = jax.make_jaxpr(f)(jnp.ones(3))
    out = passes.optimize(closed)
    check_jaxpr(out.jaxpr)
    assert prims(out) == ["sin", "mul", "add", "mul"]
    same_values(closed, out, np.linspace(0, 1, 3).astype(np.float32))


def test_equal_folded_constants_share_a_variable_so_cse_merges_their_uses():
    def f(x):
        a = jnp.where(x > 0, jnp.zeros(3), x)  # two separately built, equal constants
        b = jnp.where(x > 0, jnp.zeros(3), x)
        return a + b

    closed = jax.make_jaxpr(f)(jnp.ones(3))
    out = passes.dce(passes.cse(passes.fold_constants(closed)))
    assert prims(out).count("select_n") == 1 and len(out.consts) == 1
    same_values(closed, out, np.array([1.0, -2.0, 3.0], np.float32))


def test_forwarding_composes_transposes():
    def f(x):
        y = jnp.transpose(x, (1, 2, 0))
        return jnp.transpose(y, (2, 0, 1)) * 2.0, jnp.transpose(jnp.transpose(x, (1, 0, 2)),
                                                                (0, 2, 1))

    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    closed = jax.make_jaxpr(f)(x)
    out = passes.dce(passes.forward_trivial(closed))
    check_jaxpr(out.jaxpr)
    assert prims(out) == ["mul", "transpose"]  # the first pair is the identity
    assert out.jaxpr.eqns[0].invars[0] is out.jaxpr.invars[0]
    assert out.jaxpr.eqns[1].params["permutation"] == (1, 2, 0)
    assert out.jaxpr.eqns[1].invars[0] is out.jaxpr.invars[0]
    same_values(closed, out, x)


def test_a_transposed_product_swaps_its_operands():
    """What dot_general's transpose rule stages for the weight of `x @ w`: the product, then
    a transpose; the pass makes it `x.T @ ct`, with no transpose after it."""
    x, ct = np.ones((5, 3), np.float32), np.ones((5, 4), np.float32)
    x[0, 0], ct[1, 2] = 2.0, 3.0

    def f(x, ct):
        p = lax.dot_general(ct, x, (((0,), (0,)), ((), ())),
                            precision=(lax.Precision.HIGHEST, lax.Precision.DEFAULT))
        return jnp.transpose(p, (1, 0))

    closed = jax.make_jaxpr(f)(x, ct)
    out = passes.permute_products(closed)
    check_jaxpr(out.jaxpr)
    assert prims(out) == ["dot_general"]
    (eqn,) = out.jaxpr.eqns
    assert eqn.invars == out.jaxpr.invars and eqn.outvars == out.jaxpr.outvars
    assert eqn.params["dimension_numbers"] == (((0,), (0,)), ((), ()))
    assert eqn.params["precision"] == (lax.Precision.DEFAULT, lax.Precision.HIGHEST)
    same_values(closed, out, x, ct)


def test_a_product_with_other_uses_or_no_swapped_order_keeps_its_transpose():
    a, b = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    dn = (((2,), (1,)), ((0,), (0,)))

    def used_twice(a, b):
        p = lax.dot_general(a, b, dn)
        return jnp.transpose(p, (0, 2, 1)), p

    used_twice = jax.make_jaxpr(used_twice)(a, b)
    batch_moved = jax.make_jaxpr(
        lambda a, b: jnp.transpose(lax.dot_general(a, b, dn), (1, 0, 2)))(a, b)
    for closed in (used_twice, batch_moved):
        assert prims(passes.permute_products(closed)) == ["dot_general", "transpose"]


def test_a_product_by_a_converted_boolean_is_a_select():
    """As XLA (so as JAX's jit): convert(p) * x, in either order, is select(p, x, 0), so
    0 * inf and 0 * NaN are 0; not through a broadcast of convert(p), not in bfloat16."""
    b = np.array([True, False, False, True, False])
    x = np.array([np.inf, np.inf, np.nan, np.nan, -5.0], np.float32)

    def rewritten(f):
        closed = passes.optimize(jax.make_jaxpr(f)(b, x))
        check_jaxpr(closed.jaxpr)
        return "select_n" in prims(closed) and "mul" not in prims(closed)

    assert rewritten(lambda b, x: b.astype(jnp.float32) * x)
    assert rewritten(lambda b, x: x * lax.convert_element_type(b, np.float32))
    assert rewritten(lambda b, x: b.astype(jnp.float32) * jnp.inf)
    assert rewritten(lambda b, x: b.astype(jnp.complex64) * x)
    assert not rewritten(lambda b, x: b.astype(jnp.bfloat16) * x.astype(jnp.bfloat16))
    assert not rewritten(lambda b, x: b.astype(jnp.int32).astype(jnp.float32) * x)
    assert not rewritten(lambda b, x: b.astype(jnp.float32)[:, None] * x[None])
    np.testing.assert_array_equal(jax.jit(lambda b, x: b.astype(jnp.float32) * x)(b, x),
                                  [np.inf, 0, 0, np.nan, 0])


def test_products_by_booleans_under_jit_as_jax():
    """Each form, under jit as JAX's jit computes it and eagerly as JAX eagerly (where
    astype then multiply are two operations: NaN; jnp.multiply of a boolean is one)."""
    from jax_testing import assert_as_jax

    def program(jax, jnp, lax, b, x):
        f32 = jnp.float32
        return [b.astype(f32) * x, x * b.astype(f32), b * x, x * b, jnp.multiply(b, x),
                b.astype(f32) * jnp.inf, b * jnp.inf, b.astype(jnp.float16) * x.astype(
                    jnp.float16), b.astype(jnp.complex64) * x, b * x.astype(jnp.complex64),
                b.astype(jnp.bfloat16) * x.astype(jnp.bfloat16), b * x.astype(jnp.bfloat16),
                b[None] * jnp.stack([x, x]), jnp.stack([b, b]) * x, b[1] * x,
                b.astype(jnp.int32).astype(f32) * x, -b.astype(f32) * x,
                b * 1.0 + (~b) * jnp.inf, jnp.sum(b.astype(f32) * x),
                b.astype(f32) * (x > 0).astype(f32) * jnp.inf,
                jax.vmap(lambda b, x: b * x)(b, x),
                jax.jvp(lambda x: b * x, (x,), (jnp.full(5, jnp.inf),)),
                jax.grad(lambda x: jnp.sum(b.astype(f32) * x * jnp.inf))(x)]

    b = np.array([True, False, False, True, False])
    x = np.array([np.inf, np.inf, np.nan, np.nan, -5.0], np.float32)
    assert_as_jax(program, b, x, jax_jit="same")


def test_updates_run_right_after_their_gradients():
    """An SGD step's updates, traced after every gradient, run beside the product that
    computes each gradient; every other equation keeps its order."""
    w1, w2 = np.full((4, 4), 0.5, np.float32), np.full((4, 4), 0.25, np.float32)
    h, g = np.arange(8, dtype=np.float32).reshape(2, 4), np.ones((2, 4), np.float32)

    def step(w1, w2, h, g):
        g1 = lax.dot_general(h, g, (((0,), (0,)), ((), ())))
        g2 = lax.dot_general(h * 2.0, g, (((0,), (0,)), ((), ())))
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    closed = jax.make_jaxpr(step)(w1, w2, h, g)
    assert prims(closed) == ["dot_general", "mul", "dot_general", "mul", "sub", "mul", "sub"]
    out = passes.consume_early(closed)
    check_jaxpr(out.jaxpr)
    assert prims(out) == ["dot_general", "mul", "sub", "mul", "dot_general", "mul", "sub"]
    same_values(closed, out, w1, w2, h, g)


def test_an_update_pulls_along_what_only_inputs_determine():
    """Adam's `b1 * m + (1 - b1) * g` and `b2 * v + (1 - b2) * g * g`: both read the gradient,
    and run once it is computed, with `b1 * m` and `b2 * v`, which read only inputs (where
    the loop fusing them sees them)."""
    m, v = np.ones((3, 3), np.float32), np.full((3, 3), 2.0, np.float32)
    x, w = np.eye(3, dtype=np.float32), np.ones((3, 3), np.float32)

    def update(m, v, x, w):
        g = x @ w
        late = jnp.sin(w)  # (traced between the gradient and the update)
        return 0.9 * m + 0.1 * g, 0.99 * v + 0.01 * (g * g), late

    closed = jax.make_jaxpr(update)(m, v, x, w)
    assert prims(closed) == ["dot_general", "sin", "mul", "mul", "add", "mul", "mul", "mul",
                             "add"]
    out = passes.consume_early(closed)
    check_jaxpr(out.jaxpr)
    assert prims(out) == ["dot_general", "mul", "mul", "add", "mul", "mul", "mul", "add",
                          "sin"]
    same_values(closed, out, m, v, x, w)


def test_readers_move_all_together_or_not_at_all():
    """A value one of whose readers must wait (for a loop, which never moves) keeps all its
    readers where they are: moving the others alone would split what one loop computes."""
    x, w = np.ones((3, 3), np.float32), np.ones((3, 3), np.float32)

    def f(x, w):
        g = x @ w
        late = lax.fori_loop(0, 3, lambda i, c: c * 2.0, w)
        return g * 2.0, g + late

    closed = jax.make_jaxpr(f)(x, w)
    loop = prims(closed)[1]
    assert prims(closed) == ["dot_general", loop, "mul", "add"]
    out = passes.consume_early(closed)
    check_jaxpr(out.jaxpr)
    # `g * 2` waits with `g + late`; `g + late`, the loop's result's only reader, follows it
    assert prims(out) == ["dot_general", loop, "add", "mul"]
    same_values(closed, out, x, w)


def test_effects_and_larger_results_keep_their_place():
    x, y = np.ones((4,), np.float32), np.ones((4, 4), np.float32)

    def f(x, y):
        a = jnp.cos(x)
        s = jnp.sum(y)
        jax.debug.callback(lambda v: None, a)  # effectful: never moves
        wide = jnp.broadcast_to(a, (4, 4)) * 2.0  # a result larger than its operand
        return a * s, wide

    closed = jax.make_jaxpr(f)(x, y)
    assert prims(closed) == ["cos", "reduce_sum", "debug_callback", "broadcast_in_dim",
                             "mul", "mul"]
    out = passes.consume_early(closed)
    check_jaxpr(out.jaxpr)
    # `a * s` runs once `s` is computed; the callback, and the broadcast after it, stay
    assert prims(out) == ["cos", "reduce_sum", "mul", "debug_callback", "broadcast_in_dim",
                          "mul"]
    same_values(closed, out, x, y)
