"""didax.jit: caching and retracing, static and keyword arguments, lowering and the generated
source, disable_jit, errors, debug.print and jax_debug_nans."""
import collections
import functools
import logging
import operator

import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import core
from didax._src.config import flag_context
from didax._src.transforms import jit as api
from didax.errors import ConcretizationTypeError

pytestmark = pytest.mark.usefixtures("jit_tier")  # both tiers (tests/conftest.py)


def counting(fn):
    calls = []

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        calls.append(1)  # a Python side effect: runs only while tracing
        return fn(*args, **kwargs)

    return wrapped, calls


def test_same_shapes_do_not_retrace_and_side_effects_run_at_trace_time():
    f, calls = counting(lambda x, y: x * y + 1.0)
    g = jax.jit(f)
    a = jnp.ones(3)
    np.testing.assert_array_equal(g(a, a), np.full(3, 2.0, np.float32))
    g(a * 2, a)
    g(np.ones(3, np.float32), a)  # a NumPy array of the same type: same signature
    assert len(calls) == 1
    info = g.cache_info()
    assert (info.hits, info.misses, info.size) == (2, 1, 1)


@pytest.mark.parametrize("second,reason", [
    ((jnp.ones(4), jnp.ones(4)), "argument x changed shape: f32[3] -> f32[4]"),
    ((jnp.ones(3, jnp.int32), jnp.ones(3)), "argument x changed dtype: f32[3] -> i32[3]"),
    ((2.0, jnp.ones(3)), "argument x changed shape"),
])
def test_new_shape_or_dtype_retraces_and_says_why(second, reason, caplog):
    f, calls = counting(lambda x, y: x * y)
    g = jax.jit(f)
    g(jnp.ones(3), jnp.ones(3))
    with _flag("jax_explain_cache_misses", True):
        with caplog.at_level(logging.WARNING, logger="didax"):
            g(*second)
    assert len(calls) == 2
    assert reason in g.cache_info().last_miss
    assert reason in caplog.text


class _flag:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def __enter__(self):
        self.old = jax.config.read(self.name)
        jax.config.update(self.name, self.value)

    def __exit__(self, *exc):
        jax.config.update(self.name, self.old)


def test_weak_type_is_part_of_the_signature():
    f, calls = counting(lambda x: x * 2)
    g = jax.jit(f)
    out_weak = g(1.0)
    out_strong = g(jnp.float32(1.0))
    assert len(calls) == 2
    assert out_weak.weak_type and not out_strong.weak_type
    assert "weak type" in g.cache_info().last_miss


def test_static_arguments_by_position_and_name():
    f, calls = counting(lambda x, n, *, mode="sum": jnp.sum(x ** n) if mode == "sum"
                        else jnp.max(x ** n))
    g = jax.jit(f, static_argnums=1, static_argnames="mode")
    x = jnp.arange(3.0)
    assert float(g(x, 2)) == 5.0
    assert float(g(x, 2)) == 5.0
    assert float(g(x, 3)) == 9.0
    assert float(g(x, 3, mode="max")) == 8.0
    assert len(calls) == 3
    assert "static argument mode changed from <absent> to 'max'" in g.cache_info().last_miss
    h = jax.jit(f, static_argnames="n")  # a name implies its position
    assert float(h(x, 2)) == 5.0 and float(h(x, n=2)) == 5.0


def test_static_argument_used_in_python_control_flow():
    g = jax.jit(lambda x, k: x[:k] * 2, static_argnums=1)
    np.testing.assert_array_equal(g(jnp.arange(5.0), 2), [0.0, 2.0])


def test_unhashable_static_argument_is_a_clear_error():
    g = jax.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        g(1.0, [1, 2])


def test_non_array_argument_names_its_path():
    g = jax.jit(lambda x, params: x)
    with pytest.raises(TypeError, match=r"argument `params\['w'\]`"):
        g(1.0, {"w": "a string"})


def test_pytrees_and_keyword_arguments():
    @jax.jit
    def f(params, x, *, scale):
        return {"y": params["w"] @ x * scale, "n": params["n"] + 1}

    p = {"w": jnp.eye(2), "n": jnp.int32(3)}
    out = f(p, jnp.array([1.0, 2.0]), scale=2.0)
    np.testing.assert_array_equal(out["y"], [2.0, 4.0])
    assert out["n"].dtype == jnp.int32 and int(out["n"]) == 4


