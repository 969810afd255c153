"""The error catalogue, transformations: one case per common mistake with jit, grad, vmap,
control flow and custom rules (didax.numpy and lax mistakes are in
test_error_catalogue_numpy.py). Each case runs under didax, whose message must name the
user's line and contain the fragments listed, and under JAX, which must raise the same type
(see error_testing.py). The comment of each case says what didax's message must say; every
one also names the line of the mistake (JAX's names it only for tracing errors)."""
import importlib

import numpy as np
import pytest
from error_testing import catalogue, check_didax_message, check_jax_raises
from jax_absent import needs_jax

CASES, case = catalogue()

# --------------------------------------------------------------------------------------
# Traced values where Python needs concrete ones


# the conversion, the value's type and which argument of which function it is; astype;
# static_argnums/static_argnames
@case("ConcretizationTypeError", "int()", "i32[]", "argument `x` of <lambda>", "astype(int)",
      "static_argnums", "static_argnames")
def int_of_a_traced_value(jax, jnp, lax):
    jax.jit(lambda x: int(x))(3)


# as for int(), with astype(float) and debug.print
@case("ConcretizationTypeError", "float()", "f32[]", "argument `x`", "astype(float)",
      "jax.debug.print")
def float_of_a_traced_value(jax, jnp, lax):
    jax.jit(lambda x: float(x))(3.0)


# the conversion, the type, the argument; jnp.where/lax.cond or static arguments
@case("TracerBoolConversionError", "bool()", "bool[]", "argument `x`", "jnp.where",
      "lax.cond", "static_argnums")
def bool_of_a_traced_value(jax, jnp, lax):
    jax.jit(lambda x: bool(x))(True)


# Python `if` on a traced comparison: the line of the `if`, the function it is computed in
@case("TracerBoolConversionError", "`if`", "bool[]", "computed from the arguments of f",
      "jnp.where", "lax.cond", "static_argnums", defs=("f",))
def python_if_on_a_traced_value(jax, jnp, lax):
    def f(x):
        if x > 0:
            return x
        return -x

    jax.jit(f)(1.0)


# np.asarray of a traced value: the type, the argument, use jnp instead
@case("TracerArrayConversionError", "np.asarray", "f32[3]", "argument `x`", "didax.numpy (jnp)")
def numpy_conversion_of_a_traced_value(jax, jnp, lax):
    jax.jit(lambda x: np.asarray(x))(jnp.ones(3))


# a NumPy function on a traced value: as np.asarray, with the jnp spelling of the call
@case("TracerArrayConversionError", "f32[3]", "`jnp.sin(x)`, not `np.sin(x)`")
def numpy_function_on_a_traced_value(jax, jnp, lax):
    jax.jit(lambda x: np.sin(x))(jnp.ones(3))


# a traced value as a size: the function, which dimension of which shape, the argument it
# comes from, and static_argnums/static_argnames (not advice about branching)
@case("TypeError", "dimension 0 of the shape (i32[],) passed to jnp.zeros", "argument `n`",
      "static_argnums", "static_argnames", "`.shape`")
def zeros_of_a_traced_size(jax, jnp, lax):
    jax.jit(lambda n: jnp.zeros(n))(3)


# the traced dimension's position in the shape, the argument, static_argnums
@case("TypeError", "dimension 0 of the shape (i32[], 2) passed to jnp.ones", "argument `n`",
      "static_argnums")
def ones_of_a_traced_size(jax, jnp, lax):
    jax.jit(lambda n: jnp.ones((n, 2)))(3)


# as jnp.zeros, for jnp.full
@case("TypeError", "passed to jnp.full", "argument `n`", "static_argnums")
def full_of_a_traced_size(jax, jnp, lax):
    jax.jit(lambda n: jnp.full(n, 1.0))(3)


# which argument of jnp.arange, the argument it comes from, static_argnums
@case("ConcretizationTypeError", "'stop' argument of jnp.arange", "argument `n`",
      "static_argnums")
def arange_of_a_traced_stop(jax, jnp, lax):
    jax.jit(lambda n: jnp.arange(n))(3)


