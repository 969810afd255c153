"""Axes mapped across devices (by `pmap` and `shard_map`): what collectives see of them.

While a mapped function is traced, its axis is bound by name and size, so collectives over
it type-check and stage. While its shards run, each worker thread binds the axis with its
own index and the `group` through which the shards exchange values; a collective's impl
looks its axis up here and runs through that group. The environment is per thread: shards
running side by side each see their own index.
"""
from __future__ import annotations

import threading


class MappedAxis:
    """A device axis: its name and size (over every process), and, while a shard runs, the
    shard's index along it and the group that exchanges values between the shards."""

    __slots__ = ("name", "size", "index", "group")

    def __init__(self, name, size: int, index: int | None = None, group=None):
        self.name = name
        self.size = size
        self.index = index
        self.group = group

    def __repr__(self):
        return f"MappedAxis({self.name!r}, size={self.size}, index={self.index})"


class _Env(threading.local):
    def __init__(self):
        self.axes: list[MappedAxis] = []  # outermost first


_env = _Env()


def mapped_axes() -> list[MappedAxis]:
    """The device axes bound in this thread, outermost first."""
    return _env.axes


def lookup(name) -> MappedAxis | None:
    for axis in reversed(_env.axes):
        if axis.name == name:
            return axis
    return None


class binding:
    """Binds `axes` in this thread for the duration of a `with` block."""

    __slots__ = ("axes",)

    def __init__(self, *axes: MappedAxis):
        self.axes = axes

    def __enter__(self):
        _env.axes.extend(self.axes)
        return self.axes[0]

    def __exit__(self, *exc):
        del _env.axes[len(_env.axes) - len(self.axes):]


def running_shard() -> bool:
    """Whether this thread is running a shard of a mapped function now."""
    return any(a.group is not None for a in _env.axes)
