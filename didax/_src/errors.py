"""Exception types users catch, and the helper that finds the user's own line.

Every error a user sees names their line of code, not ours: `user_frame` walks the
stack past didax's own frames.
"""
from __future__ import annotations

import os
import sys

from didax._src import caches

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_internal_files = caches.memo("errors.internal_files")  # filename -> whether it is didax's


def _classify(filename: str) -> bool:
    """Whether a file not seen before is didax's (or frozen), recorded for the next lookup."""
    return caches.add(_internal_files, filename, filename.startswith((_PACKAGE_DIR, "<frozen")))


def user_frame(skip: int = 1):
    """The innermost stack frame that belongs to user code (None if there is none)."""
    # (Staging records the user's line on every equation, under transformations forty
    # frames below it: one dict lookup per frame here, a call only for a file not yet seen.)
    frame = sys._getframe(skip)
    known = _internal_files
    while frame is not None:
        filename = frame.f_code.co_filename
        internal = known.get(filename)
        if internal is None:
            internal = _classify(filename)
        if not internal:
            return frame
        frame = frame.f_back
    return None


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


def user_error(cls, msg: str):
    """An exception of type `cls` whose message names the user's line (the innermost frame
    outside didax) under its first line, for mistakes caught in didax's own Python code
    (primitive type errors gain it in `core.abstract_eval`)."""
    head, _, rest = msg.partition("\n")
    where = f"  at {user_location(3)}"
    if head.endswith(":") and rest:  # a list follows the first line: the line goes last
        err = cls(f"{msg}\n{where}")
    else:
        err = cls(f"{head}\n{where}" + (f"\n{rest}" if rest else ""))
    err._didax_located = True
    return err


def function_site(fn) -> str:
    """`name (defined at file:line)` of a user function, to say which branch or body a
    structural mismatch comes from; the bare name when it has no Python code."""
    inner = fn
    while True:
        if hasattr(inner, "__wrapped__"):
            inner = inner.__wrapped__
        elif hasattr(inner, "func") and callable(inner.func):  # partial
            inner = inner.func
        else:
            break
    name = getattr(inner, "__qualname__", None) or getattr(inner, "__name__", None) or repr(fn)
    name = name.rsplit(".<locals>.", 1)[-1]
    code = getattr(inner, "__code__", None)
    if code is None:
        return name
    return f"{name} (defined at {code.co_filename}:{code.co_firstlineno})"


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


class UnexpectedTracerError(DidaxTypeError):
    """A tracer escaped the transformation that created it (a TypeError, as JAX's)."""


class JAXIndexError(IndexError):
    """Base for index errors raised by didax (JAX's name)."""


class NonConcreteBooleanIndexError(JAXIndexError):
    pass


JAXTypeError = DidaxTypeError  # JAX's name for the base of its type errors


class KeyReuseError(DidaxTypeError):
    """JAX raises it when its key-reuse checker finds a PRNG key used twice; didax has no
    such checker yet, so the class exists for `except` clauses."""


class JaxRuntimeError(RuntimeError):
    """A failure while running compiled code, in JAX; didax runs Python and NumPy, whose
    errors reach the caller as themselves, so it exists for `except` clauses."""


class InconclusiveDimensionOperation(Exception):
    """JAX's shape polymorphism could not decide a comparison of symbolic dimensions; didax
    shapes are always concrete, so it exists for `except` clauses."""


# What to do when a value needed concretely is traced: by the `abstract_kind` of the tracer
# that hides it ("staged": jit/make_jaxpr; "batched": vmap), then by what needed it.
_STATIC = ("mark the argument static (`jax.jit(f, static_argnums=...)` or "
           "`static_argnames=...`) if it is really a compile-time constant")
