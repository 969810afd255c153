"""Which of the transformations runs where the code runs: the trace-state queries
libraries make (JAX's `*_DO_NOT_USE` functions, which `didax.extend.core` exports)."""
from __future__ import annotations

from didax._src import core
from didax._src.interpreters.batching import BatchInterpreter, axis_frames
from didax._src.interpreters.staging import StagingInterpreter


def _interpreters():
    interp = core.current_interpreter()
    while interp is not None:
        yield interp
        interp = interp.parent


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    """Whether the code runs while a function is staged (jit, make_jaxpr)."""
    return any(isinstance(i, StagingInterpreter) for i in _interpreters())


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    """Whether the code runs under vmap."""
    return any(isinstance(i, BatchInterpreter) for i in _interpreters())


def unsafe_get_axis_names_DO_NOT_USE() -> list:
    """The names of the named axes (vmap's axis_name, pmap's) bound here, outermost first."""
    return [name for name, _ in reversed(axis_frames())]


def nonempty_axis_env_DO_NOT_USE() -> bool:
    """Whether any named axis is bound here."""
    return bool(axis_frames())
