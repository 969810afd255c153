"""Global configuration flags, mirroring ``jax.config``.

Flags are process-global (JAX's are thread-local inside context managers; didax has no threads
of its own, so this simpler model is enough). Each flag's default can be set from the environment
variable named after it in upper case, e.g. ``JAX_ENABLE_X64=1``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable

_TRUE_STRINGS = ("y", "yes", "t", "true", "on", "1")
_FALSE_STRINGS = ("n", "no", "f", "false", "off", "0")

# Accepted for source compatibility with JAX; didax always computes at full precision.
_MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
)


def _env_bool(env_name: str, text: str) -> bool:
    """Parse a boolean environment variable the way JAX does (and fail loudly on junk)."""
    text = text.lower()
    if text in _TRUE_STRINGS:
        return True
    if text in _FALSE_STRINGS:
        return False
    raise ValueError(f"invalid truth value {text!r} for environment {env_name!r}")


def _optional_str(name: str) -> Callable[[Any], str | None]:
    def validate(value):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string or None, got {value!r}")
        return value
    return validate


def _one_of(name: str, choices: tuple[str, ...]) -> Callable[[Any], str | None]:
    def validate(value):
        if value is not None and value not in choices:
            raise ValueError(f"{name} must be None or one of {list(choices)}, got {value!r}")
        return value
    return validate


class Config:
    """The ``config`` singleton: ``update(name, value)``, ``read(name)`` and attribute reads.

    ``x64_enabled`` is a plain attribute kept in sync with ``jax_enable_x64`` because it is read
    on every array creation and type promotion.
    """

    def __init__(self):
        self._values: dict[str, Any] = {}
        self._validators: dict[str, Callable[[Any], Any]] = {}
        self._callbacks: list[Callable[[str, Any], None]] = []
        self.x64_enabled = False

    def define(self, name: str, default: Any, validator: Callable[[Any], Any] = bool) -> None:
        """Declare a flag. ``validator`` checks and normalizes every value set (default: bool).

        The environment variable ``name.upper()`` overrides ``default`` when set.
        """
        if name in self._validators:
            raise ValueError(f"config option {name} is already defined")
        env_name = name.upper()
        env_text = os.environ.get(env_name)
        if env_text is not None:
            default = _env_bool(env_name, env_text) if validator is bool else env_text
        self._validators[name] = validator
        self._set(name, validator(default))

    def update(self, name: str, value: Any) -> None:
        """Set flag ``name``; registered ``on_change`` callbacks run if the value changed."""
        validator = self._validators.get(name)
        if validator is None:
            raise self._unknown(name)
        value = validator(value)
        if self._values[name] == value:
            return
        self._set(name, value)
        for callback in list(self._callbacks):
            callback(name, value)

    def read(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise self._unknown(name) from None

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails, i.e. for flag names.
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise self._unknown(name) from None

    def on_change(self, callback: Callable[[str, Any], None]) -> Callable[[str, Any], None]:
        """Call ``callback(name, new_value)`` after any flag changes; usable as a decorator.

        Caches that depend on a flag (e.g. on x64 mode) hook in here to invalidate themselves.
        """
        self._callbacks.append(callback)
        return callback

    @property
    def values(self) -> dict[str, Any]:
        """A snapshot of all flag values."""
        return dict(self._values)

    def _set(self, name: str, value: Any) -> None:
        self._values[name] = value
        if name == "jax_enable_x64":
            self.x64_enabled = value

    def _unknown(self, name: str) -> AttributeError:
        known = ", ".join(sorted(self._validators))
        return AttributeError(f"Unrecognized config option: {name}. Known options: {known}")


config = Config()
config.define("jax_enable_x64", False)
config.define("jax_debug_nans", False)
config.define("jax_debug_infs", False)
config.define("jax_disable_jit", False)
config.define("jax_explain_cache_misses", False)
config.define("jax_platform_name", None, _optional_str("jax_platform_name"))  # only "cpu" exists
config.define("jax_platforms", None, _optional_str("jax_platforms"))  # only "cpu" exists
config.define(
    "jax_default_matmul_precision", None,
    _one_of("jax_default_matmul_precision", _MATMUL_PRECISIONS),
)
# jit's native tier (C): built in the "background" while the NumPy tier serves the first
# calls, "sync" (before the first call returns), "off", or "check" (a test mode: both tiers
# on every call, their bits compared).
config.define("didax_native_tier", "background",
              _one_of("didax_native_tier", ("background", "sync", "off", "check")))
# Eager reverse mode compiles each signature's linearization (JVP, partial evaluation,
# transposition of the one application) in the "first" vjp to see it (the default: every call
# of a program gives the same bits), the "second" (a function differentiated once pays
# nothing for it, but its first call may round differently from the later ones), or never
# ("off": every application takes the interpreters' general path).
config.define("didax_eager_vjp_steps", "first",
              _one_of("didax_eager_vjp_steps", ("second", "first", "off")))
# What to do when a 64-bit dtype is requested explicitly while x64 is off: "warn" and truncate
# to 32 bits (JAX's default), "error", or "allow" it.
config.define(
    "jax_explicit_x64_dtypes", "warn",
    _one_of("jax_explicit_x64_dtypes", ("warn", "error", "allow")),
)



def _dtype_promotion(mode):
    """'standard' (JAX's lattice with weak types) is what didax implements; 'strict' (no
    implicit promotion at all) is not."""
    if mode == "strict":
        raise NotImplementedError("jax_numpy_dtype_promotion='strict' is not implemented: "
                                  "didax always promotes by the standard lattice")
    if mode != "standard":
        raise ValueError("jax_numpy_dtype_promotion must be 'standard' or 'strict', got "
                         f"{mode!r}")
    return mode


config.define("jax_numpy_dtype_promotion", "standard", _dtype_promotion)


@contextlib.contextmanager
def flag_context(name: str, value: Any):
    """Temporarily set flag ``name`` to ``value``, restoring the previous value on exit."""
    previous = config.read(name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, previous)


def enable_x64(new_val: bool = True):
    """Context manager enabling (or with ``False``, disabling) 64-bit types, then restoring."""
    return flag_context("jax_enable_x64", new_val)


def numpy_dtype_promotion(mode: str):
    """Context manager choosing the type promotion of `didax.numpy` operations (the flag
    `jax_numpy_dtype_promotion`)."""
    return flag_context("jax_numpy_dtype_promotion", mode)
