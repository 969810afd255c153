"""`jet` (as `jax.experimental.jet.jet`): Taylor-mode higher-order differentiation, the
jet interpreter (didax._src.interpreters.jet) run with the rules of `jet_rules`."""
from __future__ import annotations

import math

from didax._src import core, dtypes
from didax._src.base_prims import convert_element_type, zeros_like_aval
from didax._src.core import ArrayBase, get_aval
from didax._src.interpreters.jet import jet_flat
from didax._src.transforms.jet_rules import jet_rules
from didax._src.tree_util import tree_flatten, tree_unflatten


def jet(fun, primals, series, factorial_scaled=True, **_):
    """Taylor-mode higher-order differentiation: `fun`'s Taylor polynomial at `primals`.

    `primals` holds one array per positional argument of `fun`; `series` one sequence of
    terms per primal, all of one length K (the order). With `factorial_scaled` (the
    default) the k-th term of the input and output series is the k-th derivative along the
    curve; otherwise it is the plain Taylor coefficient. Returns `(primals_out,
    series_out)`: `fun(*primals)`, and for each of its outputs the list of its K terms.

    Differences from JAX: besides JAX's rules, jet has rules for `tan`, `asin`, `acos`,
    `atan`, `lgamma` and `digamma` (JAX's jet raises for them); a term whose shape differs
    from its primal's is an error (JAX broadcasts it silently), as is a `series` of another
    length than `primals`; functions with custom derivative rules (`custom_jvp`,
    `custom_vjp`) and checkpointed functions are expanded through their bodies (JAX's jet
    raises an internal error for them); a conversion to an integer type ends the series (its
    terms are zero); `lax.rem`'s series holds the quotient rounded toward zero, as its
    derivative does (JAX's jet rounds it down, which differs where the quotient is
    negative); and Python control flow may read a primal's value (`if x > 0`), as under
    `jvp` (JAX's jet refuses it).
    """
    primals, series, order = _check_inputs(primals, series)
    if factorial_scaled:
        series = [[_scale(t, 1 / math.factorial(k)) for k, t in enumerate(s, 1)]
                  for s in series]
    out_tree = []

    def flat_fun(*args):
        outs, tree = tree_flatten(fun(*args))
        out_tree.append(tree)
        return outs

    p_out, s_out = jet_flat(flat_fun, primals, series, order, jet_rules)
    terms_out = []
    for p, s in zip(p_out, s_out):
        if s is None:
            aval = get_aval(p)
            zero_aval = aval if dtypes.kind(aval.dtype) in "fc" else core.ShapedArray(
                aval.shape, dtypes.canonicalize_dtype(float), True)
            s = [zeros_like_aval(zero_aval) for _ in range(order)]
        elif factorial_scaled:
            s = [_scale(t, math.factorial(k)) for k, t in enumerate(s, 1)]
        terms_out.append(s)
    tree = out_tree[0]
    return tree_unflatten(tree, p_out), tree_unflatten(tree, terms_out)


def _scale(t, factor):
    return t if factor == 1 else t * factor


def _check_inputs(primals, series):
    """Primals as arrays, each with its terms of its own type; the common order."""
    for what, v in (("primals", primals), ("series", series)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"jet: `{what}` must be a tuple or list (one entry per positional "
                            f"argument of the function), got {type(v).__name__}")
    if len(primals) != len(series):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series; give one "
                         "sequence of terms per primal")
    checked_primals, checked_series, lengths = [], [], set()
    for i, (p, s) in enumerate(zip(primals, series)):
        try:
            aval = get_aval(p)
        except TypeError:
            raise ValueError(f"jet: primal value at position {i} is not an array (got "
                             f"{type(p).__name__}); jet takes one array per positional "
                             "argument: flatten pytrees first (jax.flatten_util."
                             "ravel_pytree)") from None
        if dtypes.kind(aval.dtype) not in "fc":
            raise TypeError(f"jet: primal at position {i} has dtype {aval.dtype.name}; jet "
                            "differentiates floating-point (or complex) values only: convert "
                            "it to a float dtype")
        try:
            terms = list(s)
        except TypeError:
            raise TypeError(f"jet: the series at position {i} must be a sequence of terms "
                            f"(one per order), got {type(s).__name__}") from None
        lengths.add(len(terms))
        checked_primals.append(p if isinstance(p, ArrayBase) else core.asarray_value(p))
        checked_series.append([_check_term(t, aval, i, k) for k, t in enumerate(terms, 1)])
    if len(lengths) > 1:
        raise ValueError("jet terms have inconsistent lengths for different arguments: "
                         f"{sorted(lengths)}; give every primal the same number of terms")
    return checked_primals, checked_series, lengths.pop() if lengths else 0


def _check_term(t, aval, i, k):
    t = t if isinstance(t, ArrayBase) else core.asarray_value(t)
    t_aval = get_aval(t)
    if t_aval.shape != aval.shape:
        raise ValueError(f"jet: term {k} of the series at position {i} has shape "
                         f"{t_aval.shape}, but its primal has shape {aval.shape}; each term "
                         "must have its primal's shape")
    if t_aval.dtype != aval.dtype:
        if not t_aval.weak_type:
            raise TypeError(f"jet: term {k} of the series at position {i} has dtype "
                            f"{t_aval.dtype.name}, but its primal has dtype "
                            f"{aval.dtype.name}; give terms their primal's dtype")
        t = convert_element_type(t, aval.dtype, aval.weak_type)
    return t
