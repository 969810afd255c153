"""`jax_numpy_rank_promotion`: what `didax.numpy` does when it broadcasts operands of
different ranks (both at least 1-d), NumPy's implicit rank promotion."""
from __future__ import annotations

import warnings

from didax._src.config import config
from didax._src.config_states import numpy_rank_promotion  # noqa: F401  (defines the flag)

_URL = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"


def rank_promotion(fun_name: str, shapes) -> None:
    """Warns or raises, as the flag says, about promoting the ranks of `shapes`."""
    mode = config.read("jax_numpy_rank_promotion")
    listed = " ".join(str(tuple(s)) for s in shapes)
    if mode == "raise":
        raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes "
                         f"{listed} and with the config option "
                         f"jax_numpy_rank_promotion='raise'. For more information, see {_URL}.")
    if mode == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes "
                      f"{listed}. Set the jax_numpy_rank_promotion config option to 'allow' "
                      f"to disable this warning; for more information, see {_URL}.",
                      stacklevel=4)
