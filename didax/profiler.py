"""Mirrors `jax.profiler`: traces of a program's own spans and of didax's recorded durations,
written as Chrome trace-event files (Perfetto, TensorBoard); see didax/_src/profiler.py."""
from didax._src.profiler import (  # noqa: F401
    ProfileData,
    ProfileEvent,
    ProfileOptions,
    ProfilePlane,
    StepTraceAnnotation,
    TraceAnnotation,
    annotate_function,
    device_memory_profile,
    register_subprocess,
    save_device_memory_profile,
    start_server,
    start_trace,
    stop_server,
    stop_trace,
    trace,
)
