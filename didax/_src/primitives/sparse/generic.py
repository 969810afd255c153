"""`todense_p`: the dense form of whatever it is given. On a dense array it is the
identity; it exists so that `sparse.todense` inside a program that `sparsify` runs marks
where a sparse value is to become dense (its sparse rule densifies)."""
from __future__ import annotations

from didax._src import core
from didax._src.core import Zero

todense_p = core.primitive("todense", linear=True)

todense_p.def_impl(lambda x: x)
todense_p.def_abstract_eval(lambda x: x)
todense_p.def_jvp(lambda primals, tangents: (todense_p.bind(primals[0]), tangents[0]
                                               if type(tangents[0]) is Zero
                                               else todense_p.bind(tangents[0])))
todense_p.def_transpose(lambda ct, x: [ct])
todense_p.def_batch(lambda size, vals, dims: (todense_p.bind(vals[0]), dims[0]))
