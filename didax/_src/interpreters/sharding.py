"""Shardings through a jaxpr: which mesh axes split each dimension of each value, given
those of the inputs, as JAX's sharding-in-types rules give them.

A spec here is a tuple with one entry per leading dimension of a value: the tuple of mesh
axis names that dimension is split over (empty: whole); dimensions past its end are whole.
Each primitive's "sharding" rule, beside its other rules, maps its operands' specs to its
results' (`rule(eqn, specs, sizes)`, `sizes` the mesh's axis sizes); calls are followed
into their jaxprs. A primitive without a rule gives whole results. Where JAX would refuse
operands split in ways that disagree, the rule here gives whole dimensions instead: the
values are the same on one host, only the reported layout differs. Results of whole
operands are whole, except where a rule marked `splits` (a sharding constraint) says.
"""
from __future__ import annotations

import math

from didax._src.ir import Literal


def entry_names(entry) -> tuple:
    """A PartitionSpec entry (None, a name, or a tuple of names) as a tuple of names."""
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def spec_names(spec) -> tuple:
    """A PartitionSpec as a spec here."""
    return tuple(entry_names(e) for e in spec)


def padded(spec, ndim: int) -> tuple:
    return tuple(spec[:ndim]) + ((),) * (ndim - len(spec))


def is_whole(spec) -> bool:
    return not any(spec)


def propagate(jaxpr, in_specs, sizes) -> list:
    """The specs of a closed jaxpr's results, given its inputs' (None: whole)."""
    env: dict = {}
    inner = jaxpr.jaxpr
    for v in inner.constvars:
        env[v] = ()
    for v, s in zip(inner.invars, in_specs):
        env[v] = () if s is None else s
    for eqn in inner.eqns:
        specs = [() if type(x) is Literal else env.get(x, ()) for x in eqn.invars]
        if all(is_whole(s) for s in specs) and not splits_whole(eqn.primitive):
            outs = [()] * len(eqn.outvars)
        else:
            outs = rule_outputs(eqn, specs, sizes)
        for v, s in zip(eqn.outvars, outs):
            env[v] = s
    return [() if type(v) is Literal else env.get(v, ()) for v in inner.outvars]


def rule_outputs(eqn, specs, sizes) -> list:
    """The specs of `eqn`'s results: its call's jaxpr followed, or its primitive's rule."""
    prim = eqn.primitive
    call = prim.traits.call_jaxpr_param
    if call is not None:
        body = eqn.params[call]
        if hasattr(body, "jaxpr"):  # (a closed jaxpr: its constants come first)
            return propagate(body, [()] * len(body.jaxpr.constvars) + specs, sizes)
    rule = prim.rules.get("sharding")
    if rule is None:
        return [()] * len(eqn.outvars)
    outs = rule(eqn, specs, sizes)
    return outs if prim.multiple_results else [outs]


# ------------------------------------------------------------------------------ rules


def elementwise(eqn, specs, sizes):
    """Operands of one shape (or scalars): each dimension split as the operands that split
    it agree; an operand's own spec when it is the only one given (or all are equal)."""
    ndim = len(eqn.outvars[0].aval.shape)
    given = [s for s, x in zip(specs, eqn.invars) if not is_whole(s)
             and len(x.aval.shape) == ndim]
    if given and all(s == given[0] for s in given):
        return given[0]
    out = []
    for d in range(ndim):
        names = {padded(s, ndim)[d] for s in given} - {()}
        out.append(names.pop() if len(names) == 1 else ())
    return tuple(out)


def reduction(axes_param: str = "axes"):
    """A reduction over `axes`: the reduced dimensions' splits go with them."""
    def rule(eqn, specs, sizes):
        ndim = len(eqn.invars[0].aval.shape)
        axes = {a % ndim for a in eqn.params[axes_param]}
        return tuple(e for d, e in enumerate(padded(specs[0], ndim)) if d not in axes)

    return rule


def same_as_operand(eqn, specs, sizes):
    """A result laid out as its (first) operand: a cumulative sum, a sort along a whole
    dimension, a copy."""
    out = specs[0]
    return [out] * len(eqn.outvars) if eqn.primitive.multiple_results else out


def splits(rule):
    """Marks a rule that can split results of whole operands."""
    rule.splits = True
    return rule


def splits_whole(prim) -> bool:
    """Whether `prim`'s rule can split results of whole operands (a sharding constraint)."""
    return getattr(prim.rules.get("sharding"), "splits", False)


def divides(names, size: int, sizes) -> bool:
    return size % math.prod(sizes.get(n, 1) for n in names) == 0


def reshape(eqn, specs, sizes):
    """Dimensions merged into one are split over their axes in order; a dimension split
    into several splits the first, when its size allows; other regroupings are whole."""
    old = eqn.invars[0].aval.shape
    new = eqn.outvars[0].aval.shape
    spec = padded(specs[0], len(old))
    out = [()] * len(new)
    i = j = 0
    while i < len(old) or j < len(new):
        gi, gj = [i], [j]  # (a run of old and new dimensions of the same total size)
        if i >= len(old) or j >= len(new):
            break
        a, b = old[i], new[j]
        while a != b:
            if a < b:
                i += 1
                if i >= len(old):
                    break
                gi.append(i)
                a *= old[i]
            else:
                j += 1
                if j >= len(new):
                    break
                gj.append(j)
                b *= new[j]
        i, j = i + 1, j + 1
        names = tuple(n for d in gi for n in spec[d])
        if not names:
            continue
        if len(gj) == 1:
            if divides(names, new[gj[0]], sizes):
                out[gj[0]] = names
        elif len(gi) == 1:
            first = next((k for k in gj if new[k] != 1), gj[0])
            if divides(names, new[first], sizes):
                out[first] = names
    return tuple(out)
