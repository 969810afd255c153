"""`device_put_p`: what `device_put` stages for traced values, as in JAX 0.10.2: one equation
over all the leaves, each result the operand's value, said to live on a device.

Its params are JAX's, one entry per operand: `devices` (None: where it is; a device; or a
sharding), `srcs` (the device said to hold the operand, or None) and `copy_semantics` (an
`ArrayCopySemantics`: REUSE_INPUT by default, ALWAYS_COPY for `may_alias=False`,
DONATE_INPUT for `donate=True`). Every device shares the host's memory, so the impl returns
the operands (copies for ALWAYS_COPY); bound on concrete values, the results record their
devices or sharding as `device_put`'s do (`Array.devices()`, `.sharding`). Inside jit, a
result put on a NamedSharding is laid out as it says (the sharding analysis).

Rules, as JAX's: linear; the tangents are put as the primals; the cotangents go back to the
sources (`devices` and `srcs` swapped) as copies, and a donating put has no transpose; under
vmap each operand keeps its batch dimension.
"""
from __future__ import annotations

import enum

import numpy as np

from didax._src import core
from didax._src.interpreters import sharding as sharding_rules


class ArrayCopySemantics(enum.IntEnum):
    """Whether a put may reuse its operand's buffer, must copy it, or takes it over (JAX's
    enum of the name, with its values)."""
    ALWAYS_COPY = 0
    REUSE_INPUT = 1
    DONATE_INPUT = 2

    def __repr__(self):
        return f"ArrayCopySemantics.{self.name}"

    __str__ = __repr__


# `place(array, device)`: the array recording that it was put on `device` (a device, a
# sharding or None). Set by parallel/device.py, the layer above that knows devices.
place = None


class _DevicePutPrimitive(core.Primitive):
    """Bound on concrete values, the results also record where they were put."""

    def bind(self, *args, **params):
        outs = super().bind(*args, **params)
        if place is not None and all(type(o) is core.Array for o in outs):
            outs = [place(o, d) for o, d in zip(outs, params["devices"])]
        return outs


device_put_p = _DevicePutPrimitive("device_put", multiple_results=True)
assert "device_put" not in core.all_primitives
core.all_primitives["device_put"] = device_put_p


def _impl(*args, devices, srcs, copy_semantics):
    return [np.array(x, copy=True) if c == ArrayCopySemantics.ALWAYS_COPY else x
            for x, c in zip(args, copy_semantics)]


def _check_params(n, devices, srcs, copy_semantics):
    if not len(devices) == len(srcs) == len(copy_semantics) == n:
        raise TypeError(f"device_put: devices, srcs and copy_semantics need one entry per "
                        f"operand ({n}), got {len(devices)}, {len(srcs)} and "
                        f"{len(copy_semantics)}")


def _abstract_eval(*avals, devices, srcs, copy_semantics):
    _check_params(len(avals), devices, srcs, copy_semantics)
    return list(avals)


device_put_p.def_impl(_impl)
device_put_p.def_abstract_eval(_abstract_eval)
device_put_p.linear = True


def _put_nonzero(values, devices, srcs, copy_semantics):
    """device_put of the values that are not symbolic zeros (zeros stay zeros)."""
    live = [k for k, v in enumerate(values) if type(v) is not core.Zero]
    out = list(values)
    if live:
        put = device_put_p.bind(*[values[k] for k in live],
                                devices=tuple(devices[k] for k in live),
                                srcs=tuple(srcs[k] for k in live),
                                copy_semantics=tuple(copy_semantics[k] for k in live))
        for k, v in zip(live, put):
            out[k] = v
    return out


@device_put_p.def_jvp
def _jvp(primals, tangents, *, devices, srcs, copy_semantics):
    outs = device_put_p.bind(*primals, devices=devices, srcs=srcs,
                             copy_semantics=copy_semantics)
    return outs, _put_nonzero(tangents, devices, srcs, copy_semantics)


def _transposed_semantics(c):
    if c == ArrayCopySemantics.DONATE_INPUT:
        raise ValueError("donate=True is not allowed during transposition of device_put "
                         "(as in JAX)")
    return ArrayCopySemantics.ALWAYS_COPY


@device_put_p.def_transpose
def _transpose(cts, *args, devices, srcs, copy_semantics):
    """The cotangents go back where the operands came from, as copies."""
    return _put_nonzero(cts, srcs, devices,
                        tuple(_transposed_semantics(c) for c in copy_semantics))


@device_put_p.def_batch
def _batch(size, vals, dims, **params):
    return device_put_p.bind(*vals, **params), list(dims)


def _sharding_rule(eqn, specs, sizes):
    """A result put on a sharding naming mesh axes is split as it says; others are laid out
    as their operands."""
    outs = []
    for spec, device in zip(specs, eqn.params["devices"]):
        named = getattr(device, "spec", None)
        outs.append(spec if named is None else sharding_rules.spec_names(named))
    return outs


device_put_p.def_rule("sharding", sharding_rules.splits(_sharding_rule))


def copy_semantics_of(donate: bool, may_alias) -> ArrayCopySemantics:
    """The copy semantics `device_put(..., donate=, may_alias=)` asks for."""
    if donate and may_alias:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    if donate:
        return ArrayCopySemantics.DONATE_INPUT
    if may_alias is None or may_alias:
        return ArrayCopySemantics.REUSE_INPUT
    return ArrayCopySemantics.ALWAYS_COPY


__all__: list = []
