"""jax.monitoring on didax: jit reports its tracing and compiling under JAX's event names and
function names, the native tier's disk cache reports requests, hits and misses as JAX's
persistent compilation cache does, and listeners come and go as in JAX."""
import subprocess
import sys

import jax
import numpy as np
import pytest
from jax_absent import needs_jax

import didax
import didax.numpy as jnp
from didax import monitoring
from didax._src import monitoring as events
from didax._src.compiler.native import cache, tier, toolchain
from didax._src.config import flag_context

COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration",
                  "/jax/core/compile/backend_compile_duration")


class Recorder:
    """Every event the listeners hear, as (kind, name, kwargs), while registered."""

    def __init__(self, module):
        self.module, self.heard = module, []

    def on_event(self, name, **kwargs):
        self.heard.append(("event", name, kwargs))

    def on_duration(self, name, seconds, **kwargs):
        assert seconds >= 0
        self.heard.append(("duration", name, kwargs))

    def __enter__(self):
        self.module.register_event_listener(self.on_event)
        self.module.register_event_duration_secs_listener(self.on_duration)
        return self

    def __exit__(self, *exc):
        self.module.unregister_event_listener(self.on_event)
        self.module.unregister_event_duration_listener(self.on_duration)


def test_jit_reports_tracing_and_compiling_as_jax_does():
    def compiles(module, np_module):
        def scaled_sine(x):
            return np_module.sin(x) * 3.0
        f = module.jit(scaled_sine)
        with Recorder(module.monitoring) as rec:
            f(np.ones(3, np.float32))
            f(np.ones(3, np.float32))  # (a cache hit: nothing more)
        return [(name, kw.get("fun_name")) for k, name, kw in rec.heard
                if name in COMPILE_EVENTS and "scaled_sine" in kw.get("fun_name", "")]

    ours = compiles(didax, jnp)
    assert ours == compiles(jax, jax.numpy)
    assert ours == [(COMPILE_EVENTS[0], "scaled_sine"), (COMPILE_EVENTS[1], "jit(scaled_sine)")]


JAX_PERSISTENT_CACHE = """
import sys, tempfile
import jax, jax.numpy as jnp
jax.config.update("jax_compilation_cache_dir", tempfile.mkdtemp())
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
heard = []
jax.monitoring.register_event_listener(lambda e, **k: heard.append(e))
jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: heard.append(e))
f = lambda x: jnp.tanh(x) * 2.5
jax.jit(f)(jnp.ones(3)).block_until_ready()
heard.append("then")
jax.clear_caches()
jax.jit(f)(jnp.ones(3)).block_until_ready()
print(" ".join(e for e in heard if "compilation_cache" in e or e == "then"))
"""


def _first_request(names):
    """The events of the first compile request among `names` (up to the next request)."""
    start = names.index(events.CACHE_REQUESTS)
    rest = names[start + 1:]
    ends = [i for i, n in enumerate(rest) if n in (events.CACHE_REQUESTS, "then")]
    return names[start:start + 1 + (ends[0] if ends else len(rest))]


@needs_jax
def test_native_code_reports_its_disk_cache_as_jax_its_persistent_cache(tmp_path, monkeypatch):
    """Native code built for a new function is a cache miss, loaded by another process (or
    after this one forgot it) a hit with its retrieval time, in JAX's order; JAX also
    reports the compile time a hit saved, which didax's cache does not know."""
    tier.wait_for_builds()  # (earlier tests' background builds store into the old directory)
    monkeypatch.setenv("DIDAX_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_loaded", {})
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    with flag_context("didax_native_tier", "sync"), Recorder(monitoring) as rec:
        didax.jit(lambda x: jnp.tanh(x) * 2.5 + 1.0)(x)
        rec.heard.append(("event", "then", {}))
        monkeypatch.setattr(cache, "_loaded", {})  # (as a new process finds the cache)
        didax.jit(lambda x: jnp.tanh(x) * 2.5 + 1.0)(x)
    ours = [name for _, name, _ in rec.heard if "compilation_cache" in name or name == "then"]
    builds = [kw for _, name, kw in rec.heard if name == events.NATIVE_BUILD_DURATION]
    if toolchain.toolchain() is None:  # (nothing is built, nothing asked of the cache)
        assert ours == ["then"] and builds == []
        return
    assert builds == [{"cached": 0}, {"cached": 1}]
    out = subprocess.run([sys.executable, "-c", JAX_PERSISTENT_CACHE], capture_output=True,
                         text=True, check=True).stdout.split()
    theirs = [n for n in out if n not in ("/jax/compilation_cache/tasks_using_cache",
                                          "/jax/compilation_cache/compile_time_saved_sec")]
    after = theirs.index("then")
    assert _first_request(ours) == _first_request(theirs)  # (requests, cache_misses)
    assert _first_request(ours[ours.index("then"):]) == _first_request(theirs[after:])


@pytest.mark.parametrize("module", [didax, jax], ids=["didax", "jax"])
def test_listeners_hear_what_is_recorded_until_unregistered(module):
    heard = []
    listeners = [  # (register, unregister, listener)
        ("event", "event", lambda e, **k: heard.append(("event", e, k))),
        ("event_duration_secs", "event_duration",
         lambda e, d, **k: heard.append(("duration", e, d, k))),
        ("event_time_span", "event_time_span",
         lambda e, s, t, **k: heard.append(("span", e, s, t, k))),
        ("scalar", "scalar", lambda e, v, **k: heard.append(("scalar", e, v, k))),
    ]
    mon = module.monitoring
    for register, _, fn in listeners:
        getattr(mon, f"register_{register}_listener")(fn)
    try:
        mon.record_event("/user/e", step=1)
        mon.record_event_duration_secs("/user/d", 1.5, step=2)
        mon.record_event_time_span("/user/s", 1.0, 2.0, step=3)
        mon.record_scalar("/user/v", 4.0, step=4)
    finally:
        for _, unregister, fn in listeners:
            getattr(mon, f"unregister_{unregister}_listener")(fn)
    mon.record_event("/user/after")
    assert heard == [("event", "/user/e", {"step": 1}), ("duration", "/user/d", 1.5, {"step": 2}),
                     ("span", "/user/s", 1.0, 2.0, {"step": 3}),
                     ("scalar", "/user/v", 4.0, {"step": 4})]
