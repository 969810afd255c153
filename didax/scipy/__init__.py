"""Mirrors `jax.scipy` (the `special`, `linalg`, `fft`, `stats`, `integrate`, `signal`,
`ndimage`, `optimize` and `sparse` modules)."""
from didax.scipy import special  # noqa: F401
from didax.scipy import linalg  # noqa: F401
from didax.scipy import fft  # noqa: F401
from didax.scipy import stats  # noqa: F401
from didax.scipy import integrate  # noqa: F401
from didax.scipy import signal  # noqa: F401
from didax.scipy import sparse  # noqa: F401
from didax.scipy import optimize  # noqa: F401
from didax.scipy import ndimage  # noqa: F401
