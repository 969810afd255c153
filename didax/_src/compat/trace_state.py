"""The trace API libraries use to tell transformations apart (equinox's `filter_jvp`, flax's
module levels, numpyro's caches): which transformation runs now, and whether any does."""
from __future__ import annotations

from didax._src.core import current_interpreter, eval_interpreter

__all__ = ["OpaqueTraceState", "find_top_trace", "get_opaque_trace_state",
           "trace_state_clean"]


def find_top_trace(xs=None):
    """The innermost transformation running now (evaluation outside any): as in JAX, the
    arguments are not consulted. Its `.main` identifies it; a tracer's `._trace` is its own."""
    del xs
    return current_interpreter()


def trace_state_clean() -> bool:
    """Whether no transformation is running (code at the top level, outside jit, grad...)."""
    return current_interpreter() is eval_interpreter


class OpaqueTraceState:
    """Which transformation was current when it was taken; equal to another taken under the
    same one. Libraries (flax) keep one to tell whether they are still at the level where a
    module was made."""

    __slots__ = ("_interp",)

    def __init__(self, interp):
        self._interp = interp

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._interp is other._interp

    def __hash__(self):
        return id(self._interp)


def get_opaque_trace_state(convention=None):
    del convention
    return OpaqueTraceState(current_interpreter())
