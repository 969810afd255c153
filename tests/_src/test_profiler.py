"""jax.profiler on didax: a trace holds the spans a program names and the durations didax
records, each jitted call with the tier that ran it, pmap shards' collectives on their
threads, in a Chrome trace-event file where TensorBoard looks, read back by ProfileData and
drawn by didax.profiler_svg; only one trace at a time; what needs XLA's runtime says so."""
import gzip
import json
import pathlib
import threading
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax import lax, profiler, profiler_svg
from didax._src import profiler as profiler_src
from didax._src.compiler.native import toolchain
from didax._src.config import config, flag_context


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


def _read(log_dir):
    (path,) = _trace_files(log_dir)
    return json.loads(gzip.open(path).read())


def check_trace_event_format(trace):
    """A JSON object with `traceEvents`; every event has a phase, name, process and thread;
    spans ("X") have numeric, non-negative times, nested properly on each thread."""
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    json.loads(json.dumps(trace))  # (plain JSON values only)
    spans = {}
    for e in trace["traceEvents"]:
        assert {"ph", "name", "pid", "tid"} <= e.keys(), e
        assert e["ph"] in ("X", "M"), e
        if e["ph"] == "X":
            for key in ("ts", "dur"):
                assert isinstance(e[key], (int, float)) and e[key] >= 0, e
            spans.setdefault(e["tid"], []).append(e)
    eps = 1e-3  # (a nanosecond, in microseconds: rounding)
    for events in spans.values():
        enclosing = []
        for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
            while enclosing and enclosing[-1]["ts"] + enclosing[-1]["dur"] <= e["ts"] + eps:
                enclosing.pop()
            if enclosing:
                outer = enclosing[-1]
                assert e["ts"] + e["dur"] <= outer["ts"] + outer["dur"] + eps, (outer, e)
            enclosing.append(e)
    return spans


@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory):
    """A trace of the digits demo's training (a few steps; the native tier as it comes)."""
    log_dir = tmp_path_factory.mktemp("demo_profile")
    result = profiler_svg.profile_demo(log_dir, steps=8)
    return _read(log_dir), result


def test_a_trace_of_the_demo_training_shows_each_step_with_its_tier(demo_trace):
    trace, result = demo_trace
    spans = [e for events in check_trace_event_format(trace).values() for e in events]
    (outer,) = [e for e in spans if e["name"] == "train_digits"]  # the TraceAnnotation
    assert outer["args"] == {"steps": 8}
    steps = sorted((e for e in spans if e["name"] == "jit(step)"), key=lambda e: e["ts"])
    assert len(steps) == 8 and all(e["tid"] == outer["tid"] for e in steps)
    # The tier each call ran on, as the demo saw it just after the call ("building" is the
    # NumPy tier while native code is built; the swap may come between the call and then).
    seen = ["numpy" if t == "building" else t for t in result["tiers"]]
    traced = [e["args"]["tier"] for e in steps]
    swap = seen.index("native") if "native" in seen else len(seen)
    assert traced[:swap] == seen[:swap] and set(traced[swap + 1:]) <= {"native"}
    assert traced[0] == "numpy"  # (the first call: built later, in the background)
    # the first call traces and compiles the step, inside its span
    first = steps[0]
    inner = {e["name"]: e for e in spans if e.get("args", {}).get("fun_name") in (
        "step", "jit(step)")}
    assert set(inner) == {"/jax/core/compile/jaxpr_trace_duration",
                          "/jax/core/compile/backend_compile_duration"}
    for e in inner.values():
        assert first["ts"] <= e["ts"] and e["ts"] + e["dur"] <= first["ts"] + first["dur"]
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert threading.current_thread().name in names


