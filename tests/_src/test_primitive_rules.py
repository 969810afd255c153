"""Every primitive against every rule kind: each rule exists, or is explicitly marked absent
with a reason. Rule lookups that fail name the rule and the primitive."""
import pytest

import didax  # noqa: F401 - registers every primitive family
from didax._src import core

REQUIRED_KINDS = ("impl", "abstract_eval", "jvp", "batch")

# Primitives linear in their array operands (the reverse-mode issue adds their transposes).
LINEAR = {
    "neg", "add", "sub", "add_any", "real", "imag", "conj", "complex", "convert_element_type",
    "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "rev", "pad",
    "concatenate", "slice", "reduce_sum", "cumsum", "dynamic_slice", "dynamic_update_slice",
    "gather", "scatter-add", "copy", "reduce_window_sum", "select_and_gather_add",
    "select_and_scatter_add", "split", "scatter-sub", "fft",
}

PRIMITIVES = sorted(core.all_primitives.items())


@pytest.mark.parametrize("name,prim", PRIMITIVES, ids=[n for n, _ in PRIMITIVES])
@pytest.mark.parametrize("kind", REQUIRED_KINDS)
def test_rule_present_or_marked_absent(name, prim, kind):
    if kind in prim.absent:
        assert prim.absent[kind], f"{name}: absent {kind} rule needs a reason"
        with pytest.raises(NotImplementedError, match=f"{kind} rule for '{name}'"):
            prim.get_rule(kind)
    else:
        assert callable(prim.get_rule(kind)), f"{name} has no {kind} rule"


@pytest.mark.parametrize("name", sorted(LINEAR & set(core.all_primitives)))
def test_linear_primitives_are_marked(name):
    assert core.all_primitives[name].linear


@pytest.mark.parametrize("name", sorted(n for n, p in PRIMITIVES if p.linear))
def test_linear_primitives_have_transpose_rules(name):
    assert callable(core.all_primitives[name].get_rule("transpose"))


def test_missing_rule_error_names_rule_and_primitive():
    prim = core.all_primitives["sin"]
    with pytest.raises(NotImplementedError, match="transpose rule for 'sin' not implemented"):
        prim.get_rule("transpose")


def test_primitive_set_covers_the_issue():
    expected = """neg sign floor ceil round is_finite exp exp2 log log1p expm1 tanh logistic sin cos
    tan asin acos atan sinh cosh asinh acosh atanh sqrt rsqrt cbrt abs erf erfc erf_inv lgamma
    digamma integer_pow square add sub mul div rem pow max min atan2 nextafter eq ne lt le gt ge
    and or not xor select_n clamp convert_element_type broadcast_in_dim reshape squeeze
    expand_dims transpose rev pad concatenate slice dynamic_slice dynamic_update_slice gather
    scatter scatter-add iota reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or
    argmax argmin cumsum cumprod cummax cummin cumlogsumexp sort dot_general
    conv_general_dilated stop_gradient igamma igammac igamma_grad_a random_gamma_grad
    regularized_incomplete_beta bessel_i0e bessel_i1e""".split()
    missing = [p for p in expected if p not in core.all_primitives]
    assert not missing, f"primitives not defined: {missing}"
