"""Collectives over named axes: psum, pmean, pmax, pmin, axis_index, axis_size, all_gather,
ppermute, pshuffle, pswapaxes, all_to_all, psum_scatter and pbroadcast.

`vmap(f, axis_name="i")` binds the name "i": inside `f`, a collective over "i" acts across
the examples of that vmap, as JAX's collectives act across devices. Each collective is a
primitive whose parameters name its axes, and the vmap's interpreter resolves it in the
batch rule: over its own name it reduces, gathers or permutes along the batch dimension
(binding the collective again for the other names, which enclosing vmaps resolve); over
other names it passes the collective on, batched. Staged under make_jaxpr or jit inside a
vmap, a collective stays an equation until the vmap batches the staged call.

`pmap(f, axis_name="i")` binds "i" across devices: its shards run at once on worker
threads, and a collective that reaches evaluation there runs its impl, which looks the axis
up in the shard's environment (axis_env.py) and exchanges values with the other shards
through its group (shards.py; across processes, didax.distributed). So each collective's
cross-device meaning sits beside its batch rule, and neither interpreter names it. One that
reaches evaluation with no vmap or pmap binding its axis raises NameError.

Derivatives follow JAX: psum is linear and its own transpose (psum is psum followed by a
broadcast to every example), ppermute transposes to the inverse permutation, all_gather to
psum_scatter and back, all_to_all to the swapped all_to_all. pmax and pmin, which JAX
cannot differentiate, share the tangent evenly among the examples attaining the extremum,
as reduce_max does, so `grad(vmap(f))` and `vmap(grad(f))` agree.
"""
from __future__ import annotations

import math

import numpy as np

from didax._src import axis_env, core
from didax._src.base_prims import instantiate
from didax._src.core import ShapedArray, Tracer, get_aval
from didax._src.errors import user_error
from didax._src.interpreters import batching
from didax._src.interpreters.jvp import defjvp_zero, deflinear
from didax._src.interpreters.transpose import deflinear_transpose
from didax._src.lax.elementwise import add, convert_element_type, div, eq, mul, select_n, zeros_like
from didax._src.lax.reduction import reduce_max, reduce_min, reduce_sum
from didax._src.lax.shape import (
    broadcast,
    broadcast_in_dim,
    concatenate,
    expand_dims,
    iota,
    reshape,
    slice_in_dim,
    squeeze,
    transpose,
)
from didax._src.tree_util import tree_flatten, tree_map, tree_unflatten
from didax._src.typecheck import any_, check_dtype, const_like, num

# --------------------------------------------------------------------------------------
# Axis names: which are bound here, and their sizes


def _as_names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _available(frames) -> str:
    names = [n for n, _ in frames]
    return (" The following axis names (bound by vmap's or pmap's axis_name) are available to "
            f"collective operations: {names}")


def _axis_sizes(names, api: str) -> list:
    """The sizes of the named axes bound here; NameError (as JAX's) for an unbound one."""
    frames = batching.axis_frames()
    sizes = []
    for name in names:
        size = next((s for n, s in frames if n == name), None)
        if size is None:
            raise user_error(NameError, f"unbound axis name: {name}. {api} needs a "
                             f"`vmap(..., axis_name={name!r})` or `pmap(..., "
                             f"axis_name={name!r})` around it." + _available(frames))
        sizes.append(size)
    return sizes


def _check_bound(names, api: str) -> None:
    frames = batching.axis_frames()
    bound = [n for n, _ in frames]
    for name in names:
        if name not in bound:
            raise user_error(NameError, (
                f"Found an unbound axis name: {name}. To fix this, please call "
                f"{api} under `vmap(..., axis_name={name!r})` or "
                f"`pmap(..., axis_name={name!r})`." + _available(frames)))


def _no_groups(axis_index_groups, api: str) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(f"{api}: axis_index_groups is not supported in vmap "
                                  "collectives")


