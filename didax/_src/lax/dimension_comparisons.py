"""`eq_to_p`, `le_to_p`, `lt_to_p`: the comparisons JAX stages for dimension sizes (its
shapes may be symbolic; didax's are always integers, so they compare values). Elementwise
and lax-broadcasting like `eq`, but lenient as JAX's: the operands may have different real
dtypes, and the result is weakly typed when both operands are (Python ints)."""
from __future__ import annotations

import numpy as np

from didax._src import core
from didax._src.core import ShapedArray
from didax._src.interpreters.batching import defbroadcasting
from didax._src.interpreters.jvp import defjvp_zero
from didax._src.typecheck import bool_, broadcast_shapes, check_dtype, float_, int_


def _comparison(name: str, compare) -> core.Primitive:
    p = core.primitive(name)
    p.def_impl(lambda x, y: np.asarray(compare(x, y)))

    @p.def_abstract_eval
    def _aval(x, y):
        for a in (x, y):
            check_dtype(name, a, bool_ + int_ + float_)
        return ShapedArray(broadcast_shapes(name, x.shape, y.shape), np.bool_,
                           x.weak_type and y.weak_type)

    defjvp_zero(p)
    defbroadcasting(p)
    return p


eq_to_p = _comparison("eq_to", np.equal)
le_to_p = _comparison("le_to", np.less_equal)
lt_to_p = _comparison("lt_to", np.less)

__all__: list = []
