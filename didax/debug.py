"""Run-time printing, logging and callbacks that work inside jit, vmap and grad; a
breakpoint for eager code; and views of how arrays are sharded."""
from didax._src.compat.debug_extras import (  # noqa: F401
    DebugEffect,
    OrderedDebugEffect,
    breakpoint,
    inspect_array_sharding,
    log,
    visualize_array_sharding,
    visualize_sharding,
)
from didax._src.primitives.debugging import debug_callback as callback  # noqa: F401
from didax._src.primitives.debugging import debug_print as print  # noqa: F401
