"""Mirrors `jax.ad_checkpoint`: rematerialisation, and what reverse mode stores."""
from didax._src.primitives.checkpoint import (  # noqa: F401
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    remat,
    saved_residuals,
)


def print_saved_residuals(fun, *args, **kwargs) -> None:
    """Prints each residual reverse mode would store for `fun(*args)`."""
    for aval, where in saved_residuals(fun, *args, **kwargs):
        print(f"{aval.str_short()} from {where}")
