"""The demo prints the derivatives JAX computes for the same function, and its jitted MLP
learns the digits, reporting its progress, compile time and speed."""
import os
import re
import subprocess
import sys
import types

from process_testing import ROOT, TIMEOUT

from didax import demo


def test_demo_prints_derivatives_jaxpr_and_trains_the_mlp(capsys, tmp_path):
    result = demo.main(steps=300, plot_path=str(tmp_path / "loss.png"))
    out = capsys.readouterr().out
    values = [float(v) for v in re.findall(r"^  f\S* += +(-?\d+\.\d+)", out, re.M)]
    # f(0.7), f'(0.7) and f''''(0.7) (JAX 0.10.2, float32: 0.44651109, 1.1161563, 3.5727184).
    expected = [0.44651109, 1.1161563, 3.5727184]
    assert len(values) == 3
    for got, want in zip(values, expected):
        assert abs(got - want) < 2e-6 * max(1.0, abs(want))
    assert out.count("{ lambda ; a:f32[]. let") == 1

    assert result["test_accuracy"] >= 0.95
    assert result["final_loss"] < 0.25 * result["losses"][0]
    # Piped (not a terminal): one line every tenth of the run, and no carriage return.
    assert "\r" not in out
    bars = re.findall(r"^  \[([#.]{30})\] step (\d+)/300 loss (\d+\.\d+)$", out, re.M)
    assert [int(step) for _, step, _ in bars] == list(range(30, 301, 30))
    assert bars[-1][0] == "#" * 30 and bars[0][0].startswith("###.")
    assert float(bars[-1][2]) == round(result["final_loss"], 4)
    first_ms, compile_ms = map(float, re.search(
        r"first call of the jitted step: (\d+\.\d) ms, of which compiling (-?\d+\.\d) ms",
        out).groups())
    assert 0 < compile_ms <= first_ms
    assert abs(compile_ms - 1e3 * result["compile_seconds"]) < 0.06
    # The two speeds agree with themselves: ms a step and steps/s are reciprocal (up to the
    # rounding of both: ms to 0.01, a sizeable part of a fast step).
    def reciprocal(ms, rate):
        ms, rate = float(ms), float(rate)
        return 1e3 / (ms + 0.005) - 1 <= rate <= 1e3 / max(ms - 0.005, 1e-9) + 1

    step_ms, step_rate = re.search(r"the jitted step alone: (\d+\.\d\d) ms \((\d+) steps/s",
                                   out).groups()
    assert reciprocal(step_ms, step_rate)
    loop_ms, loop_rate = re.search(r"the whole training loop: (\d+\.\d\d) ms a step \((\d+) "
                                   r"steps/s", out).groups()
    assert reciprocal(loop_ms, loop_rate)
    assert abs(float(loop_rate) - result["steps_per_second"]) <= 1
    # Each step on a tier: the NumPy tier's first, the native tier's once built (or never,
    # without a C compiler, with the tier off, or when the build outlasts the run; from the
    # first step if it builds before the first call returns, as in "sync" or "check").
    tiers = result["tiers"]
    assert set(tiers) <= {"numpy", "building", "native"}
    if "native" in tiers:
        swap = tiers.index("native")
        assert set(tiers[swap:]) == {"native"}
        assert f"on the native tier (C, built in the background, from step {swap + 1})" in out
    else:
        assert "all on the NumPy tier (the native tier is off" in out
    printed_accuracy = re.search(r"test accuracy: (\d+\.\d\d)%", out)[1]
    assert printed_accuracy == f"{100 * result['test_accuracy']:.2f}"
    if result["plot"] is not None:  # matplotlib installed
        assert (tmp_path / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"loss curve saved to {tmp_path / 'loss.png'}" in out


def test_demo_names_the_plot_extra_without_matplotlib(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    result = demo.train_digits(steps=5, plot_path=str(tmp_path / "loss.png"))
    out = capsys.readouterr().out
    assert result["plot"] is None and not (tmp_path / "loss.png").exists()
    assert "loss curve saved" not in out
    assert 'a loss-curve plot comes with the plot extra: pip install "didax[plot]"' in out


def test_loss_curve_is_written_when_matplotlib_is_importable(tmp_path, monkeypatch):
    """With a stand-in matplotlib, the curve is drawn from the losses and saved to the path."""
    drawn = {}

    class Axes:
        def plot(self, xs, ys, **kwargs):
            drawn["xs"], drawn["ys"] = list(xs), list(ys)

        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    class Figure:
        def tight_layout(self):
            pass

        def savefig(self, path, **kwargs):
            open(path, "wb").write(b"png")

    pyplot = types.SimpleNamespace(subplots=lambda **kwargs: (Figure(), Axes()),
                                   close=lambda fig: None)
    matplotlib = types.SimpleNamespace(use=lambda backend: None, pyplot=pyplot)
    monkeypatch.setitem(sys.modules, "matplotlib", matplotlib)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", pyplot)
    path = demo.save_loss_curve([3.0, 2.0, 1.0], str(tmp_path / "curve.png"))
    assert path == str(tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes() == b"png"
    assert drawn == {"xs": [1, 2, 3], "ys": [3.0, 2.0, 1.0]}


def test_progress_redraws_in_place_on_a_terminal():
    class Terminal:
        def __init__(self):
            self.text = ""

        def isatty(self):
            return True

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    term = Terminal()
    progress = demo.Progress(200, term)
    for step in range(1, 201):
        progress.update(step, 1.0 / step)
    assert term.text.count("\r") == 100 and term.text.endswith("loss 0.0050\n")
    assert term.text.count("\n") == 1


_TRAIN = """
import hashlib, numpy as np
from didax import demo, tree_util
result = demo.train_digits(steps=600, plot_path=None)
data = b"".join(np.asarray(leaf).tobytes() for leaf in tree_util.tree_leaves(result["params"]))
tiers = result["tiers"]
print("RESULT", hashlib.sha256(data).hexdigest(),
      tiers.index("native") if "native" in tiers else -1)
"""


def test_training_gives_the_same_bits_on_every_run_under_load(tmp_path):
    """The demo's training with the default settings: jit's native tier is built in the
    background (a first run, with nothing cached) or loaded from the cache (two runs at once,
    while a third process keeps a core busy) and swaps in at a step that depends on the
    machine's load; the trained parameters are the same bytes in every run, and as with the
    native tier off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIDAX_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    cache = str(tmp_path / "cache")

    def start(**settings):
        return subprocess.Popen([sys.executable, "-c", _TRAIN], cwd=tmp_path, text=True,
                                env=dict(env, DIDAX_CACHE_DIR=cache, **settings),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def result(proc):
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, err
        digest, swap = out.splitlines()[-1].split()[1:]
        return digest, int(swap)

    first, _ = result(start())
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        (digest1, swap1), (digest2, swap2) = map(result, [start(), start()])
    finally:
        hog.kill()
        hog.wait()
    digest_off, swap_off = result(start(DIDAX_NATIVE_TIER="off"))
    assert first == digest1 == digest2 == digest_off
    assert swap_off == -1
    if have_compiler():  # (built by the first run: the native tier served most steps)
        assert swap1 > 0 and swap2 > 0, (swap1, swap2)


def have_compiler() -> bool:
    from didax._src.compiler.native import toolchain
    return toolchain.toolchain() is not None
