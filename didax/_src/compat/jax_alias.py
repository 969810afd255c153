"""`install_as_jax()`: `import jax` (and `jax.*`) gives didax's modules in this process.

A finder at the front of `sys.meta_path` answers every `jax` and `jax.X` import with the
module didax already has for it, `didax` and `didax.X`, or for the internal `jax._src` paths
libraries reach into, the didax module `INTERNAL` names. The very module objects are returned
(never a second copy), so `jax.numpy is didax.numpy` and state such as the configuration or
the registered pytree nodes is shared. A `jax` name didax has no module for raises
`ModuleNotFoundError`, which libraries probing for optional modules expect.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

__all__ = ["install_as_jax", "uninstall_as_jax", "INTERNAL"]

# `jax._src` paths used by libraries built on JAX, each mapped onto the didax module holding
# the same names. Anything else under `jax._src` is not found.
INTERNAL = {
    "jax._src": None,  # a namespace of the paths below only
    "jax._src.core": "didax._src.compat.jax_core",
    "jax._src.api": "didax",
    "jax._src.tree_util": "didax._src.tree_util",
    "jax._src.dtypes": "didax._src.dtypes",  # (with ExtendedDType, DType, supports_inf)
    "jax._src.typing": "didax.typing",
    "jax._src.numpy": "didax.numpy",
    "jax._src.numpy.util": "didax.numpy",
    "jax._src.numpy.lax_numpy": "didax.numpy",
    "jax._src.random": "didax.random",
    "jax._src.prng": "didax.random",
    "jax._src.lax": "didax.lax",
    "jax._src.lax.lax": "didax.lax",
    "jax._src.custom_derivatives": "didax.custom_derivatives",
    "jax._src.ad_util": "didax.interpreters.ad",
    "jax._src.interpreters": "didax.interpreters",
    "jax._src.interpreters.ad": "didax.interpreters.ad",
    "jax._src.interpreters.batching": "didax.interpreters.batching",
    "jax._src.interpreters.mlir": "didax.interpreters.mlir",
    "jax._src.errors": "didax.errors",
    "jax._src.debugging": "didax.debug",
    "jax._src.stages": "didax.stages",
    "jax._src.flatten_util": "didax.flatten_util",
    "jax._src.test_util": "didax.test_util",
    "jax._src.nn": "didax.nn",
    "jax._src.nn.initializers": "didax.nn.initializers",
    "jax._src.traceback_util": "didax._src.traceback_util",
    "jax._src.dispatch": "didax._src.compat.dispatch",
    "jax._src.checkify": "didax._src.primitives.checkify",
    "jax._src.compiler": "didax._src.compiler.numpy_tier",
    "jax._src.state": None,  # (a namespace: flax imports AbstractRef from its types module)
    "jax._src.state.types": "didax._src.state.types",
}


def _target(fullname: str) -> str:
    if fullname in INTERNAL:
        return INTERNAL[fullname]
    if fullname == "jax._src" or fullname.startswith("jax._src."):
        raise ModuleNotFoundError(
            f"No module named {fullname!r}: under didax.install_as_jax() only the jax._src "
            "paths in didax._src.compat.jax_alias.INTERNAL exist (didax's internals are not "
            "JAX's); "
            "use the public jax.* name of what you need", name=fullname)
    return "didax" + fullname[len("jax"):]


class _AliasLoader(importlib.abc.Loader):
    """Hands back an existing didax module; the import system must not re-run or re-label
    it, so its own `__spec__` is put back after the import machinery sets the alias's."""

    def __init__(self, module):
        self.module = module
        self.own_spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.own_spec


class _Namespace(types.ModuleType):
    """A `jax._src` path with mapped paths below it (`from jax._src.numpy import util`
    looks for `util` on it): its attributes are those paths' modules, then those of the
    didax module it maps to."""

    def __init__(self, fullname, target):
        super().__init__(fullname)
        self.__path__ = []
        self._target = target

    def __getattr__(self, name):
        child = f"{self.__name__}.{name}"
        if child in INTERNAL:
            return importlib.import_module(child)
        if self._target is not None and not name.startswith("__"):
            return getattr(self._target, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


class _NamespaceLoader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


def _has_children(fullname) -> bool:
    return any(k.startswith(fullname + ".") for k in INTERNAL)


class _JaxToDidaxFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        name = _target(fullname)
        if fullname.startswith("jax._src") and _has_children(fullname):
            mapped = importlib.import_module(name) if name is not None else None
            return importlib.machinery.ModuleSpec(
                fullname, _NamespaceLoader(_Namespace(fullname, mapped)), is_package=True)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and not name.startswith(e.name):
                raise  # a module the didax module itself imports is missing
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: didax has no {name} module for it",
                name=fullname) from None
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=is_package)


_FINDER = _JaxToDidaxFinder()


def _is_alias(module) -> bool:
    return (isinstance(module, _Namespace)
            or getattr(module, "__name__", "").split(".")[0] == "didax")


def install_as_jax() -> None:
    """Make `import jax`, `import jax.numpy`, `from jax import lax`... in this process give
    didax's modules, so programs and libraries written for JAX (optax, chex, equinox) run on
    didax unchanged. Opt-in and process-wide; call it before anything imports JAX.

    Raises RuntimeError if the real JAX is already imported here (modules holding it would
    mix the two). Calling it again does nothing; `uninstall_as_jax()` undoes it.
    """
    if _FINDER in sys.meta_path:
        return
    real = sorted(n for n, m in sys.modules.copy().items()  # copied: threads may import
                  if (n == "jax" or n.startswith("jax.")) and m is not None and not _is_alias(m))
    if real:
        raise RuntimeError(
            "didax.install_as_jax() must run before JAX is imported, but this process has "
            f"already imported {', '.join(real[:3])}{'...' if len(real) > 3 else ''}; call it "
            "first thing (or run the program in a fresh process)")
    sys.meta_path.insert(0, _FINDER)


def uninstall_as_jax() -> None:
    """Undo `install_as_jax()`: later `import jax` finds the real JAX again. Modules that
    already imported `jax` keep didax."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n, m in sys.modules.copy().items()
                 if (n == "jax" or n.startswith("jax.")) and _is_alias(m)]:
        del sys.modules[name]
