"""The single CPU device: placement functions that JAX programs call, and `typeof`."""
from __future__ import annotations

from didax._src import core
from didax._src.tree_util import tree_map


class CpuDevice:
    platform = "cpu"
    device_kind = "cpu"
    id = 0

    def __repr__(self):
        return "CpuDevice(id=0)"


_CPU = CpuDevice()


def devices(backend=None):
    return [_CPU]


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Arrays already live on the CPU: converts leaves to didax arrays."""
    return tree_map(core.asarray_value, x)


def device_get(x):
    """Converts didax arrays in a pytree to NumPy arrays."""
    import numpy as np

    return tree_map(lambda v: np.asarray(v) if isinstance(v, core.ArrayBase) else v, x)


def block_until_ready(x):
    """Computation is synchronous here; returns `x`."""
    return x


def typeof(x):
    """The abstract value (shape, dtype, weak type) of `x`."""
    return core.get_aval(x)
