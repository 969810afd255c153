"""Files and foreign buffers: `save`/`savez` are NumPy's own (a didax array converts through
`__array__`), `load` gives didax arrays, `from_dlpack` takes any DLPack producer, and
`fromfile`/`fromstring`-style reads that consume a file are refused, as in JAX: they are not
pure."""
from __future__ import annotations

import numpy as np

from didax._src.numpy.util import asarray

__all__ = ["save", "savez", "load", "fromfile", "from_dlpack", "ComplexWarning"]

save = np.save
savez = np.savez
ComplexWarning = np.exceptions.ComplexWarning


def load(file, *args, **kwargs):
    """`np.load`, with a single stored array returned as a didax array (an .npz archive comes
    back as NumPy's lazy archive, as in JAX)."""
    out = np.load(file, *args, **kwargs)
    return asarray(out) if isinstance(out, np.ndarray) else out


def fromfile(*args, **kwargs):
    raise NotImplementedError(
        "jnp.fromfile() is not implemented: reading a file consumes it, which no transformed "
        "(pure) function may do. Read it with NumPy outside the function: "
        "jnp.asarray(np.fromfile(...)).")


def from_dlpack(x, /, *, device=None, copy=None):
    """An array sharing nothing with `x` (didax arrays own NumPy buffers): any object with
    `__dlpack__` (a NumPy array, a torch CPU tensor...)."""
    if device is not None and str(device) not in ("cpu", "TFRT_CPU_0") and \
            getattr(device, "platform", "cpu") != "cpu":
        raise ValueError(f"from_dlpack: didax arrays live on the CPU; got device={device!r}")
    return asarray(np.array(np.from_dlpack(x), copy=True))
