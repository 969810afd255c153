"""`export`: a jitted function as a program that can be called, serialized, and loaded
by another process without the function's source.

The program is the jaxpr jit traces, in didax's own encoding (serialize.py); calling it
(before or after a round trip through bytes) evaluates it under a jit of its own, which
optimises and compiles it as jit compiles the function: the same bits as calling the
jitted function. Symbolic dimensions: see polymorphic.py.
"""
from __future__ import annotations

import base64
import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from didax._src import core
from didax._src.core import ShapedArray
from didax._src.errors import user_error
from didax._src.export import polymorphic, serialize
from didax._src.export.rule_params import PARAM_RULES
from didax._src.export.symbolic import DimExpr, SymbolicScope, is_symbolic_dim
from didax._src.ir import eval_jaxpr
from didax._src.transforms.api import ShapeDtypeStruct
from didax._src.transforms.jit import JitWrapped, jit
from didax._src.tree_util import PyTreeDef, _nodes, _treedef, tree_flatten, tree_unflatten

# didax's calling conventions are the versions of its serialization format.
minimum_supported_calling_convention_version = min(serialize.SUPPORTED_VERSIONS)
maximum_supported_calling_convention_version = max(serialize.SUPPORTED_VERSIONS)


def default_export_platform() -> str:
    """The platform didax runs on: "cpu"."""
    return "cpu"


class DisabledSafetyCheck:
    """A safety check not to make when calling an exported function (as JAX's). didax
    records them; it makes no platform or custom-call checks, so none changes a call."""

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        return self._impl[len("custom_call:"):] if self._impl.startswith("custom_call:") \
            else None

    def __str__(self):
        return self._impl

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self):
        return hash(self._impl)


# --------------------------------------------------------------------------------------
# Pytree node serialization


@dataclasses.dataclass(frozen=True)
class _NodeSerialization:
    nodetype: type
    name: str
    serialize_auxdata: Callable | None  # None for namedtuples
    deserialize_auxdata: Callable | None


_by_type: dict[type, _NodeSerialization] = {}
_by_name: dict[str, _NodeSerialization] = {}


def _register(entry: _NodeSerialization):
    if entry.nodetype in _by_type:
        raise user_error(ValueError, f"Duplicate serialization registration for type "
                         f"`{entry.nodetype}`. Previous registration was with "
                         f"serialized_name `{_by_type[entry.nodetype].name}`.")
    if entry.name in _by_name:
        raise user_error(ValueError, f"Duplicate serialization registration for "
                         f"serialized_name `{entry.name}`. Previous registration was for "
                         f"type `{_by_name[entry.name].nodetype}`.")
    _by_type[entry.nodetype] = _by_name[entry.name] = entry
    return entry.nodetype


