"""The rest of `jax.debug`: logging values at run time, breakpoints, and looking at how
arrays are sharded (every device shares the host's memory, so a sharding only says which
devices an array is said to live on). With the JAX-compatibility names: its effects are
`jax.extend.core.Effect`s (compat/effects.py), and its views read the shardings of the
parallel layer."""
from __future__ import annotations

import logging
import pdb
import sys

import numpy as np

from didax._src import core
from didax._src.compat.effects import Effect
from didax._src.parallel.device import default_device
from didax._src.parallel.global_arrays import devices_indices_map
from didax._src.parallel.sharding import SingleDeviceSharding
from didax._src.primitives.debugging import debug_callback
from didax._src.tree_util import tree_leaves

logger = logging.getLogger("didax.debug")


class DebugEffect(Effect):
    """The effect of a debug callback (run when the program runs, in any order)."""


class OrderedDebugEffect(Effect):
    """The effect of an ordered debug callback (run in program order)."""


def log(fmt: str, *args, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs) -> None:
    """Logs `fmt.format(*args, **kwargs)` (logger 'didax.debug', level INFO) with the values
    the arrays have when the program runs, inside jit too."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.log: the format must be a string, got {type(fmt).__name__}")

    def emit(*vals, **kw):
        vals = [np.asarray(v) if isinstance(v, core.ArrayBase) else v for v in vals]
        kw = {k: np.asarray(v) if isinstance(v, core.ArrayBase) else v for k, v in kw.items()}
        logger.info(fmt.format(*vals, **kw))

    debug_callback(emit, *args, ordered=ordered, **kwargs)


def breakpoint(*, backend=None, filter_frames: bool = True, num_frames=None,
               ordered: bool = False, token=None, **kwargs):
    """Enters Python's debugger (pdb) in the caller's frame. Eager code only: under jit or
    another transformation the caller's values are tracers, which pdb cannot show, so it
    raises NotImplementedError (use `didax.disable_jit()` or `debug.print` there)."""
    if core.current_interpreter() is not core.eval_interpreter:
        raise NotImplementedError(
            "debug.breakpoint under a transformation (jit, vmap, grad...) is not implemented "
            "in didax: run the function under didax.disable_jit() to break with concrete "
            "values, or use didax.debug.print/callback")
    if backend not in (None, "cli"):
        raise ValueError(f"debug.breakpoint: didax's debugger is pdb ('cli'), got backend "
                         f"{backend!r}")
    pdb.Pdb().set_trace(sys._getframe(1))
    return token


def _sharding_of(x):
    if type(x) is core.Array:
        return x.sharding
    return SingleDeviceSharding(default_device())


def inspect_array_sharding(value, *, callback) -> None:
    """Calls `callback(sharding)` for each array of the pytree `value`. Under jit, didax's
    traced values carry no sharding: they are reported on the default device, when traced."""
    for x in tree_leaves(value):
        callback(_sharding_of(x))


def visualize_array_sharding(arr, **kwargs):
    """Prints which devices hold which blocks of the 1-d or 2-d array `arr`."""
    return visualize_sharding(np.shape(arr), _sharding_of(arr), **kwargs)


def visualize_sharding(shape, sharding, *, use_color: bool = True, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map=None):
    """Prints a grid of the blocks `sharding` splits an array of `shape` (1-d or 2-d) into,
    each labelled with its devices (plain text: didax does not draw with `rich`)."""
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"Visualization is only supported for 1D and 2D arrays, got shape "
                         f"{shape}")
    full = shape if len(shape) == 2 else (1, shape[0])
    blocks: dict = {}
    for d, idx in devices_indices_map(sharding, shape).items():
        idx = idx if len(shape) == 2 else (slice(None), idx[0])
        key = tuple(s.indices(n)[:2] for s, n in zip(idx, full))
        blocks.setdefault(key, []).append(d)
    rows = sorted({k[0] for k in blocks})
    cols = sorted({k[1] for k in blocks})
    width = max(min_width, min(max_width // max(len(cols), 1), 24))
    lines = []
    for r in rows:
        cells = []
        for c in cols:
            devs = sorted(blocks.get((r, c), []), key=lambda d: d.id)
            cells.append(f"CPU {','.join(str(d.id) for d in devs)}".center(width))
        border = "+" + "+".join("-" * width for _ in cols) + "+"
        if not lines:
            lines.append(border)
        lines += ["|" + "|".join(" " * width for _ in cols) + "|",
                  "|" + "|".join(cells) + "|",
                  "|" + "|".join(" " * width for _ in cols) + "|", border]
    print("\n".join(lines))
