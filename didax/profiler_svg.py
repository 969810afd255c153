"""A picture of a profile: a trace written by `didax.profiler` (or any Chrome trace-event
file) drawn as an SVG timeline, one row per thread, its spans as nested boxes with their
names, under a time axis. Jitted calls are coloured by the tier that ran them; hovering a
box shows its name, duration and arguments. (A didax tool; JAX has no such module.)

    python -m didax.profiler_svg TRACE out.svg     # TRACE: a .trace.json(.gz) or a log_dir
    python -m didax.profiler_svg --demo out.svg    # profiles a short run of the digits demo
"""
from __future__ import annotations

import argparse
import contextlib
import gzip
import html
import io
import json
import math
import os
import tempfile

from didax import demo, profiler

WIDTH = 1000  # of the drawing, in pixels
LEFT = 150  # the thread names' column
ROW = 16  # the height of one level of nesting
FONT = 10
CHAR = 6.0  # (about) the width of a character at FONT

# (colour, what it means), by a span's kind (see `_kind`)
COLOURS = {
    "numpy": ("#9ecae1", "jitted call, NumPy tier"),
    "native": ("#fdae6b", "jitted call, native tier"),
    "staged": ("#d9d9d9", "jitted call, staged into a transformation"),
    "compile": ("#bcbddc", "tracing and compiling"),
    "build": ("#a1d99b", "native build"),
    "collective": ("#fa9fb5", "collective"),
    "annotation": ("#fee391", "TraceAnnotation"),
}


