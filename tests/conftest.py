"""Test-run settings.

Hypothesis draws the same examples on every run, and never times an example out: a red run
always points at a change in the code, never at a new random draw or a slow machine (the
README's test command on a new user's machine runs exactly what CI runs). To explore new
draws, set DIDAX_HYPOTHESIS_EXPLORE=1 (random examples, failures kept in the example
database).

`-m long_random_programs` selects the long run of random programs
(tests/_src/test_random_programs.py), which is otherwise deselected.

The suite runs with the settings users get: jit's native tier built in the background when
a function is called again (and swapped in once built: both tiers give the same bits), and
eager reverse mode's compiled steps built at the first sighting of a signature. jit's own
tests (those that use the `jit_tier` fixture) and the eager steps' (tests/_src/eager) run
on both tiers: on the NumPy tier alone, and in jit's "check" mode, which builds every compiled
function before its first call and runs both tiers on every call, failing unless their
results are the same bits. `DIDAX_NATIVE_TIER=check python -m pytest` checks the tiers over
every function the whole suite compiles (a few minutes more).

Where PYTHONDONTWRITEBYTECODE is set (as on some CI machines), every child process the tests
start (examples, libraries run under didax, MPI ranks) would compile didax's 560 modules from
source, 1.4 s each time: the test processes and their children write and read bytecode as
Python does by default (in `__pycache__`, which git ignores). (A PYTHONPYCACHEPREFIX of the
run's own would leave the checkout untouched, but Python then reads no other bytecode either:
each worker compiled JAX, SciPy and NumPy from source too, and collection took 22 s instead
of 17 s on a fresh clone, 8 s on a later run.)"""
import atexit
import gc
import os
import shutil
import sys
import tempfile


def _share_bytecode():
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):  # (xdist's workers and the tests'
        sys.dont_write_bytecode = False  # children inherit the environment without it)


_share_bytecode()


def _fast_reference_compiles():
    # JAX, the reference, compiles each of its thousands of small programs for microseconds of
    # running (nearly half the suite's time). Three settings cut that by a quarter, to the same
    # values: XLA's LLVM passes at level 0 (XLA keeps IEEE semantics at every level: no fast
    # math, no FMA contraction); no Python tracebacks as locations in its programs; and a
    # persistent cache of its executables, where a program another test compiled is found
    # (one in seven). Each worker has a cache of its own, which its tests' subprocesses share: JAX
    # writes an entry in place, and another process reading it meanwhile would see it part
    # written (and warn, failing a test that makes warnings errors). Set before JAX starts
    # its backend; the tests' subprocesses inherit them.
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_optimization_level" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_backend_optimization_level=0".strip()
    os.environ.setdefault("JAX_INCLUDE_FULL_TRACEBACKS_IN_LOCATIONS", "false")
    os.environ.setdefault("JAX_TRACEBACK_IN_LOCATIONS_LIMIT", "0")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and "DIDAX_TESTS_JAX_CACHES" in os.environ:
        directory = os.path.join(os.environ["DIDAX_TESTS_JAX_CACHES"], worker)
    elif "JAX_COMPILATION_CACHE_DIR" not in os.environ:
        directory = tempfile.mkdtemp(prefix="didax-tests-jax-caches-")  # (the run's caches)
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        os.environ["DIDAX_TESTS_JAX_CACHES"] = directory
    else:
        return  # (the user's own cache)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = directory
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"


_fast_reference_compiles()

import jax_absent  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from didax._src.config import flag_context  # noqa: E402

jax_absent.install()  # where JAX is not installed (Python 3.10), its tests skip, saying why

settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile("explore" if os.environ.get("DIDAX_HYPOTHESIS_EXPLORE") else "repeatable")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "long_random_programs: the 10,000-program run, deselected unless -m names it")
    config.addinivalue_line(
        "markers", "whole_programs: runs whole programs in subprocesses (libraries written for "
        "JAX under both frameworks, the examples as scripts), a third of the suite's time; "
        "-m 'not whole_programs' leaves them out of a quick run")
    config.addinivalue_line(
        "markers", "native_build_fails: the test makes a native build fail on purpose")


def pytest_collection_modifyitems(config, items):
    if "long_random_programs" not in (config.getoption("markexpr") or ""):
        long = [item for item in items if item.get_closest_marker("long_random_programs")]
        if long:
            config.hook.pytest_deselected(items=long)
            items[:] = [item for item in items if item not in long]
    # Whole programs first: the longest tests (up to a minute each), which at the end of the
    # run would leave one worker waiting on another.
    items.sort(key=lambda item: item.get_closest_marker("whole_programs") is None)


def pytest_collection_finish(session):
    # What collection imported (JAX, SciPy, didax, the test modules: most of the heap) is
    # never garbage: out of the collector's full passes, which took 0.5 to 1 s each.
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _native_builds_succeed(request):
    """Fails a test after which a native build has failed (jit's code generation: the
    function stays on the slower NumPy tier, and users see one warning per process). A
    background build finishing during a later test is reported there, with its error."""
    from didax._src.compiler.native import tier
    on_purpose = request.node.get_closest_marker("native_build_fails") is not None
    if on_purpose:  # (other tests' builds finish first, and its own before it ends)
        tier.wait_for_builds()
    before = tier.failure_count
    yield
    if on_purpose:
        tier.wait_for_builds()
    elif tier.failure_count != before:
        failed = list(tier.failures)[-min(tier.failure_count - before, len(tier.failures)):]
        pytest.fail(f"{tier.failure_count - before} native build(s) failed (in this test, "
                    "or a background build of an earlier one):\n" + "\n".join(failed),
                    pytrace=False)


@pytest.fixture
def four_devices():
    """Four CPU devices (`didax_num_cpu_devices`) while the test runs: meshes of 2x2."""
    with flag_context("didax_num_cpu_devices", 4):
        yield


JIT_TIERS = {"numpy tier": "off", "both tiers": "check"}


@pytest.fixture(params=list(JIT_TIERS))
def jit_tier(request):
    """The test once on the NumPy tier alone, once in jit's "check" mode (every function it
    compiles built as native code before its first call, and every call run on both tiers,
    failing with TierMismatchError unless the results are the same bits). Modules of jit's
    tests use it (`pytestmark`); tests about tiering itself set the tier they need."""
    with flag_context("didax_native_tier", JIT_TIERS[request.param]):
        yield request.param
