"""The primitives of mutable array references, each with all its rules, and the functions
binding them (`new_ref`, `freeze`, `ref_get`, `ref_set`, `ref_swap`, `ref_addupdate`, and the
indexing of `Ref`s and of traced references).

    new_ref[kind memory_space] x  -> a new reference holding a copy of x
    get[indexer] ref *idx         -> the part of its value the index names     (d <- a[...])
    swap[indexer] ref v *idx      -> that part, which v then replaces    (e, a[1] <- a[1], v)
    addupdate[indexer] ref v *idx -> (nothing) v added to that part                (a[...] += v)
    freeze ref                    -> its value                                     (freeze a)

All are effectful (jit's passes never drop, merge or fold them) and declare `refs` (no other
primitive takes a reference; differentiation runs `new_ref`'s JVP rule even for a value
without a tangent). Outside transformations the impls read and write a `Ref`'s buffer.

Differentiation: the tangent of a reference is a `TangentBox`, a Python box holding the
tangent of its current value; reads and writes of the reference read and write the box with
lax operations (indexing.py), so tangent code is plain array code that partial evaluation
stages and transposition transposes, and only the primal computation touches references (as
JAX's `jvp` gives a reference a tangent reference). Writing a value with a tangent into a
reference made outside the differentiated function raises, as in JAX.

Batching: a reference batched along a dimension is read and written with a whole slice
there; a value written into it is broadcast along the batch; indices varying over the batch,
and batched values written into unbatched references, raise.
"""
from __future__ import annotations

import numpy as np

from didax._src import core, dtypes
from didax._src.base_prims import add_tangents, instantiate
from didax._src.core import ShapedArray, Tracer, Zero, get_aval
from didax._src.errors import user_error
from didax._src.interpreters import batching
from didax._src.interpreters.staging import StagingInterpreter, StagingTracer
from didax._src.ir import DropVar, pp_aval
from didax._src.lax.elementwise import add
from didax._src.primitives.prng import KeyArrayType
from didax._src.state import indexing
from didax._src.state.indexing import Indexer, check, check_value, numpy_index, parse_index
from didax._src.state.types import AbstractRef, Ref, ref_buffer

# --------------------------------------------------------------------------------------
# new_ref

new_ref_p = core.primitive("new_ref")
new_ref_p.def_traits(effectful=True, refs=True)


def _new_ref_aval(x, *, kind, memory_space):
    if type(x) is not ShapedArray:
        raise TypeError(f"new_ref: a reference holds an array, got a {x.str_short()} value")
    return AbstractRef(x)


new_ref_p.def_impl(lambda x, *, kind, memory_space: np.array(x))  # (a copy it alone owns)
new_ref_p.def_abstract_eval(_new_ref_aval)


class TangentBox:
    """The tangent of a reference while it is differentiated: the tangent of its current
    value (`value`, a tangent or a symbolic Zero), which the JVP rules of reads and writes
    read and replace."""

    __slots__ = ("value", "aval")

    def __init__(self, value, aval: AbstractRef):
        self.value = value
        self.aval = aval

    def __repr__(self):
        return f"TangentBox({self.value!r})"


def _differentiable(aval) -> bool:
    return dtypes.kind(aval.dtype) in "fc"


def _new_ref_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = new_ref_p.bind(x, **params)
    aval = get_aval(out)
    if not _differentiable(aval):  # (an integer reference's tangent is always zero)
        t = Zero(aval.inner_aval.to_tangent_aval())
    return out, TangentBox(t, aval.to_tangent_aval())


new_ref_p.def_jvp(_new_ref_jvp)


def _new_ref_batch(size, vals, dims, **params):
    """Batched even from an unbatched value (as JAX's): later writes may be batched."""
    (x,), (d,) = vals, dims
    if d is None:
        x, d = batching.bdim_at_front(x, None, size), 0
    return new_ref_p.bind(x, **params), d


new_ref_p.def_batch(_new_ref_batch)

# --------------------------------------------------------------------------------------
# get

get_p = core.primitive("get")
get_p.def_traits(effectful=True, refs=True)


