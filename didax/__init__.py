"""didax: composable function transformations for NumPy programs, speaking JAX's API.

    import didax as jax
    import didax.numpy as jnp
"""
from didax._src import dtypes  # noqa: F401
from didax._src.api import ShapeDtypeStruct, eval_shape, jacfwd, jvp, make_jaxpr  # noqa: F401
from didax._src.config import config  # noqa: F401
from didax._src.core import Array  # noqa: F401
from didax._src.device import (  # noqa: F401
    block_until_ready, device_get, device_put, devices, typeof,
)
from didax import errors  # noqa: F401
from didax import lax  # noqa: F401
from didax import numpy  # noqa: F401
from didax import test_util  # noqa: F401
from didax import tree  # noqa: F401
from didax import tree_util  # noqa: F401

__version__ = "0.1.0"
