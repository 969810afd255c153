"""The profiler (`jax.profiler`) on the CPU, without XLA's runtime.

Between `start_trace` and `stop_trace` it collects the spans a program names
(`TraceAnnotation`, `StepTraceAnnotation`, `annotate_function`) and the durations didax
records (jit's tracing and compiling, native builds; see monitoring). `stop_trace` writes
them as a Chrome trace-event file, which Perfetto (ui.perfetto.dev) and chrome://tracing
open, at `<log_dir>/plugins/profile/<time>/<host>.trace.json.gz`, where TensorBoard's
profile plugin looks. `ProfileData.from_file` reads such a file back. What needs XLA's
runtime (a profiler server, device memory profiles, XSpace protobufs) raises
NotImplementedError, naming it.

What didax itself puts in a trace: each call of a jitted function, `jit(name)`, with the tier
that ran it (`args.tier`: "numpy" or "native", or "staged" for a call that ran no compiled
code of its own: traced into an enclosing transformation, or run op by op under
disable_jit), its tracing and compiling inside it; native builds on the thread that builds
them; and each pmap shard's collectives (psum, all_gather...) on that shard's thread (the
caller's for shard 0, `didax-device-k` for the others). Each thread is a line, named by a
"M" (metadata) event; times are microseconds from the trace's start, and a duration
reported through monitoring is placed to end when it was reported. Outside a trace all
this costs the hot paths (a jitted call, a collective) a test of `recording`, one module
attribute."""
from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
import socket
import threading
import time

from didax._src import monitoring

_lock = threading.Lock()
_session: _Session | None = None
recording = False  # whether a trace runs: the one thing the hot paths test


@dataclasses.dataclass
class ProfileOptions:
    """The options `jax.profiler.ProfileOptions` has (kept with the trace; the CPU tracer
    here records the same spans whatever their levels)."""

    host_tracer_level: int = 2
    python_tracer_level: int = 1
    enable_hlo_proto: bool = True
    include_dataset_ops: bool = True
    duration_ms: int = 0
    start_timestamp_ns: int = 0
    repository_path: str = ""
    session_id: str = ""
    raise_error_on_start_failure: bool = False
    advanced_configuration: dict = dataclasses.field(default_factory=dict)


class _Session:
    def __init__(self, log_dir, perfetto_trace, perfetto_link, options):
        self.log_dir = os.fspath(log_dir)
        self.perfetto_trace = perfetto_trace or perfetto_link
        self.perfetto_link = perfetto_link
        self.options = options
        self.events: list[dict] = []
        self.threads: dict[int, str] = {}
        self.origin_ns = time.perf_counter_ns()  # (times are written from the trace's start)

    def add(self, name, start_ns, end_ns, args):
        thread = threading.current_thread()
        start_ns = max(start_ns, self.origin_ns)  # (a span begun before the trace)
        event = {"name": name, "ph": "X", "ts": (start_ns - self.origin_ns) / 1e3,
                 "dur": max(end_ns - start_ns, 0) / 1e3, "pid": os.getpid(),
                 "tid": thread.ident, "args": {k: _plain(v) for k, v in args.items()}}
        with _lock:
            self.events.append(event)
            self.threads.setdefault(thread.ident, thread.name)

    def on_duration(self, event, duration, **kwargs):  # (a monitoring listener)
        if event == monitoring.CACHE_RETRIEVAL_TIME:  # (the native build's own span)
            return
        end = time.perf_counter_ns()
        self.add(event, end - int(duration * 1e9), end, kwargs)

    def on_time_span(self, event, start_time, end_time, **kwargs):
        # (monitoring's spans are in time.time() seconds: placed relative to now)
        now_ns, now_s = time.perf_counter_ns(), time.time()
        self.add(event, now_ns - int((now_s - start_time) * 1e9),
                 now_ns - int((now_s - end_time) * 1e9), kwargs)

    def trace_events(self) -> dict:
        meta = [{"name": "thread_name", "ph": "M", "pid": os.getpid(), "tid": tid, "ts": 0,
                 "args": {"name": name}} for tid, name in self.threads.items()]
        meta.append({"name": "process_name", "ph": "M", "pid": os.getpid(), "tid": 0, "ts": 0,
                     "args": {"name": f"/host:CPU ({socket.gethostname()})"}})
        return {"traceEvents": meta + sorted(self.events, key=lambda e: e["ts"]),
                "displayTimeUnit": "ns"}


