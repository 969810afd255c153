"""State discharge: a jaxpr that reads and writes references, turned into one that passes
their values instead.

The discharged jaxpr takes the values of the references it was given (and of the `Ref`s it
holds as constants) where it took the references, and returns their final values after its
own outputs; references it makes itself (`new_ref` ... `freeze`) become plain values. It is
traced by evaluating the original equations with each reference standing as a box (`_Cell`)
of its current value: a read is that value indexed, a write replaces the box's value with
the value updated (lax operations, indexing.py), a call of a jaxpr taking references is
inlined, and a call, loop or branch whose jaxpr makes and drops references of its own gets
that jaxpr discharged. What cannot be discharged (a loop body writing a reference from outside it)
raises, naming the primitive.

jit runs the discharged jaxpr (transforms/jit.py): the references passed in are read before
the call and written after it, so they change in place as in JAX.
"""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.core import Tracer
from didax._src.interpreters.staging import trace_to_jaxpr
from didax._src.ir import UNKNOWN, ClosedJaxpr, Jaxpr, Literal, derived, literal_value
from didax._src.lax.elementwise import add
from didax._src.state import indexing
from didax._src.state.primitives import (
    addupdate_p,
    freeze_p,
    get_p,
    new_ref_p,
    ref_get,
    ref_set,
    swap_p,
)
from didax._src.state.types import AbstractRef, Ref


class Discharged:
    """A jaxpr's discharged form: `jaxpr` takes the values of `ref_consts` (the `Ref`s it
    held as constants), then its inputs (the values of the references among them, at
    `ref_inputs`), and returns its `num_out` outputs, then the final values of `ref_consts`,
    then those of the references passed in."""

    __slots__ = ("jaxpr", "ref_consts", "ref_inputs", "num_out")

    def __init__(self, jaxpr, ref_consts, ref_inputs, num_out):
        self.jaxpr = jaxpr
        self.ref_consts = ref_consts
        self.ref_inputs = ref_inputs
        self.num_out = num_out

    @property
    def same_signature(self) -> bool:
        """Whether it takes and returns what the original does (its references were all its
        own)."""
        return not self.ref_consts and not self.ref_inputs


def has_state(closed) -> bool:
    """Whether `closed` (a ClosedJaxpr) reads, writes, makes or takes references, itself or in
    a sub-jaxpr."""
    return derived(closed, "state.has_state", lambda: any(
        type(c) is Ref for c in closed.consts) or _has_state(closed.jaxpr))


def _has_state(jaxpr: Jaxpr) -> bool:
    if any(type(v.aval) is AbstractRef for v in jaxpr.invars + jaxpr.constvars):
        return True
    for eqn in jaxpr.eqns:
        if eqn.primitive.traits.refs:
            return True
        for v in eqn.params.values():
            for sub in (v if type(v) is tuple else (v,)):
                if (isinstance(sub, ClosedJaxpr) and has_state(sub)
                        or isinstance(sub, Jaxpr) and _has_state(sub)):
                    return True
    return False


def discharge(closed: ClosedJaxpr) -> Discharged | None:
    """The discharged form of `closed`, or None if it has no state (made once per jaxpr)."""
    d = closed.discharged
    if d is UNKNOWN:
        d = closed.discharged = (derived(closed, "state.discharged", lambda: _discharge(closed))
                                 if has_state(closed) else None)
    return d


