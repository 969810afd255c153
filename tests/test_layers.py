"""The package's layers import only downward, and its imports form no cycle; `_src` never
imports the public modules; the compiler, interpreters and eager layer know primitives by
their rules and traits, never by name.

Read from the source with `ast`, imports inside functions included: an import moved into a
function still ties the modules together, and hiding a cycle that way is what this guards
against. Layers, bottom to top, each
a folder of `didax/_src` (the core is the modules at its top, and `numerics/`):

  core          abstract values, the IR and its printer, dtypes, pytrees, the primitives the
                interpreters bind themselves (base_prims), special-function algorithms
  interpreters  JVP, staging, partial evaluation, transposition, batching (`interpreters/`)
  compiler      jaxpr passes, the NumPy tier's code generation, the native tier (`compiler/`)
  eager         eager reverse mode's compiled steps (`eager/`)
  primitives    lax families and control flow (`lax/`); custom rules, checkpoint, effects,
                PRNG, the jit call primitive (`primitives/`); mutable array references
                (`state/`)
  api           the user-facing transformations: grad, vmap, jit, ... (`transforms/`);
                exporting jitted functions (`export/`)
  parallel      devices, shardings, pmap, shard_map, processes (`parallel/`)
  libraries     numpy, nn, scipy, random, optim, image, experimental, compat, and the public
                `didax.*` modules; of the interpreters and eager layers they import only the
                step registry (`didax._src.eager.registry.step`)
"""
from __future__ import annotations

import ast
import functools
import pathlib
import subprocess
import sys

import pytest

import didax  # noqa: F401  (every primitive is declared)
from didax._src import core

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "didax"

LAYERS = {
    "core": ["core", "ir", "dtypes", "pretty", "tree_util", "config", "errors", "typecheck",
             "base_prims", "axis_env", "traceback_util", "caches", "numerics", "monitoring",
             "profiler", "config_states", "jit_events", "user_context"],
    "interpreters": ["interpreters"],
    "compiler": ["compiler"],
    "eager": ["eager"],
    "primitives": ["lax", "primitives", "state"],
    "api": ["transforms", "export"],
    "parallel": ["parallel"],
    "libraries": ["numpy", "nn", "scipy", "random", "optim", "image", "experimental",
                  "compat"],
}
ORDER = list(LAYERS)

# Imports inside functions that stay, each with its reason (none dodges a cycle).
ALLOWED_IN_FUNCTION: dict[tuple[str, str], str] = {}

LARGEST_CYCLE = 1  # no two modules import each other, directly or through others

# What the libraries import from the layers that run programs (interpreters, eager): the
# registry with which they declare which of their functions are steps of eager reverse mode,
# by name. They never name an interpreter. The modules that mirror JAX's own interpreter API
# (`jax.interpreters.ad`, `batching` and `partial_eval`, `jax.core.ensure_compile_time_eval`,
# and the rule tables and tracing entry points behind them) re-export it; they are the other
# exception, as whole modules.
STEP_REGISTRY_API = {"didax._src.eager.registry": {"step"}}
JAX_INTERPRETER_API = {"didax", "didax.core", "didax.interpreters.ad",
                       "didax.interpreters.batching", "didax.interpreters.partial_eval",
                       "didax._src.compat.foreign_rules", "didax._src.compat.partial_eval",
                       "didax._src.compat.jax_core", "didax._src.compat.hijax"}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str, modules) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: pathlib.Path, modules):
    """(imported didax module, line, inside a function) for every import in `path`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda))
            targets = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[:len(package.split(".")) - child.level + 1]
                    base = ".".join(up + ([child.module] if child.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in child.names]
            for t in targets:
                if t.split(".")[0] == "didax":
                    target = _resolve(t, modules)
                    if target and target != module:
                        found.append((target, child.lineno, in_function))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


@functools.lru_cache(maxsize=None)
def _graph():
    """(modules, imports of each), read once for all the tests here."""
    modules = _modules()
    return modules, {m: _imports(m, p, modules) for m, p in modules.items()}


def layer_of(module: str) -> str:
    """The layer of a `didax._src` module; public `didax.*` modules are libraries."""
    if not module.startswith("didax._src."):
        return "libraries"
    name = module[len("didax._src."):]
    for layer, prefixes in LAYERS.items():
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return layer
    raise AssertionError(f"module {module} has no layer: add it to LAYERS in {__file__}")


def _cycles(edges) -> list[list[str]]:
    """Strongly connected components (Tarjan), largest first."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in {t for t, _, _ in edges[v]}:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in edges:
        if v not in index:
            strong(v)
    return sorted(out, key=len, reverse=True)


def _empty_package(module: str, modules) -> bool:
    """A package whose `__init__` holds no code: it belongs to no layer."""
    path = modules[module]
    return path.name == "__init__.py" and all(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
        for s in ast.parse(path.read_text()).body)


def _layered(modules):
    return [m for m in modules
            if m.startswith("didax._src.") and not _empty_package(m, modules)]


def test_every_module_has_a_layer():
    modules, _ = _graph()
    for m in _layered(modules):
        layer_of(m)


