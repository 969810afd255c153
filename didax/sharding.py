"""Meshes and shardings (`jax.sharding`): every device shares the host's memory, so they say
how `shard_map` splits arrays and what `device_put` records."""
from didax._src.parallel.mesh_context import (  # noqa: F401
    get_abstract_mesh,
    get_mesh,
    set_mesh,
    use_abstract_mesh,
)
from didax._src.parallel.sharding import (  # noqa: F401
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
)
from didax._src.parallel.sharding_extras import (  # noqa: F401
    AbstractDevice,
    ManualAxisType,
    auto_axes,
    explicit_axes,
    make_single_device_sharding,
    reshard,
)
