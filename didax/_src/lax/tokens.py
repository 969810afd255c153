"""`lax.create_token` and `lax.after_all`: XLA's tokens, which sequence side effects. didax has
no token type: its ordered effects (`io_callback(..., ordered=True)`, `debug.print(...,
ordered=True)`) run in program order without one, so both raise, saying so."""
from __future__ import annotations

_NO_TOKENS = ("didax has no token values: ordered effects (io_callback(..., ordered=True), "
              "debug.print(..., ordered=True)) run in program order without them. Drop the "
              "token and call the effects in the order they must run.")


def create_token(_=None):
    """Not available in didax (see the module's notes)."""
    raise NotImplementedError(f"lax.create_token: {_NO_TOKENS}")


def after_all(*operands):
    """Not available in didax (see the module's notes)."""
    raise NotImplementedError(f"lax.after_all: {_NO_TOKENS}")


__all__ = ["after_all", "create_token"]
