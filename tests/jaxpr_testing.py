"""Shared helpers of the tests that look at the jaxprs a function traces to."""
from didax._src.ir import ClosedJaxpr, Jaxpr


def equation_count(jaxpr) -> int:
    """The equations of `jaxpr` (a Jaxpr or ClosedJaxpr), those of its sub-jaxprs included:
    how much a trace holds."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for p in eqn.params.values():
            for sub in p if isinstance(p, (tuple, list)) else (p,):
                if isinstance(sub, (ClosedJaxpr, Jaxpr)):
                    n += equation_count(sub)
    return n
