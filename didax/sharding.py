"""Meshes and shardings (`jax.sharding`): every device shares the host's memory, so they say
how `shard_map` splits arrays and what `device_put` records."""
from didax._src.parallel.sharding import (  # noqa: F401
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
)
