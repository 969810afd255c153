"""The stand-ins that let the suite run where JAX is not installed (tests/jax_absent.py): a
test that uses one skips with the stated reason, one that does not runs."""
import importlib
import sys

import jax_absent
import numpy as np
import pytest


@pytest.fixture
def absent_package(monkeypatch):
    """A package name routed to stand-ins, as JAX's is on Python 3.10."""
    monkeypatch.setattr(jax_absent, "PACKAGES", jax_absent.PACKAGES + ("absent_pkg",))
    finder = jax_absent.Finder()
    monkeypatch.setattr(sys, "meta_path", sys.meta_path + [finder])
    yield "absent_pkg"
    # A copy: another thread (a native build) may import while this runs.
    for name in [n for n in sys.modules.copy() if n.split(".")[0] == "absent_pkg"]:
        del sys.modules[name]


def _skips(fn):
    with pytest.raises(pytest.skip.Exception) as info:
        fn()
    assert "needs JAX" in str(info.value) and "Python >= 3.11" in str(info.value)


def test_imports_of_an_absent_package_give_stand_ins(absent_package):
    pkg = importlib.import_module("absent_pkg")
    sub = importlib.import_module("absent_pkg.numpy")
    assert isinstance(pkg, jax_absent.StandIn) and pkg.numpy is sub
    f32 = sub.float32  # a name in a parameter list: harmless
    assert isinstance(f32, jax_absent.StandIn) and sub.float32 is f32


@pytest.mark.parametrize("use", [
    lambda m: m.numpy.sum(np.ones(3)),
    lambda m: m.numpy.ones(3)[0],
    lambda m: m.numpy.float32 == np.float32,
    lambda m: isinstance(1.0, m.Array),
    lambda m: np.asarray(m.numpy.ones(3)),
    lambda m: float(m.numpy.pi),
    lambda m: m.numpy.e + 1,
    lambda m: list(m.tree_util.tree_leaves),
    lambda m: dir(m.errors),
], ids=["call", "index", "compare", "isinstance", "asarray", "float", "add", "iterate", "dir"])
def test_every_use_of_a_stand_in_skips(absent_package, use):
    _skips(lambda: use(importlib.import_module("absent_pkg")))


def test_python_probes_are_not_stand_ins(absent_package):
    """Dunder probes (pytest's and inspect's) find nothing, rather than a stand-in."""
    pkg = importlib.import_module("absent_pkg")
    assert not hasattr(pkg, "__wrapped__") and not hasattr(pkg.numpy, "__test__")


def test_installed_packages_are_not_replaced(monkeypatch):
    """The finder comes last: a package that can be found is imported as it is."""
    monkeypatch.setattr(jax_absent, "PACKAGES", ("csv",))
    monkeypatch.setattr(sys, "meta_path", sys.meta_path + [jax_absent.Finder()])
    monkeypatch.delitem(sys.modules, "csv", raising=False)
    assert not isinstance(importlib.import_module("csv"), jax_absent.StandIn)
