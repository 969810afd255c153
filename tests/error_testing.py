"""The error catalogue's machinery: each case is one user mistake, written once as a function
of the modules it uses (`jax`, `jnp`, `lax`), so that the same code runs under didax and under
JAX.

Under didax the error must be of the expected type (JAX's, where JAX raises), and its message
must name the user's line (the innermost line of the case in the traceback: the call that made
the mistake, or the line inside a traced function that did), the definition line of each user
function it names (a branch, a loop body), and every listed fragment (shapes, dtypes, names,
the fix). Under JAX the same mistake must raise the same type, which keeps the expected types
honest.
"""
from __future__ import annotations

import builtins
import dataclasses
import importlib
import inspect
import re
import traceback
from collections.abc import Callable

import pytest


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    run: Callable
    error: str  # the exception class, by name: a builtin, or one of `errors`
    contains: tuple[str, ...]
    defs: tuple[str, ...]  # user functions (by name) whose definition line is named


def catalogue():
    """A list of cases and the decorator that fills it."""
    cases: list[Case] = []

    def case(error: str, *contains: str, defs: tuple[str, ...] = ()):
        def register(fn):
            cases.append(Case(fn.__name__, fn, error, contains, defs))
            return fn

        return register

    return cases, case


def error_class(error: str, package: str) -> type:
    """`TypeError`, or `ConcretizationTypeError` from `didax.errors`/`jax.errors`."""
    if hasattr(builtins, error):
        return getattr(builtins, error)
    return getattr(importlib.import_module(f"{package}.errors"), error)


def modules(package: str):
    pkg = importlib.import_module(package)
    return pkg, importlib.import_module(f"{package}.numpy"), importlib.import_module(
        f"{package}.lax")


def _mistake_line(err: BaseException, filename: str) -> int:
    """The innermost line of `filename` in the traceback: where the mistake was made."""
    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__)
             if f.filename == filename]
    assert lines, "the traceback does not pass through the case"
    return lines[-1]


def _def_line(fn: Callable, name: str) -> int:
    """The first line of the definition of `name` inside the case function `fn`: its first
    decorator, or `def name(` (Python's `co_firstlineno`)."""
    source, first = inspect.getsourcelines(fn)
    pattern = re.compile(rf"^\s*def {name}\(")
    hits = [i for i, line in enumerate(source) if pattern.match(line)]
    assert len(hits) == 1, f"no single definition of {name} in {fn.__name__}"
    i = hits[0]
    while i > 0 and source[i - 1].lstrip().startswith("@"):
        i -= 1
    return first + i


def check_didax_message(c: Case):
    jax, jnp, lax = modules("didax")
    with pytest.raises(error_class(c.error, "didax")) as info:
        c.run(jax, jnp, lax)
    msg = str(info.value)
    filename = c.run.__code__.co_filename
    line = _mistake_line(info.value, filename)
    assert f"{filename}:{line} " in msg, f"the message does not name the user's line {line}:\n{msg}"
    for name in c.defs:
        assert f"{name} (defined at {filename}:{_def_line(c.run, name)})" in msg, (
            f"the message does not name {name} and its line:\n{msg}")
    missing = [s for s in c.contains if s not in msg]
    assert not missing, f"the message lacks {missing}:\n{msg}"
    assert "Tracer" not in msg.replace("UnexpectedTracer", ""), "internal class names:\n" + msg


def check_jax_raises(c: Case):
    jax, jnp, lax = modules("jax")
    with pytest.raises(error_class(c.error, "jax")):
        c.run(jax, jnp, lax)
