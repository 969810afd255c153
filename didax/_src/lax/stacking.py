"""`tile_p`, `stack_p`, `unstack_p`: the primitives JAX's `jnp.tile`, `jnp.stack` and
`jnp.unstack` stage (with JAX's params: `reps`; `axis`). All three are linear; each one's
transpose sums tiles back or is the other of stack and unstack."""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.base_prims import instantiate, reduce_sum, reshape
from didax._src.core import ShapedArray, Zero
from didax._src.interpreters.batching import bdim_at_front
from didax._src.interpreters.jvp import deflinear

# --------------------------------------------------------------------------------------
# tile

tile_p = core.primitive("tile")


def _tile_aval(x, *, reps):
    if len(reps) != x.ndim:
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                        f"and x.ndim={x.ndim}.")
    return ShapedArray(tuple(r * d for r, d in zip(reps, x.shape)), x.dtype, x.weak_type)


tile_p.def_impl(lambda x, *, reps: np.tile(x, reps))
tile_p.def_abstract_eval(_tile_aval)
deflinear(tile_p)


@tile_p.def_transpose
def _tile_transpose(ct, x, *, reps):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    interleaved = tuple(n for r, d in zip(reps, x.aval.shape) for n in (r, d))
    return [reduce_sum(reshape(ct, interleaved), tuple(range(0, 2 * len(reps), 2)))]


@tile_p.def_batch
def _tile_batch(size, vals, dims, *, reps):
    (x,), (d,) = vals, dims
    return tile_p.bind(x, reps=reps[:d] + (1,) + reps[d:]), d


# --------------------------------------------------------------------------------------
# stack, unstack

stack_p = core.primitive("stack")
unstack_p = core.primitive("unstack", multiple_results=True)


def _stack_aval(*xs, axis):
    if not xs:
        raise ValueError("stack needs at least one array")
    shapes, dtypes_ = {x.shape for x in xs}, {x.dtype for x in xs}
    if len(shapes) > 1:
        raise ValueError("Cannot stack arrays with different shapes: got "
                         f"{', '.join(str(x.shape) for x in xs)}.")
    if len(dtypes_) > 1:
        raise TypeError("lax.stack requires arguments to have the same dtypes, got "
                        f"{', '.join(x.dtype.name for x in xs)}.")
    shape = xs[0].shape
    if not 0 <= axis <= len(shape):
        raise ValueError(f"stack: axis {axis} is out of bounds for arrays of shape {shape} "
                         f"(the result has {len(shape) + 1} dimensions)")
    return ShapedArray(shape[:axis] + (len(xs),) + shape[axis:], xs[0].dtype,
                       all(x.weak_type for x in xs))


def _unstack_aval(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"unstack: axis {axis} is out of bounds for an operand of shape "
                         f"{x.shape}")
    return [ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype, x.weak_type)
            ] * x.shape[axis]


stack_p.def_impl(lambda *xs, axis: np.stack(xs, axis))
stack_p.def_abstract_eval(_stack_aval)
unstack_p.def_impl(lambda x, *, axis: list(np.moveaxis(x, axis, 0)))
unstack_p.def_abstract_eval(_unstack_aval)
deflinear(stack_p)
deflinear(unstack_p)


@stack_p.def_transpose
def _stack_transpose(ct, *xs, axis):
    if type(ct) is Zero:
        return [Zero(x.aval) for x in xs]
    return unstack_p.bind(ct, axis=axis)


@unstack_p.def_transpose
def _unstack_transpose(cts, x, *, axis):
    if all(type(ct) is Zero for ct in cts):
        return [Zero(x.aval)]
    return [stack_p.bind(*[instantiate(ct) for ct in cts], axis=axis)]


@stack_p.def_batch
def _stack_batch(size, vals, dims, *, axis):
    return stack_p.bind(*[bdim_at_front(v, d, size) for v, d in zip(vals, dims)],
                        axis=axis + 1), 0


@unstack_p.def_batch
def _unstack_batch(size, vals, dims, *, axis):
    (x,), (d,) = vals, dims
    physical = axis + (d <= axis)
    out_dim = d if d < physical else d - 1
    outs = unstack_p.bind(x, axis=physical)
    return outs, [out_dim] * len(outs)


__all__: list = []
