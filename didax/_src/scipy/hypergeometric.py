"""What the hypergeometric functions share: their arguments' promotion, the poles of
Gamma, and derivatives in x by a classical formula with those in the parameters by forward
mode through the algorithm.

Both functions (`hyp1f1`, `hyp2f1`) are sums and recurrences (those whose terms cancel
carried in double-double arithmetic, `double_double`), evaluated on arguments made safe for
each branch and then selected, so they jit, vmap and differentiate like any composition of
lax operations. Under a transformation every branch runs on every element, its long loops as
while loops that stop once every element needing them has converged; evaluated eagerly, the
longer ones run only on the elements that need them. Derivatives in the parameters are those of
the algorithm, whose sums converge uniformly, so they carry nearly the accuracy of the
values.
"""
from __future__ import annotations

import numpy as np

from didax._src.core import get_aval
from didax._src.lax.control_flow import loops as lax_control
from didax._src.lax.elementwise import convert_element_type
from didax._src.numpy import namespace as jnp
from didax._src.numpy.util import broadcast_arrays, check_arraylike, promote_dtypes_inexact
from didax._src.primitives.custom_derivatives import SymbolicZero, custom_jvp
from didax._src.transforms.api import jvp


def _real_args(name, *args):
    """The arguments promoted to one strongly typed float dtype (JAX's rule: integers and
    bools become float32, 64-bit integers float64) and broadcast to one shape."""
    check_arraylike(name, *args)
    args = promote_dtypes_inexact(*args)
    dtype = get_aval(args[0]).dtype
    if jnp.issubdtype(dtype, jnp.complexfloating):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    args = [convert_element_type(a, dtype, False) for a in args]
    return broadcast_arrays(*args)


def _eps(x):
    return float(np.finfo(get_aval(x).dtype).eps)


def _is_nonpositive_integer(v):
    return (v <= 0) & (v == jnp.floor(v))


def _signed_exp(log_magnitude, sign):
    return sign * jnp.exp(log_magnitude)


def _signed_inf(sign):
    return jnp.where(sign < 0, -np.inf, np.inf)


def _off_poles(v):
    """v with the poles of Gamma (0, -1, ...) moved to 1/2: branches that are not selected
    there still run, and their derivatives must stay finite for the selection's to be."""
    return jnp.where(_is_nonpositive_integer(v), 0.5, v)


def _with_derivatives(values, x_derivative):
    """`values(*parameters, x)` with the derivative in x given by `x_derivative(*args)` and
    those in the parameters by forward mode through the algorithm (only for the parameters
    being differentiated: the algorithm is long)."""
    fn = custom_jvp(values)

    def rule(primals, tangents):
        out = fn(*primals)
        tangent = jnp.zeros_like(out)
        moving = [i for i, t in enumerate(tangents[:-1]) if not isinstance(t, SymbolicZero)]
        if moving:
            def along(*parameters):
                args = list(primals)
                for i, p in zip(moving, parameters):
                    args[i] = p
                return values(*args)
            tangent = tangent + jvp(along, tuple(primals[i] for i in moving),
                                    tuple(tangents[i] for i in moving))[1]
        if not isinstance(tangents[-1], SymbolicZero):
            tangent = tangent + tangents[-1] * x_derivative(*primals)
        return out, tangent

    fn.defjvp(rule, symbolic_zeros=True)
    return fn


def _summed_terms(step, state, count, dtype):
    """`state = step(k, state)` for k = 0, ..., count - 1: a series' terms, in a loop (k a
    float of `dtype`, exact), so that tracing, differentiating and batching handle one step,
    not hundreds. Eagerly, the loop runs its step compiled (lax/control_flow/eager_bodies.py)."""
    return lax_control.fori_loop(0, count, lambda k, state: tuple(step(k.astype(dtype), state)),
                                 tuple(state))