def test_no_upward_imports():
    modules, edges = _graph()
    upward = []
    for module in _layered(modules):
        imports = edges[module]
        here = ORDER.index(layer_of(module))
        for target, line, _ in imports:
            if target == "didax._src":
                continue
            there = ORDER.index(layer_of(target))
            if there > here:
                upward.append(f"{module}:{line} ({layer_of(module)}) imports {target} "
                              f"({layer_of(target)})")
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_src_never_imports_the_public_modules():
    """The public `didax.*` modules are a facade over `_src`; `_src` builds on itself only."""
    modules, edges = _graph()
    facade = [f"{m}:{line} imports {t}" for m in _layered(modules)
              for t, line, _ in edges[m] if not t.startswith("didax._src")]
    assert not facade, "imports of the public modules from _src:\n" + "\n".join(facade)


def test_no_import_cycles():
    _, edges = _graph()
    largest = _cycles(edges)[0]
    assert len(largest) <= LARGEST_CYCLE, f"an import cycle of {len(largest)} modules: {largest}"


def test_imports_inside_functions_have_a_reason():
    _, edges = _graph()
    hidden = [f"{m}:{line} imports {t}" for m, imports in edges.items()
              for t, line, inside in imports if inside and (m, t) not in ALLOWED_IN_FUNCTION]
    assert not hidden, ("imports inside functions (move them to the top, or add them with "
                        "their reason to ALLOWED_IN_FUNCTION):\n" + "\n".join(hidden))


def test_interpreters_and_compiler_import_no_lax():
    """Interpreters bind the primitives of base_prims; they never reach up into lax."""
    modules, edges = _graph()
    for module in _layered(modules):
        imports = edges[module]
        if layer_of(module) in ("core", "interpreters", "compiler"):
            assert not [t for t, _, _ in imports if t.startswith("didax._src.lax")], module


def _running_layers_imports(path: pathlib.Path, modules):
    """(line, what) for each import in `path` from the interpreters or eager layers that is
    not a name of the step registry's API."""
    running = tuple(f"didax._src.{p}" for layer in ("interpreters", "eager")
                    for p in LAYERS[layer])
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names
                      if a.name.startswith(running)]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full.startswith(running) and full in modules:  # a module, by name
                    found.append((node.lineno, f"from {node.module} import {a.name}"))
                elif (node.module.startswith(running)
                      and a.name not in STEP_REGISTRY_API.get(node.module, ())):
                    found.append((node.lineno, f"from {node.module} import {a.name}"))
    return found


def test_libraries_import_only_the_step_registry_from_interpreters_and_eager():
    modules, _ = _graph()
    found = [f"{m}:{line}: {what}" for m, path in modules.items()
             if layer_of(m) == "libraries" and m not in JAX_INTERPRETER_API
             for line, what in _running_layers_imports(path, modules)]
    assert not found, ("libraries import from the interpreters or eager layers (declare steps "
                       f"with {STEP_REGISTRY_API}; name no interpreter):\n" + "\n".join(found))


def test_the_checks_can_fail():
    """The cycle finder and the layer map see what they are meant to see."""
    edges = {"a": [("b", 1, False)], "b": [("c", 1, True)], "c": [("a", 1, False)],
             "d": [("a", 1, False)]}
    assert _cycles(edges)[0] == ["a", "b", "c"]
    assert layer_of("didax._src.lax.shape") == "primitives"
    assert layer_of("didax._src.interpreters.jvp") == "interpreters"
    assert layer_of("didax.numpy") == "libraries"
    with pytest.raises(AssertionError, match="has no layer"):
        layer_of("didax._src.somewhere_new")


def test_the_library_import_check_can_fail(tmp_path):
    modules, _ = _graph()
    library = tmp_path / "library.py"
    library.write_text("from didax._src.eager.registry import step\n"
                       "from didax._src.eager.vjp import EagerVJPInterpreter\n"
                       "from didax._src.interpreters import batching\n"
                       "import didax._src.interpreters.jvp\n"
                       "from didax._src.core import Array\n")
    assert [line for line, _ in _running_layers_imports(library, modules)] == [2, 3, 4]


def test_the_compiler_imports_without_any_primitive_family():
    """Imported on its own (the `didax` package's __init__ skipped), the compiler brings in
    no lax module."""
    code = (
        "import sys, types\n"
        "pkg = types.ModuleType('didax')\n"
        f"pkg.__path__ = [{str(PACKAGE)!r}]\n"
        "sys.modules['didax'] = pkg\n"
        "import didax._src.compiler.numpy_tier\n"
        "print(sorted(m for m in sys.modules if m.startswith('didax._src.lax')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# Comparisons with a string that is also a primitive's name, kept: the native tier's option.
NOT_PRIMITIVE_NAMES = {("tier.py", "mode == 'check'"),
                       ("emit.py", "kind == 'reduce'"),  # (a kind of native rule: a sum)
                       ("kernel_module.py", "config.read('didax_native_tier') == 'check'")}


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


def test_the_compiler_interpreters_and_eager_layer_compare_no_primitive_name():
    """They know primitives by their rules and traits (a primitive's name is for people)."""
    src = PACKAGE / "_src"
    paths = sorted([*(src / "compiler").rglob("*.py"), *(src / "interpreters").glob("*.py"),
                    *(src / "eager").glob("*.py")])
    assert {p.name for p in paths} >= {"emit.py", "loops.py", "rules.py", "passes.py",
                                       "jvp.py", "vjp.py"}
    for path in paths:
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
