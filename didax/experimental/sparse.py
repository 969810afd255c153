"""Mirrors `jax.experimental.sparse`: the batched-COO sparse array `BCOO`, the functions on
it, and its primitives (`bcoo_todense_p`, `bcoo_fromdense_p`, `bcoo_extract_p`,
`bcoo_dot_general_p`), and the sparse-aware `grad`, `value_and_grad`, `jacfwd`, `jacrev` and
`jacobian`. JAX's other formats (BCSR, COO, CSR) and `sparsify` are not here."""
from didax._src.experimental.sparse.ad import (  # noqa: F401
    grad,
    jacfwd,
    jacobian,
    jacrev,
    value_and_grad,
)
from didax._src.experimental.sparse.bcoo import BCOO, JAXSparse  # noqa: F401
from didax._src.experimental.sparse.functions import (  # noqa: F401
    bcoo_dot_general,
    bcoo_extract,
    bcoo_fromdense,
    bcoo_multiply_dense,
    bcoo_reduce_sum,
    bcoo_reshape,
    bcoo_sort_indices,
    bcoo_sum_duplicates,
    bcoo_todense,
    bcoo_transpose,
    empty,
    eye,
    random_bcoo,
    todense,
)
from didax._src.primitives.sparse.dot_general import bcoo_dot_general_p  # noqa: F401
from didax._src.primitives.sparse.fromdense import bcoo_fromdense_p  # noqa: F401
from didax._src.primitives.sparse.todense import bcoo_extract_p, bcoo_todense_p  # noqa: F401