def _get_impl(ref, *dynamic, indexer):
    return np.array(ref_buffer(ref)[numpy_index(indexer, dynamic)])


def _get_aval(ref, *dynamic, indexer):
    return check("get", ref, dynamic, indexer)


def _box(t):
    """A reference's tangent: its TangentBox, or a Zero for a reference made outside
    differentiation; anything else is a tangent given for a reference argument."""
    if type(t) is not TangentBox and type(t) is not Zero:
        raise TypeError(
            "differentiating with respect to a mutable array reference is not supported "
            f"(a {get_aval(t).str_short()} tangent was given for a reference).\nWhat to do: "
            "differentiate with respect to its value (pass ref[...] and make the reference "
            "inside the function), or exclude the reference with argnums")
    return t


def _tangent_value(box, part_aval):
    """The tangent of the whole value of a reference whose tangent is `box` (a Zero for a
    reference made outside differentiation)."""
    box = _box(box)
    if type(box) is Zero or type(box.value) is Zero:
        return Zero(part_aval.to_tangent_aval())
    return box.value


def _get_jvp(primals, tangents, *, indexer):
    ref, *dynamic = primals
    box = _box(tangents[0])
    out = get_p.bind(ref, *dynamic, indexer=indexer)
    aval = get_aval(out)
    if type(box) is Zero or type(box.value) is Zero or not _differentiable(aval):
        return out, Zero(aval.to_tangent_aval())
    return out, indexing.read(box.value, indexer, dynamic)


def _get_batch(size, vals, dims, *, indexer):
    ref, *dynamic = vals
    ref_dim, *index_dims = dims
    if all(d is None for d in dims):  # (the rule runs for every reference operation)
        return get_p.bind(ref, *dynamic, indexer=indexer), None
    if any(d is not None for d in index_dims):  # the whole value, indexed per example
        whole = get_p.bind(ref, indexer=None)
        out, = batching.vmap_flat(lambda w, *idx: [indexing.read(w, indexer, idx)],
                                  [whole, *dynamic], dims, size)
        return out, 0
    new = indexing.batched(indexer, ref_dim, size, get_aval(ref).shape)
    return (get_p.bind(ref, *dynamic, indexer=new),
            indexing.result_batch_dim(indexer, ref_dim))


get_p.def_impl(_get_impl)
get_p.def_abstract_eval(_get_aval)
get_p.def_jvp(_get_jvp)
get_p.def_batch(_get_batch)

# --------------------------------------------------------------------------------------
# swap


swap_p = core.primitive("swap")
swap_p.def_traits(effectful=True, refs=True)


def _swap_impl(ref, value, *dynamic, indexer):
    buf = ref_buffer(ref)
    index = numpy_index(indexer, dynamic)
    old = np.array(buf[index])
    buf[index] = value
    return old


def _swap_aval(ref, value, *dynamic, indexer):
    part = check("swap", ref, dynamic, indexer)
    check_value("swap", ref, part, value, indexer)
    return part


def _undifferentiated_ref_error(ref):
    return ValueError(
        "performing a set/swap operation with a differentiated value on a non-differentiated "
        f"array reference of type {get_aval(ref)!r}: the reference was made outside the "
        "function being differentiated, so there is nowhere to keep the value's derivative.\n"
        "What to do: make the reference inside the differentiated function (jax.new_ref), or "
        "write jax.lax.stop_gradient(value).")


def _check_differentiated(ref, box, t_value):
    """(before the primal write: a failed write writes nothing)"""
    if type(_box(box)) is Zero and type(t_value) is not Zero:
        raise _undifferentiated_ref_error(ref)


def _write_tangent(ref, box, indexer, dynamic, t_value, combine):
    """Updates the tangent box of `ref` for a write of a value with tangent `t_value`
    (`combine(old part, t_value)` is the new part); returns the old part's tangent."""
    part_aval = get_aval(ref).inner_aval
    if type(box) is Zero:
        return None
    if not _differentiable(part_aval):
        return None
    old_whole = box.value
    old_part = (Zero(ShapedArray(indexer.result_shape, part_aval.dtype).to_tangent_aval())
                if indexer is not None else Zero(part_aval.to_tangent_aval()))
    if type(old_whole) is not Zero:
        old_part = indexing.read(old_whole, indexer, dynamic)
    new_part = combine(old_part, t_value)
    if type(new_part) is Zero and type(old_whole) is Zero:
        return old_part
    whole = instantiate(old_whole) if type(old_whole) is Zero else old_whole
    box.value = indexing.write(whole, indexer, dynamic, instantiate(new_part))
    return old_part


