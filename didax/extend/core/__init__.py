"""Mirrors `jax.extend.core`: `Primitive` for libraries (its impl written with `jax.numpy`),
`CallPrimitive`, the jaxpr types, the trace API, and every primitive (`primitives`)."""
from didax._src.compat.api_util import DebugInfo  # noqa: F401
from didax._src.compat.call_primitive import CallPrimitive  # noqa: F401
from didax._src.compat.effects import Effect  # noqa: F401
from didax._src.compat.extend_core import (  # noqa: F401
    AbstractToken,
    DropVar,
    InconclusiveDimensionOperation,
    JaxprTypeError,
    Token,
    TraceTag,
    call_impl,
    check_jaxpr,
    concrete_or_error,
    gensym,
    jaxprs_in_params,
    mapped_aval,
    new_jaxpr_eqn,
    nonempty_axis_env_DO_NOT_USE,
    primal_dtype_to_tangent_dtype,
    set_current_trace,
    subjaxprs,
    take_current_trace,
    unmapped_aval,
    unsafe_am_i_under_a_jit_DO_NOT_USE,
    unsafe_am_i_under_a_vmap_DO_NOT_USE,
    unsafe_get_axis_names_DO_NOT_USE,
)
from didax._src.compat.foreign_rules import LibraryPrimitive as Primitive  # noqa: F401
from didax._src.compat.jax_core import valid_jaxtype  # noqa: F401
from didax._src.compat.trace_state import find_top_trace, get_opaque_trace_state  # noqa: F401
from didax._src.core import ShapedArray  # noqa: F401
from didax._src.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr  # noqa: F401
from didax.extend.core import primitives  # noqa: F401


def jaxpr_as_fun(closed: ClosedJaxpr):
    """The function a closed jaxpr computes (flat arguments in, list of outputs out)."""
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return fun

