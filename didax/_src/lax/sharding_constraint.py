"""`sharding_constraint`: the identity, saying how a traced value is to be split over a mesh
(what `with_sharding_constraint` stages inside jit, as in JAX).

Its params are JAX's: `sharding` (a NamedSharding or another Sharding), `layout` and
`unconstrained_dims`. The values never change: every device shares the host's memory. jit
forwards the operand (no code runs for it), and the sharding analysis
(interpreters/sharding.py) takes the constraint's spec as the value's, which is what the
jitted function's results report. Derivatives carry the same constraint; under vmap, the
batch dimension is whole.
"""
from __future__ import annotations

from didax._src import core
from didax._src.interpreters import sharding as sharding_rules

sharding_constraint_p = core.primitive("sharding_constraint", linear=True)
sharding_constraint_p.pp_hidden = {"layout": None, "unconstrained_dims": frozenset()}


def _spec(sharding) -> tuple:
    """The spec tuple of a sharding that names mesh axes (one without a spec: whole)."""
    spec = getattr(sharding, "spec", None)
    return () if spec is None else sharding_rules.spec_names(spec)


sharding_constraint_p.def_impl(lambda x, **params: x)
sharding_constraint_p.def_abstract_eval(lambda x, **params: x)
sharding_constraint_p.def_traits(returns_operand=lambda eqn: 0)
sharding_constraint_p.def_rule("sharding", sharding_rules.splits(
    lambda eqn, specs, sizes: _spec(eqn.params["sharding"])))


def _jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = sharding_constraint_p.bind(x, **params)
    if type(t) is core.Zero:
        return out, t
    return out, sharding_constraint_p.bind(t, **params)


sharding_constraint_p.def_jvp(_jvp)
sharding_constraint_p.def_transpose(lambda ct, x, **params: [
    ct if type(ct) is core.Zero else sharding_constraint_p.bind(ct, **params)])


def _batch(size, vals, dims, *, sharding, layout, unconstrained_dims):
    (x,), (d,) = vals, dims
    spec = getattr(sharding, "spec", None)
    if spec is not None and d is not None:  # (the batch dimension whole)
        entries = list(spec) + [None] * max(0, d - len(spec))
        entries.insert(d, None)
        sharding = type(sharding)(sharding.mesh, type(spec)(*entries))
    return sharding_constraint_p.bind(x, sharding=sharding, layout=layout,
                                      unconstrained_dims=unconstrained_dims), d


sharding_constraint_p.def_batch(_batch)


def sharding_constraint(x, sharding):
    return sharding_constraint_p.bind(x, sharding=sharding, layout=None,
                                      unconstrained_dims=frozenset())
