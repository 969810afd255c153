"""Shared helpers of the tests that look at the jaxprs a function traces to."""
from didax._src.ir import ClosedJaxpr, subjaxprs


def equation_count(jaxpr) -> int:
    """The equations of `jaxpr` (a Jaxpr or ClosedJaxpr), those of its sub-jaxprs included:
    how much a trace holds."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    return sum(1 + sum(equation_count(sub) for sub in subjaxprs(eqn.params))
               for eqn in jaxpr.eqns)
