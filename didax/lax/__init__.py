"""Mirrors `jax.lax`: thin functions that bind didax's primitives (no type promotion)."""
from didax._src.lax.lax import *  # noqa: F401,F403
from didax._src.lax.lax import (  # noqa: F401
    abs,
    convert_element_type,
    max,
    min,
    pow,
    round,
    select_n,
    slice,
    stop_gradient,
)
from didax._src.parallel.sharding_ops import with_sharding_constraint  # noqa: F401,E402
from didax._src.transforms.composite import composite  # noqa: F401,E402
from didax._src.transforms.implicit import custom_linear_solve, custom_root  # noqa: F401,E402
from didax.lax import linalg  # noqa: F401,E402