def _canonical_axis(axis: int, ndim: int, api: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{api}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _device_axis(names, api: str):
    """The device axis (pmap's) a collective reaching evaluation acts over: vmaps resolve
    their own axes in batch rules, so every name left must be one whose shards run now."""
    axes = [axis_env.lookup(n) for n in names]
    for name, axis in zip(names, axes):
        if axis is None or axis.group is None:
            raise user_error(NameError, (
                f"unbound axis name: {name}. A collective over {name!r} was evaluated "
                f"outside any `vmap(..., axis_name={name!r})` or `pmap(..., "
                f"axis_name={name!r})`; collectives act across the examples of the vmap, or "
                "the devices of the pmap, that names their axis."))
    if len(axes) != 1:
        over = getattr(axes[0].group, "over", None)  # (a mesh's axes: shard_map)
        if over is None:
            raise NotImplementedError(f"{api} over several device axes {tuple(names)} (nested "
                                      "pmap) is not supported")
        return over(names)
    return axes[0]


def _device_impl(name: str, param: str, run):
    """Evaluation of a collective: `run(axis, *operands, **params)` on this shard, through
    the group of the device axis it names (see shards.py)."""

    def impl(*args, **params):
        return run(_device_axis(_as_names(params[param]), name), *args, **params)

    return impl


def _collective(name: str, axes_param: str, run, **kwargs) -> core.Primitive:
    p = core.primitive(name, **kwargs)
    p.def_impl(_device_impl(name, axes_param, run))
    p.def_traits(axis_name_param=axes_param)
    return p


def _rule_name_in(names) -> object:
    """The axis name of the vmap running this batch rule, if the collective acts over it."""
    name = batching.rule_axis_name()
    return name if name is not None and name in names else None


# --------------------------------------------------------------------------------------
# psum, pmax, pmin: all-reduce


def _allreduce(name: str, accepted, op: str) -> core.Primitive:
    def run(axis, x, *, axes, axis_index_groups):
        return axis.group.allreduce(axis.index, x, op, name)

    p = _collective(name, "axes", run)

    def abstract_eval(x, *, axes, axis_index_groups):
        check_dtype(name, x, accepted)
        return x

    p.def_abstract_eval(abstract_eval)
    return p


psum_p = _allreduce("psum", num, "sum")
deflinear(psum_p)
deflinear_transpose(psum_p, lambda ct, aval, *, axes, axis_index_groups: psum_p.bind(
    ct, axes=axes, axis_index_groups=axis_index_groups))


def _pminmax_jvp(prim):
    """The mean of the tangents of the examples attaining the extremum (reduce_max's rule)."""

    def rule(primals, tangents, *, axes, axis_index_groups):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes, axis_index_groups=axis_index_groups)
        t = instantiate(t)
        where = convert_element_type(eq(x, out), get_aval(t).dtype)
        total = psum_p.bind(mul(t, where), axes=axes, axis_index_groups=axis_index_groups)
        count = psum_p.bind(where, axes=axes, axis_index_groups=axis_index_groups)
        return out, div(total, count)

    prim.def_jvp(rule)


def _allreduce_batch(prim, reduce, if_unmapped):
    def rule(size, vals, dims, *, axes, axis_index_groups):
        (x,), (d,) = vals, dims
        name = _rule_name_in(axes)
        if name is None:  # another vmap's axis: each example takes part on its own
            return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), d
        out = if_unmapped(x, size) if d is None else reduce(x, (d,))
        rest = tuple(a for a in axes if a != name)
        if rest:
            out = prim.bind(out, axes=rest, axis_index_groups=axis_index_groups)
        return out, None  # the same for every example

    prim.def_batch(rule)


