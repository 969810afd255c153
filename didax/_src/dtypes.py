"""Dtypes, x64 canonicalization and JAX's type-promotion rules.

Supported array dtypes: bool, int8/16/32/64, uint8/16/32/64, float16/32/64, complex64/128,
``float0`` (the tangent dtype of integer and boolean values), and the ml_dtypes types: bfloat16,
the float8/float6/float4 family and int1/2/4, uint1/2/4. NumPy gives those dtypes kind ``'V'``,
so code asks :func:`kind` (``'f'``, ``'i'`` or ``'u'`` for them) rather than ``dtype.kind``.

Python scalars are *weakly typed*: ``int``, ``float`` and ``complex`` values (and those types
themselves) take the dtype of whatever they are combined with when possible, so that e.g.
``int8_array + 1`` stays int8. ``bool`` is never weak.
"""

from __future__ import annotations

import abc
import functools
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from didax._src import caches
from didax._src.config import config
from didax._src.errors import user_error

float0 = np.dtype([("float0", np.void, 0)])

_BOOL = np.dtype(bool)
_SHORT_NAMES = {
    _BOOL: "bool",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32", np.dtype(np.uint64): "u64",
    np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128",
}
# The ml_dtypes floats: bfloat16 sits in the lattice between the weak float and float32; the
# narrow floats and ints promote only with bool, weak scalars and (floats) the standard ints.
ML_FLOAT_NAMES = (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn",
    "float6_e3m2fn", "float4_e2m1fn",
)
# (int1 and uint1 came with ml_dtypes 0.6: with 0.5, as in JAX, they are not there)
ML_INT_NAMES = tuple(n for n in ("int1", "int2", "int4", "uint1", "uint2", "uint4")
                     if hasattr(ml_dtypes, n))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
_ML_KIND = {
    **{np.dtype(getattr(ml_dtypes, n)): "f" for n in ML_FLOAT_NAMES},
    **{np.dtype(getattr(ml_dtypes, n)): n[0] for n in ML_INT_NAMES},
}
_SHORT_NAMES[bfloat16] = "bf16"
_SHORT_NAMES.update({dt: dt.name.replace("float", "f").replace("uint", "u").replace("int", "i")
                     for dt in _ML_KIND if dt != bfloat16})  # f8_e4m3fn, i4, u2...
_NUMERIC_DTYPES = frozenset(_SHORT_NAMES)
_VALID_DTYPES = _NUMERIC_DTYPES | {float0}
_TO_32BIT = {
    np.dtype(np.int64): np.dtype(np.int32),
    np.dtype(np.uint64): np.dtype(np.uint32),
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.complex64),
}
_PY_SCALAR_TYPES = (bool, int, float, complex)
_WEAK_SCALAR_TYPES = (int, float, complex)
# Uncanonicalized dtypes of Python scalars (what NumPy would pick, as in jax.dtypes).
_PY_64BIT_DTYPES = {
    bool: _BOOL, int: np.dtype(np.int64), float: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
}
# Canonical (dtype, weak) of each Python scalar type, per x64 flag.
_PY_SCALAR_KEYS = {
    x64: {t: (d if x64 else _TO_32BIT.get(d, d), t is not bool)
          for t, d in _PY_64BIT_DTYPES.items()}
    for x64 in (False, True)
}
# Default dtype of each dtype kind, per x64 flag; weakly typed results are given these.
_DEFAULT_OF_KIND = {
    x64: {"b": _BOOL, **{kind: _PY_SCALAR_KEYS[x64][t][0]
                         for kind, t in (("i", int), ("f", float), ("c", complex))},
          "u": np.dtype(np.uint64 if x64 else np.uint32)}
    for x64 in (False, True)
}


def kind(dt: np.dtype) -> str:
    """``dt.kind``, except 'f', 'i' or 'u' for the ml_dtypes types (whose NumPy kind is 'V')."""
    return _ML_KIND.get(dt) or dt.kind


def is_inexact(dt: np.dtype) -> bool:
    return kind(dt) in "fc"