# the new shape with its traced dimension shown by type, the argument
@case("TypeError", "dimension 0 of the shape (i32[], -1) passed to jnp.reshape",
      "argument `n`", "static_argnums")
def reshape_to_a_traced_shape(jax, jnp, lax):
    jax.jit(lambda x, n: x.reshape(n, -1))(jnp.ones(6), 2)


# as jnp.zeros, for jnp.broadcast_to
@case("TypeError", "passed to jnp.broadcast_to", "argument `n`", "static_argnums")
def broadcast_to_a_traced_shape(jax, jnp, lax):
    jax.jit(lambda x, n: jnp.broadcast_to(x, (n,)))(1.0, 3)


# the argument of jnp.eye, where it comes from, static_argnums
@case("TypeError", "'N' of jnp.eye", "argument `n`", "static_argnums")
def eye_of_a_traced_size(jax, jnp, lax):
    jax.jit(lambda n: jnp.eye(n))(3)


# the argument of jnp.linspace, where it comes from, static_argnums
@case("ConcretizationTypeError", "'num' argument of jnp.linspace", "argument `n`",
      "static_argnums")
def linspace_of_a_traced_num(jax, jnp, lax):
    jax.jit(lambda n: jnp.linspace(0.0, 1.0, n))(3)


# that slice sizes must be static, the argument, static_argnums
@case("TypeError", "lax.dynamic_slice (slice_sizes)", "argument `n`", "static_argnums")
def dynamic_slice_of_a_traced_size(jax, jnp, lax):
    jax.jit(lambda x, n: lax.dynamic_slice(x, (0,), (n,)))(jnp.ones(5), 2)


# a slice with traced bounds: the bounds' types (no internal class names), dynamic_slice
@case("IndexError", "slice(i32[], i32[], None)", "lax.dynamic_slice", "static_argnums")
def slice_with_traced_bounds(jax, jnp, lax):
    jax.jit(lambda x, i: x[i:i + 2])(jnp.ones(5), 1)


# a boolean mask under jit: the mask's type, jnp.where, nonzero with a static size
@case("NonConcreteBooleanIndexError", "bool[3]", "jnp.where(mask, x, fill)", "size=n")
def boolean_mask_under_jit(jax, jnp, lax):
    jax.jit(lambda x: x[x > 0])(jnp.ones(3))


# that the output size is unknown, and the static `size=`
@case("ConcretizationTypeError", "jnp.nonzero", "size=", "computed from the arguments")
def nonzero_under_jit(jax, jnp, lax):
    jax.jit(lambda x: jnp.nonzero(x))(jnp.ones(3))


# a tracer kept past its jit: its type, where the jit started, and the fix
@case("UnexpectedTracerError", "f32[]", "has already ended", "Return it from the transformed")
def tracer_escaping_its_jit(jax, jnp, lax):
    saved = []
    jax.jit(lambda x: saved.append(x) or x)(1.0)
    saved[0] + 1


# --------------------------------------------------------------------------------------
# Differentiation


# grad of a function returning a list: that grad needs one scalar, what came back (a list
# of 2, their types), the function and its line; has_aux, jacrev
@case("TypeError", "scalar-output", "a list of 2 values (f32[], f32[])", "has_aux=True",
      "jacrev", defs=("f",))
def grad_of_a_list_output(jax, jnp, lax):
    def f(x):
        return [x, x]

    jax.grad(f)(1.0)


# as for a list: a dict and its leaves' types
@case("TypeError", "scalar-output", "a dict of 1 value (f32[])", "has_aux=True")
def grad_of_a_dict_output(jax, jnp, lax):
    jax.grad(lambda x: {"a": x})(1.0)


# a tuple of 2, and `(loss, aux)` with has_aux=True
@case("TypeError", "scalar-output", "a tuple of 2 values", "`(loss, aux)`", "has_aux=True")
def value_and_grad_of_a_tuple_output(jax, jnp, lax):
    jax.value_and_grad(lambda x: (x, x))(1.0)


# the output's shape and type; jacrev/vjp, or sum it
@case("TypeError", "scalar-output", "(3,)", "f32[3]", "jacrev or vjp", "jnp.sum")
def grad_of_a_vector_output(jax, jnp, lax):
    jax.grad(lambda x: x * 2)(jnp.ones(3))


