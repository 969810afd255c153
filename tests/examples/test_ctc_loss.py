import itertools

import numpy as np
import pytest

import didax as jax
from didax._src.config import enable_x64


def _collapse(path, blank=0):
    merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
    return [c for c in merged if c != blank]


def _brute_force(logits, labels):
    """-log p(labels) and its gradient w.r.t. the logits, by enumerating every path:
    d/dlogits[t, k] = softmax[t, k] - p(labels, path_t = k) / p(labels)."""
    frames, vocab = logits.shape
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    total, occupancy = 0.0, np.zeros_like(probs)
    for path in itertools.product(range(vocab), repeat=frames):
        if _collapse(path) == list(labels):
            p = np.prod(probs[np.arange(frames), path])
            total += p
            occupancy[np.arange(frames), path] += p
    return -np.log(total), probs - occupancy / total


CASES = [(4, [1, 2]), (5, [1, 2]), (5, [2, 1]), (4, [1, 1]), (5, [1, 1]), (3, [1, 1]),
         (5, [2, 2]), (4, [2])]


@pytest.mark.parametrize("frames,labels", CASES)
def test_loss_and_gradient_match_brute_force(load_example, frames, labels):
    ctc = load_example("ctc_loss")
    rng = np.random.default_rng(frames * 10 + sum(labels))
    logits = 2 * rng.standard_normal((frames, 3))
    expected_loss, expected_grad = _brute_force(logits, labels)
    with enable_x64():
        for f in (jax.value_and_grad(ctc.ctc_loss), jax.jit(jax.value_and_grad(ctc.ctc_loss))):
            loss, grad = f(logits, np.array(labels, np.int32))
            assert grad.dtype == np.float64
            np.testing.assert_allclose(loss, expected_loss, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(grad, expected_grad, rtol=1e-5, atol=1e-5)


def test_vmap_over_a_batch_equals_each_sequence(load_example):
    ctc = load_example("ctc_loss")
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((4, 6, 4)).astype(np.float32)
    labels = rng.integers(1, 4, size=(4, 2)).astype(np.int32)
    batched = jax.vmap(ctc.ctc_loss)(logits, labels)
    np.testing.assert_allclose(batched, [ctc.ctc_loss(lg, lb) for lg, lb in zip(logits, labels)],
                               rtol=1e-6)


def test_impossible_labelling_has_huge_loss(load_example):
    # two equal labels need a blank between them: three frames at least
    loss = load_example("ctc_loss").ctc_loss(np.zeros((2, 3), np.float32),
                                             np.array([1, 1], np.int32))
    assert loss > 1e4


def test_greedy_decode_merges_repeats_then_drops_blanks(load_example):
    ctc = load_example("ctc_loss")
    path = [0, 1, 1, 0, 1, 2, 2, 0]
    assert ctc.greedy_decode(np.eye(3)[path]) == [1, 1, 2]
