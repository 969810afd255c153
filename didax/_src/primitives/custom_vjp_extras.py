"""`custom_vjp_primal_tree_values` and `remat_opt_p`, the rest of
`jax.custom_derivatives`."""
from __future__ import annotations

from didax._src.core import Primitive
from didax._src.primitives.custom_derivatives import CustomVJPPrimal
from didax._src.tree_util import tree_map


def custom_vjp_primal_tree_values(tree):
    """The values inside the `CustomVJPPrimal`s a `symbolic_zeros=True` fwd rule receives
    (dropping whether each is perturbed)."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_map(value, tree, is_leaf=lambda x: type(x) is CustomVJPPrimal)


def _no_remat_opt(*args, **params):
    raise NotImplementedError(
        "remat_opt is not implemented in didax: it is the primitive by which JAX optimises "
        "the rematerialisation of custom_vjp functions; didax's checkpoint (didax.checkpoint) "
        "handles custom_vjp functions without it")


# Not registered among didax's primitives (nothing binds it): it exists so that code naming
# JAX's primitive imports, and says what to use if it is ever bound.
remat_opt_p = Primitive("remat_opt", multiple_results=True)
remat_opt_p.def_impl(_no_remat_opt)
remat_opt_p.def_abstract_eval(_no_remat_opt)
