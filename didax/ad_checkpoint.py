"""Mirrors `jax.ad_checkpoint`: rematerialisation, and what reverse mode stores."""
from didax._src.primitives.checkpoint import (  # noqa: F401
    checkpoint,
    checkpoint_name,
    remat,
)
from didax._src.primitives.checkpoint_policies import (  # noqa: F401
    Offloadable,
    Recompute,
    Saveable,
    checkpoint_policies,
)
from didax._src.transforms.residuals import saved_residuals  # noqa: F401


def print_saved_residuals(fun, *args, **kwargs) -> None:
    """Prints each residual reverse mode would store for `fun(*args)`, and where it comes
    from: an argument, or the primitive and the user's line computing it."""
    for aval, where in saved_residuals(fun, *args, **kwargs):
        print(f"{aval.str_short()} {where}")