# --- configuration-dependent defaults ---------------------------------------------------------

def default_int_dtype() -> np.dtype:
    return _DEFAULT_OF_KIND[config.x64_enabled]["i"]


def default_uint_dtype() -> np.dtype:
    return _DEFAULT_OF_KIND[config.x64_enabled]["u"]


def default_float_dtype() -> np.dtype:
    return _DEFAULT_OF_KIND[config.x64_enabled]["f"]


def default_complex_dtype() -> np.dtype:
    return _DEFAULT_OF_KIND[config.x64_enabled]["c"]


_canonical_cache = caches.memo("dtypes.canonical")  # (dtype-like, x64) -> np.dtype


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)``, narrowed to 32 bits (int64 -> int32, ...) unless x64 is enabled."""
    x64 = config.x64_enabled
    try:
        return _canonical_cache[dtype, x64]
    except KeyError:
        pass
    except TypeError:  # unhashable dtype-like, e.g. a structured-dtype list
        return _canonicalize_uncached(dtype, x64)
    return caches.add(_canonical_cache, (dtype, x64), _canonicalize_uncached(dtype, x64))


def _canonicalize_uncached(dtype: Any, x64: bool) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise user_error(TypeError, f"dtype {dtype!r} not understood") from e
    return dt if x64 else _TO_32BIT.get(dt, dt)


def _canonicalize_explicit(dt: np.dtype, fun_name: str) -> np.dtype:
    """Canonicalize a dtype the user asked for by name, per ``jax_explicit_x64_dtypes``."""
    narrow = None if config.x64_enabled else _TO_32BIT.get(dt)
    if narrow is None:
        return dt
    mode = config.jax_explicit_x64_dtypes
    if mode == "allow":
        return dt
    where = f" requested in {fun_name}" if fun_name else ""
    if mode == "error":
        raise ValueError(
            f"Explicitly requested dtype {dt}{where} is not available. To enable more dtypes, "
            "set the jax_enable_x64 or jax_explicit_x64_dtypes configuration options.")
    warnings.warn(
        f"Explicitly requested dtype {dt}{where} is not available, and will be truncated to "
        f"dtype {narrow}. To enable more dtypes, set the jax_enable_x64 configuration option or "
        "the JAX_ENABLE_X64 shell environment variable.", stacklevel=4)
    return narrow


def check_valid_dtype(dtype: np.dtype) -> None:
    if dtype not in _VALID_DTYPES:
        raise TypeError(f"Dtype {dtype} is not a valid JAX array type. Only arrays of numeric "
                        "types are supported by JAX.")


def user_np_dtype(dtype: Any, fun_name: str | None = None) -> np.dtype:
    """`np.dtype(dtype)` for a user's argument, with a message naming what to pass."""
    try:
        return np.dtype(dtype)
    except TypeError:
        where = f" in {fun_name}" if fun_name else ""
        raise user_error(TypeError, (
            f"data type {dtype!r} not understood{where}.\nWhat to do: pass a NumPy dtype or "
            "its name: jnp.float32 or 'float32', jnp.int32, jnp.bool_, jnp.complex64, or the "
            "Python types float, int, bool, complex.")) from None


def check_and_canonicalize_user_dtype(dtype: Any, fun_name: str | None = None) -> np.dtype:
    """The dtype to use for a user's ``dtype=`` argument: Python types give the defaults
    (``int`` -> int32 without x64) and explicit 64-bit dtypes follow ``jax_explicit_x64_dtypes``.
    """
    if dtype is None:
        raise ValueError("dtype must be specified.")
    if hasattr(dtype, "aval"):
        raise ValueError("Passing an array as a dtype argument is no longer supported; "
                         "instead of dtype=arr use dtype=arr.dtype.")
    if isinstance(dtype, type) and dtype in _PY_SCALAR_TYPES:
        return _PY_SCALAR_KEYS[config.x64_enabled][dtype][0]
    dt = user_np_dtype(dtype, fun_name)
    if dt not in _VALID_DTYPES:
        where = f" in {fun_name}" if fun_name else ""
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dtype}{where}")
    return _canonicalize_explicit(dt, fun_name or "")


