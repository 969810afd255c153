"""Mirrors `jax.lax`: thin functions that bind didax's primitives (no type promotion)."""
from didax._src.lax.lax import *  # noqa: F401,F403
from didax._src.lax.lax import (  # noqa: F401
    abs, max, min, pow, round, slice, select_n, convert_element_type, stop_gradient,
)
from didax.lax import linalg  # noqa: F401,E402
from didax._src.transforms.implicit import custom_linear_solve, custom_root  # noqa: F401,E402
