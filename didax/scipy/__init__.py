"""Mirrors `jax.scipy` (the `special`, `linalg`, `fft`, `stats`, `integrate`, `interpolate`,
`cluster`, `signal`, `ndimage`, `optimize`, `sparse` and `spatial` modules)."""
from didax.scipy import (
    cluster,  # noqa: F401
    fft,  # noqa: F401
    integrate,  # noqa: F401
    interpolate,  # noqa: F401
    linalg,  # noqa: F401
    ndimage,  # noqa: F401
    optimize,  # noqa: F401
    signal,  # noqa: F401
    sparse,  # noqa: F401
    spatial,  # noqa: F401
    special,  # noqa: F401
    stats,  # noqa: F401
)
