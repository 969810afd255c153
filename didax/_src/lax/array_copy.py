"""`copy_p`: a new buffer holding the operand's values (what `jnp.array(x, copy=True)`
stages in JAX). Linear: its tangent and its cotangent are copies too."""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.interpreters.batching import defvectorized
from didax._src.interpreters.jvp import deflinear
from didax._src.interpreters.transpose import deflinear_transpose

copy_p = core.primitive("copy")
copy_p.def_impl(lambda x: np.array(x, copy=True))
copy_p.def_abstract_eval(lambda x: x)
deflinear(copy_p)
deflinear_transpose(copy_p, lambda ct, aval: copy_p.bind(ct))
defvectorized(copy_p)

__all__: list = []
