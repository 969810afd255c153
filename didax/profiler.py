"""Mirrors `jax.profiler`: traces of a program's own spans, its jitted calls (with the tier
that ran each), their tracing and compiling, native builds and pmap shards' collectives,
written as Chrome trace-event files (Perfetto, TensorBoard; `python -m didax.profiler_svg`
draws one); see didax/_src/profiler.py."""
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
