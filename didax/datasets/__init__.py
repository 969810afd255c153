"""Small datasets shipped inside didax, for examples and tests that must run offline.

They load with NumPy alone, in milliseconds, and come back as NumPy arrays, which every
didax function accepts.
"""
import functools
import os
from typing import NamedTuple

import numpy as np

_DIR = os.path.dirname(__file__)


class Digits(NamedTuple):
    """Handwritten digits: `images` float32 (n, 64) in [0, 1], `labels` int32 (n,) in 0..9.

    Unpacks as `images, labels = didax.datasets.digits()`. Each row of `images` is an 8x8
    image in row-major order (`images.reshape(-1, 8, 8)` to view it), and `images * 16`
    recovers the original pixel counts exactly.
    """
    images: np.ndarray
    labels: np.ndarray

    def train_test_split(self, test_fraction=0.2, seed=0):
        """(train, test): a random partition, the same for the same `seed`, with
        round(n * test_fraction) examples in `test`."""
        if not 0.0 < test_fraction < 1.0:
            raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction}")
        n = len(self.labels)
        order = np.random.default_rng(seed).permutation(n)
        test, train = np.split(order, [round(n * test_fraction)])
        return (Digits(self.images[train], self.labels[train]),
                Digits(self.images[test], self.labels[test]))


@functools.lru_cache(maxsize=1)
def _digits_raw():
    with np.load(os.path.join(_DIR, "digits.npz"), allow_pickle=False) as data:
        images, labels = data["images"], data["labels"]
    images.flags.writeable = False
    labels.flags.writeable = False
    return images, labels


def digits():
    """The 1797 8x8 handwritten digits of the UCI "Optical Recognition of Handwritten Digits"
    test set (E. Alpaydin and C. Kaynak, CC BY 4.0; see DIGITS_LICENSE.txt), as in
    scikit-learn's `load_digits`.

    Each pixel counts the set pixels of a 4x4 block of a 32x32 bitmap (0..16); here they are
    divided by 16, ready for a network. About 180 images per class, in the source's order.
    """
    images, labels = _digits_raw()
    return Digits(images.reshape(len(images), 64).astype(np.float32) / np.float32(16),
                  labels.astype(np.int32))
