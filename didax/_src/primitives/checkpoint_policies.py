"""Which values a checkpointed function may save for reverse mode (`jax.checkpoint_policies`).

A policy is called as `policy(primitive, *in_avals, **params)` on each equation of the
function's JVP that reverse mode could keep a result of, and answers True, `Saveable` or
`Offloadable(src, dst)` (keep it) or False or `Recompute` (compute it again in the backward
pass). Everything here lives in host memory: an offloaded value is kept like a saved one.
"""
from __future__ import annotations

from typing import NamedTuple


class _Decision:
    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return self._name


Saveable = _Decision("Saveable")
Recompute = _Decision("Recompute")


class Offloadable(NamedTuple):
    """Keep the value in memory space `dst` until the backward pass. didax has host memory
    only, so an offloaded value is kept where a saved one is."""
    src: str
    dst: str


def saves(policy, prim, in_avals, params) -> bool:
    """The policy's answer for one equation, as keep (True) or recompute (False)."""
    answer = policy(prim, *in_avals, **params)
    if answer is Recompute:
        return False
    if answer is Saveable or isinstance(answer, Offloadable):
        return True
    return bool(answer)


def _is_dot(prim):
    return prim.name == "dot_general"


def _name_of(prim, params):
    return params.get("name") if prim.name == "name" else None


def _has_no_batch_dims(params):
    (_, (lhs_batch, rhs_batch)) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


class checkpoint_policies:
    """The policies of `jax.checkpoint_policies`."""

    @staticmethod
    def everything_saveable(*_, **__):
        return True

    @staticmethod
    def nothing_saveable(*_, **__):
        return False

    @staticmethod
    def dots_saveable(prim, *_, **__):
        return _is_dot(prim)

    checkpoint_dots = dots_saveable

    @staticmethod
    def dots_with_no_batch_dims_saveable(prim, *_, **params):
        return _is_dot(prim) and _has_no_batch_dims(params)

    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

    @staticmethod
    def offload_dot_with_no_batch_dims(offload_src, offload_dst):
        def policy(prim, *_, **params):
            if _is_dot(prim) and _has_no_batch_dims(params):
                return Offloadable(offload_src, offload_dst)
            return Recompute
        return policy

    @staticmethod
    def save_only_these_names(*names):
        names = frozenset(names)

        def policy(prim, *_, **params):
            return _name_of(prim, params) in names
        return policy

    @staticmethod
    def save_any_names_but_these(*names):
        names = frozenset(names)

        def policy(prim, *_, **params):
            name = _name_of(prim, params)
            return name is not None and name not in names
        return policy

    @staticmethod
    def save_anything_except_these_names(*names):
        names = frozenset(names)

        def policy(prim, *_, **params):
            return _name_of(prim, params) not in names
        return policy

    @staticmethod
    def save_and_offload_only_these_names(*, names_which_can_be_saved=(),
                                          names_which_can_be_offloaded=(),
                                          offload_src="device", offload_dst="pinned_host"):
        saved = frozenset(names_which_can_be_saved)
        offloaded = frozenset(names_which_can_be_offloaded)
        both = saved & offloaded
        if both:
            raise ValueError(
                "save_and_offload_only_these_names: a name can be saved or offloaded, not "
                f"both; both lists hold {sorted(both)}")

        def policy(prim, *_, **params):
            name = _name_of(prim, params)
            if name in saved:
                return Saveable
            if name in offloaded:
                return Offloadable(offload_src, offload_dst)
            return Recompute
        return policy

    @staticmethod
    def save_from_both_policies(policy_1, policy_2):
        def policy(prim, *args, **params):
            return (saves(policy_1, prim, args, params)
                    or saves(policy_2, prim, args, params))
        return policy
