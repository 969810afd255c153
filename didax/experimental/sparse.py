"""Mirrors `jax.experimental.sparse`: the batched-COO sparse array `BCOO`, the functions on
it and their primitives, the batched-CSR `BCSR`, the 2-D `COO`, `CSR` and `CSC`,
`sparsify`, and the sparse-aware `grad`, `value_and_grad`, `jacfwd`, `jacrev` and
`jacobian`."""
from didax._src.experimental.sparse.ad import (  # noqa: F401
    grad,
    jacfwd,
    jacobian,
    jacrev,
    value_and_grad,
)
from didax._src.experimental.sparse.bcoo import BCOO, JAXSparse  # noqa: F401
from didax._src.experimental.sparse.bcsr import (  # noqa: F401
    BCSR,
    bcsr_broadcast_in_dim,
    bcsr_concatenate,
    bcsr_dot_general,
    bcsr_extract,
    bcsr_fromdense,
    bcsr_sum_duplicates,
    bcsr_todense,
)
from didax._src.experimental.sparse.coo_csr import (  # noqa: F401
    COO,
    CSC,
    CSR,
    coo_fromdense,
    coo_matmat,
    coo_matvec,
    coo_todense,
    csr_fromdense,
    csr_matmat,
    csr_matvec,
    csr_todense,
)
from didax._src.experimental.sparse.errors import (  # noqa: F401
    CuSparseEfficiencyWarning,
    SparseEfficiencyError,
    SparseEfficiencyWarning,
)
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
from didax._src.experimental.sparse.reorder import (  # noqa: F401
    bcoo_sort_indices_p,
    bcoo_sum_duplicates_p,
    bcoo_transpose_p,
)
from didax._src.experimental.sparse.shape_functions import (  # noqa: F401
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_conv_general_dilated,
    bcoo_dot_general_sampled,
    bcoo_dynamic_slice,
    bcoo_gather,
    bcoo_multiply_sparse,
    bcoo_rev,
    bcoo_slice,
    bcoo_squeeze,
    bcoo_update_layout,
)
from didax._src.experimental.sparse.spdot import (  # noqa: F401
    bcoo_dot_general_sampled_p,
    bcoo_spdot_general_p,
)
from didax._src.experimental.sparse.transform import SparseTracer, sparsify  # noqa: F401
from didax._src.primitives.sparse.bcsr import (  # noqa: F401
    bcsr_dot_general_p,
    bcsr_extract_p,
    bcsr_fromdense_p,
    bcsr_todense_p,
)
from didax._src.primitives.sparse.coo import (  # noqa: F401
    coo_fromdense_p,
    coo_matmat_p,
    coo_matvec_p,
    coo_todense_p,
)
from didax._src.primitives.sparse.csr import (  # noqa: F401
    csr_fromdense_p,
    csr_matmat_p,
    csr_matvec_p,
    csr_todense_p,
)
from didax._src.primitives.sparse.dot_general import bcoo_dot_general_p  # noqa: F401
from didax._src.primitives.sparse.fromdense import bcoo_fromdense_p  # noqa: F401
from didax._src.primitives.sparse.generic import todense_p  # noqa: F401
from didax._src.primitives.sparse.todense import bcoo_extract_p, bcoo_todense_p  # noqa: F401
