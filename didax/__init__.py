"""didax: composable function transformations for NumPy programs, speaking JAX's API.

    import didax as jax
    import didax.numpy as jnp
"""
from didax import (
    ad_checkpoint,  # noqa: F401
    api_util,  # noqa: F401
    core,  # noqa: F401
    custom_derivatives,  # noqa: F401
    datasets,  # noqa: F401
    debug,  # noqa: F401
    distributed,  # noqa: F401
    dtypes,  # noqa: F401
    errors,  # noqa: F401
    experimental,  # noqa: F401  (and so every primitive is declared)
    export,  # noqa: F401
    extend,  # noqa: F401
    image,  # noqa: F401
    interpreters,  # noqa: F401
    lax,  # noqa: F401
    monitoring,  # noqa: F401
    nn,  # noqa: F401
    numpy,  # noqa: F401
    optim,  # noqa: F401
    profiler,  # noqa: F401
    random,  # noqa: F401
    ref,  # noqa: F401
    scipy,  # noqa: F401
    sharding,  # noqa: F401
    stages,  # noqa: F401
    test_util,  # noqa: F401
    tree,  # noqa: F401
    tree_util,  # noqa: F401
    typing,  # noqa: F401
    version,  # noqa: F401
)
from didax._src.compat.jax_alias import install_as_jax, uninstall_as_jax  # noqa: F401
from didax._src.config import config, enable_x64, numpy_dtype_promotion  # noqa: F401
from didax._src.config_states import (  # noqa: F401
    allow_f16_reductions,
    array_garbage_collection_guard,
    auto_pcast,
    check_tracer_leaks,
    debug_infs,
    debug_key_reuse,
    default_device,
    default_matmul_precision,
    default_prng_impl,
    enable_checks,
    enable_custom_prng,
    explain_cache_misses,
    jax2tf_associative_scan_reductions,
    legacy_prng_key,
    log_compiles,
    no_execution,
    no_tracing,
    numpy_rank_promotion,
    remove_size_one_mesh_axis_from_type,
    softmax_custom_jvp,
    thread_guard,
    threefry_partitionable,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from didax._src.core import Array  # noqa: F401
from didax._src.dtypes import float0  # noqa: F401
from didax._src.interpreters.staging import ensure_compile_time_eval  # noqa: F401
from didax._src.parallel import result_shardings  # noqa: F401  (results report shardings)
from didax._src.parallel.device import (  # noqa: F401
    Device,
    block_until_ready,
    device_count,
    device_get,
    device_put,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
    typeof,
)
from didax._src.parallel.environment import (  # noqa: F401
    debug_nans,
    default_backend,
    named_scope,
    print_environment_info,
)
from didax._src.parallel.global_arrays import (  # noqa: F401
    Shard,
    live_arrays,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from didax._src.parallel.mesh_context import set_mesh  # noqa: F401
from didax._src.parallel.multihost import (  # noqa: F401
    copy_to_host_async,
    effects_barrier,
    host_count,
    host_id,
    host_ids,
    process_indices,
)
from didax._src.parallel.pmap import pmap  # noqa: F401
from didax._src.parallel.shard_map import shard_map  # noqa: F401
from didax._src.parallel.sharding import Mesh, NamedSharding, make_mesh  # noqa: F401
from didax._src.parallel.sharding import PartitionSpec as P  # noqa: F401
from didax._src.parallel.sharding_extras import reshard, smap  # noqa: F401
from didax._src.primitives.callback import pure_callback  # noqa: F401
from didax._src.primitives.checkpoint import checkpoint, remat  # noqa: F401
from didax._src.primitives.checkpoint_policies import checkpoint_policies  # noqa: F401
from didax._src.primitives.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from didax._src.primitives.custom_extras import closure_convert, custom_gradient  # noqa: F401
from didax._src.state.primitives import freeze, new_ref  # noqa: F401
from didax._src.state.ref_extras import ds, empty_ref, free_ref  # noqa: F401
from didax._src.state.types import Ref  # noqa: F401
from didax._src.transforms.api import (  # noqa: F401
    ShapeDtypeStruct,
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
)
from didax._src.transforms.fwd_and_bwd import fwd_and_bwd  # noqa: F401
from didax._src.transforms.jit import clear_caches, disable_jit, jit, named_call  # noqa: F401
from didax._src.transforms.visualize import visualize  # noqa: F401
from didax._src.user_context import make_user_context  # noqa: F401

__version__ = "0.1.0"
# The version of JAX's API didax speaks: libraries written for JAX read it (as
# `jax.__version_info__`) to choose between code paths of different JAX releases.
__version_info__ = version.__version_info__
