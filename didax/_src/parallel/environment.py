"""Small top-level functions JAX programs call about their environment: the backend, debug
switches, name scopes, and a report of versions."""
from __future__ import annotations

import contextlib
import importlib.metadata
import platform
import sys

import numpy as np

from didax._src.config import flag_context
from didax._src.parallel.device import devices


def default_backend() -> str:
    """The platform arrays live on: always "cpu"."""
    return "cpu"


def debug_nans(new_val: bool = True):
    """Context manager: raise FloatingPointError where a NaN first appears (eager and jitted),
    as `jax.debug_nans`; restores the previous setting on exit."""
    return flag_context("jax_debug_nans", new_val)


@contextlib.contextmanager
def named_scope(name: str):
    """Accepted for JAX programs: JAX prefixes the names of the operations inside with
    `name` for profilers; didax has no name stack, so it only checks the name."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


def print_environment_info(return_string: bool = False):
    """The versions of didax, NumPy and Python, and the devices (for bug reports)."""
    try:
        version = importlib.metadata.version("didax")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        version = "unknown"
    info = "\n".join([
        f"didax:    {version}",
        f"numpy:    {np.__version__}",
        f"python:   {sys.version}",
        f"device info: cpu-{len(devices())}, {len(devices())} local devices",
        "process_count: 1",
        f"platform: {platform.uname()}",
    ]) + "\n"
    if return_string:
        return info
    print(info)
    return None