def test_python_control_flow_on_traced_values_names_the_users_line():
    @jax.jit
    def f(x):
        if x > 0:  # the offending line
            return x
        return -x

    with pytest.raises(ConcretizationTypeError) as e:
        f(1.0)
    assert "test_jit.py:" in str(e.value) and "(f)" in str(e.value)


def test_disable_jit_runs_the_function_eagerly():
    seen = []
    g = jax.jit(lambda x: (seen.append(type(x).__name__), x + 1)[1])
    with jax.disable_jit():
        g(1.0)
        g(2.0)
    assert seen == ["float", "float"]
    g(1.0)
    assert seen[-1] != "float"


def test_decorator_with_options():
    @jax.jit(static_argnames="n")
    def power(x, n):
        return x ** n

    assert float(power(2.0, n=3)) == 8.0


def test_lower_shows_the_optimised_jaxpr_and_compile_the_source():
    def f(x, y):
        unused = jnp.cos(x)  # noqa: F841 - removed by DCE
        return jnp.sin(x) * y + jnp.sin(x) * y

    lowered = jax.jit(f).lower(1.0, 2.0)
    text = lowered.as_text()
    assert text.count("sin") == 1 and "cos" not in text
    source = lowered.compile().as_text()
    assert source.startswith("def f(a, b):") and "np.sin(a)" in source
    assert float(lowered.compile()(1.0, 2.0)) == pytest.approx(4 * np.sin(1.0), rel=1e-6)


def test_generated_source_is_what_a_person_would_write():
    def predict(w, b, x):
        return jnp.tanh(x @ w + b)

    w, b, x = jnp.ones((3, 2)), jnp.zeros(2), jnp.ones((4, 3))
    source = jax.jit(predict).lower(w, b, x).compile().as_text()
    assert source.split("\n/* The native tier: */")[0] == (
        "def f(a, b, c):\n"
        "    e = c if c.strides == (12, 4) else np.array(c, order='C')\n"  # (see lax.dot)
        "    f = a if a.strides == (8, 4) else np.array(a, order='C')\n"
        "    d = np.matmul(e, f)\n"
        "    g = b.reshape((1, 2))\n"
        "    h = np.add(d, g, out=d)\n"
        "    j = _tanh(h, out=h)\n"  # (float32: didax's own, lax.transcendental_kernels)
        "    return (j,)\n")


def test_generated_source_contains_no_user_strings():
    evil = "__import__('os').system('echo pwned')"

    def f(x):
        jax.debug.print(evil + " {}", x)
        return x

    f.__name__ = "bad name; import os"
    source = jax.jit(f).lower(1.0).compile().as_text()
    assert "os" not in source and "pwned" not in source and "bad" not in source


def test_buffers_of_live_values_are_never_overwritten():
    @jax.jit
    def f(x):
        y = x * 2.0
        z = y + 1.0  # y is still live: z must not be written into y's buffer
        w = jnp.exp(z)  # z dies here: w may reuse it
        return y, w * y

    x = jnp.arange(4.0)
    y, out = f(x)
    np.testing.assert_allclose(y, np.arange(4.0) * 2)
    np.testing.assert_allclose(out, np.exp(np.arange(4.0) * 2 + 1) * np.arange(4.0) * 2,
                               rtol=1e-6)
    np.testing.assert_array_equal(x, np.arange(4.0))  # inputs are never written


def test_outputs_do_not_share_buffers_across_calls():
    f = jax.jit(lambda x: jnp.exp(x) + 1.0)
    a = f(jnp.zeros(3))
    b = f(jnp.ones(3))
    np.testing.assert_allclose(a, np.full(3, 2.0))
    assert not np.shares_memory(np.asarray(a), np.asarray(b))


def test_debug_print_inside_jit_vmap_and_grad(capsys):
    def f(x):
        jax.debug.print("x = {x}", x=x)
        return x * x

    jax.jit(f)(3.0)
    jax.jit(f)(4.0)  # cached: still prints, with the new value
    jax.vmap(jax.jit(f))(jnp.arange(2.0))
    jax.grad(jax.jit(f))(5.0)
    assert capsys.readouterr().out.split("\n")[:-1] == [
        "x = 3.0", "x = 4.0", "x = 0.0", "x = 1.0", "x = 5.0"]