def _swap_jvp(primals, tangents, *, indexer):
    ref, value, *dynamic = primals
    _check_differentiated(ref, tangents[0], tangents[1])
    out = swap_p.bind(ref, value, *dynamic, indexer=indexer)
    old = _write_tangent(ref, tangents[0], indexer, dynamic, tangents[1],
                         lambda old, new: new)
    return out, (Zero(get_aval(out).to_tangent_aval()) if old is None else old)


def _unbatched_ref(name, ref):
    return ValueError(
        f"vmap: `{name}` of a value that varies over the batch into a Ref "
        f"({get_aval(ref)!r}) made outside the vmapped function, which holds one value "
        "for the whole batch.\nWhat to do: make the reference inside the vmapped function, "
        "or pass it in with in_axes=0 so that it holds one value per example.")


def _write_batched_index(name, size, vals, dims, indexer, combine):
    """A write at indices varying over the batch: the whole value of the (batched)
    reference updated per example and written back; the old parts, batched along 0."""
    ref, value, *dynamic = vals
    ref_dim, value_dim, *index_dims = dims
    if ref_dim is None:
        raise _unbatched_ref(name, ref)
    whole = get_p.bind(ref, indexer=None)

    def update(w, v, *idx):
        old = indexing.read(w, indexer, idx)
        return [old, indexing.write(w, indexer, idx, combine(old, v))]

    old, new = batching.vmap_flat(update, [whole, value, *dynamic], dims, size)
    swap_p.bind(ref, batching.moveaxis(new, 0, ref_dim), indexer=None)
    return old


def _written_value(name, size, ref, ref_dim, value, value_dim, indexer):
    """The value (batched along where the part of a batched reference lands) and that
    dimension; raises for a batched value written into an unbatched reference."""
    if ref_dim is None:
        raise _unbatched_ref(name, ref)
    out_dim = indexing.result_batch_dim(indexer, ref_dim)
    return batching.matchaxis(value, value_dim, out_dim, size), out_dim


def _swap_batch(size, vals, dims, *, indexer):
    ref, value, *dynamic = vals
    ref_dim, value_dim, *index_dims = dims
    if all(d is None for d in dims):
        return swap_p.bind(ref, value, *dynamic, indexer=indexer), None
    if any(d is not None for d in index_dims):
        return _write_batched_index("swap", size, vals, dims, indexer, lambda old, v: v), 0
    value, out_dim = _written_value("swap", size, ref, ref_dim, value, value_dim, indexer)
    new = indexing.batched(indexer, ref_dim, size, get_aval(ref).shape)
    return swap_p.bind(ref, value, *dynamic, indexer=new), out_dim


swap_p.def_impl(_swap_impl)
swap_p.def_abstract_eval(_swap_aval)
swap_p.def_jvp(_swap_jvp)
swap_p.def_batch(_swap_batch)

# --------------------------------------------------------------------------------------
# addupdate

addupdate_p = core.primitive("addupdate", multiple_results=True)
addupdate_p.def_traits(effectful=True, refs=True)


def _addupdate_impl(ref, value, *dynamic, indexer):
    buf = ref_buffer(ref)
    index = numpy_index(indexer, dynamic)
    buf[index] = buf[index] + value
    return []


def _addupdate_aval(ref, value, *dynamic, indexer):
    part = check("addupdate", ref, dynamic, indexer)
    check_value("addupdate", ref, part, value, indexer)
    if part.dtype == np.bool_:
        raise TypeError(f"addupdate: cannot add to a boolean reference ({ref.str_short()})")
    return []