def test_the_demo_trace_drawn_as_an_svg_timeline(demo_trace, tmp_path):
    trace, _ = demo_trace
    svg = ET.fromstring(profiler_svg.draw(trace, title="the demo"))
    ns = "{http://www.w3.org/2000/svg}"
    boxes = [g for g in svg.iter(f"{ns}g") if g.find(f"{ns}title") is not None]
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(boxes) == len(spans)  # one box per span, its name in its tooltip
    assert sorted(g.find(f"{ns}title").text.split(" (")[0] for g in boxes) == sorted(
        e["name"] for e in spans)
    texts = [t.text for t in svg.iter(f"{ns}text")]
    assert "the demo" in texts and threading.current_thread().name in texts
    assert {"0 µs", "0 ms", "0 s"} & set(texts)  # the time axis
    assert "jitted call, NumPy tier" in texts  # the legend
    # from the command line, reading a written file (or the log_dir holding it)
    path = tmp_path / "t.trace.json"
    path.write_text(json.dumps(trace))
    out = tmp_path / "t.svg"
    assert profiler_svg.main([str(path), str(out)]) == str(out)
    assert out.read_text() == profiler_svg.draw(trace)


def test_the_svg_tool_refuses_what_is_not_a_trace(tmp_path):
    with pytest.raises(FileNotFoundError, match="no .trace.json.gz file"):
        profiler_svg.draw(tmp_path)
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"events": []}))
    with pytest.raises(ValueError, match="not a Chrome trace-event file"):
        profiler_svg.draw(bad)
    with pytest.raises(ValueError, match="no spans"):
        profiler_svg.draw({"traceEvents": []})
    with pytest.raises(SystemExit):
        profiler_svg.main(["--demo", "x.trace.json", "out.svg"])


@pytest.mark.parametrize("mode", ["off", "sync"])
def test_each_jitted_call_names_its_tier(tmp_path, mode):
    """A call runs on the NumPy tier, or on native code ("sync": built before the first call
    returns, where a compiler works); a call inside another transformation runs nowhere."""
    f = didax.jit(lambda x: jnp.cos(x) * 1.5 - x)
    x = jnp.linspace(0.0, 1.0, 5)
    with flag_context("didax_native_tier", mode), profiler.trace(tmp_path):
        f(x)
        f(x)
        didax.grad(lambda x: f(x).sum())(x)
    spans = check_trace_event_format(_read(tmp_path))
    calls = sorted((e for events in spans.values() for e in events if e["name"] == "jit(<lambda>)"),
                   key=lambda e: e["ts"])
    native = mode == "sync" and toolchain.toolchain() is not None
    expected = "native" if native else "numpy"
    assert [e["args"]["tier"] for e in calls][:3] == [expected, expected, "staged"]
    assert all(e["args"]["tier"] in ("numpy", "native") for e in calls[3:])


def test_collectives_are_spans_on_each_shards_thread(tmp_path):
    old = config.read("didax_num_cpu_devices")
    config.update("didax_num_cpu_devices", 2)
    try:
        f = didax.pmap(lambda x: lax.psum(x, "i") * lax.all_gather(x, "i").sum(),
                       axis_name="i")
        x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
        with profiler.trace(tmp_path):
            out = f(x)
    finally:
        config.update("didax_num_cpu_devices", old)
    np.testing.assert_allclose(out, np.broadcast_to(x.sum(0) * x.sum(), (2, 3)), rtol=1e-6)
    trace = _read(tmp_path)
    spans = check_trace_event_format(trace)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["name"] == "thread_name"}
    per_thread = {names[tid]: sorted((e["name"], e["args"]["shard"]) for e in events
                                     if "shard" in e["args"])
                  for tid, events in spans.items()}
    assert per_thread[threading.current_thread().name] == [("all_gather", 0), ("psum", 0)]
    assert per_thread["didax-device-1"] == [("all_gather", 1), ("psum", 1)]


def test_recording_is_on_only_while_a_trace_runs(tmp_path):
    assert not profiler_src.recording
    with pytest.raises(KeyError, match="inside the trace"):
        with profiler.trace(tmp_path):
            assert profiler_src.recording
            raise KeyError("inside the trace")
    assert not profiler_src.recording
    assert len(_trace_files(tmp_path)) == 1  # (written all the same)
