"""The rest of `jax.extend.core`: building and checking jaxprs (`new_jaxpr_eqn`, `gensym`,
`check_jaxpr`, `subjaxprs`), token types, and the trace-state queries libraries use (those
that name interpreters are in transforms/trace_queries.py).

didax's interpreters stand for JAX's traces: `set_current_trace` makes one current for a
block, `take_current_trace` yields the current one (JAX also hides it inside the block;
didax leaves it current), and a `TraceTag` is an identity token like the interpreter's
`main`.
"""
from __future__ import annotations

import contextlib

import numpy as np

from didax._src import core, dtypes
from didax._src.compat.jax_core import mapped_aval, unmapped_aval  # noqa: F401
from didax._src.errors import InconclusiveDimensionOperation  # noqa: F401
from didax._src.ir import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, JaxprTypeError, Var  # noqa: F401
from didax._src.ir import check_jaxpr as _check_jaxpr
from didax._src.ir import subjaxprs as _params_subjaxprs
from didax._src.numpy.util import concrete_or_error as _concrete_or_error
from didax._src.transforms.trace_queries import (  # noqa: F401
    nonempty_axis_env_DO_NOT_USE,
    unsafe_am_i_under_a_jit_DO_NOT_USE,
    unsafe_am_i_under_a_vmap_DO_NOT_USE,
    unsafe_get_axis_names_DO_NOT_USE,
)


class AbstractToken:
    """The type of tokens, which order effects (didax orders effectful equations itself)."""

    def __eq__(self, other):
        return isinstance(other, AbstractToken)

    def __hash__(self):
        return hash(AbstractToken)

    def __repr__(self):
        return "AbstractToken()"

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return "Tok"


class Token:
    """A token value (its buffer `buf` is empty)."""

    def __init__(self, buf=None):
        self._buf = buf

    def block_until_ready(self):
        return self


class TraceTag:
    """An identity token naming one transformation (compared by identity)."""


def call_impl(f, *args, **params):
    """Calls `f` (a `linear_util.WrappedFun` or a function) on `args`."""
    call = getattr(f, "call_wrapped", None)
    return call(*args, **params) if call is not None else f(*args, **params)


def check_jaxpr(jaxpr) -> None:
    """Checks that `jaxpr` is well formed (each variable defined once, before use) and
    well typed (each equation as its primitive's type rule says), raising JaxprTypeError."""
    _check_jaxpr(jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr)


def concrete_or_error(force, val, context: str = ""):
    """`force(val)` (or `val` when `force` is None) for a value known now; for a traced
    value without one, a ConcretizationTypeError that names `context`."""
    if isinstance(val, core.Tracer):
        val = _concrete_or_error(val, context or "this value")
        if type(val) is np.ndarray and val.shape == ():
            val = val[()]
    return val if force is None else force(val)


def gensym(suffix: str = ""):
    """A function making a fresh variable of a given type."""
    del suffix
    return Var


def jaxprs_in_params(params):
    """The jaxprs among an equation's parameters (for control flow, calls...)."""
    yield from _params_subjaxprs(params)


def subjaxprs(jaxpr: Jaxpr):
    """The jaxprs held in the parameters of `jaxpr`'s equations (not recursively)."""
    for eqn in jaxpr.eqns:
        yield from _params_subjaxprs(eqn.params)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=None, source_info=None,
                  ctx=None) -> JaxprEqn:
    """An equation applying `primitive` (didax keeps no effect sets: `effects` is not
    stored)."""
    return JaxprEqn(primitive, invars, outvars, params, source_info)


def primal_dtype_to_tangent_dtype(primal_dtype):
    """float0 for integer and boolean values (which have no derivative), else the dtype."""
    dtype = np.dtype(primal_dtype)
    if dtypes.kind(dtype) in "biu":
        return dtypes.float0
    return dtype


@contextlib.contextmanager
def set_current_trace(trace, check_leaks: bool = False):
    """Makes the interpreter `trace` current for a block."""
    with core.interpreter_context(trace):
        yield trace


@contextlib.contextmanager
def take_current_trace():
    """Yields the current interpreter (which stays current: see the module's note)."""
    yield core.current_interpreter()
