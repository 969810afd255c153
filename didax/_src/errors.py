"""Exception types users catch, and the helper that finds the user's own line.

Every error a user sees names their line of code, not ours: `user_frame` walks the
stack past didax's own frames.
"""
from __future__ import annotations

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_internal(filename: str) -> bool:
    return filename.startswith(_PACKAGE_DIR) or filename.startswith("<frozen")


def user_frame(skip: int = 1):
    """The innermost stack frame that belongs to user code (None if there is none)."""
    frame = sys._getframe(skip)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def user_location(skip: int = 2) -> str:
    """`file:line (function)` of the user's innermost frame, for error messages."""
    frame = user_frame(skip)
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


def user_source_info(skip: int = 2) -> tuple[str, int, str] | None:
    """(file, line, function) of the user's innermost frame, recorded on equations."""
    frame = user_frame(skip)
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def format_source_info(info) -> str:
    if info is None:
        return "<unknown>"
    file, line, fn = info
    return f"{file}:{line} ({fn})"


class DidaxTypeError(TypeError):
    """Base for type errors raised by didax."""


class ConcretizationTypeError(DidaxTypeError):
    """A traced value was used where Python needs a concrete one (bool, int, index...)."""


class TracerBoolConversionError(ConcretizationTypeError):
    pass


class TracerIntegerConversionError(ConcretizationTypeError):
    pass


class TracerArrayConversionError(DidaxTypeError):
    pass


class UnexpectedTracerError(Exception):
    """A tracer escaped the transformation that created it."""


class NonConcreteBooleanIndexError(IndexError):
    pass


def concretization_error(tracer, what: str, cls=ConcretizationTypeError):
    aval = tracer.aval
    where = user_location(3)
    msg = (
        f"Abstract tracer value encountered where a concrete value is expected: {what} of a "
        f"traced value of type {aval.str_short()} ({type(tracer._interp).__name__}).\n"
        f"  at {where}\n"
        "The value depends on the inputs of a transformed function (jit, make_jaxpr, vmap...), "
        "so it is unknown while tracing. Python control flow cannot branch on it.\n"
        "What to do: use `jnp.where(cond, a, b)` or `lax.cond(pred, f, g, *args)` for a "
        "data-dependent choice, `lax.while_loop`/`lax.fori_loop` for loops, or mark the "
        "argument static (`static_argnums`) if it is really a compile-time constant."
    )
    return cls(msg)


class NativeTierWarning(RuntimeWarning):
    """The native tier of `jit` is unavailable (no working C compiler, an unsafe cache
    directory); jitted functions keep running on the NumPy tier."""