def _addupdate_jvp(primals, tangents, *, indexer):
    ref, value, *dynamic = primals
    _check_differentiated(ref, tangents[0], tangents[1])
    addupdate_p.bind(ref, value, *dynamic, indexer=indexer)
    _write_tangent(ref, tangents[0], indexer, dynamic, tangents[1],
                   add_tangents)
    return [], []


def _addupdate_batch(size, vals, dims, *, indexer):
    ref, value, *dynamic = vals
    ref_dim, value_dim, *index_dims = dims
    if all(d is None for d in dims):
        addupdate_p.bind(ref, value, *dynamic, indexer=indexer)
        return [], []
    if any(d is not None for d in index_dims):
        _write_batched_index("addupdate", size, vals, dims, indexer, add)
        return [], []
    value, _ = _written_value("addupdate", size, ref, ref_dim, value, value_dim, indexer)
    new = indexing.batched(indexer, ref_dim, size, get_aval(ref).shape)
    addupdate_p.bind(ref, value, *dynamic, indexer=new)
    return [], []


addupdate_p.def_impl(_addupdate_impl)
addupdate_p.def_abstract_eval(_addupdate_aval)
addupdate_p.def_jvp(_addupdate_jvp)
addupdate_p.def_batch(_addupdate_batch)

# --------------------------------------------------------------------------------------
# freeze

freeze_p = core.primitive("freeze")
freeze_p.def_traits(effectful=True, refs=True)


def _freeze_aval(ref):
    return check("freeze", ref, (), None)


def _freeze_jvp(primals, tangents):
    (ref,), (box,) = primals, tangents
    _box(box)
    out = freeze_p.bind(ref)
    return out, _tangent_value(box, get_aval(out))


freeze_p.def_impl(lambda ref: np.array(ref_buffer(ref)))
freeze_p.def_abstract_eval(_freeze_aval)
freeze_p.def_jvp(_freeze_jvp)
freeze_p.def_batch(lambda size, vals, dims: (freeze_p.bind(*vals), dims[0]))

# --------------------------------------------------------------------------------------
# Partial evaluation: a reference's value is either known or not, for its whole life

_READS_AND_WRITES = (get_p, swap_p, addupdate_p)


def _partial_eval(prim):
    def rule(pe, args, params):
        ref = args[0]
        if not (type(ref) is StagingTracer and ref._interp is pe):
            raise NotImplementedError(
                f"partial evaluation of `{prim.name}` on a reference whose value is known with "
                "an index or value that is not: the known computation would not see the "
                "write. Make the reference from an unknown value, or discharge the references "
                "first (didax._src.state.discharge)")
        return StagingInterpreter.process_primitive(pe, prim, args, params)
    return rule


for _p in _READS_AND_WRITES:
    _p.def_rule("partial_eval", _partial_eval(_p))
for _p in (new_ref_p, get_p, swap_p, addupdate_p, freeze_p):
    _p.mark_absent("transpose", "differentiation keeps references in the primal computation "
                   "(a reference's tangent is array code): linear jaxprs never hold them")

# --------------------------------------------------------------------------------------
# Printing, as JAX prints them


def _index_text(eqn, dynamic_at, names):
    indexer = eqn.params["indexer"]
    if indexer is None:
        return "[...]"
    return indexer.text(lambda k: names(eqn.invars[dynamic_at + k]))


def _binder(v, names):
    return f"{names(v)}:{pp_aval(v.aval)}"


def _pp_get(eqn, names):
    out = _binder(eqn.outvars[0], names)
    return f"{out} <- {names(eqn.invars[0])}{_index_text(eqn, 1, names)}"


def _pp_swap(eqn, names):
    out_var = eqn.outvars[0]
    out = None if type(out_var) is DropVar else _binder(out_var, names)
    ref = names(eqn.invars[0]) + _index_text(eqn, 2, names)
    value = names(eqn.invars[1])
    if out is None:
        return f"{ref} <- {value}"
    return f"{out}, {ref} <- {ref}, {value}"


def _pp_addupdate(eqn, names):
    ref = names(eqn.invars[0]) + _index_text(eqn, 2, names)
    return f"{ref} += {names(eqn.invars[1])}"


