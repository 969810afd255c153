"""`jax.experimental.hijax`: the names libraries build "high-level" types and primitives on
(flax's nnx declares its hijax variables with them at import).

didax's interpreters handle arrays only, so these are what a library needs to declare such
things: base classes, the decorators its classes use, and the registries. Using one raises a
clear NotImplementedError: binding a `HiPrimitive`, or handing a value of a registered high
type to a transformation. (flax uses them only with `flax_hijax_variable` on; off is its
default.)
"""
from __future__ import annotations

from didax._src.base_prims import instantiate as instantiate_zeros  # noqa: F401
from didax._src.core import ShapedArray, Zero, pytype_aval_mappings  # noqa: F401
from didax._src.interpreters.transpose import is_undefined as is_undefined_primal  # noqa: F401

__all__ = ["AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive", "HiType",
           "MutableHiType", "ShapedArray", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal",
           "register_hitype"]

AbstractValue = ShapedArray  # (didax's only abstract value, as in didax.core)


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{what}: high-level (hijax) types and primitives are not supported by didax, whose "
        "interpreters handle arrays only. With flax, keep `flax_hijax_variable` off (its "
        "default).")


class HiType:
    """The abstract value of a high-level object (a library's, such as nnx's variables)."""

    mutable = False


class MutableHiType(HiType):
    """A high-level type whose values change in place (its changes tracked as effects)."""

    mutable = True


class AvalQDD:
    """An abstract value with its quasi-dynamic data (the parts that may change)."""

    __slots__ = ("aval", "qdd")

    def __init__(self, aval, qdd):
        self.aval, self.qdd = aval, qdd


class AvalMutableQDD:
    """An abstract value with quasi-dynamic data that may be updated in place."""

    __slots__ = ("aval", "mutable_qdd")

    def __init__(self, aval, mutable_qdd):
        self.aval, self.mutable_qdd = aval, mutable_qdd


class HiPrimitive:
    """A primitive on high-level values, declared by subclassing (`impl`, `abstract_eval`,
    `is_high`, its lowering and derivative methods). Declaring one works; binding it raises."""

    multiple_results = False
    call_primitive = False

    def __init__(self, name: str):
        self.name = name

    def bind(self, *args, **params):
        raise _unsupported(f"binding the hijax primitive {self.name!r}")

    def __repr__(self):
        return self.name


class aval_method:
    """A method of a high-level value that may also be called on its abstract value."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, obj, cls=None):
        return self if obj is None else self.fun.__get__(obj, cls)


class aval_property(property):
    """A property of a high-level value that its abstract value has too."""


class _EffectTypeSet:
    """Effect types allowed in control flow (loops and conditionals), as libraries add
    them. didax's jaxprs do not carry effect sets, so this is kept for those who ask."""

    def __init__(self):
        self._types: set[type] = set()

    def add_type(self, effect_type: type) -> None:
        self._types.add(effect_type)

    def contains(self, effect) -> bool:
        return isinstance(effect, tuple(self._types))

    def filter_not_in(self, effects):
        return [e for e in effects if not self.contains(e)]


control_flow_allowed_effects = _EffectTypeSet()


def register_hitype(value_type: type, to_aval) -> None:
    """Declares `value_type` a high-level type whose abstract value `to_aval` gives; such a
    value reaching a transformation raises (see the module docstring)."""
    def refuse(x):
        raise _unsupported(f"a value of the high-level type {value_type.__name__}")
    pytype_aval_mappings[value_type] = refuse
