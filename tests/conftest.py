"""Test-run settings.

Hypothesis draws the same examples on every run, and never times an example out: a red run
always points at a change in the code, never at a new random draw or a slow machine (the
README's test command on a new user's machine runs exactly what CI runs). To explore new
draws, set DIDAX_HYPOTHESIS_EXPLORE=1 (random examples, failures kept in the example
database).

`-m long_random_programs` selects the long run of random programs
(tests/_src/test_random_programs.py), which is otherwise deselected.

jit's native tier is off unless DIDAX_NATIVE_TIER says otherwise: building C for every
function the suite jits would cost minutes; tests/_src/native turns it on where tested.

Eager reverse mode builds each primitive signature's compiled step when it is first seen
(DIDAX_EAGER_VJP_STEPS=first), where users' programs build it when a second vjp sees it: so
every eager gradient the suite checks (against finite differences, JAX, jit) checks the steps;
tests/_src/interpreters/test_eager_vjp.py compares them with the general path, and the tests
of the general path's own eager behaviour set "off"."""
import os

os.environ.setdefault("DIDAX_NATIVE_TIER", "off")
os.environ.setdefault("DIDAX_EAGER_VJP_STEPS", "first")

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile("explore" if os.environ.get("DIDAX_HYPOTHESIS_EXPLORE") else "repeatable")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "long_random_programs: the 10,000-program run, deselected unless -m names it")


def pytest_collection_modifyitems(config, items):
    if "long_random_programs" in (config.getoption("markexpr") or ""):
        return
    long = [item for item in items if item.get_closest_marker("long_random_programs")]
    if long:
        config.hook.pytest_deselected(items=long)
        items[:] = [item for item in items if item not in long]