# --- dtypes of values ---------------------------------------------------------------------------

def is_python_scalar(x: Any) -> bool:
    return type(x) in _PY_SCALAR_TYPES


def python_scalar_dtype(x: Any) -> np.dtype:
    """Canonical dtype of a Python scalar (or scalar type): bool, or the default int/float/complex.

    Subclasses count too (``np.float64(1.0)`` is a ``float``), checking ``bool`` before ``int``.
    """
    typ = x if isinstance(x, type) else type(x)
    keys = _PY_SCALAR_KEYS[config.x64_enabled]
    key = keys.get(typ)
    if key is None:
        base = next((t for t in _PY_SCALAR_TYPES if issubclass(typ, t)), None)
        if base is None:
            raise TypeError(f"{x!r} is not a Python scalar (bool, int, float or complex)")
        key = keys[base]
    return key[0]


def is_weakly_typed(x: Any) -> bool:
    """True for Python int/float/complex values and arrays or tracers whose aval is weak."""
    if type(x) in _WEAK_SCALAR_TYPES:
        return True
    aval = getattr(x, "aval", None)
    return bool(getattr(x if aval is None else aval, "weak_type", False))


def dtype(x: Any, canonicalize: bool = False) -> np.dtype:
    """The dtype of a value, array, dtype-like or Python scalar/type (like ``jax.dtypes.dtype``).

    Without ``canonicalize``, Python scalars give NumPy's 64-bit dtypes. With it, the result is
    narrowed for x32 mode, except for didax arrays and tracers (anything with an ``aval``): a
    64-bit value that exists is respected whatever the mode. Explicitly requested 64-bit dtypes
    (strings, dtypes, NumPy scalar types) follow ``jax_explicit_x64_dtypes`` (default: warn).
    """
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, type):
        if x in _PY_SCALAR_TYPES:
            return python_scalar_dtype(x) if canonicalize else _PY_64BIT_DTYPES[x]
        if issubclass(x, np.generic):
            return _explicit_dtype(x, canonicalize)
    elif type(x) in _PY_SCALAR_TYPES:
        return python_scalar_dtype(x) if canonicalize else _PY_64BIT_DTYPES[type(x)]
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype
    if isinstance(x, (str, np.dtype)):
        return _explicit_dtype(x, canonicalize)
    dt = getattr(x, "dtype", None)
    if not isinstance(dt, np.dtype):
        if not isinstance(x, _PY_SCALAR_TYPES):  # e.g. an IntEnum member is still an int
            raise TypeError(f"Cannot determine dtype of {x!r}")
        dt = _PY_64BIT_DTYPES[next(t for t in _PY_SCALAR_TYPES if isinstance(x, t))]
    if dt not in _VALID_DTYPES:
        raise TypeError(f"Value {x!r} with dtype {dt} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")
    return canonicalize_dtype(dt) if canonicalize else dt


def _explicit_dtype(x: Any, canonicalize: bool) -> np.dtype:
    try:
        dt = np.dtype(x)
    except TypeError as e:
        raise TypeError(f"Cannot interpret {x!r} as a dtype") from e
    if dt not in _VALID_DTYPES:
        raise TypeError(f"Value {x!r} with dtype {dt} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")
    return _canonicalize_explicit(dt, "dtype") if canonicalize else dt


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) matching a value's or dtype's kind."""
    kind_ = kind(dtype(x))
    if kind_ == "b":
        return bool
    if kind_ in "iu":
        return int
    if kind_ == "f":
        return float
    if kind_ == "c":
        return complex
    raise TypeError(f"Invalid scalar value {x!r}")


def coerce_to_array(x: Any, dtype: Any = None) -> np.ndarray:
    """``np.asarray``, giving Python scalars canonical dtypes instead of NumPy's 64-bit ones."""
    if dtype is None and type(x) in _PY_SCALAR_TYPES:
        dtype = python_scalar_dtype(x)
    return np.asarray(x, dtype)


