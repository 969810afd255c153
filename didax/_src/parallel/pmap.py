"""`pmap`: one function traced once, its shards run side by side on the CPU devices.

The function is traced per argument signature into a per-shard jaxpr, with its axis bound
so that collectives over `axis_name` type-check; the `pmap` call primitive (pmap_call.py)
then runs that jaxpr's compiled code on one worker per device, and its rules make `grad`,
`jvp`, `vmap` and `jit` of the pmapped function map transformed jaxprs in the same way.

After `didax.distributed.initialize()`, each process passes the part of the mapped axis
that belongs to its own devices and receives that part of the results; collectives see the
axis over every process's devices.
"""
from __future__ import annotations

import functools

from didax._src import axis_env, core
from didax._src.config import config
from didax._src.core import ShapedArray, Tracer, get_aval
from didax._src.interpreters import batching
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import hoist_consts
from didax._src.parallel import device
from didax._src.parallel.pmap_call import bind_pmap, nested_map
from didax._src.transforms.api import _argument_name, _check_valid_leaf
from didax._src.tree_util import (
    broadcast_prefix,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
)


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, int):
        return (x,)
    return tuple(x)


def _axes(axes, tree, what: str, kind: str):
    try:
        return broadcast_prefix(axes, tree, is_leaf=lambda x: x is None)
    except ValueError as e:
        detail = str(e).split("\n", 1)[-1]
        raise ValueError(f"pmap {kind} specification must be a tree prefix of the "
                         f"corresponding value: {what}.\n{detail}") from None


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(), global_arg_shapes=None):
    """Maps `fun` over a leading (or `in_axes`) axis of its arguments, one slice per device,
    the devices running at once; collectives over `axis_name` act across them. Outputs
    stack along `out_axes` (None: the first shard's value)."""
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 devices=devices, backend=backend, axis_size=axis_size,
                                 donate_argnums=donate_argnums)
    if not callable(fun):
        raise TypeError(f"pmap: expected a function, got {fun!r} of type {type(fun).__name__}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if global_arg_shapes is not None:
        raise NotImplementedError("pmap: global_arg_shapes is not supported")
    if backend is not None and backend != "cpu":
        raise ValueError(f"pmap: unknown backend {backend!r}; didax has only 'cpu'")
    return PmapWrapped(fun, axis_name, in_axes, out_axes, _as_tuple(static_broadcasted_argnums),
                       None if devices is None else tuple(devices), axis_size,
                       _as_tuple(donate_argnums))


class _Entry:
    __slots__ = ("jaxpr", "hoisted", "out_tree", "out_axes")

    def __init__(self, jaxpr, hoisted, out_tree, out_axes):
        self.jaxpr = jaxpr
        self.hoisted = hoisted
        self.out_tree = out_tree
        self.out_axes = out_axes


class PmapWrapped:
    def __init__(self, fun, axis_name, in_axes, out_axes, static, devices, axis_size, donate):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = getattr(fun, "__name__", type(fun).__name__)
        self._axis_name = axis_name
        self._in_axes = in_axes
        self._out_axes = out_axes
        self._static = static
        self._devices = devices
        self._axis_size = axis_size
        self._donate = donate
        self._cache: dict = {}

    def __repr__(self):
        return f"<didax.pmap of {self._fun!r}>"

    def _devices_for(self, n: int) -> tuple:
        """The local devices of the n shards (their local indices)."""
        local = device.local_devices()
        if self._devices is not None:
            devs = list(self._devices)
            for d in devs:
                if d not in device.devices():
                    raise ValueError(f"pmap: {d!r} is not one of the devices {device.devices()}")
            if len(devs) != n:
                raise ValueError(f"pmap: the mapped axis has size {n}, but devices= lists "
                                 f"{len(devs)} devices {devs}; give one device per slice")
            mine = [d for d in devs if d.process_index == device.process_index()]
            if len(mine) != len(devs):
                raise NotImplementedError("pmap: devices= must list this process's devices")
            return tuple(d.local_hardware_id for d in devs)
        if n > len(local):
            raise ValueError(
                f"compiling computation that requires {n} logical devices, but only "
                f"{len(local)} XLA devices are available (num_replicas={n}): pmap maps an axis "
                f"of size {n} over {len(local)} local CPU device(s). Give the mapped axis at "
                f"most {len(local)} entries, or set DIDAX_NUM_CPU_DEVICES (the "
                "didax_num_cpu_devices option) to have more devices.")
        return None

    def __call__(self, *args, **kwargs):
        n_args = len(args)
        static = {}
        for i in self._static:
            j = i + n_args if i < 0 else i
            if not 0 <= j < n_args:
                raise ValueError(f"pmap: static_broadcasted_argnums {i} is out of range for "
                                 f"{n_args} positional arguments")
            try:
                hash(args[j])
            except TypeError:
                raise ValueError(f"pmap: static argument {j} of type {type(args[j]).__name__} "
                                 "is not hashable") from None
            static[j] = args[j]
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        in_axes = self._in_axes
        if isinstance(in_axes, tuple) and len(in_axes) != len(dyn):
            raise ValueError(
                "pmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)="
                f"{len(in_axes)}, len(args)={len(dyn)}")
        axes_args = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(dyn)
        paths, in_tree = tree_flatten_with_path((dyn, kwargs))
        flat = [x for _, x in paths]
        axes = []
        for i, (ax, arg) in enumerate(zip(axes_args, dyn)):
            axes.extend(_axes(ax, arg, f"in_axes[{i}] = {ax!r} does not match argument {i} "
                              f"(of structure {tree_structure(arg)})", "in_axes"))
        axes.extend([0] * (len(flat) - len(axes)))  # keyword arguments: axis 0
        sizes: dict = {}
        canon, shard_avals = [], []
        for (path, x), ax in zip(paths, axes):
            _check_valid_leaf(x, "pmap")
            aval = get_aval(x)
            name = _argument_name(path, keystr)
            if ax is None:
                canon.append(None)
                shard_avals.append(aval)
                continue
            if not isinstance(ax, int) or isinstance(ax, bool):
                raise TypeError(f"pmap in_axes must be integers or None, got {ax!r} for {name}")
            if not -aval.ndim <= ax < aval.ndim:
                raise ValueError(f"pmap was requested to map its {name} along axis {ax}, which "
                                 f"implies that its rank should be at least "
                                 f"{ax + 1 if ax >= 0 else -ax}, but is only {aval.ndim} "
                                 f"(its shape is {aval.shape})")
            ax %= aval.ndim
            canon.append(ax)
            sizes.setdefault(aval.shape[ax], []).append(
                f"axis {ax} of {name} of type {aval.str_short()}")
            shard_avals.append(ShapedArray(aval.shape[:ax] + aval.shape[ax + 1:], aval.dtype,
                                           aval.weak_type))
        if self._axis_size is not None:
            sizes.setdefault(int(self._axis_size), []).append(f"axis_size={self._axis_size}")
        if not sizes:
            raise ValueError("pmap requires at least one argument with a mapped axis (in_axes "
                             "not None), or an axis_size")
        if len(sizes) > 1:
            lines = "\n".join(f"  * one axis had size {s}: {', '.join(w)}"
                              for s, w in sizes.items())
            raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped:\n{lines}")
        (n,) = sizes
        if n == 0:
            raise ValueError("pmap: the mapped axis has size 0; map at least one slice")
        # (a pmap inside another's shards maps within each process, as a vmap in the shard:
        # only the outermost map spans the processes and runs in parallel)
        nested = bool(axis_env.mapped_axes())
        workers = None if nested else self._devices_for(n)
        global_n = n if nested else n * device.process_count()
        entry = self._trace(static, in_tree, shard_avals, canon, n, global_n, n_args)
        if nested:
            outs = nested_map([*entry.hoisted, *flat], entry.jaxpr, self._axis_name, n,
                              (None,) * len(entry.hoisted) + tuple(canon), entry.out_axes)
            return tree_unflatten(entry.out_tree, outs)
        outs = bind_pmap([*entry.hoisted, *flat], jaxpr=entry.jaxpr, name=self._name,
                         axis_name=self._axis_name, axis_size=n, global_axis_size=global_n,
                         in_axes=(None,) * len(entry.hoisted) + tuple(canon),
                         out_axes=entry.out_axes, devices=workers,
                         donated_invars=(False,) * (len(entry.hoisted) + len(flat)))
        if core.current_interpreter() is core.eval_interpreter:
            local = device.local_devices()
            devs = tuple(local[k] for k in (workers or range(n)))
            outs = [device.placed(o, devs) if type(o) is core.Array else o for o in outs]
        return tree_unflatten(entry.out_tree, outs)

    def _trace(self, static, in_tree, shard_avals, in_axes, n, global_n, n_args) -> _Entry:
        key = (in_tree, tuple(shard_avals), tuple(in_axes), tuple(sorted(static.items())), n,
               global_n, config.x64_enabled, tuple(batching.axis_frames()))
        entry = self._cache.get(key)
        if entry is not None:
            return entry
        fun = self._fun
        out_box = []

        def flat_fun(*flat_args):
            dyn_args, kwargs = tree_unflatten(in_tree, flat_args)
            it = iter(dyn_args)
            full = [static[i] if i in static else next(it) for i in range(n_args)]
            leaves, out_tree = tree_flatten(fun(*full, **kwargs))
            for x in leaves:
                _check_valid_leaf(x, f"pmap({self._name}) output")
            out_box.append(out_tree)
            return leaves

        with axis_env.binding(axis_env.MappedAxis(self._axis_name, global_n)):
            closed, _ = trace_to_jaxpr(flat_fun, shard_avals)
        hoisted = []
        if any(isinstance(c, Tracer) for c in closed.consts):
            closed, hoisted = hoist_consts(closed)
        out_tree = out_box[-1]
        if self._out_axes is None or isinstance(self._out_axes, int):  # never rebuild the
            o_axes = [self._out_axes] * out_tree.num_leaves  # output's pytrees from placeholders
        else:
            o_axes = _axes(self._out_axes, tree_unflatten(out_tree, [0] * out_tree.num_leaves),
                           f"out_axes = {self._out_axes!r} does not match the output (of "
                           f"structure {out_tree})", "out_axes")
        canon = []
        for o, a in zip(o_axes, closed.out_avals):
            if o is not None:
                if not isinstance(o, int) or not -a.ndim - 1 <= o <= a.ndim:
                    raise ValueError(f"pmap out_axes {o!r} is out of range for an output of "
                                     f"type {a.str_short()}")
                o %= a.ndim + 1
            canon.append(o)
        entry = _Entry(closed, hoisted, out_tree, tuple(canon))
        if not hoisted:
            self._cache[key] = entry
        return entry