# the dtype and which argument; allow_int, or pass a float
@case("TypeError", "int32 for argument 0", "i32[]", "allow_int", "`3.0`")
def grad_of_an_integer_input(jax, jnp, lax):
    jax.grad(lambda x: x * 2)(3)


# the transformation, the dtype and type, allow_int
@case("TypeError", "jacrev", "int32", "i32[3]", "allow_int")
def jacrev_of_an_integer_input(jax, jnp, lax):
    jax.jacrev(lambda x: x)(jnp.arange(3))


# the value, its type, and what can be differentiated
@case("TypeError", "'a'", "str", "closure")
def grad_of_a_string(jax, jnp, lax):
    jax.grad(lambda x: x)("a")


# argnums against the number of positional arguments, the function and its line
@case("TypeError", "argnums=3", "positional argument 3", "2 positional arguments",
      "keyword", defs=("f",))
def grad_argnums_out_of_range(jax, jnp, lax):
    def f(x, y):
        return x * y

    jax.grad(f, argnums=3)(1.0, 2.0)


# what argnums must be, and the value given
@case("TypeError", "argnums must be an int or a tuple of ints", "'x'")
def grad_argnums_not_an_int(jax, jnp, lax):
    jax.grad(lambda x: x, argnums="x")(1.0)


# has_aux without the pair: what came back, the function
@case("TypeError", "has_aux=True", "(out, aux)", "f32[]", defs=("f",))
def grad_has_aux_without_a_pair(jax, jnp, lax):
    def f(x):
        return x * 2

    jax.grad(f, has_aux=True)(1.0)


# both shapes
@case("ValueError", "primal shape (3,)", "tangent shape (4,)")
def jvp_tangent_of_the_wrong_shape(jax, jnp, lax):
    jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(4),))


# both dtypes
@case("TypeError", "float32", "int32")
def jvp_tangent_of_the_wrong_dtype(jax, jnp, lax):
    jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(3, jnp.int32),))


# the cotangent's shape and the output's
@case("ValueError", "(4,)", "(3,)")
def vjp_cotangent_of_the_wrong_shape(jax, jnp, lax):
    _, pullback = jax.vjp(jnp.sin, jnp.ones(3))
    pullback(jnp.ones(4))


# --------------------------------------------------------------------------------------
# vmap


# the argument by position and name, its shape, the axis
@case("ValueError", "argument 0 (`x`) of shape (2, 3)", "axis 2")
def vmap_in_axes_out_of_range(jax, jnp, lax):
    jax.vmap(lambda x: x, in_axes=2)(jnp.ones((2, 3)))


# the argument by position and name, its shape (), the axis
@case("ValueError", "argument 0 (`x`) of shape ()", "axis 0")
def vmap_over_a_scalar(jax, jnp, lax):
    jax.vmap(lambda x: x)(1.0)


# each argument (position and name), its size and type
@case("ValueError", "size 3: axis 0 of argument 0 (`x`) of type f32[3]",
      "size 4: axis 0 of argument 1 (`y`) of type f32[4]")
def vmap_of_mismatched_batch_sizes(jax, jnp, lax):
    jax.vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(4))


# both lengths, the function, one entry per argument
@case("ValueError", "len(in_axes)=3, len(args)=2", "None for an argument that is not mapped")
def vmap_in_axes_of_the_wrong_length(jax, jnp, lax):
    jax.vmap(lambda x, y: x + y, in_axes=(0, 0, 0))(jnp.ones(3), jnp.ones(3))


# where the in_axes tree and the argument differ, and both structures there
@case("ValueError", "in_axes[0]", "keys ('b',)", "keys ('a',)")
def vmap_in_axes_tree_not_matching_the_argument(jax, jnp, lax):
    jax.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": jnp.ones(3)})


# the axis and the output's rank
@case("ValueError", "axis 2")
def vmap_out_axes_out_of_range(jax, jnp, lax):
    jax.vmap(lambda x: x, out_axes=2)(jnp.ones(3))