_allreduce_batch(psum_p, reduce_sum, lambda x, size: mul(x, const_like(x, size)))


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` (a pytree) over the examples of the vmap(s) named `axis_name` (a name
    or a tuple of names; integers name positional axes of `x`), the same in every example.
    Booleans are summed as int32."""
    named, positional = _split_positional(axis_name)
    if not named and not positional:
        return x
    _no_groups(axis_index_groups, "psum")
    leaves, tree = tree_flatten(x)
    leaves = [convert_element_type(v, np.int32) if get_aval(v).dtype == np.bool_ else v
              for v in leaves]
    if all(not isinstance(v, Tracer) for v in leaves):  # constants: size * x, now (as JAX)
        size = math.prod(_axis_sizes(named, "psum"))
        out = [_times(_positional(reduce_sum, v, positional), size) for v in leaves]
    else:
        _check_bound(named, "psum")
        out = [_bind_reduce(psum_p, _positional(reduce_sum, v, positional), named)
               for v in leaves]
    return tree_unflatten(tree, out)


def _times(x, size: int):
    if type(x) in (int, float, complex):
        return type(x)(size) * x
    return mul(np.asarray(size, get_aval(x).dtype), x)


pmax_p = _allreduce("pmax", any_, "max")
_pminmax_jvp(pmax_p)
_allreduce_batch(pmax_p, reduce_max, lambda x, size: x)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of `x` (a pytree) over the examples of the named vmap(s)."""
    return _pminmax(pmax_p, reduce_max, "pmax", x, axis_name, axis_index_groups)


pmin_p = _allreduce("pmin", any_, "min")
_pminmax_jvp(pmin_p)
_allreduce_batch(pmin_p, reduce_min, lambda x, size: x)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of `x` (a pytree) over the examples of the named vmap(s)."""
    return _pminmax(pmin_p, reduce_min, "pmin", x, axis_name, axis_index_groups)


def _split_positional(axis_name):
    names = _as_names(axis_name)
    positional = tuple(a for a in names if isinstance(a, int))
    return tuple(a for a in names if not isinstance(a, int)), positional


def _positional(reduce, x, axes):
    if not axes:
        return x
    ndim = get_aval(x).ndim
    return reduce(x, tuple(sorted(_canonical_axis(a, ndim, "psum") for a in axes)))


def _bind_reduce(prim, x, names):
    return prim.bind(x, axes=names, axis_index_groups=None) if names else x


def _pminmax(prim, reduce, api, x, axis_name, axis_index_groups):
    named, positional = _split_positional(axis_name)
    _no_groups(axis_index_groups, api)
    _check_bound(named, api)
    return tree_map(lambda v: _bind_reduce(prim, _positional(reduce, v, positional), named), x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` (a pytree) over the examples of the named vmap(s); integers give
    floats, as true division does."""
    named, positional = _split_positional(axis_name)
    _no_groups(axis_index_groups, "pmean")
    leaves, tree = tree_flatten(x)
    summed = tree_flatten(psum(x, axis_name))[0]
    n = math.prod(_axis_sizes(named, "pmean"))
    counts = [n * math.prod(get_aval(v).shape[a] for a in positional) for v in leaves]
    return tree_unflatten(tree, [total / c for total, c in zip(summed, counts)])


# --------------------------------------------------------------------------------------
# axis_index, axis_size

axis_index_p = _collective("axis_index", "axis_name",
                           lambda axis, *, axis_name: np.int32(axis.index))
axis_index_p.def_abstract_eval(lambda *, axis_name: ShapedArray((), np.int32))
defjvp_zero(axis_index_p)


def _axis_index_batch(size, vals, dims, *, axis_name):
    if _rule_name_in((axis_name,)) is None:
        return axis_index_p.bind(axis_name=axis_name), None
    return iota(np.int32, size), 0


axis_index_p.def_batch(_axis_index_batch)


def axis_index(axis_name):
    """The index of this example along the named vmap axis (int32). For a tuple of names,
    the index into their product, the first name major."""
    if not isinstance(axis_name, (tuple, list)):
        _check_bound((axis_name,), "axis_index")
        return axis_index_p.bind(axis_name=axis_name)
    index = None
    inner = 1
    for name in reversed(tuple(axis_name)):
        term = axis_index(name)
        if inner != 1:
            term = mul(term, np.int32(inner))
        index = term if index is None else add(index, term)
        inner *= axis_size(name)
    return index if index is not None else convert_element_type(0, np.int32, weak_type=True)


def axis_size(axis_name) -> int:
    """The size of the named vmap axis (the product, for a tuple of names): a Python int."""
    return math.prod(_axis_sizes(_as_names(axis_name), "axis_size"))


# --------------------------------------------------------------------------------------
# all_gather and psum_scatter (reduce_scatter)



def _all_gather_run(axis, x, *, all_gather_dimension, axis_name, axis_index_groups, axis_size,
                    tiled):
    vals = axis.group.allgather(axis.index, x, "all_gather")
    join = np.concatenate if tiled else np.stack
    return join(vals, axis=all_gather_dimension)


all_gather_p = _collective("all_gather", "axis_name", _all_gather_run)


def _all_gather_aval(x, *, all_gather_dimension, axis_name, axis_index_groups, axis_size,
                     tiled):
    shape = list(x.shape)
    gd = all_gather_dimension
    if not 0 <= gd < len(shape) + (not tiled):
        raise ValueError(f"all_gather: all_gather_dimension {gd} is out of bounds for an "
                         f"operand of shape {x.shape} (tiled={tiled})")
    if tiled:
        shape[gd] *= axis_size
    else:
        shape.insert(gd, axis_size)
    return x.update(shape=tuple(shape))


all_gather_p.def_abstract_eval(_all_gather_aval)
deflinear(all_gather_p)


def _reduce_scatter_transpose(ct, aval, *, axis_name, scatter_dimension, axis_index_groups,
                              axis_size, tiled):
    return all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name,
                             axis_index_groups=axis_index_groups, axis_size=axis_size,
                             tiled=tiled)


def _all_gather_transpose(ct, aval, *, all_gather_dimension, axis_name, axis_index_groups,
                          axis_size, tiled):
    return reduce_scatter_p.bind(ct, axis_name=axis_name, scatter_dimension=all_gather_dimension,
                                 axis_index_groups=axis_index_groups, axis_size=axis_size,
                                 tiled=tiled)


deflinear_transpose(all_gather_p, _all_gather_transpose)


def _all_gather_batch(size, vals, dims, *, all_gather_dimension, axis_name, axis_index_groups,
                      axis_size, tiled):
    (x,), (d,) = vals, dims
    gd = all_gather_dimension
    params = dict(axis_index_groups=axis_index_groups)
    name = _rule_name_in(axis_name)
    if name is None:  # another vmap's axis: gather each example's slice
        if d <= gd:
            gd += 1
        elif not tiled:
            d += 1
        return all_gather_p.bind(x, all_gather_dimension=gd, axis_name=axis_name,
                                 axis_size=axis_size, tiled=tiled, **params), d
    y = batching.matchaxis(x, d, gd, size)  # this vmap's examples, stacked at gd
    pos = axis_name.index(name)
    major, minor = axis_name[:pos], axis_name[pos + 1:]
    if minor:  # each of ours holds a block of the minor names' examples
        y = all_gather_p.bind(y, all_gather_dimension=gd + 1, axis_name=minor, tiled=False,
                              axis_size=math.prod(_axis_sizes(minor, "all_gather")), **params)
        y = _merge_dims(y, gd)
    if major:
        y = all_gather_p.bind(y, all_gather_dimension=gd, axis_name=major, tiled=True,
                              axis_size=math.prod(_axis_sizes(major, "all_gather")), **params)
    if tiled:
        y = _merge_dims(y, gd)
    return y, None


all_gather_p.def_batch(_all_gather_batch)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every example's `x` (a pytree), stacked along a new `axis` (or concatenated along
    `axis`, if tiled), the same in every example."""
    names = _as_names(axis_name)
    if not names:
        return x
    _no_groups(axis_index_groups, "all_gather")
    size = math.prod(_axis_sizes(names, "all_gather"))

    def bind(v):
        ndim = get_aval(v).ndim
        gd = _canonical_axis(axis, ndim if tiled else ndim + 1, "all_gather")
        params = dict(all_gather_dimension=gd, axis_name=names, axis_index_groups=None,
                      axis_size=size, tiled=bool(tiled))
        _all_gather_aval(get_aval(v), **params)
        return all_gather_p.bind(v, **params)

    return tree_map(bind, x)




