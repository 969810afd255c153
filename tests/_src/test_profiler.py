"""jax.profiler on didax: a trace holds the spans a program names and the durations didax
records, in a Chrome trace-event file where TensorBoard looks, read back by ProfileData;
only one trace at a time; what needs XLA's runtime says so."""
import gzip
import json
import pathlib
import threading

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import profiler


def _trace_files(log_dir):
    return sorted(pathlib.Path(log_dir).glob("plugins/profile/*/*.trace.json.gz"))


def test_a_trace_holds_annotations_steps_functions_and_jit_compiles(tmp_path):
    @profiler.annotate_function
    def loss(w):
        return jnp.sum(jnp.tanh(w) ** 2)

    step = didax.jit(didax.grad(lambda w: jnp.sum(jnp.sin(w) * w)))
    with profiler.trace(tmp_path, create_perfetto_trace=True):
        for i in range(2):
            with profiler.StepTraceAnnotation("train", step_num=i):
                with profiler.TraceAnnotation("forward", batch=32):
                    loss(jnp.ones(3))
                step(jnp.arange(3.0))
    (path,) = _trace_files(tmp_path)
    assert (path.parent / "perfetto_trace.json.gz").exists()
    trace = json.loads(gzip.open(path).read())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    names = [e["name"] for e in spans]
    assert names.count("train") == 2 and names.count("forward") == 2
    assert any(n.endswith("loss") for n in names)
    assert "/jax/core/compile/jaxpr_trace_duration" in names  # (the jit's first call)
    steps = sorted((e for e in spans if e["name"] == "train"), key=lambda e: e["ts"])
    assert [e["args"]["step_num"] for e in steps] == [0, 1]
    forward = next(e for e in spans if e["name"] == "forward")
    assert forward["args"] == {"batch": 32}
    assert steps[0]["ts"] <= forward["ts"] <= forward["ts"] + forward["dur"] <= (
        steps[-1]["ts"] + steps[-1]["dur"])  # (nested in time)

    data = profiler.ProfileData.from_file(path)
    (plane,) = list(data.planes)
    assert data.find_plane_with_name(plane.name) is plane and plane.name == "/host:CPU"
    events = [ev for line in plane.lines for ev in line.events]
    read = next(ev for ev in events if ev.name == "forward")
    assert read.duration_ns >= 0 and read.end_ns == read.start_ns + read.duration_ns
    assert dict(read.stats) == {"batch": 32}


def test_spans_from_threads_are_lines_of_their_threads(tmp_path):
    def work():
        with profiler.TraceAnnotation("in a thread"):
            np.linalg.svd(np.ones((20, 20)))

    profiler.start_trace(tmp_path)
    t = threading.Thread(target=work, name="worker")
    t.start()
    t.join()
    with profiler.TraceAnnotation("in main"):
        pass
    profiler.stop_trace()
    (plane,) = profiler.ProfileData.from_file(_trace_files(tmp_path)[0]).planes
    lines = {line.name: [e.name for e in line.events] for line in plane.lines}
    assert lines["worker"] == ["in a thread"]
    assert "in main" in lines[threading.current_thread().name]


def test_annotations_outside_a_trace_record_nothing_and_return_results(tmp_path):
    f = profiler.annotate_function(lambda x: x + 1, name="inc")
    with profiler.TraceAnnotation("nothing"):
        assert f(1) == 2
    with profiler.trace(tmp_path):
        pass
    trace = json.loads(gzip.open(_trace_files(tmp_path)[0]).read())
    assert [e for e in trace["traceEvents"] if e["ph"] == "X"] == []


def test_one_trace_at_a_time_and_stop_needs_a_start(tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            profiler.start_trace(tmp_path)
    finally:
        profiler.stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()


def test_what_needs_xla_runtime_raises_naming_it(tmp_path):
    for fn, args in ((profiler.start_server, (9999,)), (profiler.stop_server, ()),
                     (profiler.device_memory_profile, ()),
                     (profiler.save_device_memory_profile, (str(tmp_path / "m.prof"),)),
                     (profiler.register_subprocess, (1, 2)),
                     (profiler.ProfileData.from_serialized_xspace, (b"",))):
        with pytest.raises(NotImplementedError, match=fn.__name__.split(".")[-1]):
            fn(*args)
    bad = tmp_path / "x.trace.json"
    bad.write_text("not json")
    with pytest.raises(ValueError, match="not a trace written by"):
        profiler.ProfileData.from_file(bad)


def test_options_are_jaxs():
    import jax

    ours, theirs = profiler.ProfileOptions(), jax.profiler.ProfileOptions()
    for name in ("host_tracer_level", "python_tracer_level", "enable_hlo_proto",
                 "include_dataset_ops", "duration_ms", "start_timestamp_ns",
                 "repository_path", "session_id", "raise_error_on_start_failure",
                 "advanced_configuration"):
        assert getattr(ours, name) == getattr(theirs, name), name
