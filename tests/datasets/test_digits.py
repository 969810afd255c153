"""The shipped digits: shapes, dtypes, class balance, exact pixel contents, and the split."""
import hashlib
import time

import numpy as np
import pytest

from didax import datasets

# sha256 of the uint8 pixel counts (1797, 8, 8) in C order, and of the uint8 labels, as in
# scikit-learn's sklearn/datasets/data/digits.csv.gz.
PIXELS_SHA256 = "8f26b2bd9d135c256808f68f14fdabddde6d9c7f869ae419704b051f0f14b3b3"
LABELS_SHA256 = "8ba4f891220f5e4c9c819638d1602d74b83618f167043c6da52a2a247841ddf0"


def test_shapes_dtypes_and_range():
    images, labels = datasets.digits()
    assert images.shape == (1797, 64) and images.dtype == np.float32
    assert labels.shape == (1797,) and labels.dtype == np.int32
    assert images.min() == 0.0 and images.max() == 1.0
    assert set(np.unique(labels)) == set(range(10))


def test_each_class_has_about_180_images():
    counts = np.bincount(datasets.digits().labels)
    np.testing.assert_array_equal(counts, [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])


def test_pixels_and_labels_are_the_published_ones():
    images, labels = datasets.digits()
    counts = images * 16
    assert np.array_equal(counts, np.round(counts))  # division by 16 is exact
    counts = counts.astype(np.uint8).reshape(1797, 8, 8)
    assert int(counts.sum(dtype=np.int64)) == 561718
    assert hashlib.sha256(counts.tobytes()).hexdigest() == PIXELS_SHA256
    assert hashlib.sha256(labels.astype(np.uint8).tobytes()).hexdigest() == LABELS_SHA256
    np.testing.assert_array_equal(counts[0, 1], [0, 0, 13, 15, 10, 15, 5, 0])  # a zero
    np.testing.assert_array_equal(labels[:10], np.arange(10))


def test_results_are_fresh_arrays():
    first = datasets.digits()
    first.images[0, 0] = 7.0
    assert datasets.digits().images[0, 0] == 0.0


def test_train_test_split_is_a_seeded_partition():
    data = datasets.digits()
    train, test = data.train_test_split(test_fraction=0.25, seed=3)
    assert len(test.labels) == round(1797 * 0.25) and len(train.labels) + len(test.labels) == 1797
    rows = {row.tobytes() + bytes([label]) for row, label in zip(*data)}
    split_rows = [row.tobytes() + bytes([label])
                  for part in (train, test) for row, label in zip(*part)]
    assert set(split_rows) == rows
    again, _ = data.train_test_split(test_fraction=0.25, seed=3)
    np.testing.assert_array_equal(again.labels, train.labels)
    other, _ = data.train_test_split(test_fraction=0.25, seed=4)
    assert not np.array_equal(other.labels, train.labels)
    with pytest.raises(ValueError, match="test_fraction"):
        data.train_test_split(test_fraction=1.0)


def test_loading_is_fast():
    datasets._digits_raw.cache_clear()
    start = time.perf_counter()
    datasets.digits()
    assert time.perf_counter() - start < 0.05