get_p.pp_rule = _pp_get
swap_p.pp_rule = _pp_swap
addupdate_p.pp_rule = _pp_addupdate

# --------------------------------------------------------------------------------------
# The functions binding them


def _ref_aval(ref, what) -> AbstractRef:
    aval = get_aval(ref) if isinstance(ref, (Ref, Tracer)) else None
    if type(aval) is not AbstractRef:
        raise user_error(TypeError, f"{what}: expected a mutable array reference (a Ref, made "
                         f"by jax.new_ref), got {_describe(ref)}")
    return aval


def _describe(x) -> str:
    try:
        return f"a {get_aval(x).str_short()} value"
    except TypeError:
        return f"a {type(x).__name__}"


def new_ref(init_val, *, memory_space=None, kind=None):
    """A mutable array reference holding (a copy of) `init_val`."""
    try:
        aval = get_aval(init_val)
    except TypeError:
        raise user_error(TypeError, (
            "Error interpreting argument to new_ref as a JAX value: the value is of type "
            f"{type(init_val).__name__}; pass an array (jnp.asarray(...)) or a Python "
            "number")) from None
    if type(aval) is KeyArrayType:
        raise user_error(NotImplementedError, (
            f"new_ref of a typed key array ({aval.str_short()}) is not supported: didax's key "
            "arrays are pytrees over uint32 key data, which references do not hold yet.\n"
            "What to do: hold `jax.random.key_data(key)` in the reference and wrap what you "
            "read with `jax.random.wrap_key_data`."))
    if type(aval) is not ShapedArray:
        raise user_error(TypeError, f"new_ref: a reference holds an array, got a reference "
                         f"({aval.str_short()})")
    return new_ref_p.bind(init_val, kind=kind, memory_space=memory_space)


def freeze(ref):
    """The final value of the reference `ref` (which should not be used after)."""
    _ref_aval(ref, "freeze")
    return freeze_p.bind(ref)


def _parse(ref, idx, what):
    aval = _ref_aval(ref, what)
    if idx is None:
        return None, []
    try:
        return parse_index(idx, aval)
    except (TypeError, ValueError, IndexError, NotImplementedError) as e:
        raise user_error(type(e), str(e)) from None


def ref_get(ref, idx=()):
    """`ref[idx]`: a copy of the part of the reference's value the index names."""
    indexer, dynamic = _parse(ref, idx, "get")
    return get_p.bind(ref, *dynamic, indexer=indexer)


def ref_swap(ref, idx, value):
    """Writes `value` to `ref[idx]` and returns what was there."""
    indexer, dynamic = _parse(ref, idx, "swap")
    return swap_p.bind(ref, value, *dynamic, indexer=indexer)


def ref_set(ref, idx, value) -> None:
    """`ref[idx] = value`."""
    ref_swap(ref, idx, value)


def ref_addupdate(ref, idx, value) -> None:
    """`ref[idx] += value`, in one operation."""
    indexer, dynamic = _parse(ref, idx, "addupdate")
    addupdate_p.bind(ref, value, *dynamic, indexer=indexer)


def _addupdate_method(self, x, idx=()):
    ref_addupdate(self, idx, x)


def _traced_addupdate(self):
    """`r.addupdate(x, idx)` of a traced reference (as JAX's tracers delegate it to their
    type); arrays have no such method."""
    if type(self.aval) is not AbstractRef:
        raise AttributeError(f"{type(self).__name__!r} object has no attribute 'addupdate'")
    return _addupdate_method.__get__(self)


Ref.__getitem__ = ref_get
Ref.__setitem__ = ref_set
Ref.addupdate = _addupdate_method
AbstractRef._getitem = staticmethod(ref_get)
AbstractRef._setitem = staticmethod(ref_set)
core.ArrayBase.addupdate = property(_traced_addupdate)

__all__ = ["Indexer", "TangentBox", "addupdate_p", "freeze", "freeze_p", "get_p", "new_ref",
           "new_ref_p", "ref_addupdate", "ref_get", "ref_set", "ref_swap", "swap_p"]
