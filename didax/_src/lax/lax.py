"""Everything `didax.lax` exports: the wrappers of every primitive family."""
from didax._src import dtypes as _dtypes
from didax._src.lax.approx import approx_max_k, approx_min_k  # noqa: F401
from didax._src.lax.approx_top_k import approx_top_k_p  # noqa: F401
from didax._src.lax.array_copy import copy_p  # noqa: F401
from didax._src.lax.barrier import optimization_barrier, optimization_barrier_p  # noqa: F401
from didax._src.lax.bessel import bessel_i0e, bessel_i1e  # noqa: F401
from didax._src.lax.bitcast import bitcast_convert_type  # noqa: F401
from didax._src.lax.control_flow import while_reverse  # noqa: F401 (its reverse mode)
from didax._src.lax.control_flow.cond import cond, switch  # noqa: F401
from didax._src.lax.control_flow.general_reduce import reduce  # noqa: F401,A004
from didax._src.lax.control_flow.loops import associative_scan, fori_loop, map  # noqa: F401,A004
from didax._src.lax.control_flow.scan import scan  # noqa: F401
from didax._src.lax.control_flow.while_loop import while_loop  # noqa: F401
from didax._src.lax.conv import *  # noqa: F401,F403
from didax._src.lax.conv_patches import (  # noqa: F401
    conv_general_dilated_local,
    conv_general_dilated_patches,
)
from didax._src.lax.dce_sink import dce_sink_p  # noqa: F401
from didax._src.lax.dimension_comparisons import eq_to_p, le_to_p, lt_to_p  # noqa: F401
from didax._src.lax.dot import *  # noqa: F401,F403
from didax._src.lax.dot_algorithm import (  # noqa: F401
    AccuracyMode,
    DotAlgorithm,
    DotAlgorithmPreset,
    Tolerance,
)
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
from didax._src.lax.parallel_extras import pcast, precv, psend, ragged_all_to_all  # noqa: F401
from didax._src.lax.platform import platform_dependent  # noqa: F401
from didax._src.lax.precision import reduce_precision, reduce_precision_p  # noqa: F401
from didax._src.lax.primitive_table import *  # noqa: F401,F403
from didax._src.lax.ragged import (  # noqa: F401
    RaggedDotDimensionNumbers,
    ragged_dot,
    ragged_dot_general,
)
from didax._src.lax.reduction import *  # noqa: F401,F403
from didax._src.lax.rng import (  # noqa: F401
    RandomAlgorithm,
    rng_bit_generator,
    rng_bit_generator_p,
    rng_uniform,
    rng_uniform_p,
)
from didax._src.lax.rounding_method import RoundingMethod  # noqa: F401
from didax._src.lax.scaled_dot import scaled_dot  # noqa: F401
from didax._src.lax.shape import *  # noqa: F401,F403
from didax._src.lax.shape import slice  # noqa: F401
from didax._src.lax.stacking import stack_p, tile_p, unstack_p  # noqa: F401
from didax._src.lax.staging_ops import dce_sink, shape_as_value, stage  # noqa: F401
from didax._src.lax.tokens import after_all, create_token  # noqa: F401
from didax._src.lax.windowed import *  # noqa: F401,F403
from didax._src.lax.zeta import zeta  # noqa: F401


def dtype(x):
    """The canonical dtype of a value, scalar type or dtype-like (float32 for Python floats
    unless x64 is enabled), as `jax.lax.dtype`."""
    return _dtypes.dtype(x, canonicalize=True)
