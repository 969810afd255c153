"""Tiering: the NumPy tier serves the first calls of a jitted function; its native code,
built on a background thread, replaces it when ready (the `didax_native_tier` option:
"background", "sync" to build before the first call returns, "off", or "check": a test
mode that builds before the first call and runs both tiers on every call, raising
TierMismatchError unless their results are the same bits).

In the background mode only functions called a second time are built (most functions
jit traces, such as derivatives of one call, run once), except that a function holding a
loop, whose one call may be long, gets its native code before its first call when the cache
has it, and else, once that call has run for LONG_CALL on a machine with another core, is
built meanwhile: its loops then hand the call over to the native code, which starts it over
(numpy_tier.SwitchTier; never a call with effects, which would happen twice). The swap is
one assignment of the executable's `run`, so a call sees either tier whole, and both compute
the same bits (see compiler/native/emit.py): when the swap happens never changes a result.
Nothing here ever fails a call: a build that cannot be done leaves the NumPy tier.
"""
from __future__ import annotations

import atexit
import collections
import itertools
import queue
import threading
import time
import warnings

import numpy as np

from didax._src import monitoring
from didax._src.compiler import numpy_tier as compiler
from didax._src.compiler.native import (
    cache,
    detached,
    emit,
    handoff,
    product_kernel,
    runtime,
    threads,
    toolchain,
)
from didax._src.compiler.native.directory import cache_dir
from didax._src.config import config
from didax._src.config_states import float_checks
from didax._src.errors import NativeTierWarning, TierMismatchError
from didax._src.ir import derived, subjaxprs

CALLS_BEFORE_BUILD = 2  # background mode: built when called this many times


class Native:
    """What the native tier knows about one executable."""

    __slots__ = ("status", "source", "plan", "on_ready")

    def __init__(self, status: str, on_ready=None):
        self.status = status  # "claimed" (being attached), "waiting" (for calls), "queued",
        # "ready", "none", "failed"
        self.source = None    # the C source, when built
        self.plan = None
        self.on_ready = on_ready  # called once the native code has replaced `run`


def tiered_executable(closed, name: str = "f") -> compiler.Executable:
    """jit's executable for `closed` (and pmap's shards'): the NumPy tier's code, set up to
    swap in its native code as the `didax_native_tier` option says. It is its own object
    (its own cache key), so what runs numpy_executable's never runs native code."""
    checks = float_checks()
    debug_nans = any(checks)

    def make():
        if not debug_nans and _has_loop(closed.jaxpr) and not _effectful(closed.jaxpr):
            return compiler.switchable_executable(closed, name)
        plain = compiler.numpy_executable(closed, name)
        return compiler.Executable(plain.jaxpr, plain.source, plain.run)

    exe = derived(closed, ("tiered", checks), make)
    if exe.native is None:
        mode = config.read("didax_native_tier")
        if mode != "off" and not debug_nans and _claim(exe):
            attach(exe, mode)
    return exe


_claim_lock = threading.Lock()


def _claim(exe) -> bool:
    """Whether this thread attaches `exe`'s native tier (threads calling a new function at
    once: one of them does)."""
    with _claim_lock:
        if exe.native is not None:
            return False
        exe.native = Native("claimed")
        return True