def _plain(v):
    return v if isinstance(v, (bool, int, float, str)) or v is None else repr(v)


def start_trace(log_dir, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Starts collecting spans for a trace written to `log_dir` by `stop_trace`."""
    global _session, recording
    with _lock:
        if _session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time: call jax.profiler.stop_trace() first.")
        _session = _Session(log_dir, create_perfetto_trace, create_perfetto_link,
                            profiler_options or ProfileOptions())
        recording = True
    monitoring.register_event_duration_secs_listener(_session.on_duration)
    monitoring.register_event_time_span_listener(_session.on_time_span)


def stop_trace() -> None:
    """Stops the trace and writes it (see the module's docstring); with
    `create_perfetto_trace`, also `perfetto_trace.json.gz` beside it."""
    global _session, recording
    with _lock:
        session, _session = _session, None
        recording = False
    if session is None:
        raise RuntimeError("No profile started: call jax.profiler.start_trace(log_dir) first.")
    try:
        monitoring.unregister_event_duration_listener(session.on_duration)
        monitoring.unregister_event_time_span_listener(session.on_time_span)
    except AssertionError:  # (monitoring.clear_event_listeners() ran during the trace)
        pass
    run = time.strftime("%Y_%m_%d_%H_%M_%S")
    directory = os.path.join(session.log_dir, "plugins", "profile", run)
    os.makedirs(directory, exist_ok=True)
    data = json.dumps(session.trace_events()).encode()
    with gzip.open(os.path.join(directory, f"{socket.gethostname()}.trace.json.gz"), "wb") as f:
        f.write(data)
    if session.perfetto_trace:
        path = os.path.join(directory, "perfetto_trace.json.gz")
        with gzip.open(path, "wb") as f:
            f.write(data)
        if session.perfetto_link:  # (JAX serves the file and waits; here: where it is)
            print(f"Open {path} at https://ui.perfetto.dev (Open trace file).")


class trace:
    """A trace of the code it encloses (`start_trace`/`stop_trace`); also a decorator."""

    def __init__(self, log_dir, create_perfetto_link=False, create_perfetto_trace=False,
                 profiler_options: ProfileOptions | None = None):
        self._args = (log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)

    def __enter__(self):
        start_trace(*self._args)
        return self

    def __exit__(self, *exc):
        stop_trace()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def traced(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return traced


class TraceAnnotation:
    """A span named `name` (keyword arguments shown with it) while a trace runs."""

    def __init__(self, name: str, **kwargs):
        self.name = name
        self.kwargs = kwargs
        self._start = None

    def __enter__(self):
        if _session is not None:
            self._start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        session, start = _session, self._start
        if session is not None and start is not None:
            session.add(self.name, start, time.perf_counter_ns(), self.kwargs)
        self._start = None
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A training step's span (`step_num=` names the step)."""

    def __init__(self, name: str, **kwargs):
        super().__init__(name, **kwargs)
        self.kwargs["_r"] = 1  # (a step, as JAX marks it)


def annotate_function(func, name: str | None = None, **decorator_kwargs):
    """`func`, each call a span named `name` (default: its qualified name)."""
    name = name or getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))

    @functools.wraps(func)
    def annotated(*args, **kwargs):
        if _session is None:
            return func(*args, **kwargs)
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)

    return annotated


# --------------------------------------------------------------------------------------
# What didax's hot paths call while a trace runs (each behind a test of `recording`)

_calls = threading.local()  # .tiers: a list per open jitted call of this thread


