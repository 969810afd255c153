"""`make_user_context`: a value of the user's that `jit` keys its cache on, so a function
whose tracing reads it is traced again when it changes (and found again when it changes
back). Each context is a config flag, so changing it reaches jit as any flag does."""
from __future__ import annotations

import itertools
from typing import Any, Callable

from didax._src.config import config, flag_context

_names: list[str] = []
_ids = itertools.count()
_on_new: list[Callable[[str, Any], None]] = []


def on_new_context(callback: Callable[[str, Any], None]) -> Callable[[str, Any], None]:
    """Call `callback(name, default_value)` after each new context is made (as
    `config.on_change` does after a flag changes); usable as a decorator. `jit` hooks in
    here so that its key holds the new context."""
    _on_new.append(callback)
    return callback


def user_context_values() -> tuple:
    """The current value of every user context, in creation order (part of jit's key)."""
    return tuple(config.read(n) for n in _names)


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"make_user_context: a context's value must be hashable (jit keys "
                        f"its cache on it), got {value!r} of type "
                        f"{type(value).__name__}") from None
    return value


class UserContext:
    """`ctx(value)` sets the context for a `with` block; `ctx.value` reads it;
    `set_global`/`get_global` set and read it outside any block."""

    def __init__(self, default_value: Any):
        self._name = f"didax_user_context_{next(_ids)}"
        config.define(self._name, _hashable(default_value), _hashable)
        _names.append(self._name)
        for callback in list(_on_new):
            callback(self._name, default_value)

    @property
    def value(self) -> Any:
        return config.read(self._name)

    def get_global(self) -> Any:
        return config.read(self._name)

    def set_global(self, value: Any) -> None:
        config.update(self._name, value)

    def __call__(self, new_value: Any):
        return flag_context(self._name, new_value)


def make_user_context(default_value: Any = None) -> UserContext:
    """A context `jit` keys its cache on: a jitted function is traced again when the value
    changes (didax keeps the value process-wide, where JAX scopes `with` blocks to a
    thread)."""
    return UserContext(default_value)
