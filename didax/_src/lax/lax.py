"""Everything `didax.lax` exports: the wrappers of every primitive family."""
from didax._src import dtypes as _dtypes
from didax._src.lax.bessel import bessel_i0e, bessel_i1e  # noqa: F401
from didax._src.lax.bitcast import bitcast_convert_type  # noqa: F401
from didax._src.lax.control_flow import while_reverse  # noqa: F401 (its reverse mode)
from didax._src.lax.control_flow.cond import cond, switch  # noqa: F401
from didax._src.lax.control_flow.general_reduce import reduce  # noqa: F401,A004
from didax._src.lax.control_flow.loops import associative_scan, fori_loop, map  # noqa: F401,A004
from didax._src.lax.control_flow.scan import scan  # noqa: F401
from didax._src.lax.control_flow.while_loop import while_loop  # noqa: F401
from didax._src.lax.conv import *  # noqa: F401,F403
from didax._src.lax.dot import *  # noqa: F401,F403
from didax._src.lax.elementwise import *  # noqa: F401,F403
from didax._src.lax.elementwise import (  # noqa: F401 - names starting with lowercase kept
    abs,
    convert_element_type,
    integer_pow,
    max,
    min,
    pow,
    round,
    select_n,
    stop_gradient,
)
from didax._src.lax.fft import FftType, fft  # noqa: F401
from didax._src.lax.incomplete import (  # noqa: F401
    betainc,
    igamma,
    igamma_grad_a,
    igammac,
    random_gamma_grad,
)
from didax._src.lax.indexing import *  # noqa: F401,F403
from didax._src.lax.parallel import *  # noqa: F401,F403
from didax._src.lax.reduction import *  # noqa: F401,F403
from didax._src.lax.shape import *  # noqa: F401,F403
from didax._src.lax.shape import slice  # noqa: F401
from didax._src.lax.windowed import *  # noqa: F401,F403
from didax._src.lax.zeta import zeta  # noqa: F401


def dtype(x):
    """The canonical dtype of a value, scalar type or dtype-like (float32 for Python floats
    unless x64 is enabled), as `jax.lax.dtype`."""
    return _dtypes.dtype(x, canonicalize=True)
