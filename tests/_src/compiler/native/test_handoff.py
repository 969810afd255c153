"""Background builds run with a short switch interval (compiler/native/handoff.py), and the
interval they replaced comes back."""
import sys
import threading

import numpy as np
import pytest

import didax
from didax._src.compiler.native import handoff, tier
from didax._src.config import flag_context

from .conftest import have_compiler

SHORT = handoff.BUILD_SWITCH_INTERVAL


@pytest.fixture
def interval():
    """Sets the switch interval for the test; puts the one before back."""
    before = sys.getswitchinterval()

    def set_to(value):
        sys.setswitchinterval(value)
        return sys.getswitchinterval()

    yield set_to
    sys.setswitchinterval(before)


def test_a_build_runs_with_the_short_interval_and_gives_the_old_one_back(interval):
    default = interval(0.005)
    with handoff.prompt_handoffs():
        assert sys.getswitchinterval() == pytest.approx(SHORT)
    assert sys.getswitchinterval() == default


def test_overlapping_builds_restore_after_the_last(interval):
    default = interval(0.005)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def second():
        first_in.wait()
        with handoff.prompt_handoffs():
            second_in.set()
            first_out.wait()
            seen["after the first left"] = sys.getswitchinterval()
        seen["after both"] = sys.getswitchinterval()

    t = threading.Thread(target=second)
    t.start()
    with handoff.prompt_handoffs():
        first_in.set()
        second_in.wait()
    first_out.set()
    t.join()
    assert seen["after the first left"] == pytest.approx(SHORT)
    assert seen["after both"] == default


def test_a_lower_interval_of_the_users_is_kept(interval):
    low = interval(SHORT / 5)
    with handoff.prompt_handoffs():
        assert sys.getswitchinterval() == low
    assert sys.getswitchinterval() == low


def test_a_change_made_during_a_build_stays(interval):
    interval(0.005)
    with handoff.prompt_handoffs():
        sys.setswitchinterval(0.002)
    assert sys.getswitchinterval() == pytest.approx(0.002)


def test_the_background_tier_builds_under_the_short_interval(interval, monkeypatch):
    default = interval(0.005)
    seen = []
    original = tier.build

    def build(exe, cached_only=False):
        if not cached_only:
            seen.append(sys.getswitchinterval())
        return original(exe, cached_only)

    monkeypatch.setattr(tier, "build", build)
    x = np.arange(5.0, dtype=np.float32)
    with flag_context("didax_native_tier", "background"):
        f = didax.jit(lambda v: v * 3.0 + 1.0)
        f(x), f(x)
        tier.wait_for_builds()
    if have_compiler():  # (without one nothing is queued)
        assert seen and all(s == pytest.approx(SHORT) for s in seen), seen
    assert sys.getswitchinterval() == default
