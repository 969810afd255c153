"""Mirrors `jax.monitoring`: listening to the events didax records (jit's trace and compile
durations, under JAX's names; native builds, and the native tier's disk cache as JAX's
persistent compilation cache) and recording events of one's own."""
from didax._src.monitoring import (  # noqa: F401
    clear_event_listeners,
    record_event,
    record_event_duration_secs,
    record_event_time_span,
    record_scalar,
    register_event_duration_secs_listener,
    register_event_listener,
    register_event_time_span_listener,
    register_scalar_listener,
    unregister_event_duration_listener,
    unregister_event_listener,
    unregister_event_time_span_listener,
    unregister_scalar_listener,
)
