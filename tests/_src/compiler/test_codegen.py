"""Where the compiler's knowledge of primitives lives: each primitive declares its codegen
rule and the traits the passes read, beside its other rules (tests/test_layers.py checks
that the compiler imports no primitive family and never compares a primitive's name)."""

import pytest

import didax  # noqa: F401  (every primitive is declared)
from didax._src import core

pytestmark = pytest.mark.usefixtures("jit_tier")  # both tiers (tests/conftest.py)



def with_trait(field):
    return {n: getattr(p.traits, field) for n, p in core.all_primitives.items()
            if getattr(p.traits, field) not in (None, False)}


def test_primitives_with_codegen_rules():
    have = {n for n, p in core.all_primitives.items() if "codegen" in p.rules}
    ufuncs = {  # computed by a NumPy ufunc: the rule `unop`/`binop` attach (add_any: by hand)
        "abs", "acos", "acosh", "add", "add_any", "and", "asin", "asinh", "atan", "atan2",
        "atanh", "cbrt", "ceil", "conj", "cos", "cosh", "eq", "exp", "exp2", "expm1", "floor",
        "ge", "gt", "is_finite", "le", "log", "log1p", "lt", "max", "min", "mul", "ne", "neg",
        "nextafter", "or", "sign", "sin", "sinh", "sqrt", "square", "sub", "tan", "tanh",
        "xor"}
    written = {
        "broadcast_in_dim", "concatenate", "convert_element_type", "div", "dot_general",
        "expand_dims", "integer_pow", "logistic", "pad", "pow", "reduce_sum", "rem", "reshape",
        "select_n", "slice", "squeeze", "transpose",
        "scan", "while", "cond", "fft",
        "shift_left", "shift_right_logical"}  # (unsigned, by a constant below the width)
    assert have == ufuncs | written


def test_rules_whose_results_are_new_buffers():
    fresh = {n for n, p in core.all_primitives.items()
             if getattr(p.rules.get("codegen"), "fresh", None) is not None}
    views = {"broadcast_in_dim", "convert_element_type", "expand_dims", "reshape", "squeeze",
             "transpose", "slice", "scan", "while", "cond"}
    have = {n for n, p in core.all_primitives.items() if "codegen" in p.rules}
    assert fresh == have - views


def test_traits_the_passes_read():
    assert set(with_trait("effectful")) == {"debug_print", "debug_callback", "io_callback",
                                                 "check", "new_ref", "get", "swap",
                                                 "addupdate", "freeze", "dce_sink", "after_all",
                                                 "rng_uniform"}
    assert with_trait("call_jaxpr_param") == {
        "jit": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
        "custom_vjp_call": "call_jaxpr", "closed_call": "call_jaxpr"}
    assert set(with_trait("returns_operand")) == {
        "broadcast_in_dim", "convert_element_type", "reshape", "squeeze", "stop_gradient",
        "transpose", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "name",
        "sharding_constraint", "stage"}
    assert with_trait("unit") == {"mul": 1}
    assert set(with_trait("involution")) == {"neg"}
    assert set(with_trait("is_addition")) == {"add", "add_any"}
    assert set(with_trait("zero_pad_region")) == {"pad"}
    assert with_trait("axis_name_param") == {  # (read by vmap: collectives)
        "psum": "axes", "pmax": "axes", "pmin": "axes", "axis_index": "axis_name",
        "all_gather": "axis_name", "all_to_all": "axis_name", "ppermute": "axis_name",
        "reduce_scatter": "axis_name", "ragged_all_to_all": "axis_name"}
    assert with_trait("permutation_param") == {"transpose": "permutation"}
    assert set(with_trait("permuted_result")) == {"dot_general"}
    assert set(with_trait("permuted_operand")) == {"dot_general"}
    assert with_trait("contraction_param") == {"dot_general": "dimension_numbers"}
    assert set(with_trait("elementwise_form")) == {"dot_general"}
    assert set(with_trait("cheap")) == {"add", "sub", "mul", "neg", "square", "integer_pow",
                                        "add_any"}
    assert set(with_trait("stacked_loop")) == {"scan"}


def test_primitives_that_rewrite_their_equations():
    have = {n for n, p in core.all_primitives.items() if "rewrite" in p.rules}
    assert have == {"mul", "scan", "pmap"}