def attach(exe: compiler.Executable, mode: str, on_ready=None,
           calls: int = CALLS_BEFORE_BUILD):
    """Starts `exe`'s native tier: built now ("sync", "check"), or after `calls` calls;
    `on_ready()` is called once it runs."""
    if mode == "sync" or mode == "check" and _effectful(exe.jaxpr.jaxpr):
        exe.native = Native("queued", on_ready)
        build(exe)
        return
    if mode == "check":  # (what on_ready hands on is the checking run)
        exe.native = Native("queued")
        plain = exe.run
        if build(exe):
            exe.run = _checking(plain, exe.run, exe)
            if on_ready is not None:
                on_ready()
        return
    switch = exe.switch
    if switch is not None:  # (its loops hand a running call over once the code is ready)
        def ready(then=on_ready):
            switch[0] = True
            if then is not None:
                then()
        on_ready = ready
    loop = _has_loop(exe.jaxpr.jaxpr)
    if loop:
        # One call may run long (a sampler's chain, a solver): native code already in the
        # cache is loaded before it. (A build started now would take the core the call runs
        # on, on a one-core machine: one not cached waits for a second call, as others do,
        # and a first call that ran long has it built for the next run; see detached.py.)
        exe.native = Native("queued", on_ready)
        if build(exe, cached_only=True) or exe.native.status != "queued":
            return  # (loaded, or not buildable at all)
        exe.native.status = "waiting"  # (its plan kept: a build later uses it)
    else:
        exe.native = Native("waiting", on_ready)
    plain = exe.run
    if switch is not None:
        numpy_run = plain

        def plain(*vals):
            global handovers
            try:
                return numpy_run(*vals)
            except compiler.SwitchTier:  # (raised once `run` is the native code's)
                handovers += 1
                return exe.run(*vals)
    count = itertools.count(1)  # (next() is atomic: one call of all threads' sees `calls`)
    # A first call of a loop running long builds the native code meanwhile, where another
    # core can: its loops then hand the call over (one core: a second call builds it).
    build_meanwhile = switch is not None and threads.usable_cores() > 1

    def counting(*vals):
        n = next(count)
        if n == calls:
            _queue_build(exe, plain)
        if n != 1 or not loop:
            return plain(*vals)
        start = time.perf_counter()
        timer = None
        if build_meanwhile:
            timer = threading.Timer(detached.LONG_CALL, _queue_build, (exe,))
            timer.daemon = True
            timer.start()
        try:
            out = plain(*vals)
        finally:
            if timer is not None:
                timer.cancel()
        if time.perf_counter() - start >= detached.LONG_CALL:
            _for_the_next_run(exe)
        return out

    exe.run = counting


handovers = 0  # calls the NumPy tier's loops handed over to native code (for tests)
# Functions whose long first call ended with their build queued or running: one the process
# exits before finishing is handed to a detached build (the next run loads it).
_unfinished: set = set()


def _for_the_next_run(exe):
    """Native code for the next run of a program whose first call of `exe` ran long."""
    if exe.native.status == "waiting":
        _build_detached(exe)
    elif exe.native.status == "queued":
        _unfinished.add(exe)


@atexit.register
def _hand_over_unfinished():
    for exe in list(_unfinished):
        if exe.native.status == "queued":
            _build_detached(exe)


def _build_detached(exe):
    directory = cache_dir()
    if directory is not None:
        detached.build_later(exe.native.plan.source, directory)


def _queue_build(exe, run=None):
    """Queues the background build of `exe` if it is waiting for one (making `run` its
    run first: a build swaps in native code only after this)."""
    with _claim_lock:
        if exe.native.status != "waiting":
            return
        if run is not None:
            exe.run = run
        exe.native.status = "queued"
    _submit(exe)


def tier_of(exe: compiler.Executable) -> str:
    """The tier `exe`'s calls run on now: "native" once its native code is swapped in."""
    return "native" if exe.native is not None and exe.native.status == "ready" else "numpy"


def _has_loop(jaxpr) -> bool:
    """Whether `jaxpr` (or one inside it) runs a loop."""
    return _any_equation(jaxpr, lambda traits: traits.loop)


def _effectful(jaxpr) -> bool:
    """Whether `jaxpr` (or one inside it) has effects: the check mode runs it on the native
    tier alone (its effects once)."""
    return _any_equation(jaxpr, lambda traits: traits.effectful)


def _any_equation(jaxpr, test) -> bool:
    """Whether `test(traits)` holds for an equation of `jaxpr` or of one inside it."""
    return any(test(eqn.primitive.traits) or any(_any_equation(sub, test)
                                                 for sub in subjaxprs(eqn.params))
               for eqn in jaxpr.eqns)


def _checking(numpy_run, native_run, exe):
    """A run calling both tiers, raising TierMismatchError if any result differs in a bit."""
    def run(*vals):
        expected = numpy_run(*vals)
        got = native_run(*vals)
        for k, (e, g) in enumerate(zip(expected, got)):
            e, g = np.asarray(e), np.asarray(g)
            if e.dtype != g.dtype or e.shape != g.shape or e.tobytes() != g.tobytes():
                raise TierMismatchError(_mismatch(exe, k, e, g))
        return got
    return run


