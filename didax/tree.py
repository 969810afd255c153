"""Pytree utilities under short names, mirroring `jax.tree` (`didax.tree.map`, ...)."""

from didax._src.tree_util import (
    static,
)
from didax._src.tree_util import (
    tree_all as all,
)
from didax._src.tree_util import (
    tree_broadcast as broadcast,
)
from didax._src.tree_util import (
    tree_flatten as flatten,
)
from didax._src.tree_util import (
    tree_flatten_with_path as flatten_with_path,
)
from didax._src.tree_util import (
    tree_leaves as leaves,
)
from didax._src.tree_util import (
    tree_leaves_with_path as leaves_with_path,
)
from didax._src.tree_util import (
    tree_map as map,
)
from didax._src.tree_util import (
    tree_map_with_path as map_with_path,
)
from didax._src.tree_util import (
    tree_reduce as reduce,
)
from didax._src.tree_util import (
    tree_reduce_associative as reduce_associative,
)
from didax._src.tree_util import (
    tree_structure as structure,
)
from didax._src.tree_util import (
    tree_transpose as transpose,
)
from didax._src.tree_util import (
    tree_unflatten as unflatten,
)

__all__ = [
    "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose",
    "unflatten",
]
