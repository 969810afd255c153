"""Where JAX cannot be installed, the tests that compare with it skip, saying why, and every
other test runs.

JAX 0.10.2 (the reference the differential tests run beside didax) and the libraries written
for it need Python 3.11, while didax supports 3.10. On 3.10 the test extra installs neither
(`pyproject.toml`'s markers), and `install()` (called by conftest.py) makes `import jax`,
`import jax.numpy as jnp` and `from jax import lax` give stand-ins: a test that uses one
skips with `REASON`, and a test module that uses one at import skips as a whole. A test that
never touches JAX runs as everywhere else."""
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

import pytest

# JAX and the libraries written for it (the test extra installs them from Python 3.11 on)
PACKAGES = ("jax", "jaxlib", "optax", "chex", "equinox", "jaxtyping", "lineax", "optimistix",
            "diffrax", "blackjax", "flax", "distrax", "tensorflow_probability", "numpyro")

REASON = ("needs JAX, the reference this test compares with, which is not installed here "
          "(JAX 0.10.2 needs Python >= 3.11)")

JAX_INSTALLED = importlib.util.find_spec("jax") is not None

# for tests that run JAX (or a library written for it) in a subprocess
needs_jax = pytest.mark.skipif(not JAX_INSTALLED, reason=REASON)


def _skip(*args, **kwargs):
    raise pytest.skip.Exception(REASON, allow_module_level=True)


class StandIn(types.ModuleType):
    """A module, or a public name of one, of a package that is not installed. Its public
    attributes are stand-ins too (so `jnp.float32` in a parameter list is harmless); calling,
    indexing, iterating, comparing, converting or testing one skips. What a stand-in cannot
    catch (`is`, `pytest.raises(jax.errors.X)`, NumPy probing it as a dtype) needs `needs_jax`
    on the test."""

    __path__ = []  # a package: `import jax.numpy` finds its stand-in through `Finder`

    def __getattr__(self, name):
        if name.startswith("__"):  # Python's, pytest's and inspect's probes
            raise AttributeError(name)
        full = f"{self.__name__}.{name}"
        child = sys.modules.get(full)
        if child is None:
            child = sys.modules[full] = StandIn(full)
        setattr(self, name, child)
        return child

    __call__ = __getitem__ = __iter__ = __len__ = __bool__ = __float__ = __int__ = _skip
    __index__ = __array__ = __instancecheck__ = __subclasscheck__ = __contains__ = _skip
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _skip
    __rtruediv__ = __matmul__ = __rmatmul__ = __pow__ = __rpow__ = __neg__ = _skip
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __enter__ = __exit__ = _skip
    __dir__ = _skip
    __hash__ = types.ModuleType.__hash__


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of `PACKAGES` (and their submodules) give `StandIn`s."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return StandIn(spec.name)

    def exec_module(self, module):
        pass


def install():
    """Stand-ins for JAX and its libraries, when JAX is not installed."""
    if not JAX_INSTALLED and not any(isinstance(f, Finder) for f in sys.meta_path):
        sys.meta_path.append(Finder())
