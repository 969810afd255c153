"""Sparse-aware `grad`, `value_and_grad`, `jacfwd`, `jacrev` and `jacobian`: as didax's own,
but a BCOO among the differentiated arguments is differentiated with respect to its data
only (its indices are integers), and its derivative is a BCOO with the same indices (output
dimensions of a Jacobian become leading batch dimensions, the indices broadcast along them),
as JAX's `jax.experimental.sparse` versions do."""
from __future__ import annotations

import functools

from didax._src import tree_util
from didax._src.core import get_aval
from didax._src.experimental.sparse.bcoo import BCOO
from didax._src.numpy import namespace as jnp
from didax._src.transforms import api


def _is_bcoo(x) -> bool:
    return isinstance(x, BCOO)


def _as_bcoo(g, like: BCOO) -> BCOO:
    """The derivative `g` of `like.data` (with leading output dimensions) as a BCOO."""
    extra = get_aval(g).ndim - get_aval(like.data).ndim
    lead = get_aval(g).shape[:extra]
    indices = like.indices
    if extra:
        indices = jnp.broadcast_to(indices, lead + get_aval(indices).shape)
    return BCOO((g, indices), shape=lead + tuple(like.shape),
                indices_sorted=like.indices_sorted, unique_indices=like.unique_indices)


class _Split:
    """The differentiated arguments with each BCOO replaced by its data, and the way back."""

    def __init__(self, args, nums):
        self.args, self.nums = args, nums
        self.specs, self.dyn = [], []
        for i in nums:
            leaves, treedef = tree_util.tree_flatten(args[i], is_leaf=_is_bcoo)
            self.specs.append((treedef, [x if _is_bcoo(x) else None for x in leaves]))
            self.dyn.append([x.data if _is_bcoo(x) else x for x in leaves])

    def rebuild(self, lists, leaf):
        """Per differentiated argument, its tree from `lists` (one per argument), each BCOO
        position's entry turned back into a BCOO by `leaf(entry, original)`."""
        return tuple(tree_util.tree_unflatten(treedef, [x if s is None else leaf(x, s)
                                                        for x, s in zip(entries, sparse)])
                     for (treedef, sparse), entries in zip(self.specs, lists))

    def call(self, fun, kwargs, record=None):
        def f_data(*lists):
            full = list(self.args)
            rebuilt = self.rebuild(lists, lambda d, s: BCOO(
                (d, s.indices), shape=s.shape, indices_sorted=s.indices_sorted,
                unique_indices=s.unique_indices))
            for i, arg in zip(self.nums, rebuilt):
                full[i] = arg
            out = fun(*full, **kwargs)
            if record is not None:
                record.append(out)
            return out
        return f_data


def _nums(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _pick(argnums, tree):
    return tree[0] if isinstance(argnums, int) else tree


def value_and_grad(fun, argnums=0, has_aux: bool = False, **kwargs):
    """didax.value_and_grad, with BCOO arguments differentiated in their data."""
    @functools.wraps(fun)
    def wrapped(*args, **fkwargs):
        split = _Split(args, _nums(argnums))
        vg = api.value_and_grad(split.call(fun, fkwargs), tuple(range(len(split.nums))),
                                has_aux=has_aux, **kwargs)
        value, g = vg(*split.dyn)
        return value, _pick(argnums, split.rebuild(g, _as_bcoo))

    return wrapped


def grad(fun, argnums=0, has_aux: bool = False, **kwargs):
    """didax.grad, with BCOO arguments differentiated in their data."""
    vg = value_and_grad(fun, argnums, has_aux, **kwargs)

    @functools.wraps(fun)
    def wrapped(*args, **fkwargs):
        (value, g) = vg(*args, **fkwargs)
        return (g, value[1]) if has_aux else g

    return wrapped


def _jac(transform, fun, argnums, has_aux, kwargs):
    @functools.wraps(fun)
    def wrapped(*args, **fkwargs):
        split = _Split(args, _nums(argnums))
        outs = []
        jac_fun = transform(split.call(fun, fkwargs, outs), tuple(range(len(split.nums))),
                            has_aux=has_aux, **kwargs)
        res = jac_fun(*split.dyn)
        jac = res[0] if has_aux else res
        out = outs[-1][0] if has_aux else outs[-1]
        out_tree = tree_util.tree_structure(out)
        per_out = [_pick(argnums, split.rebuild(lists, _as_bcoo))
                   for lists in out_tree.flatten_up_to(jac)]
        jac = tree_util.tree_unflatten(out_tree, per_out)
        return (jac, res[1]) if has_aux else jac

    return wrapped


def jacfwd(fun, argnums=0, has_aux: bool = False, **kwargs):
    """didax.jacfwd, with BCOO arguments differentiated in their data."""
    return _jac(api.jacfwd, fun, argnums, has_aux, kwargs)


def jacrev(fun, argnums=0, has_aux: bool = False, **kwargs):
    """didax.jacrev, with BCOO arguments differentiated in their data."""
    return _jac(api.jacrev, fun, argnums, has_aux, kwargs)


jacobian = jacrev
