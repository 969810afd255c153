"""didax's own encoding of staged programs: a jaxpr as a document of JSON values (the
primitives by name, their parameters as tagged values, variables as numbers) beside the
raw bytes of its constant arrays; and the framing of both into versioned bytes.

Decoding builds nothing but didax's own objects: primitives looked up by name in
`core.all_primitives`, parameters of the kinds listed in `_decode`, records and enums
only of classes defined in didax's modules already loaded. Python functions held by
parameters are encoded by rules per primitive (rule_params.py) or refused.
"""
from __future__ import annotations

import enum
import hashlib
import json
import struct
import sys
from dataclasses import fields, is_dataclass

import ml_dtypes
import numpy as np

from didax._src import core, dtypes
from didax._src.core import ShapedArray
from didax._src.errors import user_error
from didax._src.ir import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Literal,
    Var,
    check_jaxpr,
)
from didax._src.state.types import AbstractRef

FORMAT_NAME = "didax.export"
FORMAT_VERSION = 1
SUPPORTED_VERSIONS = (1,)
_MAGIC = b"DIDAX-EXPORT\n"
_HEADER = struct.Struct("<IQQ")  # version, JSON length, blob section length
_DIGEST = 32  # sha256 of everything before it


class ExportError(ValueError):
    """A program that cannot be exported (a parameter with no encoding)."""


class DeserializationError(ValueError):
    """Bytes that are not a didax export this version of didax can load."""


# --------------------------------------------------------------------------------------
# Framing


def to_bytes(doc: dict, blobs: list[bytes]) -> bytes:
    body = json.dumps({"doc": doc, "blobs": [len(b) for b in blobs]},
                      separators=(",", ":"), allow_nan=True).encode()
    blob = b"".join(blobs)
    head = _MAGIC + _HEADER.pack(FORMAT_VERSION, len(body), len(blob))
    payload = head + body + blob
    return payload + hashlib.sha256(payload).digest()


def from_bytes(data) -> tuple[dict, list[bytes]]:
    data = bytes(data)
    if not data.startswith(_MAGIC):
        raise DeserializationError(
            "deserialize: these bytes are not a didax export (they do not start with "
            f"{_MAGIC!r}); didax loads only what didax.export's `serialize()` wrote "
            "(JAX's StableHLO exports are another format)")
    at = len(_MAGIC)
    if len(data) < at + _HEADER.size + _DIGEST:
        raise DeserializationError("deserialize: the bytes are truncated (no complete header)")
    version, n_body, n_blob = _HEADER.unpack_from(data, at)
    if version not in SUPPORTED_VERSIONS:
        raise DeserializationError(
            f"deserialize: serialization format version {version} is not supported by this "
            f"didax, which reads versions {list(SUPPORTED_VERSIONS)}.\nWhat to do: load it "
            "with the didax that wrote it, or export the function again with this one.")
    at += _HEADER.size
    end = at + n_body + n_blob
    if len(data) != end + _DIGEST:
        raise DeserializationError(
            f"deserialize: the bytes are truncated or extended: the header announces "
            f"{end + _DIGEST} bytes, got {len(data)}")
    if hashlib.sha256(data[:end]).digest() != data[end:]:
        raise DeserializationError("deserialize: the checksum does not match: the bytes were "
                                   "changed after serialization (or corrupted)")
    try:
        body = json.loads(data[at:at + n_body].decode())
        sizes = body["blobs"]
        doc = body["doc"]
    except (ValueError, KeyError, TypeError) as e:
        raise DeserializationError(f"deserialize: malformed document ({e})") from None
    blobs, pos = [], at + n_body
    for n in sizes:
        if not isinstance(n, int) or n < 0 or pos + n > end:
            raise DeserializationError("deserialize: malformed blob table")
        blobs.append(data[pos:pos + n])
        pos += n
    return doc, blobs


# --------------------------------------------------------------------------------------
# Values


_NUMPY_DTYPES = {np.dtype(t).name: np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128)}


def encode_dtype(dt) -> str:
    dt = np.dtype(dt)
    if dt == dtypes.float0:
        return "float0"
    name = dt.name
    if name in _NUMPY_DTYPES or isinstance(getattr(ml_dtypes, name, None), type):
        return name
    raise ExportError(f"export: the dtype {dt} has no encoding (only NumPy's numeric dtypes, "
                      "ml_dtypes' and float0 do)")


