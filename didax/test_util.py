"""Mirrors `jax.test_util`: numerical derivative checks."""
from didax._src.transforms.public_test_util import (  # noqa: F401
    check_close,
    check_grads,
    check_jvp,
    check_vjp,
)
