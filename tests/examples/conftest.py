"""The example programs live in `examples/` at the top of the repository, outside any package:
tests load them by path."""
import functools
import importlib.util
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


@functools.lru_cache(maxsize=None)
def _load(name):
    spec = importlib.util.spec_from_file_location(f"didax_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def load_example():
    """`load_example("cnn_digits")` is the module examples/cnn_digits.py."""
    return _load