def read_trace(source) -> dict:
    """The trace-event JSON object in `source`: a dict, a .json or .json.gz file, or a
    log_dir given to `jax.profiler.trace` (its latest trace)."""
    if isinstance(source, dict):
        return source
    path = os.fspath(source)
    if os.path.isdir(path):
        found = sorted((os.path.join(d, f) for d, _, files in os.walk(path) for f in files
                        if f.endswith(".trace.json.gz")), key=os.path.getmtime)
        if not found:
            raise FileNotFoundError(f"no .trace.json.gz file under {path}: take a trace "
                                    "there with jax.profiler.trace(log_dir) first")
        path = found[-1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        trace = json.loads(f.read())
    if isinstance(trace, list):  # (the format also allows a bare list of events)
        trace = {"traceEvents": trace}
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise ValueError(f"{path} is not a Chrome trace-event file (a JSON object with a "
                         "'traceEvents' list)")
    return trace


def _kind(event) -> str:
    name, args = event["name"], event.get("args") or {}
    if name.startswith("jit(") and args.get("tier") in COLOURS:
        return args["tier"]
    if name.startswith("/jax/core/compile/"):
        return "compile"
    if name.startswith("/didax/native_tier/"):
        return "build"
    if "shard" in args:
        return "collective"
    return "annotation"


def _label(event) -> str:
    """A short name: the last part of a monitoring event's path, with its function."""
    name, args = event["name"], event.get("args") or {}
    if name.startswith("/"):
        name = name.rstrip("/").rsplit("/", 1)[-1].removesuffix("_duration")
        if "fun_name" in args:
            name = f"{name} {args['fun_name']}"
        elif args.get("cached"):
            name = f"{name} (cached)"
    return name


def _nested(events):
    """(event, depth) for one thread's spans, the depth of each being how many of the
    others enclose it."""
    out, open_ends = [], []
    for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        while open_ends and open_ends[-1] <= e["ts"]:
            open_ends.pop()
        out.append((e, len(open_ends)))
        open_ends.append(e["ts"] + e["dur"])
    return out


def _tick(span_us: float) -> float:
    """A round step (1, 2 or 5 times a power of ten microseconds) giving about 8 ticks."""
    raw = max(span_us, 1e-3) / 8
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _time(us: float, step: float) -> str:
    if step >= 1e5:
        return f"{us / 1e6:g} s"
    if step >= 100:
        return f"{us / 1e3:g} ms"
    return f"{us:g} µs"


def draw(source, title: str | None = None) -> str:
    """The SVG text of the timeline of the trace in `source` (see `read_trace`)."""
    trace = read_trace(source)
    events = trace["traceEvents"]
    names = {e.get("tid"): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        raise ValueError("the trace holds no spans (\"X\" events) to draw")
    start = min(e["ts"] for e in spans)
    end = max(e["ts"] + e["dur"] for e in spans)
    scale = (WIDTH - LEFT - 20) / max(end - start, 1e-3)
    threads: dict = {}
    for e in spans:
        threads.setdefault(e["tid"], []).append(e)
    order = sorted(threads, key=lambda t: (names.get(t) != "MainThread",
                                           min(e["ts"] for e in threads[t])))

    body, y = [], 60
    for tid in order:
        placed = _nested(threads[tid])
        depth = 1 + max(d for _, d in placed)
        height = depth * ROW
        body.append(f'<rect x="0" y="{y - 2}" width="{WIDTH}" height="{height + 4}" '
                    'fill="#f7f7f7"/>')
        body.append(f'<text x="6" y="{y + ROW - 4}" font-size="{FONT + 1}">'
                    f'{html.escape(str(names.get(tid, tid)))}</text>')
        for e, d in placed:
            x = LEFT + (e["ts"] - start) * scale
            w = max(e["dur"] * scale, 0.6)
            colour = COLOURS[_kind(e)][0]
            label = _label(e)
            args = ", ".join(f"{k}={v}" for k, v in (e.get("args") or {}).items())
            tip = f"{e['name']} ({e['dur']:.1f} µs){': ' + args if args else ''}"
            body.append(f'<g><title>{html.escape(tip)}</title>'
                        f'<rect x="{x:.2f}" y="{y + d * ROW}" width="{w:.2f}" '
                        f'height="{ROW - 2}" fill="{colour}" stroke="#636363" '
                        'stroke-width="0.3"/>')
            fits = int((w - 4) / CHAR)
            if fits >= 3:
                text = label if len(label) <= fits else label[:fits - 1] + "…"
                body.append(f'<text x="{x + 2:.2f}" y="{y + d * ROW + ROW - 5}" '
                            f'font-size="{FONT}">{html.escape(text)}</text>')
            body.append("</g>")
        y += height + 8

    step = _tick(end - start)
    axis = [f'<line x1="{LEFT}" y1="40" x2="{WIDTH - 20}" y2="40" stroke="#252525"/>']
    t = 0.0
    while t <= end - start + 1e-9:
        x = LEFT + t * scale
        axis.append(f'<line x1="{x:.2f}" y1="36" x2="{x:.2f}" y2="{y}" stroke="#d9d9d9" '
                    'stroke-width="0.5"/>')
        axis.append(f'<text x="{x:.2f}" y="32" font-size="{FONT}" text-anchor="middle">'
                    f'{_time(t, step)}</text>')
        t += step

    legend, lx = [], LEFT
    for colour, meaning in COLOURS.values():
        legend.append(f'<rect x="{lx}" y="{y + 6}" width="10" height="10" fill="{colour}" '
                      'stroke="#636363" stroke-width="0.3"/>')
        legend.append(f'<text x="{lx + 14}" y="{y + 15}" font-size="{FONT}">'
                      f'{html.escape(meaning)}</text>')
        lx += 24 + CHAR * len(meaning)
        if lx > WIDTH - 200:
            lx, y = LEFT, y + 16
    total = y + 26
    heading = html.escape(title or "profile")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{total}" '
            f'viewBox="0 0 {WIDTH} {total}" font-family="sans-serif">\n'
            f'<rect width="{WIDTH}" height="{total}" fill="white"/>\n'
            f'<text x="6" y="16" font-size="{FONT + 3}" font-weight="bold">{heading}</text>\n'
            + "\n".join(axis + body + legend) + "\n</svg>\n")


def save(source, path, title: str | None = None) -> str:
    """Writes `draw(source)` to `path`; returns the path."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(draw(source, title))
    return path


def profile_demo(log_dir, steps: int = 40) -> dict:
    """Takes a trace in `log_dir` of the digits demo's training (`steps` steps, quietly);
    returns what `didax.demo.train_digits` returns."""
    with profiler.trace(log_dir), contextlib.redirect_stdout(io.StringIO()):
        with profiler.TraceAnnotation("train_digits", steps=steps):
            return demo.train_digits(steps=steps, plot_path=None)


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(prog="python -m didax.profiler_svg",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", help="a .trace.json(.gz) file or a log_dir")
    parser.add_argument("out", help="the SVG file to write")
    parser.add_argument("--demo", action="store_true",
                        help="profile a short run of the digits demo instead")
    parser.add_argument("--steps", type=int, default=40, help="the demo's steps")
    opts = parser.parse_args(argv)
    if opts.demo == (opts.trace is not None):
        parser.error("give either a trace (file or log_dir) or --demo")
    if opts.demo:
        with tempfile.TemporaryDirectory() as log_dir:
            profile_demo(log_dir, opts.steps)
            path = save(log_dir, opts.out, f"didax demo: {opts.steps} training steps of "
                        "the digits MLP, profiled with jax.profiler.trace")
    else:
        path = save(opts.trace, opts.out)
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