def _mismatch(exe, k, e, g) -> str:
    lines = [f"jit's two tiers differ in result {k}: NumPy tier {e.dtype}{list(e.shape)}, "
             f"native tier {g.dtype}{list(g.shape)}"]
    if e.dtype == g.dtype and e.shape == g.shape:
        flat_e, flat_g = e.reshape(-1), g.reshape(-1)
        diff = [i for i in range(e.size) if flat_e[i:i + 1].tobytes() != flat_g[i:i + 1].tobytes()]
        lines.append(f"{len(diff)} of {e.size} elements differ; the first at flat indices "
                     f"{diff[:5]}: {flat_e[diff[:5]].tolist()} against "
                     f"{flat_g[diff[:5]].tolist()}")
    lines.append(f"jaxpr:\n{exe.jaxpr}")
    return "\n".join(lines)


def build(exe: compiler.Executable, cached_only: bool = False) -> bool:
    """Builds and swaps in `exe`'s native code (with `cached_only`, only if it is cached);
    whether it did."""
    state = exe.native
    tc = toolchain.toolchain()
    directory = cache_dir() if tc is not None else None
    if tc is None or directory is None:
        state.status = "none"
        return False
    try:
        plan = state.plan or emit.plan(exe.jaxpr)  # (one made for a cache lookup, reused)
        if plan is None:
            state.status = "none"
            return False
        if cached_only:
            module = cache.load_cached(plan.source, tc, directory)
            table = runtime.address(cached_only=True) if module is not None else None
            if table is None:
                state.plan = plan  # (for the build, when one comes)
                return False
        else:
            start = time.perf_counter()
            module = cache.load_cached(plan.source, tc, directory)
            hit = module is not None  # (else a miss of the cache: built and stored now)
            if not hit:
                runtime.prepare()  # (built beside the module, if it must be)
                module = cache.load_or_build(plan.source, tc, directory)
            table = runtime.address()
            monitoring.native_code_loaded(time.perf_counter() - start, cached=hit)
        # (a first call does not wait for the loop's build: a module found in the cache
        # then, or one built before it (the "sync" and "check" modes))
        first_call = cached_only or config.read("didax_native_tier") != "background"
        loops = product_kernel.choose_loops(plan.loops, dict(plan.products),
                                            wait=not first_call, idle=not cached_only)
        run = module.make((plan.python_segments, plan.consts, loops,
                           threads.address(), table))
    except Exception as e:  # a bug in code generation: the NumPy tier stays
        state.status = "failed"
        _warn_failure(e)
        return False
    state.source, state.plan, state.status = plan.source, plan, "ready"
    exe.run = run
    if state.on_ready is not None:
        state.on_ready()
    return True


_warned_failure = [False]
BUILD_FAILED = "building native code failed"  # (what the warning says: tests look for it)
# The builds that failed in this process, counted, and the last few (the error's type and
# message): a function that stays on the NumPy tier is slower, never wrong, so the warning
# is said once; the suite fails on any (tests/conftest.py).
failure_count = 0
failures: collections.deque = collections.deque(maxlen=10)


def _warn_failure(e: Exception):
    global failure_count
    if toolchain.stopping:  # (the process is exiting: its compilers were stopped)
        return
    message = f"{type(e).__name__}: {str(e)[-500:]}"
    failure_count += 1
    failures.append(message)
    if not _warned_failure[0]:
        warnings.warn(f"didax: {BUILD_FAILED} ({message}); this function stays on the NumPy "
                      "tier.", NativeTierWarning, stacklevel=2)
        _warned_failure[0] = True  # (after: a warning made an error is raised each time)


# The background worker: one daemon thread, so builds never compete with each other.
_queue: queue.Queue = queue.Queue()
_worker: list = []
_worker_lock = threading.Lock()


def _submit(exe):
    with _worker_lock:
        if not _worker:
            t = threading.Thread(target=_work, name="didax-native-tier", daemon=True)
            _worker.append(t)
            t.start()
    _queue.put(exe)


def _work():
    while True:
        exe = _queue.get()
        try:
            with handoff.prompt_handoffs():
                build(exe)
        except BaseException:  # never let the worker die
            exe.native.status = "failed"
        finally:
            _queue.task_done()


def wait_for_builds():
    """Blocks until every queued background build is done (for tests and benchmarks)."""
    _queue.join()
