"""Mirrors `jax.experimental.multihost_utils`: collectives among the processes of a
distributed run (`didax.distributed`), outside any mapped function."""
from didax._src.parallel.multihost import (  # noqa: F401
    assert_equal,
    broadcast_one_to_all,
    global_array_to_host_local_array,
    host_local_array_to_global_array,
    live_devices,
    process_allgather,
    reached_preemption_sync_point,
    sync_global_devices,
)