# psum over an axis no vmap names: the name and how to bind it
@case("NameError", "unbound axis name: i", "axis_name='i'")
def psum_over_an_unbound_axis_name(jax, jnp, lax):
    jax.vmap(lambda x: lax.psum(x, "i"))(jnp.ones(3))


# --------------------------------------------------------------------------------------
# jit's arguments


# which static argument, its type, and a hashable replacement
@case("ValueError", "static argument 1 (`s`)", "list", "tuple")
def jit_with_an_unhashable_static_argument(jax, jnp, lax):
    jax.jit(lambda x, s: x, static_argnums=1)(1.0, [1, 2])


# the position, the function's positional parameters
@case("ValueError", "static_argnums=(3,)", "1 positional argument", "('x',)")
def jit_static_argnums_out_of_range(jax, jnp, lax):
    jax.jit(lambda x: x, static_argnums=3)(1.0)


# the unknown name and the function's parameters
@case("ValueError", "static_argnames", "['y']", "['x']")
def jit_static_argnames_not_a_parameter(jax, jnp, lax):
    jax.jit(lambda x: x, static_argnames="y")(1.0)


# the position and the number of positional parameters
@case("ValueError", "donate_argnums=(3,)", "1 positional argument")
def jit_donate_argnums_out_of_range(jax, jnp, lax):
    jax.jit(lambda x: x, donate_argnums=3)(jnp.ones(3))


# what was passed and its type
@case("TypeError", "expected a function", "3 of type int")
def jit_of_a_non_callable(jax, jnp, lax):
    jax.jit(3)


# which argument, what it is, and static_argnames/static_argnums
@case("TypeError", "argument `x`", "str ('hello')", "static_argnames", defs=("f",))
def jit_called_with_a_string(jax, jnp, lax):
    def f(x):
        return x

    jax.jit(f)("hello")


# --------------------------------------------------------------------------------------
# Control flow


# which part of the carry differs, what goes in and what comes out, the body and its line
@case("TypeError", "same pytree structure", "a tuple of 2 entries", defs=("body",))
def scan_carry_changing_structure(jax, jnp, lax):
    def body(c, x):
        return (c, c), x

    lax.scan(body, jnp.zeros(3), jnp.arange(4.0))


# which carry leaf (index and path), both types, the body
@case("TypeError", "carry 1 (carry[1]) goes in as f32[3] and comes out as f32[4]",
      "shape", defs=("body",))
def scan_carry_changing_shape(jax, jnp, lax):
    def body(c, x):
        return (c[0], jnp.zeros(4)), x

    lax.scan(body, (0.0, jnp.zeros(3)), jnp.arange(4.0))


# every xs leaf with its length
@case("ValueError", "xs[0] has length 3", "xs[1] has length 4")
def scan_over_xs_of_different_lengths(jax, jnp, lax):
    lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(4)))


# that there is nothing to scan over, and `length=n`
@case("ValueError", "no `length`", "length=n")
def scan_without_xs_or_length(jax, jnp, lax):
    lax.scan(lambda c, x: (c, c), 0.0, None)


# both branch functions with their lines, and what each returns
@case("TypeError", "same pytree structure", "a single value", "a tuple of 2 entries",
      defs=("true_fun", "false_fun"))
def cond_branches_of_different_structure(jax, jnp, lax):
    def true_fun(x):
        return x

    def false_fun(x):
        return (x, x)

    lax.cond(True, true_fun, false_fun, jnp.ones(3))


# both branch functions with their lines, both types
@case("TypeError", "f32[3]", "f32[2]", "shapes differ", defs=("true_fun", "false_fun"))
def cond_branches_of_different_shapes(jax, jnp, lax):
    def true_fun(x):
        return x

    def false_fun(x):
        return x[:2]

    lax.cond(True, true_fun, false_fun, jnp.ones(3))


# the output path, both dtypes, both functions
@case("TypeError", "output[1]", "f32[]", "i32[]", "dtypes differ", "astype",
      defs=("true_fun", "false_fun"))
def cond_branches_of_different_dtypes(jax, jnp, lax):
    def true_fun():
        return 1.0, 2.0

    def false_fun():
        return 1.0, 2

    lax.cond(True, true_fun, false_fun)