def jit_call(name: str, call, args, kwargs):
    """`call(args, kwargs)`, a jitted function's call, as a span `jit(name)` whose `tier` is
    where it ran (set by `ran_on`; else "staged": see the module's docstring)."""
    stack = getattr(_calls, "tiers", None)
    if stack is None:
        stack = _calls.tiers = []
    info = {"tier": "staged"}
    stack.append(info)
    start = time.perf_counter_ns()
    try:
        return call(args, kwargs)
    finally:
        end = time.perf_counter_ns()
        stack.pop()
        session = _session
        if session is not None:
            session.add(f"jit({name})", start, end, info)


def ran_on(tier: str) -> None:
    """Names the tier ("numpy" or "native") running this thread's innermost jitted call."""
    stack = getattr(_calls, "tiers", None)
    if stack:
        stack[-1]["tier"] = tier


def _needs_runtime(what: str):
    def missing(*args, **kwargs):
        raise NotImplementedError(
            f"jax.profiler.{what} needs XLA's profiler runtime, which didax does not have. "
            "What to do: take a trace with jax.profiler.trace(log_dir) (or start_trace and "
            "stop_trace) and open the file it writes in Perfetto or TensorBoard.")
    missing.__name__ = what
    return missing


start_server = _needs_runtime("start_server")
stop_server = _needs_runtime("stop_server")
register_subprocess = _needs_runtime("register_subprocess")
device_memory_profile = _needs_runtime("device_memory_profile")
save_device_memory_profile = _needs_runtime("save_device_memory_profile")


# --------------------------------------------------------------------------------------
# Reading a trace back


@dataclasses.dataclass(frozen=True)
class ProfileEvent:
    name: str
    start_ns: float
    duration_ns: float
    stats: tuple

    @property
    def end_ns(self) -> float:
        return self.start_ns + self.duration_ns


@dataclasses.dataclass(frozen=True)
class ProfileLine:
    name: str
    events: tuple


@dataclasses.dataclass(frozen=True)
class ProfilePlane:
    name: str
    lines: tuple
    stats: tuple = ()


class ProfileData:
    """A trace `stop_trace` wrote: its planes (one: the host), each thread a line."""

    def __init__(self, planes):
        self._planes = tuple(planes)

    @property
    def planes(self):
        return iter(self._planes)

    def find_plane_with_name(self, name: str):
        return next((p for p in self._planes if p.name == name), None)

    @classmethod
    def from_file(cls, path) -> ProfileData:
        """Reads a `.trace.json.gz` (or `.trace.json`) file written by `stop_trace`."""
        path = os.fspath(path)
        opener = gzip.open if path.endswith(".gz") else open
        try:
            with opener(path, "rb") as f:
                events = json.loads(f.read())["traceEvents"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"ProfileData.from_file: {path} is not a trace written by "
                             f"jax.profiler.stop_trace ({e}). (XLA's XSpace protobufs are "
                             "not read here.)") from None
        names = {e["tid"]: e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e.get("name") == "thread_name"}
        process = next((e["args"]["name"] for e in events
                        if e.get("ph") == "M" and e.get("name") == "process_name"), "/host:CPU")
        lines: dict = {}
        for e in events:
            if e.get("ph") == "X":
                stats = tuple(sorted(e.get("args", {}).items()))
                lines.setdefault(e["tid"], []).append(
                    ProfileEvent(e["name"], e["ts"] * 1e3, e["dur"] * 1e3, stats))
        plane = ProfilePlane(process.split(" (")[0], tuple(
            ProfileLine(names.get(tid, str(tid)), tuple(evs)) for tid, evs in lines.items()))
        return cls([plane])

    from_serialized_xspace = staticmethod(_needs_runtime("ProfileData.from_serialized_xspace"))
    from_text_proto = staticmethod(_needs_runtime("ProfileData.from_text_proto"))
    from_raw_cpp_ptr = staticmethod(_needs_runtime("ProfileData.from_raw_cpp_ptr"))
    text_proto_to_serialized_xspace = staticmethod(
        _needs_runtime("ProfileData.text_proto_to_serialized_xspace"))