def _reduce_scatter_run(axis, x, *, axis_name, scatter_dimension, axis_index_groups, axis_size,
                        tiled):
    total = axis.group.allreduce(axis.index, x, "sum", "psum_scatter")
    if tiled:
        block = total.shape[scatter_dimension] // axis_size
        mine = np.take(total, range(axis.index * block, (axis.index + 1) * block),
                       axis=scatter_dimension)
    else:
        mine = np.take(total, axis.index, axis=scatter_dimension)
    return np.array(mine, order="C")


reduce_scatter_p = _collective("reduce_scatter", "axis_name", _reduce_scatter_run)


def _reduce_scatter_aval(x, *, axis_name, scatter_dimension, axis_index_groups, axis_size,
                         tiled):
    check_dtype("psum_scatter", x, num)
    sd = scatter_dimension
    if not 0 <= sd < x.ndim:
        raise ValueError(f"psum_scatter: scatter_dimension {sd} is out of bounds for an "
                         f"operand of shape {x.shape}")
    shape = list(x.shape)
    if tiled:
        if shape[sd] % axis_size:
            raise ValueError(f"tiled reduce_scatter operand scatter dimension size {shape[sd]} "
                             f"must be divisible by shard_count {axis_size}")
        shape[sd] //= axis_size
    else:
        if shape[sd] != axis_size:
            raise ValueError(f"reduce_scatter operand scatter dimension size {shape[sd]} must "
                             f"match shard count {axis_size}")
        del shape[sd]
    return x.update(shape=tuple(shape))


