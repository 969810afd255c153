"""`jax.stages.ArgInfo`: what a lowered function knows of one argument, its sharding
included (hence here, with the devices and shardings)."""
from __future__ import annotations

import dataclasses
from typing import Any

from didax._src.parallel.device import default_device
from didax._src.parallel.sharding import SingleDeviceSharding


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """An argument's abstract value (`shape`, `dtype`) and whether it was donated."""

    _aval: Any
    donated: bool

    @property
    def shape(self) -> tuple:
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype

    @property
    def sharding(self):
        """The default device's sharding: didax's types carry no sharding."""
        return SingleDeviceSharding(default_device())
