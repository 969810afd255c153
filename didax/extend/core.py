"""Mirrors `jax.extend.core`: `Primitive` for libraries (its impl written with `jax.numpy`),
and the jaxpr types."""
from didax._src.compat.foreign_rules import LibraryPrimitive as Primitive  # noqa: F401
from didax._src.core import ShapedArray  # noqa: F401
from didax._src.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr  # noqa: F401
from didax.core import (  # noqa: F401
    find_top_trace,
    get_opaque_trace_state,
    trace_state_clean,
    valid_jaxtype,
)


def jaxpr_as_fun(closed: ClosedJaxpr):
    """The function a closed jaxpr computes (flat arguments in, list of outputs out)."""
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return fun