# the predicate's type, jnp.where, jnp.all/any
@case("TypeError", "bool[2]", "jnp.where", "jnp.all")
def cond_with_a_non_scalar_predicate(jax, jnp, lax):
    lax.cond(jnp.array([True, False]), lambda x: x, lambda x: x, 1.0)


# switch: the branch indices, their functions and lines, both types
@case("TypeError", "branch 0 = first", "branch 2 = second", "f32[3]", "f32[2]",
      defs=("first", "second"))
def switch_branches_of_different_shapes(jax, jnp, lax):
    def first(x):
        return x

    def second(x):
        return x[:2]

    lax.switch(1, [first, first, second], jnp.ones(3))


# that the index must be an integer scalar, its type
@case("TypeError", "integer scalar", "f32[]")
def switch_with_a_float_index(jax, jnp, lax):
    lax.switch(jnp.float32(1.0), [lambda: 1.0, lambda: 2.0])


# which carry, both types, the body and its line, and the fix
@case("TypeError", "goes in as i32[] and comes out as f32[]", "dtype", defs=("body",))
def while_loop_carry_changing_dtype(jax, jnp, lax):
    def body(c):
        return (c + 1).astype(jnp.float32)

    lax.while_loop(lambda c: c < 3, body, jnp.int32(0))


# both shapes, the body function and its line
@case("TypeError", "goes in as f32[1] and comes out as f32[2]", "shape", defs=("body",))
def while_loop_carry_changing_shape(jax, jnp, lax):
    def body(c):
        return jnp.concatenate([c, c])

    lax.while_loop(lambda c: c[0] < 3, body, jnp.zeros(1))


# both bounds' types and how to make them integers
@case("TypeError", "lower i32[]", "upper f32[]", "astype(jnp.int32)")
def fori_loop_with_a_float_bound(jax, jnp, lax):
    jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0.0))(3.0)


# --------------------------------------------------------------------------------------
# Custom derivative rules


# the rule, how many cotangents for how many arguments
@case("TypeError", "bwd rule of f", "1 cotangents for 2 arguments", "`return (g,)`",
      defs=("bwd",))
def custom_vjp_bwd_of_the_wrong_structure(jax, jnp, lax):
    @jax.custom_vjp
    def f(x, y):
        return x * y

    def bwd(res, g):
        return (g,)

    f.defvjp(lambda x, y: (x * y, (x, y)), bwd)
    jax.grad(f)(1.0, 2.0)


# the rule and its function, where the outputs differ
@case("TypeError", "custom JVP rule of f", "equal structures", "a tuple of 2 entries",
      defs=("f_jvp",))
def custom_jvp_of_mismatched_structures(jax, jnp, lax):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    def f_jvp(primals, tangents):
        return jnp.sin(primals[0]), (tangents[0], tangents[0])

    f.defjvp(f_jvp)
    jax.jvp(f, (1.0,), (1.0,))


# the rule, the tangent's and the primal's shapes
@case("TypeError", "custom JVP rule of f", "shape (4,) (f32[4])", "shape (3,) (f32[3])")
def custom_jvp_tangent_of_the_wrong_shape(jax, jnp, lax):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), jnp.ones(4)))
    jax.jvp(f, (jnp.ones(3),), (jnp.ones(3),))


# which derivative (mode and order) failed, the function and its line, the numbers
@case("AssertionError", "order-1 derivative of f", "forward mode", "custom_jvp",
      defs=("f",))
def check_grads_of_a_wrong_rule(jax, jnp, lax):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), 2 * tangents[0]))
    importlib.import_module(jax.__name__ + ".test_util").check_grads(f, (1.0,), 1, ("fwd",))


# the primitive and its line (also under jit)
@case("FloatingPointError", "invalid value (nan)", "log")
def debug_nans_under_jit(jax, jnp, lax):
    jax.config.update("jax_debug_nans", True)
    try:
        jax.jit(lambda x: jnp.log(x) * 0)(-1.0).block_until_ready()
    finally:
        jax.config.update("jax_debug_nans", False)


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_didax_message(c):
    check_didax_message(c)


@needs_jax
@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_jax_raises_the_same_type(c):
    check_jax_raises(c)
