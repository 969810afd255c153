"""Each example run as a user runs it (`python examples/NAME.py`, default settings), checking
the numbers it prints.

The other tests of an example call its functions at reduced sizes; these check what a user
reads at the end of the real run. How long each run takes is measured by
`benchmarks/examples_time.py`, not here.
"""
import os
import re
import sys

import pytest
from process_testing import ROOT, run_or_fail

pytestmark = pytest.mark.whole_programs

NUMBER = r"([-+0-9.e]+)"


def run_example(name, cwd):
    return run_or_fail([sys.executable, str(ROOT / "examples" / f"{name}.py")], cwd=cwd,
                       env=dict(os.environ))


def numbers(pattern, text):
    match = re.search(pattern, text)
    assert match, f"no line matching {pattern!r} in:\n{text}"
    return [float(g) for g in match.groups()]


def check_cnn_digits(out):
    first, last, train, test = numbers(
        rf"loss {NUMBER} -> {NUMBER}, train accuracy {NUMBER}%, test accuracy {NUMBER}%", out)
    assert last < first / 100 and train >= 99.0 and test >= 97.0, out


def check_ctc_loss(out):
    first, last, exact = numbers(
        rf"held-out loss {NUMBER} -> {NUMBER}; {NUMBER}% of held-out sequences decoded", out)
    assert last < first / 10 and exact >= 80.0, out


def check_data_parallel_digits(out):
    assert "over 2 device(s) in 1 process(es)" in out, out
    loss, accuracy = numbers(rf"final test loss {NUMBER}, test accuracy {NUMBER}", out)
    assert loss < 0.15 and accuracy >= 0.96, out


def check_lstm_scan(out):
    first, last, ratio, naive = numbers(
        rf"held-out loss {NUMBER} -> {NUMBER} \({NUMBER}x lower; repeating the last value: "
        rf"{NUMBER}\)", out)
    assert last < naive / 3 and ratio == pytest.approx(first / last, rel=0.05), out


def check_maml_sinusoid(out):
    (before,) = numbers(rf"random initialisation:\s+{NUMBER}", out)
    (after,) = numbers(rf"MAML initialisation:\s+{NUMBER}", out)
    assert after < 0.2 * before, out


def check_optimistic_gd(out):
    (start,) = numbers(rf"\(from {NUMBER}\)", out)
    (plain,) = numbers(rf"simultaneous gradient descent-ascent:\s+{NUMBER}", out)
    (optimistic,) = numbers(rf"optimistic gradient descent:\s+{NUMBER}", out)
    assert plain > 100 * start and optimistic < 0.01 * start, out


def check_per_example_grads(out):
    before, after, norm = numbers(
        rf"test accuracy {NUMBER}% -> {NUMBER}%; mean per-example gradient norm {NUMBER}", out)
    assert before < 30.0 and after >= 90.0 and 0.0 < norm, out


def check_sam_training(out):
    adam = numbers(rf"adam\s+train loss {NUMBER}\s+test accuracy {NUMBER}%\s+sharpness {NUMBER}",
                   out)
    sam = numbers(rf"sam\s+train loss {NUMBER}\s+test accuracy {NUMBER}%\s+sharpness {NUMBER}",
                  out)
    assert adam[1] >= 95.0 and sam[1] >= 95.0, out
    assert sam[2] < adam[2] / 2, out  # SAM's minimum is flatter


def check_picture_of_a_gradient(out, cwd):
    (nodes,) = numbers(rf"^{NUMBER} nodes; wrote gradient.dot", out)
    dot = (cwd / "gradient.dot").read_text()
    drawn = re.findall(r"^\s*(\w+) \[.*label=", dot, flags=re.MULTILINE)
    assert nodes == len(set(drawn)) > 0, out


def check_transformer_2d_mesh(out):
    assert "a 2x2 mesh of 4 devices in 1 process(es)" in out, out
    first, last, held_out = numbers(
        rf"training loss {NUMBER} -> {NUMBER}, held-out loss {NUMBER}", out)
    assert last < first / 4 and held_out < 1.0, out


CHECKS = {name[len("check_"):]: check for name, check in globals().items()
          if name.startswith("check_")}


def test_every_example_has_a_check():
    assert set(CHECKS) == {p.stem for p in (ROOT / "examples").glob("*.py")}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_example_prints_what_it_should(name, tmp_path):
    out = run_example(name, tmp_path)
    if name == "picture_of_a_gradient":
        CHECKS[name](out, tmp_path)
    else:
        CHECKS[name](out)