def test_debug_nans_names_the_primitive_and_line():
    def f(x):
        y = jnp.log(x)  # nan for negative x
        return y * 2.0

    with _flag("jax_debug_nans", True):
        for g in (f, jax.jit(f)):
            with pytest.raises(FloatingPointError) as e:
                g(-1.0)
            assert "nan" in str(e.value) and "log" in str(e.value)
            assert "test_jit.py" in str(e.value)
        assert float(jax.jit(f)(1.0)) == 0.0
    assert np.isnan(float(jax.jit(f)(-1.0)))  # off again: no check


def test_jit_of_control_flow_generates_loops_and_branches():
    def f(x):
        c = lax.fori_loop(0, 5, lambda i, c: c * 2.0 + i, x)
        return lax.cond(c > 10.0, lambda c: c - 1.0, lambda c: c + 1.0, c)

    g = jax.jit(f)
    source = g.lower(1.0).compile().as_text()
    assert "for i in range(5):" in source and "if " in source
    assert float(g(1.0)) == float(f(1.0))

    def w(x):
        return lax.while_loop(lambda c: c < 100.0, lambda c: c * 3.0, x)

    assert "while " in jax.jit(w).lower(1.0).compile().as_text()
    assert float(jax.jit(w)(1.0)) == 243.0


def test_eval_shape_and_trace():
    g = jax.jit(lambda x: (x.sum(), x * 2))
    s, y = g.eval_shape(jnp.ones((2, 3)))
    assert s.shape == () and y.shape == (2, 3)
    assert "mul" in str(g.trace(jnp.ones(3)).jaxpr)


@pytest.mark.parametrize("fn", [lambda x: x ** 1, lambda x: jnp.reshape(x, (4,)),
                                lambda x: x.T.T, lambda x: lax.slice(x, (0,), (4,)),
                                lambda x: jnp.sum(x, axis=()), lambda x: x[...]])
def test_results_that_may_alias_an_input_are_never_written_into(fn):
    @jax.jit
    def f(x):
        y = fn(x)  # may be the input's own buffer (or a view of it)
        return y * 0.5 + 1.0  # a later statement that could reuse y's buffer

    x = jnp.arange(4.0)
    before = np.asarray(x).copy()
    np.testing.assert_array_equal(f(x), before * 0.5 + 1.0)
    np.testing.assert_array_equal(x, before)


def test_impls_are_handed_arrays_for_0d_literals_and_operator_results():
    """Generated code computes 0-d values with Python operators (NumPy scalars) and holds
    literals as NumPy scalars; an impl it calls gets arrays, as when evaluating eagerly."""
    def f(c):
        zero = jnp.zeros(())
        return (lax.dynamic_update_slice(zero, c, ()),
                lax.dynamic_update_slice(c * c, zero + c, ()))

    c = np.float32(3.0)
    for got, want in zip(jax.jit(f)(c), f(c)):
        assert got.dtype == want.dtype and float(got) == float(want)


def test_sums_of_zero_padded_pieces_add_into_regions():
    def f(x):  # the gradient of split pieces is a sum of zero pads
        a, b, c, d = jnp.split(x, 4, axis=1)
        return jnp.sum(jnp.sin(a) * jnp.cos(b) + c * d)

    x = jnp.arange(24.0).reshape(3, 8) / 10
    g = jax.jit(jax.grad(f))
    source = g.lower(x).compile().as_text()
    assert "np.zeros((3, 8)" in source and source.count("] += ") == 4
    assert "_pad" not in source and "0.0, out=" not in source
    np.testing.assert_allclose(g(x), jax.grad(f)(x), rtol=1e-6)
    np.testing.assert_array_equal(x, (np.arange(24.0).reshape(3, 8) / 10).astype(np.float32))


