"""Events a program can listen to (`jax.monitoring`): didax records how long jit spends
tracing a function and compiling it (under JAX's event names) and building its native code;
anyone may record events of their own. Listeners are called at once, in the recording
thread, in the order they were registered.

The native tier's disk cache of built code is what JAX's persistent compilation cache is:
each time native code is wanted for a function it is a compile request that uses the cache,
then a hit (with the time it took to load) or a miss (built and stored), under JAX's names.
Differences from JAX: a hit reports no `compile_time_saved_sec` (the cache keeps no build
times), and the jit's in-memory cache reports a miss only as its tracing duration, as JAX
does, and its hits not at all (they cost a jitted call nothing; `cache_info()` counts
them)."""
from __future__ import annotations

import threading

_lock = threading.Lock()
_listeners: dict[str, list] = {"event": [], "duration": [], "time_span": [], "scalar": []}

TRACE_DURATION = "/jax/core/compile/jaxpr_trace_duration"
COMPILE_DURATION = "/jax/core/compile/backend_compile_duration"
NATIVE_BUILD_DURATION = "/didax/native_tier/build_duration"
CACHE_REQUESTS = "/jax/compilation_cache/compile_requests_use_cache"
CACHE_HITS = "/jax/compilation_cache/cache_hits"
CACHE_MISSES = "/jax/compilation_cache/cache_misses"
CACHE_RETRIEVAL_TIME = "/jax/compilation_cache/cache_retrieval_time_sec"


def _call(kind, *args, **kwargs):
    for callback in list(_listeners[kind]):
        callback(*args, **kwargs)


def record_event(event: str, **kwargs) -> None:
    _call("event", event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs) -> None:
    _call("duration", event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs) -> None:
    _call("time_span", event, start_time, end_time, **kwargs)


def record_scalar(event: str, value, **kwargs) -> None:
    _call("scalar", event, value, **kwargs)


def _register(kind):
    def register(callback) -> None:
        with _lock:
            _listeners[kind].append(callback)
    register.__name__ = f"register_{kind}_listener"
    return register


def _unregister(kind):
    def unregister(callback) -> None:
        with _lock:
            try:
                _listeners[kind].remove(callback)
            except ValueError:
                raise AssertionError(f"{callback!r} is not a registered listener") from None
    unregister.__name__ = f"unregister_{kind}_listener"
    return unregister


register_event_listener = _register("event")
register_event_duration_secs_listener = _register("duration")
register_event_time_span_listener = _register("time_span")
register_scalar_listener = _register("scalar")
unregister_event_listener = _unregister("event")
unregister_event_duration_listener = _unregister("duration")
unregister_event_time_span_listener = _unregister("time_span")
unregister_scalar_listener = _unregister("scalar")


def clear_event_listeners() -> None:
    with _lock:
        for callbacks in _listeners.values():
            callbacks.clear()


def listening() -> bool:
    """Whether any duration listener is registered (callers skip timing otherwise)."""
    return bool(_listeners["duration"])


def native_code_loaded(seconds: float, cached: bool) -> None:
    """Reports native code for one function ready after `seconds`: loaded from the disk
    cache (`cached`) or built and stored in it."""
    record_event(CACHE_REQUESTS)
    if cached:
        record_event(CACHE_HITS)
        record_event_duration_secs(CACHE_RETRIEVAL_TIME, seconds)
    else:
        record_event(CACHE_MISSES)
    record_event_duration_secs(NATIVE_BUILD_DURATION, seconds, cached=int(cached))
