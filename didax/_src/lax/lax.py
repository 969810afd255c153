"""Everything `didax.lax` exports: the wrappers of every primitive family."""
from didax._src.lax.elementwise import *  # noqa: F401,F403
from didax._src.lax.elementwise import (  # noqa: F401 - names starting with lowercase kept
    abs, max, min, pow, round, select_n, convert_element_type, stop_gradient, integer_pow,
)
from didax._src.lax.shape import *  # noqa: F401,F403
from didax._src.lax.shape import slice  # noqa: F401
from didax._src.lax.reduction import *  # noqa: F401,F403
from didax._src.lax.indexing import *  # noqa: F401,F403
from didax._src.lax.dot import *  # noqa: F401,F403
from didax._src.lax.conv import *  # noqa: F401,F403
from didax._src.lax.control_flow.scan import scan  # noqa: F401
from didax._src.lax.control_flow.scan import associative_scan, fori_loop, map  # noqa: F401,A004
from didax._src.lax.control_flow.cond import cond, switch  # noqa: F401
from didax._src.lax.control_flow.while_loop import while_loop  # noqa: F401