def decode_dtype(name) -> np.dtype:
    if name == "float0":
        return dtypes.float0
    if isinstance(name, str):
        if name in _NUMPY_DTYPES:
            return _NUMPY_DTYPES[name]
        t = getattr(ml_dtypes, name, None)
        if isinstance(t, type) and issubclass(t, np.generic):
            return np.dtype(t)
    raise DeserializationError(f"deserialize: unknown dtype {name!r}")


def encode_aval(aval) -> list:
    if type(aval) is AbstractRef:
        return ["ref", *encode_aval(aval.inner_aval)]
    if type(aval) is not ShapedArray:
        raise ExportError(f"export: values of type {aval!r} have no encoding")
    return [encode_dtype(aval.dtype), list(aval.shape), bool(aval.weak_type)]


def decode_aval(a):
    try:
        if a[0] == "ref":
            return AbstractRef(decode_aval(a[1:]))
        dt, shape, weak = a
        if not all(type(d) is int and d >= 0 for d in shape) or type(weak) is not bool:
            raise TypeError
        return ShapedArray(tuple(shape), decode_dtype(dt), weak)
    except (TypeError, ValueError, IndexError):
        raise DeserializationError(f"deserialize: malformed type {a!r}") from None


class RuleRef:
    """A parameter naming a rule's jaxpr in the document's table of rules (a custom rule
    may call the function it is the rule of: the table lets the two refer to each other)."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class Blobs:
    """The raw bytes of the arrays a document refers to, by index."""

    def __init__(self, items=None):
        self.items: list[bytes] = [] if items is None else items

    def add(self, value: np.ndarray) -> int:
        self.items.append(np.ascontiguousarray(value).tobytes())
        return len(self.items) - 1

    def array(self, index, dtype, shape) -> np.ndarray:
        if type(index) is not int or not 0 <= index < len(self.items):
            raise DeserializationError(f"deserialize: no array {index!r}")
        dt = decode_dtype(dtype)
        shape = tuple(shape)
        if not all(type(d) is int and d >= 0 for d in shape):
            raise DeserializationError(f"deserialize: malformed shape {shape!r}")
        raw = self.items[index]
        if len(raw) != int(np.prod(shape, dtype=np.int64)) * dt.itemsize:
            raise DeserializationError(f"deserialize: array {index} holds {len(raw)} bytes, "
                                       f"not those of {dt}{list(shape)}")
        return np.frombuffer(raw, dt).reshape(shape).copy()


def _trusted_class(module: str, qualname: str) -> type:
    """A class defined in a didax module that is already loaded (nothing is imported)."""
    mod = sys.modules.get(module) if isinstance(module, str) else None
    if mod is None or not (module == "didax" or module.startswith("didax.")):
        raise DeserializationError(f"deserialize: parameter class {module}.{qualname} is not "
                                   "one of didax's")
    obj = mod
    for part in str(qualname).split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type) or obj.__module__ != module:
        raise DeserializationError(f"deserialize: no class {qualname} in {module}")
    return obj


def _is_record(v) -> bool:
    return (isinstance(v, tuple) and hasattr(type(v), "_fields")) or (
        is_dataclass(v) and not isinstance(v, type))


def encode_value(v, ctx, where: str):
    """A parameter or constant as JSON values (tagged with a `$` key where JSON lacks the
    type)."""
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v
    if t is float:
        return v if np.isfinite(v) else {"$float": repr(v)}
    if t is complex:
        return {"$complex": [encode_value(v.real, ctx, where), encode_value(v.imag, ctx, where)]}
    if t is tuple:
        return {"$tuple": [encode_value(x, ctx, where) for x in v]}
    if t is list:
        return [encode_value(x, ctx, where) for x in v]
    if t is dict:
        return {"$dict": [[encode_value(k, ctx, where), encode_value(x, ctx, where)]
                          for k, x in v.items()]}
    if isinstance(v, np.dtype):
        return {"$dtype": encode_dtype(v)}
    if isinstance(v, type) and issubclass(v, np.generic):
        return {"$scalar_type": encode_dtype(v)}
    if t is core.Array:
        return {"$Array": [ctx.blobs.add(v._value), encode_dtype(v.dtype), list(v.shape),
                           bool(v.aval.weak_type)]}
    if t is np.ndarray:
        return {"$ndarray": [ctx.blobs.add(v), encode_dtype(v.dtype), list(v.shape)]}
    if isinstance(v, np.generic):
        return {"$npscalar": [ctx.blobs.add(np.asarray(v)), encode_dtype(v.dtype)]}
    if isinstance(v, ClosedJaxpr):
        return {"$closed_jaxpr": ctx.closed_jaxpr(v)}
    if isinstance(v, Jaxpr):
        return {"$jaxpr": ctx.jaxpr(v)}
    if t is RuleRef:
        return {"$rule": v.index}
    if isinstance(v, ShapedArray) or type(v) is AbstractRef:
        return {"$aval": encode_aval(v)}
    if isinstance(v, enum.Enum) and _defined_in_didax(t):
        return {"$enum": [t.__module__, t.__qualname__, v.name]}
    if _is_record(v) and _defined_in_didax(t):
        names = v._fields if isinstance(v, tuple) else [f.name for f in fields(v)]
        return {"$record": [t.__module__, t.__qualname__,
                            [[n, encode_value(getattr(v, n), ctx, where)] for n in names]]}
    if callable(v):
        raise ExportError(
            f"export: {where} holds the Python function {getattr(v, '__name__', v)!r}, which "
            "cannot be serialized (a deserialized program runs only didax's primitives).\n"
            "What to do: write this part with didax's own operations, or call the function "
            "outside the exported program.")
    raise ExportError(f"export: {where} holds {v!r} of type {t.__name__}, which has no "
                      "encoding")


def _defined_in_didax(t) -> bool:
    return t.__module__ == "didax" or t.__module__.startswith("didax.")


def decode_value(v, ctx):
    if v is None or type(v) in (bool, int, float, str):
        return v
    if type(v) is list:
        return [decode_value(x, ctx) for x in v]
    if type(v) is not dict or len(v) != 1:
        raise DeserializationError(f"deserialize: malformed value {str(v)[:80]}")
    (tag, x), = v.items()
    try:
        if tag == "$float":
            if x not in ("nan", "inf", "-inf"):
                raise DeserializationError(f"deserialize: bad float {x!r}")
            return float(x)
        if tag == "$complex":
            return complex(decode_value(x[0], ctx), decode_value(x[1], ctx))
        if tag == "$tuple":
            return tuple(decode_value(e, ctx) for e in x)
        if tag == "$dict":
            return {_hashable(decode_value(k, ctx)): decode_value(e, ctx) for k, e in x}
        if tag == "$dtype":
            return decode_dtype(x)
        if tag == "$scalar_type":
            return decode_dtype(x).type
        if tag == "$Array":
            i, dt, shape, weak = x
            value = ctx.blobs.array(i, dt, shape)
            return core.Array.from_numpy(value, ShapedArray(value.shape, value.dtype,
                                                            bool(weak)))
        if tag == "$ndarray":
            return ctx.blobs.array(*x)
        if tag == "$npscalar":
            return ctx.blobs.array(x[0], x[1], ())[()]
        if tag == "$closed_jaxpr":
            return ctx.closed_jaxpr(x)
        if tag == "$jaxpr":
            return ctx.jaxpr(x)
        if tag == "$rule":
            if type(x) is not int:
                raise DeserializationError("deserialize: malformed rule reference")
            return RuleRef(x)
        if tag == "$aval":
            return decode_aval(x)
        if tag == "$enum":
            cls = _trusted_class(x[0], x[1])
            if not issubclass(cls, enum.Enum):
                raise DeserializationError(f"deserialize: {x[1]} is not an enum")
            return cls[x[2]]
        if tag == "$record":
            cls = _trusted_class(x[0], x[1])
            if not (issubclass(cls, tuple) and hasattr(cls, "_fields") or is_dataclass(cls)):
                raise DeserializationError(f"deserialize: {x[1]} is not a record type")
            return cls(**{str(n): decode_value(e, ctx) for n, e in x[2]})
    except DeserializationError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
        raise DeserializationError(f"deserialize: malformed {tag} value ({e})") from None
    raise DeserializationError(f"deserialize: unknown value tag {tag!r}")


def _hashable(k):
    try:
        hash(k)
    except TypeError:
        raise DeserializationError(f"deserialize: dictionary key {k!r} is not hashable") from None
    return k


# --------------------------------------------------------------------------------------
# Jaxprs


_LITERAL_KINDS = {bool: "bool", int: "int", float: "float", complex: "complex"}


class Encoder:
    """Numbers variables in the order they are defined, across a jaxpr and its sub-jaxprs;
    collects array bytes."""

    def __init__(self, param_rules):
        self.blobs = Blobs()
        self.ids: dict = {}
        self.param_rules = param_rules
        self.rules: list = []  # documents of rule jaxprs, by RuleRef index
        self.rule_keys: dict = {}

    def rule(self, key, stage) -> RuleRef:
        """The reference to the rule `key`, staged by `stage()` and encoded the first time
        (a rule met again while it is being encoded refers to itself)."""
        index = self.rule_keys.get(key)
        if index is None:
            index = self.rule_keys[key] = self.reserve()
            self.fill(index, stage())
        return RuleRef(index)

    def reserve(self) -> int:
        self.rules.append(None)
        return len(self.rules) - 1

    def fill(self, index: int, closed: ClosedJaxpr) -> None:
        self.rules[index] = self.closed_jaxpr(closed)

    def define(self, v):
        if type(v) is DropVar:
            return [-1, encode_aval(v.aval)]
        self.ids[v] = len(self.ids)
        return [self.ids[v], encode_aval(v.aval)]

    def atom(self, v):
        if type(v) is Literal:
            return {"$lit": [self.literal(v.val), encode_aval(v.aval)]}
        return self.ids[v]

    def literal(self, val):
        """[kind, value]: a Python scalar as itself; a NumPy scalar or 0-d array by its
        value as a JSON number (exact: integers, and floats through float64) or, for
        dtypes NumPy does not know as numbers, by its bytes."""
        kind = _LITERAL_KINDS.get(type(val))
        if kind is None:
            a = np.asarray(val)
            kind = "np0d" if type(val) is np.ndarray else "np"
            if a.dtype.kind not in "biufc":
                return [kind, {"$ndarray": [self.blobs.add(a), encode_dtype(a.dtype), []]}]
            val = a.item()
        if type(val) is complex:
            return [kind, [_json_float(val.real), _json_float(val.imag)]]
        return [kind, _json_float(val) if type(val) is float else val]

    def jaxpr(self, j: Jaxpr) -> dict:
        return {"constvars": [self.define(v) for v in j.constvars],
                "invars": [self.define(v) for v in j.invars],
                "eqns": [self.eqn(e) for e in j.eqns],
                "outvars": [self.atom(v) for v in j.outvars]}

    def closed_jaxpr(self, c: ClosedJaxpr) -> dict:
        where = "a constant of the program"
        return {"jaxpr": self.jaxpr(c.jaxpr),
                "consts": [encode_value(x, self, where) for x in c.consts]}

    def eqn(self, e: JaxprEqn) -> list:
        name = e.primitive.name
        if core.all_primitives.get(name) is not e.primitive:
            raise ExportError(f"export: the primitive '{name}' is not in didax's registry of "
                              "primitives, so a deserialized program could not find it")
        ins = [self.atom(v) for v in e.invars]
        rule = self.param_rules.get(name)
        params = rule.encode(e, self) if rule is not None else e.params
        out_params = {k: encode_value(v, self, f"the parameter '{k}' of primitive '{name}'")
                      for k, v in params.items()}
        outs = [self.define(v) for v in e.outvars]
        return [name, ins, outs, out_params]


def _json_float(x):
    x = float(x)
    return x if np.isfinite(x) else {"$float": repr(x)}


class Decoder:
    def __init__(self, blobs: Blobs, param_rules):
        self.blobs = blobs
        self.vars: dict[int, Var] = {}
        self.param_rules = param_rules
        self.rules: list[ClosedJaxpr] = []  # filled once all is decoded

    def rule(self, ref) -> ClosedJaxpr:
        if type(ref) is not RuleRef or not 0 <= ref.index < self.n_rules:
            raise DeserializationError("deserialize: a custom rule refers to no rule")
        return self.rules[ref.index]

    def define(self, d):
        i, aval = d
        aval = decode_aval(aval)
        if i == -1:
            return DropVar(aval)
        if type(i) is not int or i in self.vars:
            raise DeserializationError(f"deserialize: variable {i!r} defined twice or malformed")
        v = self.vars[i] = Var(aval)
        return v

    def atom(self, a):
        if type(a) is int:
            v = self.vars.get(a)
            if v is None:
                raise DeserializationError(f"deserialize: variable {a} used before it is defined")
            return v
        if type(a) is dict and "$lit" in a:
            (kind, raw), aval = a["$lit"]
            aval = decode_aval(aval)
            return Literal(self.literal(kind, raw, aval), aval)
        raise DeserializationError(f"deserialize: malformed operand {str(a)[:80]}")

    def literal(self, kind, raw, aval):
        if isinstance(raw, dict) and "$float" in raw:
            raw = decode_value(raw, self)
        if type(raw) is dict and "$ndarray" in raw:
            value = decode_value(raw, self)
            return value if kind == "np0d" else value[()]
        if kind == "bool":
            return bool(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "complex":
            return complex(_real(raw[0], self), _real(raw[1], self))
        if kind in ("np", "np0d"):
            if isinstance(raw, list):
                raw = complex(_real(raw[0], self), _real(raw[1], self))
            value = np.asarray(raw, aval.dtype)
            return value if kind == "np0d" else value[()]
        raise DeserializationError(f"deserialize: unknown literal kind {kind!r}")

    def jaxpr(self, d) -> Jaxpr:
        if type(d) is not dict:
            raise DeserializationError("deserialize: malformed jaxpr")
        try:
            constvars = [self.define(v) for v in d["constvars"]]
            invars = [self.define(v) for v in d["invars"]]
            eqns = [self.eqn(e) for e in d["eqns"]]
            outvars = [self.atom(v) for v in d["outvars"]]
        except (KeyError, TypeError, ValueError) as e:
            if isinstance(e, DeserializationError):
                raise
            raise DeserializationError(f"deserialize: malformed jaxpr ({e!r})") from None
        return Jaxpr(constvars, invars, outvars, eqns)

    def closed_jaxpr(self, d) -> ClosedJaxpr:
        j = self.jaxpr(d["jaxpr"])
        consts = [decode_value(c, self) for c in d["consts"]]
        if len(consts) != len(j.constvars):
            raise DeserializationError("deserialize: a jaxpr's constants do not match its "
                                       "constvars")
        return ClosedJaxpr(j, consts)

    def eqn(self, d) -> JaxprEqn:
        name, ins, outs, params = d
        prim = core.all_primitives.get(name) if isinstance(name, str) else None
        if prim is None:
            raise DeserializationError(
                f"deserialize: unknown primitive {name!r}: it is not in this didax's registry "
                "of primitives (the program was written by another didax, or the bytes were "
                "forged)")
        invars = [self.atom(a) for a in ins]
        if type(params) is not dict:
            raise DeserializationError(f"deserialize: malformed parameters of '{name}'")
        decoded = {str(k): decode_value(v, self) for k, v in params.items()}
        rule = self.param_rules.get(name)
        if rule is not None:
            decoded = rule.decode(decoded, self)
        outvars = [self.define(v) for v in outs]
        return JaxprEqn(prim, invars, outvars, decoded)


def _real(x, dec):
    return float(decode_value(x, dec)) if isinstance(x, dict) else float(x)


def encode_program(closed: ClosedJaxpr, param_rules) -> tuple[dict, Blobs]:
    enc = Encoder(param_rules)
    program = enc.closed_jaxpr(closed)
    return {"program": program, "rules": enc.rules}, enc.blobs


def decode_program(doc, blobs: Blobs, param_rules) -> ClosedJaxpr:
    dec = Decoder(blobs, param_rules)
    try:
        dec.n_rules = len(doc["rules"])
        closed = dec.closed_jaxpr(doc["program"])
        rules = [dec.closed_jaxpr(r) for r in doc["rules"]]
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, DeserializationError):
            raise
        raise DeserializationError(f"deserialize: malformed program ({e!r})") from None
    for j in [closed, *rules]:
        try:
            check_jaxpr(j.jaxpr)
        except JaxprTypeError as e:
            raise user_error(DeserializationError, (
                f"deserialize: the program does not type-check: {e}")) from None
    dec.rules[:] = rules
    return closed
