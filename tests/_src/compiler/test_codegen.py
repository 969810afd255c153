"""Where the compiler's knowledge of primitives lives: each primitive declares its codegen
rule and the traits the passes read, beside its other rules; the compiler layer imports
no primitive and never compares a primitive's name."""
import ast
import pathlib
import subprocess
import sys

import pytest

import didax  # noqa: F401  (every primitive is declared)
from didax._src import core

pytestmark = pytest.mark.usefixtures("jit_tier")  # both tiers (tests/conftest.py)

COMPILER_DIR = pathlib.Path(core.__file__).parent / "compiler"


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
        "scan", "while", "cond", "fft"}
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
                                                 "check"}
    assert with_trait("call_jaxpr_param") == {
        "jit": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
        "custom_vjp_call": "call_jaxpr"}
    assert set(with_trait("returns_operand")) == {
        "broadcast_in_dim", "convert_element_type", "reshape", "squeeze", "stop_gradient",
        "transpose", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "name"}
    assert with_trait("unit") == {"mul": 1}
    assert set(with_trait("involution")) == {"neg"}
    assert set(with_trait("is_addition")) == {"add", "add_any"}
    assert set(with_trait("zero_pad_region")) == {"pad"}
    assert with_trait("axis_name_param") == {  # (read by vmap: collectives)
        "psum": "axes", "pmax": "axes", "pmin": "axes", "axis_index": "axis_name",
        "all_gather": "axis_name", "all_to_all": "axis_name", "ppermute": "axis_name",
        "reduce_scatter": "axis_name"}
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
    assert have == {"mul", "scan"}


def _imported_modules(tree):
    for node in ast.walk(tree):  # (imports inside functions too)
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def test_the_compiler_layer_imports_no_primitive_family():
    """The passes and the code generator know primitives through their rules and traits."""
    modules = sorted(COMPILER_DIR.rglob("*.py"))
    assert {p.name for p in modules} >= {"codegen.py", "numpy_tier.py", "passes.py", "emit.py"}
    for path in modules:
        imported = set(_imported_modules(ast.parse(path.read_text())))
        lax = {m for m in imported if m.startswith(("didax._src.lax", "didax.lax"))}
        assert not lax, f"{path.name} imports {sorted(lax)}"


def test_the_compiler_imports_without_any_primitive_family():
    """Imported on its own (the `didax` package's __init__ skipped), the compiler brings in
    no lax module."""
    code = (
        "import sys, types\n"
        "pkg = types.ModuleType('didax')\n"
        f"pkg.__path__ = [{str(COMPILER_DIR.parent.parent)!r}]\n"
        "sys.modules['didax'] = pkg\n"
        "import didax._src.compiler.numpy_tier\n"
        "print(sorted(m for m in sys.modules if m.startswith('didax._src.lax')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# Comparisons with a string that is also a primitive's name, kept: the native tier's option.
NOT_PRIMITIVE_NAMES = {("tier.py", "mode == 'check'")}


def name_comparisons(source: str, filename: str = "") -> list:
    """(line, text) of what in `source` picks primitives by name: comparisons of a `.name`,
    comparisons with a string (or a tuple, list or set of strings) naming a primitive, and
    any use of the registry of primitives by name, `all_primitives`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            strings = []
            for side in [node.left, *node.comparators]:
                if isinstance(side, ast.Attribute) and side.attr == "name":
                    strings.append(None)
                items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                strings += [e.value for e in items
                            if isinstance(e, ast.Constant) and e.value in core.all_primitives]
            if strings and (filename, ast.unparse(node)) not in NOT_PRIMITIVE_NAMES:
                found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Name) and node.id == "all_primitives"
              or isinstance(node, ast.Attribute) and node.attr == "all_primitives"):
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_the_compiler_and_interpreters_compare_no_primitive_name():
    interpreters = sorted((COMPILER_DIR.parent / "interpreters").glob("*.py"))
    native = sorted((COMPILER_DIR / "native").glob("*.py"))
    assert interpreters and {p.name for p in native} >= {"emit.py", "loops.py", "rules.py"}
    for path in sorted(COMPILER_DIR.glob("*.py")) + native + interpreters:
        found = name_comparisons(path.read_text(), path.name)
        assert not found, f"{path.name} picks primitives by name: {found}"


def test_the_name_check_finds_what_it_looks_for():
    source = """
if eqn.primitive.name == "mul": pass
if name in ("add", "sub"): pass
if "dot_general" != prim.name: pass
mul = core.all_primitives["mul"]
add = all_primitives.get("add")
if kind == "view" or mode == "check" or eqn.params["axes"]: pass
"""
    assert [line for line, _ in name_comparisons(source)] == [2, 3, 4, 5, 6, 7]
    assert [line for line, _ in name_comparisons(source, "tier.py")] == [2, 3, 4, 5, 6]
