"""Shared helpers of the tests that run JAX (the specification) beside didax."""
import contextlib

import jax

from didax._src.config import enable_x64


@contextlib.contextmanager
def both_x64(on=True):
    """64-bit types in didax and in JAX alike."""
    with enable_x64(on), jax.enable_x64(on):
        yield