class _Cell:
    """A reference while discharging: the box of its current value (a traced value)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _discharge(closed: ClosedJaxpr) -> Discharged:
    jaxpr = closed.jaxpr
    ref_consts = _ref_consts(closed, {})
    ref_inputs = tuple(i for i, v in enumerate(jaxpr.invars) if type(v.aval) is AbstractRef)
    in_avals = ([b.aval.inner_aval for b in ref_consts]
                + [v.aval.inner_aval if type(v.aval) is AbstractRef else v.aval
                   for v in jaxpr.invars])
    num_out = len(jaxpr.outvars)

    def fun(*args):
        n = len(ref_consts)
        cells = {id(b): _Cell(x) for b, x in zip(ref_consts, args[:n])}
        ins = [_Cell(x) if type(v.aval) is AbstractRef else x
               for v, x in zip(jaxpr.invars, args[n:])]
        outs = _evaluate(jaxpr, closed.consts, ins, cells)
        return (outs + [cells[id(b)].value for b in ref_consts]
                + [ins[i].value for i in ref_inputs])

    new, _ = trace_to_jaxpr(fun, in_avals)
    return Discharged(new, ref_consts, ref_inputs, num_out)


def _ref_consts(closed, seen: dict) -> list:
    """The `Ref`s among the constants of `closed` and of the calls in it, each once."""
    for c in closed.consts:
        if type(c) is Ref:
            seen.setdefault(id(c), c)
        elif isinstance(c, Tracer) and type(c.aval) is AbstractRef:
            raise NotImplementedError("discharging a jaxpr that holds a traced reference as a "
                                      "constant: pass the reference in as an argument")
    for eqn in closed.jaxpr.eqns:
        key = eqn.primitive.traits.call_jaxpr_param
        if key is not None:
            _ref_consts(eqn.params[key], seen)
    return list(seen.values())


def _evaluate(jaxpr: Jaxpr, consts, args, cells) -> list:
    """Evaluates `jaxpr` (binding under the current interpreter) with references as cells."""
    env = {}

    def read(a):
        return literal_value(a) if type(a) is Literal else env[a]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = cells[id(c)] if type(c) is Ref else c
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        prim = eqn.primitive
        rule = _RULES.get(prim)
        if rule is not None:
            outs = rule(*ins, **eqn.params)
        else:
            key = prim.traits.call_jaxpr_param
            takes_refs = any(type(x) is _Cell for x in ins)
            if key is not None and (takes_refs or _ref_consts(eqn.params[key], {})):
                sub = eqn.params[key]  # inlined, its references the caller's cells
                outs = _evaluate(sub.jaxpr, sub.consts, ins, cells)
            else:  # (a call making references of its own keeps its rules: custom ones)
                if takes_refs:
                    raise NotImplementedError(
                        f"'{prim.name}' takes a mutable array reference as an operand (a Ref "
                        "read or written inside a loop or branch body made outside it), which "
                        "jit cannot discharge yet: pass its value in and out of the loop "
                        "instead (ref[...] before, ref[...] = result after)")
                outs = prim.bind(*ins, **_discharged_params(prim, eqn.params))
                if not prim.multiple_results:
                    outs = [outs]
        for v, x in zip(eqn.outvars, outs):
            env[v] = x
    results = [read(a) for a in jaxpr.outvars]
    if any(type(x) is _Cell for x in results):
        raise ValueError("a jitted function returned a mutable array reference, but mutable "
                         "array references cannot be returned: return ref[...] (or "
                         "jax.freeze(ref)) instead")
    return results


def _discharged_params(prim, params):
    """`params` with each sub-jaxpr that makes references of its own discharged (same
    signature)."""
    new = None
    for k, v in params.items():
        if isinstance(v, (Jaxpr, ClosedJaxpr)) or (type(v) is tuple and any(
                isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v)):
            items = v if type(v) is tuple else (v,)
            replaced = tuple(_discharged_sub(prim, x) for x in items)
            if any(a is not b for a, b in zip(replaced, items)):
                new = dict(params) if new is None else new
                new[k] = replaced if type(v) is tuple else replaced[0]
    return params if new is None else new


def _discharged_sub(prim, sub):
    if isinstance(sub, Jaxpr):
        if not _has_state(sub):
            return sub
        if sub.constvars:
            raise NotImplementedError(f"discharging a '{prim.name}' body with constants")
        sub_closed = ClosedJaxpr(sub, [])
    elif isinstance(sub, ClosedJaxpr):
        sub_closed = sub
    else:
        return sub
    d = discharge(sub_closed)
    if d is None:
        return sub
    if not d.same_signature:
        raise NotImplementedError(
            f"a '{prim.name}' body reads or writes a mutable array reference made outside it, "
            "which jit cannot discharge yet: pass its value in and out instead")
    if isinstance(sub, Jaxpr):
        if d.jaxpr.consts:
            raise NotImplementedError(f"discharging a '{prim.name}' body with constants")
        return d.jaxpr.jaxpr
    return d.jaxpr


# The rules: each takes the operands (references as cells) and returns the outputs.

def _new_ref(x, *, kind, memory_space):
    return [_Cell(x)]


def _get(cell, *dynamic, indexer):
    return [indexing.read(cell.value, indexer, dynamic)]


def _swap(cell, value, *dynamic, indexer):
    old = indexing.read(cell.value, indexer, dynamic)
    cell.value = indexing.write(cell.value, indexer, dynamic, value)
    return [old]


def _addupdate(cell, value, *dynamic, indexer):
    old = indexing.read(cell.value, indexer, dynamic)
    cell.value = indexing.write(cell.value, indexer, dynamic, add(old, value))
    return []


def _freeze(cell):
    return [cell.value]


_RULES = {new_ref_p: _new_ref, get_p: _get, swap_p: _swap, addupdate_p: _addupdate,
          freeze_p: _freeze}


# --------------------------------------------------------------------------------------
# Running a discharged jaxpr on references


def run(d: Discharged, operands, call):
    """Evaluating: `call(*values)` runs `d.jaxpr` on NumPy values; `operands` are the
    original operands (`Ref`s where references go, or, in generated code, the NumPy arrays
    standing for them). Reads the references, runs, writes them back; the outputs."""
    boxes = list(d.ref_consts) + [operands[i] for i in d.ref_inputs]
    values = [_buffer(b) for b in d.ref_consts]
    values += [_buffer(x) if i in d.ref_inputs else x for i, x in enumerate(operands)]
    outs = list(call(*values))
    for box, new in zip(boxes, outs[d.num_out:]):
        _store(box, new)
    return outs[:d.num_out]


def _buffer(x):
    if type(x) is Ref:
        return x._buf
    if isinstance(x, Tracer):
        raise core.escaped_tracer_error(x)
    return x


def _store(box, new):
    """Writes a new value into a reference; the reference owns its buffer, so the value (which
    outputs may share) is copied."""
    if type(box) is Ref:
        box._buf = np.array(new, dtype=box._buf.dtype)
    else:  # (the NumPy array standing for a reference in generated code)
        box[...] = new


def call_under_transformation(d: Discharged, operands, call):
    """Under a transformation: reads the references with `get` (so the transformation sees
    the reads), `call(*values)` binds the discharged jaxpr, writes back with `swap`."""
    boxes = list(d.ref_consts) + [operands[i] for i in d.ref_inputs]
    values = [ref_get(b) for b in d.ref_consts]
    values += [ref_get(x) if i in d.ref_inputs else x for i, x in enumerate(operands)]
    outs = list(call(*values))
    for box, new in zip(boxes, outs[d.num_out:]):
        ref_set(box, (), new)
    return outs[:d.num_out]