def register_pytree_node_serialization(nodetype, *, serialized_name: str,
                                       serialize_auxdata: Callable[[Any], bytes],
                                       deserialize_auxdata: Callable[[bytes], Any],
                                       from_children=None):
    """Lets exported functions take or return the pytree node type `nodetype` (registered
    with `tree_util`), its auxiliary data written by `serialize_auxdata` as bytes. didax
    rebuilds nodes with the type's registered unflatten; `from_children` is accepted and
    not needed."""
    if nodetype not in _nodes:
        raise user_error(ValueError, (
            f"Cannot register serialization for {nodetype}: it is not a registered pytree "
            "node type.\nWhat to do: register it with tree_util.register_pytree_node first."))
    return _register(_NodeSerialization(nodetype, serialized_name, serialize_auxdata,
                                        deserialize_auxdata))


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Lets exported functions take or return the namedtuple class `nodetype`."""
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and hasattr(nodetype, "_fields")):
        raise user_error(ValueError, f"Cannot register serialization for {nodetype}: it is "
                         "not a namedtuple class")
    return _register(_NodeSerialization(nodetype, serialized_name, None, None))


def _encode_tree(tree: PyTreeDef):
    return _encode_spec(tree._spec)


def _encode_spec(spec):
    if spec is None:
        return None
    kind, aux, children = spec
    kids = [_encode_spec(c) for c in children]
    if kind is tuple or kind is list:
        return [kind.__name__, None, kids]
    if kind is dict:
        keys = list(aux)
        if not all(type(k) in (str, int) for k in keys):
            raise user_error(ValueError, f"Cannot serialize a PyTreeDef with dictionary keys "
                             f"{keys}: only str and int keys are serialized")
        return ["dict", keys, kids]
    if kind is type(None):
        return ["None", None, kids]
    entry = _by_type.get(kind)
    if entry is None and kind.__module__.startswith("didax."):
        raise user_error(ValueError, (
            f"Cannot serialize an exported function taking or returning didax's "
            f"{kind.__name__} values (its pytree node type has no serialization).\nWhat to "
            "do: pass and return plain arrays (for typed PRNG keys: random.key_data(key) "
            "in, random.wrap_key_data inside)."))
    if entry is None:
        raise user_error(ValueError, (
            f"Cannot serialize PyTreeDef containing an unregistered type `{kind}`. Use "
            "`export.register_pytree_node_serialization` or "
            "`export.register_namedtuple_serialization`."))
    if entry.serialize_auxdata is None:
        return ["namedtuple", entry.name, kids]
    raw = entry.serialize_auxdata(aux)
    if not isinstance(raw, (bytes, bytearray)):
        raise user_error(TypeError, f"serialize_auxdata for `{entry.name}` returned "
                         f"{type(raw).__name__}, not bytes")
    return ["custom", [entry.name, base64.b64encode(bytes(raw)).decode()], kids]


def _decode_tree(x) -> PyTreeDef:
    spec = _decode_spec(x)
    return _treedef(spec) if spec is not None else tree_flatten(0)[1]


def _decode_spec(x):
    if x is None:
        return None
    try:
        kind, aux, kids = x
        children = tuple(_decode_spec(c) for c in kids)
    except (TypeError, ValueError):
        raise serialize.DeserializationError(f"deserialize: malformed pytree {x!r}") from None
    if kind in ("tuple", "list", "None"):
        return ({"tuple": tuple, "list": list, "None": type(None)}[kind], None, children)
    if kind == "dict":
        return (dict, tuple(aux), children)
    name = aux if kind == "namedtuple" else aux[0] if kind == "custom" else None
    entry = _by_name.get(name) if isinstance(name, str) else None
    if entry is None:
        raise user_error(serialize.DeserializationError, (
            f"deserialize: the pytree node `{name}` is not registered for serialization in "
            "this process.\nWhat to do: call export.register_pytree_node_serialization or "
            "export.register_namedtuple_serialization for it before deserializing."))
    if kind == "namedtuple":
        return (entry.nodetype, None, children)
    return (entry.nodetype, entry.deserialize_auxdata(base64.b64decode(aux[1])), children)


# --------------------------------------------------------------------------------------
# Types with symbolic shapes


def _aval(shape, dtype, weak=False):
    """A ShapedArray, possibly with symbolic dimensions (not interned: never traced)."""
    if not any(is_symbolic_dim(d) for d in shape):
        return ShapedArray(shape, dtype, weak)
    a = object.__new__(ShapedArray)
    a.shape, a.dtype, a.weak_type = tuple(shape), np.dtype(dtype), bool(weak)
    return a


def _encode_avals(avals):
    return [[serialize.encode_dtype(a.dtype), [polymorphic.encode_dim(d) for d in a.shape],
             bool(a.weak_type)] for a in avals]


def _decode_avals(xs, scope):
    try:
        return tuple(_aval([polymorphic.decode_dim(d, scope) for d in shape],
                           serialize.decode_dtype(dt), bool(weak)) for dt, shape, weak in xs)
    except (TypeError, ValueError) as e:
        if isinstance(e, serialize.DeserializationError):
            raise
        raise serialize.DeserializationError(f"deserialize: malformed types {xs!r}") from None


# --------------------------------------------------------------------------------------
# Exported


class Exported:
    """An exported function: its argument and result structures and types, and its
    program in didax's encoding.

    As JAX's, with what didax has in place of XLA's: `platforms` is ("cpu",) unless given;
    `calling_convention_version` is the version of didax's format; `mlir_module()` gives
    the program's jaxpr as text (didax has no StableHLO) and `mlir_module_serialized` is
    the program's serialized bytes; shardings are None, `nr_devices` 1; `vjp()` raises
    NotImplementedError (differentiate `call` instead: custom rules are kept)."""

    def __init__(self, *, fun_name, in_tree, in_avals, out_tree, out_avals, platforms,
                 program, blobs, scope, disabled_safety_checks=(),
                 calling_convention_version=serialize.FORMAT_VERSION):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.in_avals = tuple(in_avals)
        self.out_tree = out_tree
        self.out_avals = tuple(out_avals)
        self.platforms = tuple(platforms)
        self.calling_convention_version = calling_convention_version
        self.disabled_safety_checks = tuple(disabled_safety_checks)
        self.ordered_effects = ()
        self.unordered_effects = ()
        self.nr_devices = 1
        self.in_shardings_hlo = (None,) * len(self.in_avals)
        self.out_shardings_hlo = (None,) * len(self.out_avals)
        self.module_kept_var_idx = tuple(range(len(self.in_avals)))
        self._program = program  # the document (with $dim expressions if symbolic)
        self._blobs = blobs
        self._scope = scope
        self._instances: dict = {}  # dimension values -> jitted evaluation of the program
        self.uses_global_constants = scope is not None

    def __repr__(self):
        return (f"Exported(fun_name={self.fun_name!r}, in_tree={self.in_tree}, "
                f"in_avals={self.in_avals}, out_tree={self.out_tree}, "
                f"out_avals={self.out_avals}, platforms={self.platforms}, "
                f"calling_convention_version={self.calling_convention_version})")

    def in_shardings_jax(self, mesh=None):
        return (None,) * len(self.in_avals)

    def out_shardings_jax(self, mesh=None):
        return (None,) * len(self.out_avals)

    def has_vjp(self) -> bool:
        return False

    def vjp(self):
        raise NotImplementedError(
            "Exported.vjp: didax does not export derivative programs separately.\nWhat to do: "
            "differentiate `exp.call` with grad or vjp (the program keeps its custom rules), "
            "or export jit(grad(f)).")

    def mlir_module(self) -> str:
        """The program as jaxpr text (at the first sizes it was traced at, if symbolic)."""
        return str(self._instance(self._sample_env())[1])

    @property
    def mlir_module_serialized(self) -> bytes:
        return self.serialize()

    # calling ---------------------------------------------------------------------------

    def call(self, *args, **kwargs):
        flat, in_tree = tree_flatten((args, kwargs))
        if in_tree != self.in_tree:
            raise user_error(ValueError, (
                "The invocation args and kwargs must have the same pytree structure as when "
                f"the function '{self.fun_name}' was exported, but they have the structure "
                f"{in_tree} in the invocation and {self.in_tree} when exported."))
        env = self._bind_dims(flat)
        run, _ = self._instance(env)
        return tree_unflatten(self.out_tree, run(*flat))


    def _bind_dims(self, flat) -> dict:
        env: dict = {}
        pending = []
        for i, (x, aval) in enumerate(zip(flat, self.in_avals)):
            got = core.get_aval(x)
            where = f"args[{i}]"
            if got.dtype != aval.dtype:
                raise user_error(ValueError, f"Dtype mismatch for {where}: expected "
                                 f"{aval.dtype} and called with {got.dtype}")
            if len(got.shape) != len(aval.shape):
                raise user_error(ValueError, f"Rank mismatch for {where}: expected "
                                 f"{_shape_str(aval.shape)} and called with {got.shape}")
            for j, (d, n) in enumerate(zip(aval.shape, got.shape)):
                if isinstance(d, DimExpr):
                    pending.append((d, n, f"{where}.shape[{j}]"))
                elif d != n:
                    raise user_error(ValueError, (
                        f"Shape mismatch for {where}.shape[{j}] (expected same constant): "
                        f"expected {_shape_str(aval.shape)} and called with {got.shape}"))
        for _ in range(len(pending) + 1):  # bind variables alone in a dimension first
            progress = False
            for d, n, where in pending:
                unknown = d.variables() - env.keys()
                if len(unknown) == 1:
                    (v,) = unknown
                    lin = d.linear_in(v)
                    if lin is not None and lin[0] != 0:
                        coef, rest = lin
                        rest = rest.evaluate(env) if isinstance(rest, DimExpr) else rest
                        if (n - rest) % coef == 0:
                            env[v] = (n - rest) // coef
                            progress = True
                            continue
                        raise user_error(ValueError, (
                            f"Input shapes do not match the symbolic shapes: {where} = {n} "
                            f"is not a value of '{d}' for an integer '{v}'"))
            if not progress:
                break
        for d, n, where in pending:
            if d.variables() - env.keys():
                raise user_error(ValueError, (
                    f"Cannot solve for the values of the dimension variables "
                    f"{sorted(d.variables() - env.keys())} from {where} = {n} ('{d}')"))
            if d.evaluate(env) != n:
                raise user_error(ValueError, (
                    f"Input shapes do not match the symbolic shapes specification: {where} "
                    f"= {n}, but '{d}' = {d.evaluate(env)} with {_env_str(env)} (found from "
                    "other dimensions)"))
        for v, n in sorted(env.items()):
            if n < 1:
                raise user_error(ValueError, (
                    "Input shapes do not match the polymorphic shapes specification. Expected "
                    f"value >= 1 for dimension variable '{v}'; obtained '{v}' = {n} from the "
                    f"arguments' shapes {[tuple(core.get_aval(x).shape) for x in flat]}."))
        if self._scope is not None:
            self._scope.check(env)
        return env

    def _sample_env(self) -> dict:
        names = sorted({v for a in self.in_avals for d in a.shape
                        if isinstance(d, DimExpr) for v in d.variables()})
        return polymorphic.sample_points(names, self._scope)[0] if names else {}

    def _instance(self, env: dict):
        key = tuple(sorted(env.items()))
        found = self._instances.get(key)
        if found is None:
            doc = polymorphic.instantiate(self._program, env) if env else self._program
            closed = serialize.decode_program(doc, serialize.Blobs(self._blobs), PARAM_RULES)

            def run(*flat):
                return eval_jaxpr(closed.jaxpr, closed.consts, *flat)

            run.__name__ = run.__qualname__ = self.fun_name
            found = self._instances[key] = (jit(run), closed)
        return found

    # serialization ---------------------------------------------------------------------

    def serialize(self, vjp_order: int = 0) -> bytes:
        """The exported function as bytes (didax's own format; see serialize.py)."""
        if vjp_order:
            raise NotImplementedError(
                "Exported.serialize(vjp_order>0): didax does not serialize derivative "
                "programs separately; the program keeps its custom rules, so differentiate "
                "the deserialized `call`.")
        doc = {"format": serialize.FORMAT_NAME, "fun_name": self.fun_name,
               "in_tree": _encode_tree(self.in_tree), "out_tree": _encode_tree(self.out_tree),
               "in_avals": _encode_avals(self.in_avals),
               "out_avals": _encode_avals(self.out_avals),
               "platforms": list(self.platforms),
               "constraints": list(self._scope.constraints_str) if self._scope else None,
               "disabled_safety_checks": [str(c) for c in self.disabled_safety_checks],
               "calling_convention_version": self.calling_convention_version,
               "program": self._program}
        return serialize.to_bytes(doc, self._blobs)


def _shape_str(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _env_str(env) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sorted(env.items()))


def deserialize(blob) -> Exported:
    """An Exported from the bytes `serialize()` wrote (in any process: the function's
    source is not needed). Refuses other formats and versions, changed bytes, unknown
    primitives and parameters it cannot decode."""
    doc, blobs = serialize.from_bytes(blob)
    if type(doc) is not dict or doc.get("format") != serialize.FORMAT_NAME:
        raise serialize.DeserializationError("deserialize: not a didax export document")
    try:
        constraints = doc["constraints"]
        scope = SymbolicScope(constraints) if constraints is not None else None
        in_avals = _decode_avals(doc["in_avals"], scope)
        out_avals = _decode_avals(doc["out_avals"], scope)
        exp = Exported(
            fun_name=str(doc["fun_name"]), in_tree=_decode_tree(doc["in_tree"]),
            in_avals=in_avals, out_tree=_decode_tree(doc["out_tree"]), out_avals=out_avals,
            platforms=tuple(map(str, doc["platforms"])), program=doc["program"],
            blobs=blobs, scope=scope,
            disabled_safety_checks=[DisabledSafetyCheck(str(c))
                                    for c in doc["disabled_safety_checks"]],
            calling_convention_version=int(doc["calling_convention_version"]))
    except (KeyError, TypeError) as e:
        raise serialize.DeserializationError(f"deserialize: malformed export ({e!r})") from None
    if exp.in_tree.num_leaves != len(in_avals) or exp.out_tree.num_leaves != len(out_avals):
        raise serialize.DeserializationError("deserialize: the pytrees do not match the types")
    env = exp._sample_env()
    closed = exp._instance(env)[1]  # decoded now: unknown primitives are refused here
    for what, declared, actual in (("arguments", in_avals, closed.in_avals),
                                   ("results", out_avals, closed.out_avals)):
        declared = [(tuple(d.evaluate(env) if isinstance(d, DimExpr) else d for d in a.shape),
                     a.dtype) for a in declared]
        if declared != [(a.shape, a.dtype) for a in actual]:
            raise serialize.DeserializationError(
                f"deserialize: the declared types of the {what} do not match the program's")
    return exp


# --------------------------------------------------------------------------------------
# export


def export(fun_jit, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()):
    """`export(jit(f))(*args, **kwargs)`: the Exported of `f` for arguments of the types of
    `args` (arrays or ShapeDtypeStructs, whose shapes may hold symbolic dimensions)."""
    if not isinstance(fun_jit, JitWrapped):
        raise user_error(ValueError, (
            f"Function to be exported must be the result of `jit` but is: {fun_jit!r}\nWhat "
            "to do: export `jax.jit(f)`."))
    if isinstance(platforms, str):
        platforms = (platforms,)
    platforms = tuple(platforms) if platforms is not None else (default_export_platform(),)

    @functools.wraps(fun_jit)
    def do_export(*args, **kwargs) -> Exported:
        return _export(fun_jit, platforms, tuple(disabled_checks), args, kwargs)

    return do_export


def _export(fun_jit, platforms, disabled, args, kwargs) -> Exported:
    flat_all, tree_all = tree_flatten((args, kwargs))
    in_tree = fun_jit._split(args, kwargs)[3]
    scopes = {id(d.scope): d.scope for x in flat_all if isinstance(x, ShapeDtypeStruct)
              for d in x.shape if isinstance(d, DimExpr)}
    if len(scopes) > 1:
        raise user_error(ValueError, (
            "export: the arguments' symbolic dimensions come from several scopes.\nWhat to do: "
            "make them with one symbolic_shape or symbolic_args_specs call, or pass one "
            "`scope=` to each."))
    scope = next(iter(scopes.values()), None)
    names = sorted({v for x in flat_all if isinstance(x, ShapeDtypeStruct) for d in x.shape
                    if isinstance(d, DimExpr) for v in d.variables()})

    def trace_at(env):
        concrete = [ShapeDtypeStruct([d.evaluate(env) if isinstance(d, DimExpr) else d
                                      for d in x.shape], x.dtype, x.weak_type)
                    if isinstance(x, ShapeDtypeStruct) else x for x in flat_all]
        c_args, c_kwargs = tree_unflatten(tree_all, concrete)
        traced = fun_jit.trace(*c_args, **c_kwargs)
        closed = traced.jaxpr
        doc, blobs = serialize.encode_program(closed, PARAM_RULES)
        return {"program": doc, "out_avals": _encode_avals(closed.out_avals)}, blobs, \
            traced.out_tree, closed

    if not names:
        doc, blobs, out_tree, closed = trace_at({})
        in_avals = [core.get_aval(x) for x in fun_jit._split(args, kwargs)[2]]
        return Exported(fun_name=fun_jit._name, in_tree=in_tree, in_avals=in_avals,
                        out_tree=out_tree, out_avals=closed.out_avals, platforms=platforms,
                        program=doc["program"], blobs=blobs.items, scope=None,
                        disabled_safety_checks=disabled)
    base_env, step_envs, check_env = polymorphic.sample_points(names, scope)
    base, blobs, out_tree, _ = trace_at(base_env)
    others = [trace_at(e) for e in [*step_envs, check_env]]
    for _, blobs_k, tree_k, _ in others:
        if tree_k != out_tree:
            raise user_error(ValueError, (
                f"export: the output structure of {fun_jit._name} changes with the sizes of "
                f"the symbolic dimensions {names}: {out_tree} and {tree_k}"))
        if blobs_k.items != blobs.items:
            raise user_error(ValueError, (
                f"export: a constant array of {fun_jit._name} changes with the sizes of the "
                f"symbolic dimensions {names} (an array built from a size, such as "
                "jnp.arange(x.shape[0]), is staged as a constant).\nWhat to do: build it "
                "from the arguments with operations (lax.iota, jnp.arange inside a traced "
                "computation of x), or give that dimension a concrete size."))
    try:
        generic = polymorphic.generalize(base, [o[0] for o in others[:-1]], others[-1][0],
                                         names, base_env, check_env, scope)
    except polymorphic.NotGeneric as e:
        raise user_error(ValueError, (
            f"export: {fun_jit._name} cannot be exported with the symbolic dimensions "
            f"{names}: traced at several sizes, {e}.\ndidax exports a program whose shapes "
            "are affine functions of the dimension variables, with the same operations at "
            "every size.\nWhat to do: avoid Python decisions on the sizes, or give those "
            "dimensions concrete sizes.")) from None
    flat_dyn = fun_jit._split(args, kwargs)[2]
    in_avals = [_aval(x.shape, x.dtype, x.weak_type) if isinstance(x, ShapeDtypeStruct)
                else core.get_aval(x) for x in flat_dyn]
    out_avals = polymorphic_out_avals(generic["out_avals"], scope)
    return Exported(fun_name=fun_jit._name, in_tree=in_tree, in_avals=in_avals,
                    out_tree=out_tree, out_avals=out_avals, platforms=platforms,
                    program=generic["program"], blobs=blobs.items, scope=scope,
                    disabled_safety_checks=disabled)


def polymorphic_out_avals(encoded, scope):
    out = []
    for dt, shape, weak in encoded:
        dims = [polymorphic.decode_dim(d["$dim"], scope) if isinstance(d, dict) else d
                for d in shape]
        out.append(_aval(dims, serialize.decode_dtype(dt), weak))
    return out