def tangent_dtype(primal_dtype: Any) -> np.dtype:
    """Dtype of the tangents of values of ``primal_dtype``: float0 unless it is inexact."""
    dt = np.dtype(primal_dtype)
    return dt if kind(dt) in "fc" else float0


# --- the promotion lattice ----------------------------------------------------------------------
# Nodes are the short names of the strong dtypes plus the weak types "i*", "f*" and "c*".

_WEAK_NODE_OF_KIND = {"i": "i*", "u": "i*", "f": "f*", "c": "c*"}
_NODE_OF_WEAK_TYPE = {int: "i*", float: "f*", complex: "c*"}
_DTYPE_OF_NODE = {
    **{name: dt for dt, name in _SHORT_NAMES.items()},
    **{node: _PY_64BIT_DTYPES[t] for t, node in _NODE_OF_WEAK_TYPE.items()},
}


def _promotion_lattice(x64: bool) -> dict[str, tuple[str, ...]]:
    """Each node's immediate successors (JAX's standard lattice).

    Without x64, uint32 promotes with signed ints to int32 rather than forming int64. bfloat16
    lies between the weak float and float32 (so bfloat16 with float16 gives float32); the
    other ml_dtypes types are maximal: they combine with bool, the weak scalars and (the narrow
    floats) the standard integers, and with nothing else (TypePromotionError).
    """
    narrow_floats = tuple(_SHORT_NAMES[np.dtype(getattr(ml_dtypes, n))]
                          for n in ML_FLOAT_NAMES if n != "bfloat16")
    narrow_ints = tuple(_SHORT_NAMES[np.dtype(getattr(ml_dtypes, n))] for n in ML_INT_NAMES)
    return {
        "bool": ("i*",) + narrow_ints,
        "i*": ("u8", "i8") + narrow_ints,
        **{n: () for n in narrow_floats + narrow_ints},
        "bf16": ("f32",),
        "u8": ("i16", "u16"), "u16": ("i32", "u32"),
        "u32": ("i64", "u64") if x64 else ("i32", "u64"), "u64": ("f*",),
        "i8": ("i16",), "i16": ("i32",), "i32": ("i64",), "i64": ("f*",),
        "f*": ("f16", "bf16", "c*") + narrow_floats,
        "f16": ("f32",), "f32": ("f64", "c64"), "f64": ("c128",),
        "c*": ("c64",), "c64": ("c128",), "c128": (),
    }