@pytest.mark.parametrize("tier", ["off", "check"])
def test_sums_of_zero_pads_keep_the_sign_of_zero_as_the_additions_do(tier):
    """A pad adds 0.0 outside its region, which makes a -0.0 there +0.0: so do the regions
    summed in place, on the NumPy tier as on the native tier and eagerly."""
    def f(x, y, base):
        p = lax.pad(x, np.float32(0), [(0, 1, 0)])
        q = lax.pad(y, np.float32(0), [(1, 0, 0)])
        r = lax.pad(y, np.float32(0), [(0, 1, 0)])
        return p + q, base + r, (p + q) + r

    x = np.array([-0.0], np.float32)
    base = np.array([-0.0, -0.0], np.float32)
    with jax.disable_jit():
        want = f(x, x, base)
    with flag_context("didax_native_tier", tier):
        got = jax.jit(f)(x, x, base)
    for g, w in zip(got, want):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), (g, w)
    assert np.signbit(want[1]).tolist() == [True, False]


def test_the_last_signature_checked_first_still_tells_signatures_apart():
    """A call with the last call's types takes a shortcut; any other types, x64 or an
    enclosing transformation must still reach their own traces."""
    traces = []

    @jax.jit
    def f(x, y):
        traces.append((x.dtype, x.weak_type, y.shape))
        return x * 2 + y

    a, b = jnp.ones(3), jnp.arange(3.0)
    for _ in range(3):
        np.testing.assert_array_equal(f(a, b), np.array([2.0, 3.0, 4.0], np.float32))
    np.testing.assert_array_equal(f(jnp.ones(3, jnp.int32), b), [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(f(a, jnp.ones((2, 3))), np.full((2, 3), 3.0))
    np.testing.assert_array_equal(f(a, b), [2.0, 3.0, 4.0])
    assert len(traces) == 3
    assert jax.grad(lambda x: f(x, b).sum())(a).tolist() == [2.0, 2.0, 2.0]
    assert jax.vmap(f)(jnp.ones((2, 3)), jnp.ones((2, 3))).shape == (2, 3)
    with jax.enable_x64():
        out = f(jnp.ones(3, jnp.float64), jnp.arange(3.0, dtype=jnp.float64))
        assert out.dtype == np.float64
    assert f(a, b).dtype == np.float32
    assert len(traces) == 4  # grad and vmap reuse the trace of these types; x64 traces anew


def test_the_last_signature_shortcut_retraces_on_a_new_dtype_or_weak_type():
    """Calls alternating between types: each runs the trace of its own types (the shortcut
    is taken only for the last call's exact types), whatever kind of value is passed."""
    traces = []

    @jax.jit
    def f(x):
        traces.append((x.dtype, x.weak_type))
        return x * 2

    strong, weak = jnp.asarray(np.float32(1.5)), jnp.asarray(1.5)
    assert (strong.weak_type, weak.weak_type) == (False, True)
    for value, dtype, weak_type in [(strong, np.float32, False), (strong, np.float32, False),
                                    (weak, np.float32, True), (weak, np.float32, True),
                                    (strong, np.float32, False), (1.5, np.float32, True),
                                    (np.float32(1.5), np.float32, False),
                                    (jnp.asarray(np.int32(3)), np.int32, False),
                                    (3, np.int32, True), (weak, np.float32, True),
                                    (np.array(1.5, np.float32), np.float32, False)]:
        out = f(value)
        assert (out.dtype, out.weak_type) == (dtype, weak_type), value
        assert float(out) == 2 * float(value)
    assert traces == [(np.float32, False), (np.float32, True), (np.int32, False),
                      (np.int32, True)]
    # An Array whose abstract value was never asked for still matches its signature.
    fresh = core.Array(np.array(2.5, np.float32))
    assert float(f(fresh)) == 5.0 and float(f(fresh)) == 5.0 and len(traces) == 4


def test_the_last_signature_shortcut_tells_pytree_structures_apart():
    traces = []

    @jax.jit
    def f(tree):
        traces.append(jax.tree_util.tree_structure(tree))
        leaves = jax.tree_util.tree_leaves(tree)
        return (leaves[0] + 1, [leaves[-1] * 2], None, {"n": len(leaves) + 0 * leaves[0]})

    a, b, c = jnp.ones(2), jnp.arange(2.0), jnp.full(2, 3.0)
    cases = [((a, b), 2), ((a, b), 2), ((a, b, c), 3), ([a, b], 2), ({"x": a, "y": b}, 2),
             ({"x": a, "z": b}, 2), ({"x": a, "y": b, "z": c}, 3), ({"x": a, "y": b}, 2),
             ((a, None, b), 2), ((a, (b, c)), 3), ((a, (b, c)), 3), ((a, [b, c]), 3),
             ((a, b), 2)]
    for tree, n in cases:
        first, (last,), none, d = f(tree)
        leaves = jax.tree_util.tree_leaves(tree)
        np.testing.assert_array_equal(first, np.asarray(leaves[0]) + 1)
        np.testing.assert_array_equal(last, np.asarray(leaves[-1]) * 2)
        assert none is None and list(d) == ["n"] and d["n"].tolist() == [n, n]
    assert len(traces) == 9
    # A leaf that is not an array, or a dict with keys of another order, still works.
    assert float(f((a, 2.0))[1][0]) == 4.0
    assert f({"y": b, "x": a})[0].tolist() == [2.0, 2.0] and len(traces) == 10


def test_keyword_calls_after_positional_ones_and_back():
    traces = []

    @jax.jit
    def f(x, y):
        traces.append(1)
        return x - y

    a, b = jnp.full(3, 5.0), jnp.ones(3)
    for call in [lambda: f(a, b), lambda: f(a, b), lambda: f(a, y=b), lambda: f(x=a, y=b),
                 lambda: f(y=b, x=a), lambda: f(a, b), lambda: f(a, y=b)]:
        assert call().tolist() == [4.0, 4.0, 4.0]
    assert len(traces) == 3  # positional, y by keyword, both by keyword (JAX's signatures)
    with pytest.raises(TypeError):
        f(a, b, b)
    with pytest.raises(TypeError, match="argument"):
        f(a, "not an array")
    assert f(a, b).tolist() == [4.0, 4.0, 4.0]


def test_the_last_signature_shortcut_follows_settings_that_change_and_change_back():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x + 1

    a = jnp.ones(3)
    f(a), f(a)
    with jax.disable_jit():
        assert f(a).tolist() == [2.0, 2.0, 2.0] and len(traces) == 2  # ran eagerly
    with flag_context("jax_debug_nans", True):
        assert f(a).tolist() == [2.0, 2.0, 2.0] and len(traces) == 3
    assert f(a).tolist() == [2.0, 2.0, 2.0] and len(traces) == 3
    assert f._mono((a,)) is not api._MISS  # the settings are the same object again
    hits = f.cache_info().hits
    f(a)
    assert f.cache_info().hits == hits + 1


def test_the_last_signature_shortcut_with_donation_no_arguments_and_many_outputs():
    g = jax.jit(lambda x, y: (x + y, x * y), donate_argnums=0)
    for _ in range(3):
        s, p = g(jnp.full(3, 2.0), jnp.full(3, 3.0))
        assert s.tolist() == [5.0] * 3 and p.tolist() == [6.0] * 3
    h = jax.jit(lambda: {"b": jnp.arange(2), "a": [jnp.ones(2)]})
    for _ in range(3):
        out = h()
        assert list(out) == ["a", "b"] and out["b"].tolist() == [0, 1]
        assert out["a"][0].tolist() == [1.0, 1.0]
    k = jax.jit(lambda x: x)  # the output forwards the input, of a weak type
    for _ in range(3):
        out = k(jnp.asarray(2.0))
        assert out.weak_type and float(out) == 2.0


def test_the_last_signature_shortcut_with_python_scalars():
    traces = []

    @jax.jit
    def f(x, tree):
        traces.append(1)
        return x * tree["s"] + tree["t"][0]

    a = jnp.arange(3.0)
    for s, t, expected, dtype in [(2.0, 1, [1.0, 3.0, 5.0], np.float32),
                                  (2.0, 1, [1.0, 3.0, 5.0], np.float32),
                                  (3.0, 0, [0.0, 3.0, 6.0], np.float32),
                                  (2, 1, [1.0, 3.0, 5.0], np.float32),
                                  (True, 0.5, [0.5, 1.5, 2.5], np.float32),
                                  (1j, 0, [0.0, 1j, 2j], np.complex64),
                                  (2.0, 1, [1.0, 3.0, 5.0], np.float32),
                                  (jnp.asarray(2.0), 1, [1.0, 3.0, 5.0], np.float32)]:
        out = f(a, {"s": s, "t": (t,)})
        assert out.dtype == dtype and out.tolist() == expected
    assert len(traces) == 4  # (float, int), (int, int), (bool, float), (complex, int); the
    # weak Array has the float's type
    assert f.cache_info().hits == 4
    with jax.enable_x64():
        assert f(jnp.arange(3.0, dtype=jnp.float64), {"s": 2, "t": (1,)}).dtype == np.float64
        assert f(jnp.arange(3, dtype=jnp.int64), {"s": 2, "t": (1,)}).dtype == np.int64
    assert f(a, {"s": 2.0, "t": (1,)}).dtype == np.float32 and len(traces) == 6


Pair = collections.namedtuple("Pair", "a b")


def test_the_last_signature_shortcut_builds_every_kind_of_output_tree():
    f = jax.jit(lambda p: Pair(p.a + 1, (p.b * 2, [Pair(p.a, {"k": None})],
                                         jax.tree_util.Partial(operator.add, p.a))))
    x = jnp.ones(2)
    for _ in range(3):  # a namedtuple argument takes the general path; its output likewise
        out = f(Pair(x, x))
        assert type(out) is Pair and out.a.tolist() == [2.0, 2.0]
        doubled, [inner], partial = out.b
        assert doubled.tolist() == [2.0, 2.0] and type(inner) is Pair
        assert inner.b == {"k": None} and partial(1.0).tolist() == [2.0, 2.0]
    g = jax.jit(lambda x: (Pair(x, [x]), {"z": [x, (x,)], "a": ()}, None,
                           jax.tree_util.Partial(operator.add, x)))
    for _ in range(3):  # through the shortcut
        p, d, none, partial = g(x)
        assert partial(1.0).tolist() == [2.0, 2.0]
        assert type(p) is Pair and type(p.b) is list and len(p.b) == 1
        assert p.b[0].tolist() == [1.0, 1.0] and none is None
        assert list(d) == ["a", "z"] and d["a"] == () and type(d["z"][1]) is tuple
    assert g._mono is not api._no_match


def test_the_last_signature_shortcut_with_static_arguments():
    traces = []

    @functools.partial(jax.jit, static_argnums=(1, -1), static_argnames="mode")
    def f(x, n, mode, k=None):
        traces.append((n, mode, k))
        y = x * n if mode == "mul" else x + n
        return y if k is None else y - k

    a = jnp.ones(2)
    calls = [((a, 2, "mul"), [2.0, 2.0]), ((a, 2, "mul"), [2.0, 2.0]),
             ((a, 3, "mul"), [3.0, 3.0]), ((a, 3, "add"), [4.0, 4.0]),
             ((a, 3, "add"), [4.0, 4.0]), ((a, 3.0, "add"), [4.0, 4.0]),
             ((a, True, "add"), [2.0, 2.0]), ((a, 3, "add", None), [4.0, 4.0]),
             ((a, 3, "add", 1), [3.0, 3.0]), ((a, 3, "add", 1), [3.0, 3.0]),
             ((a, 2, "mul"), [2.0, 2.0])]
    for args, expected in calls:
        assert f(*args).tolist() == expected, args
    # 3.0 == 3 and hash alike: they share a trace, as in JAX; with a fourth argument,
    # position -1 is `k`, so the statics are others
    assert traces == [(2, "mul", None), (3, "mul", None), (3, "add", None),
                      (True, "add", None), (3, "add", None), (3, "add", 1)]
    assert f(a, 3, mode="add").tolist() == [4.0, 4.0] and len(traces) == 7
    g = jax.jit(lambda x, shape: jnp.broadcast_to(x, shape), static_argnums=1)
    for shape in [(2, 2), (2, 2), (3, 2), (2, 2)]:  # a tuple static: the general path
        assert g(a, shape).shape == shape


def test_a_signature_gets_its_matcher_at_its_second_call():
    f = jax.jit(lambda x: x + 1)
    a = jnp.ones(3)
    f(a)
    assert f._mono is api._no_match  # a function called once pays for no matcher
    f(a)
    assert f._mono is not api._no_match and f(a).tolist() == [2.0, 2.0, 2.0]
    g = jax.jit(lambda x: x * 2)
    g(jnp.ones(4)), g(jnp.ones(4))
    assert g._mono.__code__ is f._mono.__code__  # one structure: one compiled matcher
    assert g(jnp.ones(4)).tolist() == [2.0] * 4 and f(a).tolist() == [2.0] * 3
