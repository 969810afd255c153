"""Checks install_as_jax's module aliasing in a fresh process; prints "ok" at the end."""
import importlib
import sys

import didax

didax.install_as_jax()
didax.install_as_jax()  # a second call does nothing

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax, random  # noqa: E402
from jax._src import core as src_core  # noqa: E402
from jax._src.numpy import util  # noqa: E402
from jax.interpreters import ad, batching  # noqa: E402

assert jax is didax and jnp is didax.numpy and lax is didax.lax and random is didax.random
assert sys.modules["jax.numpy"] is didax.numpy and jax.numpy is didax.numpy
assert src_core is sys.modules["didax._src.compat.jax_core"] and util is didax.numpy
assert src_core.ShapedArray is didax.core.ShapedArray and src_core.trace_state_clean()
assert ad is didax.interpreters.ad and batching is didax.interpreters.batching
assert didax.numpy.__name__ == "didax.numpy" and didax.numpy.__spec__.name == "didax.numpy"
assert importlib.import_module("jax.example_libraries.stax") is didax.example_libraries.stax
assert float(jax.grad(lambda x: jnp.sin(x) * x)(0.5)) == float(
    didax.grad(lambda x: didax.numpy.sin(x) * x)(0.5))

for missing in ("jax.no_such_module", "jax._src.no_such_internal"):
    try:
        importlib.import_module(missing)
    except ModuleNotFoundError as e:
        assert e.name == missing and "didax" in str(e), e
    else:
        raise AssertionError(f"{missing} imported")

didax.uninstall_as_jax()
assert "jax" not in sys.modules
import jax as real_jax  # noqa: E402

assert real_jax is not didax and hasattr(real_jax, "__file__")
try:
    didax.install_as_jax()
except RuntimeError as e:
    assert "already imported" in str(e)
else:
    raise AssertionError("install_as_jax after importing JAX did not refuse")
print("ok")