def _upper_bounds(lattice: dict[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    """Each node's set of upper bounds, itself included (the lattice's transitive closure)."""
    bounds: dict[str, frozenset[str]] = {}

    def visit(node):
        if node not in bounds:
            bounds[node] = frozenset({node}).union(*map(visit, lattice[node]))
        return bounds[node]

    for node in lattice:
        visit(node)
    return bounds


_UPPER_BOUNDS = {x64: _upper_bounds(_promotion_lattice(x64)) for x64 in (False, True)}


@functools.lru_cache(maxsize=None)
def _least_upper_bound(x64: bool, nodes: frozenset[str]) -> str:
    """The least upper bound of ``nodes``; TypePromotionError where there is none (the narrow
    ml_dtypes types with anything but bool and weak scalars)."""
    bounds = _UPPER_BOUNDS[x64]
    common = frozenset.intersection(*(bounds[n] for n in nodes))
    least = (common & nodes) or {c for c in common if common <= bounds[c]}
    if len(least) != 1:
        names = ", ".join(sorted(_DTYPE_OF_NODE[n].name if n in _DTYPE_OF_NODE else n
                                 for n in nodes))
        raise TypePromotionError(
            f"Input dtypes ({names}) have no available implicit dtype promotion path. To avoid "
            "unintended promotion, the narrow ml_dtypes types (float8_*, float6_*, float4_*, "
            "int4, uint4, ...) promote only with themselves, bool, Python scalars and (the "
            "floats) the standard integers; convert explicitly with .astype().")
    (node,) = least
    return node


def _node(dt: np.dtype, weak: bool) -> str:
    node = (weak and _WEAK_NODE_OF_KIND.get(kind(dt))) or _SHORT_NAMES.get(dt)
    if node is None:
        raise ValueError(f"dtype={dt!r} is not a valid dtype for JAX type promotion.")
    return node


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype a binary operation casts its two arguments to (like ``jnp.promote_types``).

    The Python types ``int``, ``float`` and ``complex`` are weak: ``promote_types('uint8', int)``
    is uint8. The result is not canonicalized, so ``promote_types(int, int)`` is int64.
    """
    nodes = frozenset((_promotion_node(a), _promotion_node(b)))
    return _DTYPE_OF_NODE[_least_upper_bound(config.x64_enabled, nodes)]


def _promotion_node(x: Any) -> str:
    # Compare by identity: np.dtype('int64') == int is True, but that dtype is not weak.
    for typ, node in _NODE_OF_WEAK_TYPE.items():
        if x is typ:
            return node
    return _node(np.dtype(x), False)


def _dtype_and_weak(x: Any) -> tuple[np.dtype, bool]:
    """The canonical (dtype, weak_type) of one ``result_type`` argument."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        dt = canonicalize_dtype(x.dtype)
        if dt not in _VALID_DTYPES:
            raise TypeError(f"Value {x!r} with dtype {dt} is not a valid JAX array type. "
                            "Only arrays of numeric types are supported by JAX.")
        return dt, False
    typ = type(x)
    key = _PY_SCALAR_KEYS[config.x64_enabled].get(typ)
    if key is not None:
        return key
    if x is None:
        return default_float_dtype(), False
    if typ is type and x in _PY_SCALAR_TYPES:
        return _PY_SCALAR_KEYS[config.x64_enabled][x]
    return dtype(x, canonicalize=True), bool(getattr(x, "weak_type", False))


def _lattice_result(x64: bool, keys: tuple[tuple[np.dtype, bool], ...]) -> tuple[np.dtype, bool]:
    """JAX's ``lattice_result_type`` on already-computed (dtype, weak) pairs."""
    if len(keys) == 1:
        out, weak = keys[0]
    else:
        distinct = {dt for dt, _ in keys}
        all_weak = all(weak for _, weak in keys)
        if len(distinct) == 1 and not all_weak:
            out, weak = distinct.pop(), False
        elif all_weak:
            # Promote the strong counterparts, so that e.g. two weak int16s stay int16 before
            # being widened to the default int below.
            node = _least_upper_bound(x64, frozenset(_node(dt, False) for dt in distinct))
            out, weak = canonicalize_dtype(_DTYPE_OF_NODE[node]), True
        else:
            node = _least_upper_bound(x64, frozenset(_node(dt, w) for dt, w in keys))
            out, weak = canonicalize_dtype(_DTYPE_OF_NODE[node]), node.endswith("*")
    if weak and out != _BOOL:
        return _DEFAULT_OF_KIND[x64].get(kind(out), out), True
    return out, False


_result_cache = caches.memo("dtypes.result_types", limit=4096)  # (x64, keys) -> (dtype, weak)


def result_type(*args: Any, return_weak_type_flag: bool = False):
    """The dtype JAX's type promotion gives the combination of ``args``.

    Arguments may be didax arrays or tracers (anything with an ``aval``), NumPy arrays and
    scalars, Python scalars or the types ``int``/``float``/``complex``/``bool``, dtype-likes, or
    None (the default float). Weak results get the default dtype of their kind. Returns the dtype,
    or ``(dtype, weak_type)`` if ``return_weak_type_flag``.
    """
    if len(args) == 2:  # fast path: the common binary op on two strong, equal dtypes
        a, b = args
        key_a, key_b = _dtype_and_weak(a), _dtype_and_weak(b)
        if key_a == key_b and not key_a[1]:
            return key_a if return_weak_type_flag else key_a[0]
        keys = (key_a, key_b)
    elif args:
        keys = tuple(map(_dtype_and_weak, args))
    else:
        raise ValueError("at least one array or dtype is required")
    x64 = config.x64_enabled
    cache_key = (x64, keys)
    try:
        out = _result_cache[cache_key]
    except KeyError:
        out = caches.add(_result_cache, cache_key, _lattice_result(x64, keys))
    return out if return_weak_type_flag else out[0]


# --- dtype predicates and machine limits --------------------------------------------------------

class extended(np.generic):
    """The abstract scalar type of dtypes NumPy does not have (JAX's `jax.dtypes.extended`):
    `issubdtype(key.dtype, extended)` is how JAX programs recognise typed PRNG keys."""


class prng_key(extended):
    """The scalar type of typed PRNG key dtypes (`key<fry>`), as `jax.dtypes.prng_key`."""


class ExtendedDType(abc.ABC):
    """The base of dtypes NumPy does not have: an instance has a scalar `type` (a subclass of
    `extended`), a `name`, and `_rules` saying how values of it are handled. Typed PRNG keys'
    dtype is one; libraries declare others (flax's fp8 metadata), which didax's primitives
    do not compute with."""

    @property
    @abc.abstractmethod
    def type(self) -> type: ...

    @property
    @abc.abstractmethod
    def _rules(self) -> type: ...

    @property
    def name(self) -> str:
        return str(self)


DType = np.dtype  # (JAX's alias for a NumPy dtype, in annotations)


def supports_inf(dtype) -> bool:
    """Whether `dtype` has infinities (some float8 types do not)."""
    dtype = np.dtype(dtype)
    return kind(dtype) in "fc" and bool(np.isinf(np.array(np.inf, dtype)))


class TypePromotionError(ValueError):
    """An implicit promotion with no path in the lattice (a narrow ml_dtypes type mixed with
    another dtype). didax has only the standard promotion mode; JAX's strict mode raises it
    more often."""


def _is_extended(dt: Any) -> bool:
    """An extended dtype (a typed key's dtype): not a NumPy dtype; its `.type` says what."""
    return isinstance(getattr(dt, "type", None), type) and issubclass(dt.type, extended) \
        and not isinstance(dt, (type, np.dtype))


def issubdtype(a: Any, b: Any) -> bool:
    """``np.issubdtype``, also accepting arrays and other objects carrying a ``dtype``, and
    extended dtypes (typed keys: sub-dtypes of `prng_key` and `extended` only)."""
    a, b = _as_dtype_or_type(a), _as_dtype_or_type(b)
    if _is_extended(a) or _is_extended(b):
        if _is_extended(b):
            return b == a  # (the extended dtype's __eq__ decides)
        return isinstance(b, type) and issubclass(a.type, b)
    return _issubdtype_cached(a, b)


def _as_dtype_or_type(x: Any) -> Any:
    if isinstance(x, (type, np.dtype)) or x is None or _is_extended(x):
        return x
    dt = getattr(x, "dtype", None)  # arrays and tracers; np.dtype() refuses NumPy arrays
    return dt if isinstance(dt, np.dtype) or _is_extended(dt) else np.dtype(x)


def itemsize_bits(dtype: Any) -> int:
    """The number of bits one element of `dtype` occupies (8 for bool)."""
    if dtype is None or _is_extended(dtype):
        raise ValueError(f"unexpected input: dtype={dtype}")
    return np.dtype(dtype).itemsize * 8


# What the ml_dtypes types are sub-dtypes of, through a standard type of the same kind.
_ML_STAND_IN = {"f": np.float16, "i": np.int8, "u": np.uint8}


@functools.lru_cache(maxsize=512)
def _issubdtype_cached(a: Any, b: Any) -> bool:
    ml_a = _ml_dtype_of(a)
    if ml_a is not None:  # bfloat16 is a floating, int4 a signedinteger, ...
        if _ml_dtype_of(b) is not None or not (isinstance(b, type) and issubclass(b, np.generic)
                                               and b.__subclasses__()):
            return ml_a == np.dtype(b)
        return issubclass(_ML_STAND_IN[_ML_KIND[ml_a]], b)
    return bool(np.issubdtype(a, b))


def _ml_dtype_of(x: Any) -> np.dtype | None:
    try:
        dt = x if isinstance(x, np.dtype) else np.dtype(x) if isinstance(x, (type, str)) else \
            getattr(x, "dtype", None)
    except TypeError:
        return None
    return dt if dt in _ML_KIND else None


_KIND_SETS = {
    "bool": frozenset({_BOOL}),
    "signed integer": frozenset(d for d in _NUMERIC_DTYPES if kind(d) == "i"),
    "unsigned integer": frozenset(d for d in _NUMERIC_DTYPES if kind(d) == "u"),
    "integral": frozenset(d for d in _NUMERIC_DTYPES if kind(d) in "iu"),
    "real floating": frozenset(d for d in _NUMERIC_DTYPES if kind(d) == "f"),
    "complex floating": frozenset(d for d in _NUMERIC_DTYPES if kind(d) == "c"),
    "numeric": frozenset(d for d in _NUMERIC_DTYPES if kind(d) != "b"),
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Array-API ``isdtype``: is ``dtype`` of ``kind`` (a kind name, a dtype, or a tuple)?"""
    the_dtype = np.dtype(dtype)
    options: set[np.dtype] = set()
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in _KIND_SETS:
            options |= _KIND_SETS[k]
            continue
        try:
            options.add(np.dtype(k))
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(
                    f"Unrecognized kind={k!r}, expected one of {list(_KIND_SETS)}, or a "
                    "compatible input for jnp.dtype()") from None
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") from e
    return the_dtype in options


def _info_arg(x: Any) -> Any:
    """Unwrap arrays to their dtype so finfo/iinfo accept them, as ``jnp.finfo`` does."""
    if isinstance(x, (str, type, np.dtype)):
        return x
    aval = getattr(x, "aval", None)
    return getattr(aval if aval is not None else x, "dtype", x)


class finfo(np.finfo):
    """``np.finfo`` that also accepts didax arrays and dtype-carrying objects, and the ml_dtypes
    floats (bfloat16, float8_*...), whose limits ml_dtypes computes."""

    _finfo_cache: dict = {}  # np.finfo's own cache would hand back plain np.finfo objects
    _ml_cache: dict = {}

    def __new__(cls, dtype):
        arg = _info_arg(dtype)
        ml = _ml_dtype_of(arg)
        if ml is None:
            return super().__new__(cls, arg)
        info = cls._ml_cache.get(ml)
        if info is None:
            info = object.__new__(cls)
            info.__dict__.update(vars(ml_dtypes.finfo(ml)))
            cls._ml_cache[ml] = info
        return info


class iinfo(np.iinfo):
    """``np.iinfo`` that also accepts didax arrays and dtype-carrying objects, and the narrow
    ml_dtypes ints (int4, uint2...), whose limits ml_dtypes gives."""

    def __init__(self, int_type):
        arg = _info_arg(int_type)
        self._ml = None if _ml_dtype_of(arg) is None else ml_dtypes.iinfo(arg)
        if self._ml is None:
            super().__init__(arg)
        else:
            self.dtype, self.bits = self._ml.dtype, self._ml.bits
            self.kind = _ML_KIND[self.dtype]
            self.key = f"{self.kind}{self.bits}"

    @property
    def min(self):
        return super().min if self._ml is None else int(self._ml.min)

    @property
    def max(self):
        return super().max if self._ml is None else int(self._ml.max)


def short_name(dtype: Any) -> str:
    """JAX's jaxpr short dtype name: f32, i64, u8, c64, bool, float0, ..."""
    dt = np.dtype(dtype)
    name = _SHORT_NAMES.get(dt)
    if name is not None:
        return name
    if dt == float0:
        return "float0"
    return (dt.name.replace("float", "f").replace("uint", "u").replace("int", "i")
            .replace("complex", "c"))