_TODO = {
    "staged": {
        "branch": "use `jnp.where(cond, a, b)` or `lax.cond(pred, f, g, *args)` for a "
                  "data-dependent choice, `lax.while_loop`/`lax.fori_loop` for loops, or "
                  + _STATIC + ".",
        "int": "to change the dtype, use `x.astype(int)` or `jnp.asarray(x, int)`; to use it "
               "as a size or a Python number, " + _STATIC + ".",
        "float": "to change the dtype, use `x.astype(float)` or `jnp.asarray(x, float)`; to "
                 "print it, use `jax.debug.print`; otherwise " + _STATIC + ".",
        "index": "index arrays with it (`x[i]`, `lax.dynamic_slice`, `lax.dynamic_index_in_dim` "
                 "accept traced indices); Python lists and tuples need a concrete index: "
                 + _STATIC + ".",
        "array": "use didax.numpy (jnp) functions instead of NumPy (np) ones on traced values "
                 "(`jnp.sin(x)`, not `np.sin(x)`); use `jax.debug.print` or "
                 "`jax.pure_callback` for host-side work.",
        "shape": "shapes must be known while tracing: " + _STATIC + ", or compute the size "
                 "from an array's `.shape`, which is always concrete.",
    },
    "batched": {
        "branch": "keep the computation in didax.numpy/lax; use `jnp.where(cond, a, b)` or "
                  "`lax.cond`/`lax.switch` (under vmap they choose per element) for a "
                  "data-dependent choice; or pass the argument unbatched (`in_axes=None`) if "
                  "it does not vary over the batch.",
        "shape": "every element of a batch must have the same shape: pass the size unbatched "
                 "(`in_axes=None`) or as a Python number.",
        "array": "use didax.numpy (jnp) functions instead of NumPy (np) ones on batched "
                 "values (`jnp.where(cond, a, b)` for a choice); pass the argument unbatched "
                 "(`in_axes=None`) if it does not vary over the batch.",
    },
}
_WHY = {
    "staged": "only its shape and dtype are known while tracing, not its value",
    "batched": "it holds one value per batch element (it is batched by vmap), so there is "
               "no single Python value",
}


def concretization_error(tracer, what: str, cls=ConcretizationTypeError, topic="branch"):
    """`what` needs a concrete value and `tracer` has none: says which function and argument
    it comes from (when known), which transformation hides it, and what to do about
    `topic` (branch, int, float, index, array, shape)."""
    source = tracer.abstract_source()
    interp = source._interp
    kind = source.abstract_kind
    started = f" (started at {interp.origin})" if interp.origin else ""
    todo = _TODO[kind].get(topic, _TODO[kind]["branch"])
    if kind == "batched" and topic == "branch":
        todo += " Python control flow cannot branch on a batched value."
    origin = source.dependence() if hasattr(source, "dependence") else ""
    msg = (
        f"Abstract tracer value encountered where a concrete value is expected: {what} "
        f"needs a concrete value, but got a traced value of type {tracer.aval.str_short()}.\n"
        f"  at {user_location(3)}\n"
        f"{origin or 'It depends on the inputs of a function'}, traced by "
        f"{getattr(interp, 'traced_by', '') or f'the {interp.describe()} transformation'}"
        f"{started}: {_WHY[kind]}.\n"
        f"What to do: {todo}"
    )
    return cls(msg)


def _numpy_hint(cls) -> str:
    if issubclass(cls, TracerArrayConversionError):
        return "\nUse didax.numpy (jnp) functions instead of NumPy (np) ones on traced values."
    return ""


def differentiated_value_error(tracer, what: str, cls=ConcretizationTypeError):
    """`what` would turn a value carrying a tangent into a Python or NumPy value, dropping the
    derivative: a silently wrong gradient, so an error instead."""
    interp = tracer._interp
    started = f" (started at {interp.origin})" if interp.origin else ""
    msg = (
        f"{what} of a value being differentiated, of type {tracer.aval.str_short()}: it "
        f"carries a tangent of the {interp.describe()} transformation (behind grad, jvp, "
        f"jacfwd, jacrev, vjp...){started}.\n"
        f"  at {user_location(3)}\n"
        "A Python or NumPy value cannot carry the tangent, so its derivative would be silently "
        "dropped and the gradient would be wrong.\n"
        "What to do: keep the computation in didax.numpy/lax (`x.astype(jnp.float32)` or "
        "`jnp.asarray(x, float)` instead of float(x), jnp functions instead of NumPy ones, "
        "`jnp.where`/`lax.cond` to choose on it); use `jax.lax.stop_gradient(x)` if the "
        "derivative is meant to be dropped; print it with `jax.debug.print`."
        + _numpy_hint(cls)
    )
    return cls(msg)


class TierMismatchError(AssertionError):
    """jit's two tiers computed different bits for the same inputs (raised only in the
    "check" mode of `didax_native_tier`, a test mode)."""


class NativeTierWarning(RuntimeWarning):
    """The native tier of `jit` is unavailable (no working C compiler, an unsafe cache
    directory); jitted functions keep running on the NumPy tier."""
