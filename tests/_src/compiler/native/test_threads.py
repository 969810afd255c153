"""Native loops over large arrays on several threads: the same bits as one thread and as the
NumPy tier, whatever the count (the work is split the same way); DIDAX_NUM_THREADS; a forked
child of a process that ran parallel loops still runs them."""
from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pytest

import didax
import didax.numpy as jnp
from didax._src.compiler.native import loops, threads

from .conftest import Tiers, assert_native, assert_same

N = 1 << 20


@pytest.fixture(scope="module")
def x():
    rng = np.random.default_rng(1)
    return (rng.standard_normal(N) * 3).astype(np.float32)


@pytest.fixture
def counts():
    """Runs the test's calls under each thread count in turn (restored after)."""
    previous = threads.count()
    yield (1, 2, 3)
    threads.set_count(previous)


PROGRAMS = {
    # a float sum over one row: its pairwise tree's subtrees on the threads
    "sum of a fused row": lambda x: jnp.sum(jnp.tanh(x) * jnp.exp(-x ** 2) + 0.5 * x),
    # elementwise with NumPy's loops (blocks) and without (a plain vector loop)
    "elementwise, NumPy's loops": lambda x: jnp.tanh(x) * jnp.exp(-x ** 2) + 0.5 * x,
    "elementwise, plain": lambda x: x * 0.5 + x * x - 1.0,
    # rows on the threads, each summed pairwise; a max per row; both at once
    "row sums": lambda x: jnp.sum(jnp.sin(x.reshape(256, -1)) * 2.0, axis=1),
    "row maxima and sums": lambda x: (jnp.max(x.reshape(1024, -1) ** 2, axis=1),
                                      jnp.sum(x.reshape(1024, -1) * 0.25, axis=1)),
    # a sum and the elementwise value it sums, written out in the same loop
    "sum beside its summand": lambda x: (jnp.exp(x * 0.1), jnp.sum(jnp.exp(x * 0.1))),
    # a sum over the leading axis: the rows in turn (not split)
    "column sums": lambda x: jnp.sum(jnp.cos(x.reshape(-1, 512)), axis=0),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_same_bits_on_any_number_of_threads(x, counts, name):
    tiers = Tiers(PROGRAMS[name])
    results = []
    for n in counts:
        threads.set_count(n)
        native, numpy_tier, _ = tiers(x)
        results.append(native)
        for got, want in zip(_leaves(native), _leaves(numpy_tier)):
            assert_same(got, want)
    assert_native(tiers.native, x)
    for other in results[1:]:
        for got, want in zip(_leaves(other), _leaves(results[0])):
            assert_same(got, want)


def _leaves(v):
    return v if isinstance(v, list) else [v]


def test_a_row_is_cut_where_its_serial_sum_is():
    """The parts of a row summed apart are its serial order's own: subtrees of the pairwise
    tree (halves rounded down to multiples of 8, to at most TREE_DEPTH levels), or NumPy <
    2.3's pieces."""
    parts = loops._row_parts(1_000_003)
    assert sum(n for _, n in parts) == 1_000_003
    assert all(s + n == t for (s, n), (t, _) in zip(parts, parts[1:]))
    if loops.ROW_PIECE is None:
        assert len(parts) == 2 ** loops.TREE_DEPTH
        assert parts[0] == (0, 62496)  # 1000003 // 2 = 500001 -> 500000 -> 250000 -> ...
    else:
        assert all(n == loops.ROW_PIECE for _, n in parts[:-1])
    assert loops._row_parts(128) is None  # (one leaf)
    assert loops._combined("s", 0, 4) == "((s[0] + s[1]) + (s[2] + s[3]))"


def test_setting_the_count(monkeypatch):
    monkeypatch.setenv("DIDAX_NUM_THREADS", "3")
    assert threads._default() == 3
    monkeypatch.setenv("DIDAX_NUM_THREADS", "zero")
    with pytest.raises(ValueError, match="DIDAX_NUM_THREADS='zero'"):
        threads._default()
    monkeypatch.delenv("DIDAX_NUM_THREADS")
    assert threads._default() == len(os.sched_getaffinity(0))
    with pytest.raises(ValueError, match=">= 1"):
        threads.set_count(0)


def _child_sum(queue):
    x = np.arange(N, dtype=np.float32) * np.float32(1e-6)
    queue.put((threads.count(), float(_summed(x))))


@didax.jit
def _summed(x):
    return jnp.sum(jnp.tanh(x) + x)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_runs_parallel_loops(counts):
    threads.set_count(2)
    x = np.arange(N, dtype=np.float32) * np.float32(1e-6)
    want = float(_summed(x))  # (the parent's OpenMP threads exist now)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_sum, args=(queue,))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the forked child hung in a parallel loop"
    assert queue.get(timeout=5) == (1, want)


def test_the_load_others_put_on_the_cores_is_measured():
    """The watcher's sample: cores' worth of CPU time other processes used (this process's
    own, however busy its threads, not counted)."""
    others, first = threads._busy_elsewhere(None)
    if first is None:
        pytest.skip("no /proc/stat here")
    assert others is None
    x = np.random.default_rng(0).standard_normal(1 << 20)
    end = threads.time.monotonic() + 0.3
    while threads.time.monotonic() < end:  # (this process busy)
        np.sort(x)
    others, _ = threads._busy_elsewhere(first)
    assert 0.0 <= others <= len(os.sched_getaffinity(0)) + 0.5


def test_the_count_follows_the_cores_others_leave_free():
    assert [threads._count_for(o, 2) for o in (0.0, 0.25, 0.5, 1.0, 1.9, 3.0)] == \
        [2, 2, 1, 1, 1, 1]
    assert [threads._count_for(o, 8) for o in (0.0, 2.2, 6.5)] == [8, 6, 1]