reduce_scatter_p.def_abstract_eval(_reduce_scatter_aval)
deflinear(reduce_scatter_p)
deflinear_transpose(reduce_scatter_p, _reduce_scatter_transpose)


def _reduce_scatter_batch(size, vals, dims, *, axis_name, scatter_dimension, axis_index_groups,
                          axis_size, tiled):
    (x,), (d,) = vals, dims
    sd = scatter_dimension
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, axis_size=axis_size,
                  tiled=tiled)
    if _rule_name_in(axis_name) is None:  # another vmap's axis
        if d <= sd:
            sd += 1
        elif not tiled:
            d -= 1  # the scattered dimension, before the batch one, goes
        return reduce_scatter_p.bind(x, scatter_dimension=sd, **params), d
    if len(axis_name) > 1:
        raise NotImplementedError("psum_scatter over several axis names under vmap")
    y = mul(x, const_like(x, size)) if d is None else reduce_sum(x, (d,))
    if tiled:
        y = _split_dim(y, sd, size)
    return y, sd  # example k keeps block k of the sum


reduce_scatter_p.def_batch(_reduce_scatter_batch)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """`psum(x)`, of which example k keeps only block k along `scatter_dimension` (that
    dimension is removed, or divided by the axis size if tiled)."""
    names = _as_names(axis_name)
    if not names:
        return x
    _no_groups(axis_index_groups, "psum_scatter")
    size = math.prod(_axis_sizes(names, "psum_scatter"))

    def bind(v):
        sd = _canonical_axis(scatter_dimension, get_aval(v).ndim, "psum_scatter")
        params = dict(axis_name=names, scatter_dimension=sd, axis_index_groups=None,
                      axis_size=size, tiled=bool(tiled))
        _reduce_scatter_aval(get_aval(v), **params)
        return reduce_scatter_p.bind(v, **params)

    return tree_map(bind, x)


def _merge_dims(x, dim: int):
    """`x` with dimensions `dim` and `dim + 1` merged into one (the first major)."""
    shape = get_aval(x).shape
    return reshape(x, shape[:dim] + (shape[dim] * shape[dim + 1],) + shape[dim + 2:])


def _split_dim(x, dim: int, factor: int):
    """`x` with dimension `dim` split into (factor, rest)."""
    shape = get_aval(x).shape
    return reshape(x, shape[:dim] + (factor, shape[dim] // factor) + shape[dim + 1:])


ppermute_p = _collective("ppermute", "axis_name", lambda axis, x, *, axis_name, perm: (
    axis.group.permute(axis.index, x, perm, "ppermute")))
ppermute_p.def_abstract_eval(lambda x, *, axis_name, perm: x)
deflinear(ppermute_p)
deflinear_transpose(ppermute_p, lambda ct, aval, *, axis_name, perm: ppermute_p.bind(
    ct, axis_name=axis_name, perm=tuple((dst, src) for src, dst in perm)))


def _take_blocks(x, axis: int, sources):
    """`x` along `axis` rearranged: position k takes index sources[k], or zeros for None.
    Runs of consecutive sources become one slice each (a cyclic shift is two)."""
    aval = get_aval(x)
    pieces = []
    k, n = 0, len(sources)
    while k < n:
        s, j = sources[k], k + 1
        if s is None:
            while j < n and sources[j] is None:
                j += 1
            shape = list(aval.shape)
            shape[axis] = j - k
            zero = const_like(x, 0) if aval.weak_type else np.zeros((), aval.dtype)
            pieces.append(broadcast_in_dim(zero, shape, ()))
        else:
            while j < n and sources[j] == s + (j - k):
                j += 1
            pieces.append(slice_in_dim(x, s, s + j - k, axis=axis))
        k = j
    if len(pieces) == 1 and sources == list(range(n)):
        return x
    return concatenate(pieces, axis)


def _ppermute_batch(size, vals, dims, *, axis_name, perm):
    (x,), (d,) = vals, dims
    name = _rule_name_in(axis_name)
    if name is None:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    if len(axis_name) > 1:
        raise NotImplementedError("ppermute over several axis names under vmap")
    if any(not 0 <= i < size for pair in perm for i in pair):
        raise ValueError(f"ppermute: the permutation {perm} has an index out of range for axis "
                         f"{name!r} of size {size}")
    source_of = {dst: src for src, dst in perm}
    if d is None:
        if len(source_of) == size:  # every example receives the same value
            return x, None
        x, d = broadcast(x, (size,)), 0
    return _take_blocks(x, d, [source_of.get(k) for k in range(size)]), d


ppermute_p.def_batch(_ppermute_batch)


def ppermute(x, axis_name, perm):
    """Example `dst` receives the `x` (a pytree) of example `src`, for each (src, dst) pair
    of `perm`; examples that are no destination receive zeros."""
    names = _as_names(axis_name)
    perm = tuple((int(src), int(dst)) for src, dst in perm)
    srcs, dsts = [s for s, _ in perm], [t for _, t in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    _check_bound(names, "ppermute")
    return tree_map(lambda v: ppermute_p.bind(v, axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Example k receives the `x` of example perm[k] (`perm` a permutation of the axis)."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pbroadcast(x, axis_name, source):
    """Every example receives the `x` (a pytree) of example `source`."""
    is_source = eq(axis_index(axis_name), np.int32(source))

    def one(v):
        aval = get_aval(v)
        v = convert_element_type(v, aval.dtype, aval.weak_type)  # (Python scalars: arrays)
        which = broadcast(is_source, aval.shape) if aval.shape else is_source
        masked = select_n(which, zeros_like(v), v)
        return (pmax if aval.dtype == np.bool_ else psum)(masked, axis_name)

    return tree_map(one, x)


# --------------------------------------------------------------------------------------
# all_to_all, pswapaxes



# Its params are JAX's: the size of the named axes is not one of them, but read where it is
# needed from the context binding the names (the shards' group, the vmaps, the device axes).
def _all_to_all_run(axis, x, *, axis_name, split_axis, concat_axis, axis_index_groups, tiled):
    vals = axis.group.allgather(axis.index, x, "all_to_all")
    return np.concatenate([np.split(v, len(vals), axis=split_axis)[axis.index] for v in vals],
                          axis=concat_axis)


all_to_all_p = _collective("all_to_all", "axis_name", _all_to_all_run)


def _all_to_all_aval(x, *, axis_name, split_axis, concat_axis, axis_index_groups, tiled):
    axis_size = math.prod(_axis_sizes(_as_names(axis_name), "all_to_all"))
    for what, a in (("split_axis", split_axis), ("concat_axis", concat_axis)):
        if not 0 <= a < x.ndim:
            raise ValueError(f"all_to_all: {what} {a} is out of bounds for an operand of shape "
                             f"{x.shape}")
    shape = list(x.shape)
    if shape[split_axis] % axis_size:
        raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has to be "
                         f"divisible by the size of the named axis {axis_name} ({axis_size})")
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return ShapedArray(shape, x.dtype, False)


all_to_all_p.def_abstract_eval(_all_to_all_aval)
deflinear(all_to_all_p)


def _all_to_all_transpose(ct, aval, *, split_axis, concat_axis, **params):
    return all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)


deflinear_transpose(all_to_all_p, _all_to_all_transpose)


def _swap_dims(x, a: int, b: int):
    perm = list(range(get_aval(x).ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def _all_to_all_batch(size, vals, dims, *, axis_name, split_axis, concat_axis, axis_index_groups,
                      tiled):
    (x,), (d,) = vals, dims
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled)
    if _rule_name_in(_as_names(axis_name)) is None:
        return all_to_all_p.bind(x, split_axis=split_axis + (d <= split_axis),
                                 concat_axis=concat_axis + (d <= concat_axis), **params), d
    if len(_as_names(axis_name)) > 1:
        raise NotImplementedError("all_to_all over several axis names under vmap")
    if d is None:
        x, d = broadcast(x, (size,)), 0
    if split_axis == concat_axis:  # block k of example r becomes block r of example k
        axis = split_axis + (d <= split_axis)
        d_out = d
        x = _split_dim(x, axis, size)
        d += axis <= d
        return _merge_dims(_swap_dims(x, d, axis), axis), d_out
    # the examples become the major part of concat_axis; the blocks of split_axis, examples
    x = _merge_dims(batching.moveaxis(x, d, concat_axis), concat_axis)
    return _split_dim(x, split_axis, size), split_axis


all_to_all_p.def_batch(_all_to_all_batch)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Block k of `x` along `split_axis` goes to example k, and each example concatenates
    what it receives along `concat_axis`, in order of the sending example (without tiling,
    split_axis must have the axis's size and is replaced by a new concat_axis)."""
    _no_groups(axis_index_groups, "all_to_all")
    group = math.prod(_axis_sizes(_as_names(axis_name), "all_to_all"))
    name_param = tuple(axis_name) if isinstance(axis_name, list) else axis_name

    def bind(v):
        ndim = get_aval(v).ndim
        split = _canonical_axis(split_axis, ndim, "all_to_all")
        concat = _canonical_axis(concat_axis, ndim, "all_to_all")
        shape = get_aval(v).shape
        if tiled:
            if shape[split] % group:
                raise ValueError(f"The size of all_to_all split_axis ({shape[split]}) has to be "
                                 f"divisible by the size of the named axis {axis_name} "
                                 f"({group})")
        else:
            if shape[split] != group:
                raise ValueError(
                    "all_to_all requires the size of the mapped axis axis_name to equal "
                    f"x.shape[split_axis], but they are {group} and {shape[split]} "
                    "respectively.")
            if split < concat:
                concat += 1  # concat_axis is a position after split_axis is removed
                v = expand_dims(v, (concat,))
            elif concat < split:
                v = expand_dims(v, (concat,))
                split += 1
        out = all_to_all_p.bind(v, axis_name=name_param, split_axis=split, concat_axis=concat,
                                axis_index_groups=None, tiled=bool(tiled))
        if not tiled and split != concat:
            out = squeeze(out, (split,))
        return out

    return tree_map(bind, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the named vmap axis with positional `axis` (of the axis's size)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


__all__ = [
    "psum", "pmean", "pmax", "pmin", "axis_index", "axis_size", "all_gather", "psum_scatter",
    "ppermute", "pshuffle", "pbroadcast", "all_to_all", "pswapaxes",
]
